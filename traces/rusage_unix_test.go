//go:build unix

package traces

import "syscall"

// cpuTime returns the process's user and system CPU time in nanoseconds,
// for benchmarks on a shared machine where wall time overstates the work.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
