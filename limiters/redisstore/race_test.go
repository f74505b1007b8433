//go:build race

package redisstore

// Under the race detector, which slows the replay down several times, a
// smaller trace keeps the package's tests within a minute.
const (
	traceRequests = 20_000
	traceKeys     = 100
)
