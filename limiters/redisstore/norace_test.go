//go:build !race

package redisstore

// The size of the main equality trace.
const (
	traceRequests = 200_000
	traceKeys     = 1_000
)
