//go:build amd64 || arm64

package prefetch

// lines prefetches the cache lines that start at first, first+64, ...,
// up to and including last. first and last are line-aligned addresses.
func lines(first, last uintptr)
