package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// A Clock says what a limiter does with a request whose time is earlier than
// its key's state accepts: the clock went backwards for that key. As in the
// seed's code, that is a time in an earlier window than the key's current
// one (FixedWindow, SlidingCounter), a time before the newest logged
// request (SlidingLog), or a time before the key's last request (the bucket
// algorithms).
type Clock uint8

const (
	// ClockReject refuses such a request with ReasonClock and leaves the
	// key's state unchanged. Its RetryAfter counts from the request's own
	// time, so it includes the time back to the key's last time.
	ClockReject Clock = iota
	// ClockClamp judges such a request as if it arrived at the key's last
	// time: the earliest time its state accepts (the start of the current
	// window, the newest logged request, the last request). RetryAfter,
	// ResetAfter and Delay still count from the request's own time.
	ClockClamp
)

// A Policy holds the parameters of a limiter. The window algorithms
// (FixedWindow, SlidingLog, SlidingCounter) use Limit and Window; the bucket
// algorithms (TokenBucket, LeakyBucket, GCRA, LeakyQueue) use Capacity and
// Rate. Clock applies to all.
type Policy struct {
	Limit    int64         // window algorithms: most total cost per window
	Window   time.Duration // window algorithms: window length
	Capacity int64         // bucket algorithms: burst size
	Rate     Rate          // bucket algorithms: refill or leak rate
	Clock    Clock
}

// Validate reports the first parameter of p that algorithm a uses and that
// is not valid, naming it, as in "limiters: limit must be positive, got 0".
func (p Policy) Validate(a Algorithm) error {
	if a >= numAlgorithms {
		return fmt.Errorf("limiters: unknown algorithm %d", uint8(a))
	}
	if p.Clock > ClockClamp {
		return fmt.Errorf("limiters: unknown clock mode %d", uint8(p.Clock))
	}
	if a.Windowed() {
		if p.Limit <= 0 {
			return fmt.Errorf("limiters: limit must be positive, got %d", p.Limit)
		}
		if p.Window <= 0 {
			return fmt.Errorf("limiters: window must be positive, got %dns", int64(p.Window))
		}
		return nil
	}
	if p.Capacity <= 0 {
		return fmt.Errorf("limiters: capacity must be positive, got %d", p.Capacity)
	}
	if p.Rate.N <= 0 {
		return fmt.Errorf("limiters: rate must be positive, got %d tokens per %dns", p.Rate.N, int64(p.Rate.Per))
	}
	if p.Rate.Per <= 0 {
		return fmt.Errorf("limiters: rate period must be positive, got %dns", int64(p.Rate.Per))
	}
	if a == GCRA || a == LeakyQueue {
		// These keep the bucket as a time debt of up to Capacity/Rate.
		hi, lo := bits.Mul64(uint64(p.Capacity), uint64(p.Rate.Per))
		if hi >= uint64(p.Rate.N) {
			return fmt.Errorf("limiters: capacity %d at rate %d per %dns takes longer than 2^63ns to drain", p.Capacity, p.Rate.N, int64(p.Rate.Per))
		}
		if q, _ := bits.Div64(hi, lo, uint64(p.Rate.N)); q > math.MaxInt64 {
			return fmt.Errorf("limiters: capacity %d at rate %d per %dns takes longer than 2^63ns to drain", p.Capacity, p.Rate.N, int64(p.Rate.Per))
		}
	}
	return nil
}

// A Reason says why a request was refused. Reasons are constants, never
// built per request, so they may be compared with ==.
type Reason string

