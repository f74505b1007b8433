//go:build !amd64 && !arm64

package prefetch

// lines does nothing here: there is no prefetch instruction to reach.
func lines(first, last uintptr) {}
