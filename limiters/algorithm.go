package limiters

import (
	"fmt"
	"strings"
)

// An Algorithm names one of the rate-limiting algorithms of this package.
// Its String form is the name the command line uses.
type Algorithm uint8

const (
	// FixedWindow counts cost in aligned windows [k*W, (k+1)*W) and
	// refuses a request that would take the window's count over the limit.
	FixedWindow Algorithm = iota
	// SlidingLog keeps the time and cost of every admitted request and
	// refuses a request that would take the cost inside the closed interval
	// [now-W, now] over the limit. It is the exact rolling policy.
	SlidingLog
	// SlidingCounter estimates the rolling count from two fixed windows,
	// prev*(W-elapsed)/W + cur, and refuses a request while the estimate
	// has reached the limit.
	SlidingCounter
	// TokenBucket refills Capacity tokens at Rate, starting full; a request
	// takes cost tokens.
	TokenBucket
	// LeakyBucket is the meter form of the leaky bucket: it fills by cost
	// per request, drains at Rate, starts empty and refuses a request that
	// would overflow Capacity.
	LeakyBucket
	// GCRA is the generic cell rate algorithm, with burst Capacity and
	// emission interval 1/Rate, as redis_rate and throttled implement it.
	// It decides exactly as TokenBucket with the same capacity and rate.
	GCRA
	// LeakyQueue is the queue form of the leaky bucket: an admitted request
	// waits its turn (Decision.Delay) and leaves at Rate; a request is
	// refused only when the queue of Capacity is full, as nginx limit_req
	// with burst=Capacity-1 does.
	LeakyQueue

	numAlgorithms
)

var algorithmNames = [numAlgorithms]string{
	FixedWindow:    "fixed-window",
	SlidingLog:     "sliding-log",
	SlidingCounter: "sliding-counter",
	TokenBucket:    "token-bucket",
	LeakyBucket:    "leaky-bucket",
	GCRA:           "gcra",
	LeakyQueue:     "leaky-queue",
}

var algorithmSummaries = [numAlgorithms]string{
	FixedWindow:    "count per aligned window; bursts at window edges",
	SlidingLog:     "exact rolling window over a log of admitted requests",
	SlidingCounter: "rolling estimate from the current and previous window",
	TokenBucket:    "tokens refill at a rate up to a capacity; starts full",
	LeakyBucket:    "meter that fills per request and drains at a rate; starts empty",
	GCRA:           "generic cell rate algorithm; decides as token-bucket",
	LeakyQueue:     "queue drained at a rate; admitted requests are delayed",
}

// String returns the algorithm's name, such as "fixed-window".
func (a Algorithm) String() string {
	if a < numAlgorithms {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// Summary returns a one-line description of the algorithm, suitable for
// shell completion.
func (a Algorithm) Summary() string {
	if a < numAlgorithms {
		return algorithmSummaries[a]
	}
	return ""
}

// Windowed reports whether the algorithm is configured by Policy.Limit and
// Policy.Window; the others use Policy.Capacity and Policy.Rate.
func (a Algorithm) Windowed() bool {
	return a == FixedWindow || a == SlidingLog || a == SlidingCounter
}

// ParseAlgorithm returns the algorithm named name.
func ParseAlgorithm(name string) (Algorithm, error) {
	for a, n := range algorithmNames {
		if n == name {
			return Algorithm(a), nil
		}
	}
	return 0, fmt.Errorf("limiters: unknown algorithm %q (valid: %s)", name, strings.Join(algorithmNames[:], ", "))
}

// ClassicAlgorithms returns the five classic algorithms: FixedWindow,
// SlidingLog, SlidingCounter, TokenBucket and LeakyBucket.
func ClassicAlgorithms() []Algorithm {
	return []Algorithm{FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyBucket}
}

// AllAlgorithms returns every algorithm, in declaration order.
func AllAlgorithms() []Algorithm {
	all := make([]Algorithm, numAlgorithms)
	for i := range all {
		all[i] = Algorithm(i)
	}
	return all
}

// SeedAlgorithms returns ClassicAlgorithms().
//
// Deprecated: Use ClassicAlgorithms.
func SeedAlgorithms() []Algorithm { return ClassicAlgorithms() }