// The reasons a Decision gives. ReasonCost, ReasonClock, ReasonBadCost and
// ReasonBadRule apply to every algorithm; the others are each algorithm's
// plain refusal.
const (
	ReasonNone      Reason = ""                        // the request was allowed
	ReasonCost      Reason = "cost exceeds capacity"   // cost above the limit or capacity: never allowed
	ReasonClock     Reason = "clock went backwards"    // time earlier than the key's state accepts
	ReasonBadCost   Reason = "cost must be positive"   // cost zero or negative
	ReasonBadRule   Reason = "rule does not fit state" // a state's Step got a rule for another algorithm
	ReasonWindow    Reason = "window full"             // FixedWindow
	ReasonLog       Reason = "log full"                // SlidingLog
	ReasonEstimate  Reason = "estimate at limit"       // SlidingCounter
	ReasonNoTokens  Reason = "no tokens"               // TokenBucket
	ReasonOverflow  Reason = "bucket full"             // LeakyBucket
	ReasonTooEarly  Reason = "too early"               // GCRA: before the theoretical arrival time allows
	ReasonQueueFull Reason = "queue full"              // LeakyQueue
)

var refusals = [numAlgorithms]Reason{
	FixedWindow:    ReasonWindow,
	SlidingLog:     ReasonLog,
	SlidingCounter: ReasonEstimate,
	TokenBucket:    ReasonNoTokens,
	LeakyBucket:    ReasonOverflow,
	GCRA:           ReasonTooEarly,
	LeakyQueue:     ReasonQueueFull,
}

// A Decision is a limiter's answer to one request.
type Decision struct {
	// Allowed reports whether the request is admitted.
	Allowed bool
	// Remaining is the number of whole cost units a request at the same
	// instant could still take after this one.
	Remaining int64
	// RetryAfter is how long after this request the same request would be
	// allowed if nothing else arrived in between: a retry at
	// now+RetryAfter is allowed, one a nanosecond earlier is not. It is 0
	// when the request is allowed, and InfDuration with ReasonCost, which
	// no wait cures, or when the wait is longer than a Duration holds.
	RetryAfter time.Duration
	// ResetAfter is how long until the key is back to its fresh state if
	// nothing else arrives; InfDuration when that is longer than a
	// Duration holds.
	ResetAfter time.Duration
	// Delay is, for LeakyQueue, how long an admitted request waits in the
	// queue before its release; 0 otherwise.
	Delay time.Duration
	// Reason says why the request was refused; ReasonNone when allowed.
	Reason Reason
}

// A Rule is a validated policy for one algorithm, in the form the
// algorithms' Step functions use. The zero Rule fits no algorithm.
// A Rule is immutable and safe for simultaneous use.
type Rule struct {
	alg     Algorithm
	ok      bool
	pol     Policy
	refusal Reason
	limit   int64 // Limit or Capacity
	window  int64
	n, per  uint64 // Rate in lowest terms

	// GCRA and LeakyQueue: the emission interval T = per/n and the burst
	// tolerance (Capacity-1)*T, each as whole ns plus a fraction in 1/n ns.
	tNs, tFrac         uint64
	burst1Ns, burst1Fr uint64
}

// NewRule validates p for algorithm a and returns the rule.
func NewRule(a Algorithm, p Policy) (*Rule, error) {
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	r := &Rule{alg: a, ok: true, pol: p, refusal: refusals[a]}
	if a.Windowed() {
		r.limit = p.Limit
		r.window = int64(p.Window)
		return r, nil
	}
	r.limit = p.Capacity
	g := gcd(uint64(p.Rate.N), uint64(p.Rate.Per))
	r.n, r.per = uint64(p.Rate.N)/g, uint64(p.Rate.Per)/g
	r.tNs, r.tFrac = r.interval(1)
	r.burst1Ns, r.burst1Fr = r.interval(uint64(p.Capacity - 1))
	return r, nil
}

// interval returns k*per/n as whole ns and a fraction in 1/n ns. Validate
// guarantees the whole part fits for k <= Capacity.
func (r *Rule) interval(k uint64) (ns, frac uint64) {
	hi, lo := bits.Mul64(k, r.per)
	if hi >= r.n {
		return math.MaxInt64, 0
	}
	return bits.Div64(hi, lo, r.n)
}

// Algorithm returns the rule's algorithm.
func (r *Rule) Algorithm() Algorithm { return r.alg }

// Policy returns the policy the rule was built from.
func (r *Rule) Policy() Policy { return r.pol }

// fits reports whether r is a valid rule for algorithm a.
func (r *Rule) fits(a Algorithm) bool {
	return r != nil && r.ok && r.alg == a
}
