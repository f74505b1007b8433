package limiters

import (
	"math"
	"math/bits"
	"time"
)

// A Clock says what a limiter does with a request whose time is earlier than
// its key's state accepts: the clock went backwards for that key. As in the
// classic implementations, that is a time in an earlier window than the key's current
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

// A Policy holds the parameters of a limiter. Each algorithm takes some
// of them (Algorithm.Params): the window algorithms (FixedWindow,
// SlidingLog, SlidingCounter) use Limit and Window; the bucket algorithms
// (TokenBucket, LeakyBucket, GCRA, LeakyQueue) use Capacity and Rate.
// Clock applies to all.
type Policy struct {
	Limit    int64         // window algorithms: most total cost per window
	Window   time.Duration // window algorithms: window length
	Capacity int64         // bucket algorithms: burst size
	Rate     Rate          // bucket algorithms: refill or leak rate
	// Buckets is SlidingBuckets' number of sub-windows; 0 means
	// DefaultBuckets.
	Buckets int64
	// Tick is TickQueue's unit of time: it reads times in whole ticks.
	// 0 means DefaultTick.
	Tick time.Duration
	// Parts is TickQueue's fixed point: it counts its queue in whole
	// 1/Parts of a request. 0 means DefaultParts.
	Parts int64
	// Delay is how many requests of TickQueue's queue pass without delay
	// (nginx limit_req's delay=); 0 delays all but the first.
	Delay int64
	// Block is how long BlockingCounter refuses every request of a key
	// once it refused one; 0 blocks nothing.
	Block time.Duration
	Clock Clock
	// Library is the configuration of a library kind beyond the
	// parameters above, in its library's own terms; every other kind
	// ignores it.
	Library Library
}

// A ParamKind says what type of value a parameter holds.
type ParamKind uint8

// The kinds of parameter.
const (
	ParamCount    ParamKind = iota // a positive whole number: *int64
	ParamDuration                  // a positive duration: *time.Duration
	ParamRate                      // a positive Rate: *Rate
)

// A Param describes one parameter of a Policy.
type Param struct {
	Name  string    // as command lines and files spell it: "limit"
	Kind  ParamKind // the type of its value
	Usage string    // what it means, in a few words
	// Default is its value when a policy gives none, as text, or "" when
	// it has no default of its own (a caller chooses one).
	Default string
	// field returns the parameter's field of p.
	field func(p *Policy) any
}

// params are the Policy's parameters, in the order Params lists them.
var params = []Param{
	{Name: "limit", Kind: ParamCount, Usage: "most total cost per window", field: func(p *Policy) any { return &p.Limit }},
	{Name: "window", Kind: ParamDuration, Usage: "window length", field: func(p *Policy) any { return &p.Window }},
	{Name: "capacity", Kind: ParamCount, Usage: "bucket size: most cost at once", field: func(p *Policy) any { return &p.Capacity }},
	{Name: "rate", Kind: ParamRate, Usage: "refill or leak rate", field: func(p *Policy) any { return &p.Rate }},
	{Name: "buckets", Kind: ParamCount, Usage: "sub-windows a window is counted in", Default: "10", field: func(p *Policy) any { return &p.Buckets }},
	{Name: "tick", Kind: ParamDuration, Usage: "unit of time: times are read in whole ticks", Default: "1ms", field: func(p *Policy) any { return &p.Tick }},
	{Name: "parts", Kind: ParamCount, Usage: "the queue is counted in whole 1/parts of a request", Default: "1000", field: func(p *Policy) any { return &p.Parts }},
	{Name: "delay", Kind: ParamCount, Usage: "queued requests passed without delay", Default: "0", field: func(p *Policy) any { return &p.Delay }},
	{Name: "block", Kind: ParamDuration, Usage: "how long a key over the limit is refused, every request of it (0: not at all)", Default: "0", field: func(p *Policy) any { return &p.Block }},
}

// Params returns the parameters of a Policy, the clock aside, in a fixed
// order.
func Params() []Param { return append([]Param(nil), params...) }

// Field returns a pointer to the field of p that holds the parameter
// named name: an *int64 (ParamCount), a *time.Duration (ParamDuration) or
// a *Rate (ParamRate); nil when there is no such parameter.
func (p *Policy) Field(name string) any {
	for _, prm := range params {
		if prm.Name == name {
			return prm.field(p)
		}
	}
	return nil
}

// check reports whether the value of prm in p is positive.
func (prm Param) check(p Policy) error {
	switch v := prm.field(&p).(type) {
	case *int64:
		if *v < 0 && prm.Default == "0" {
			return policyErrorf(prm.Name, "%s must not be negative, got %d", prm.Name, *v)
		}
		if *v <= 0 && (*v != 0 || prm.Default == "") && prm.Default != "0" { // 0 stands for the default
			return policyErrorf(prm.Name, "%s must be positive, got %d", prm.Name, *v)
		}
	case *time.Duration:
		if *v < 0 && prm.Default == "0" {
			return policyErrorf(prm.Name, "%s must not be negative, got %dns", prm.Name, int64(*v))
		}
		if *v <= 0 && (*v != 0 || prm.Default == "") { // 0 stands for the default
			return policyErrorf(prm.Name, "%s must be positive, got %dns", prm.Name, int64(*v))
		}
	case *Rate:
		if v.N <= 0 {
			return policyErrorf(prm.Name, "%s must be positive, got %d tokens per %dns", prm.Name, v.N, int64(v.Per))
		}
		if v.Per <= 0 {
			return policyErrorf(prm.Name, "%s period must be positive, got %dns", prm.Name, int64(v.Per))
		}
	}
	return nil
}

// equal reports whether p and q hold the same value of prm; rates are
// compared as numbers.
func (prm Param) equal(p, q Policy) bool {
	switch v := prm.field(&p).(type) {
	case *int64:
		return *v == *prm.field(&q).(*int64)
	case *time.Duration:
		return *v == *prm.field(&q).(*time.Duration)
	case *Rate:
		return v.Equal(*prm.field(&q).(*Rate))
	}
	return false
}

// param returns the parameter named name.
func param(name string) Param {
	for _, prm := range params {
		if prm.Name == name {
			return prm
		}
	}
	panic("limiters: no parameter " + name) // the kinds table names only params
}

// SameFor reports whether p and q are the same policy for algorithm a:
// equal in the clock and every parameter a takes, and for a library kind
// in Library.
func (p Policy) SameFor(a Algorithm, q Policy) bool {
	k := a.kind()
	if k == nil || p.Clock != q.Clock || k.library && p.Library != q.Library {
		return false
	}
	for _, name := range k.params {
		if !param(name).equal(p, q) {
			return false
		}
	}
	return true
}

// Validate reports the first parameter of p that algorithm a uses and that
// is not valid, naming it, as in "limiters: limit must be positive, got 0".
func (p Policy) Validate(a Algorithm) error {
	k := a.kind()
	if k == nil {
		return policyErrorf("", "unknown algorithm %d", uint8(a))
	}
	if p.Clock > ClockClamp {
		return policyErrorf("clock", "unknown clock mode %d", uint8(p.Clock))
	}
	for _, name := range k.params {
		if err := param(name).check(p); err != nil {
			return err
		}
	}
	if k.validate != nil {
		return k.validate(p)
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
	k       *kind
	pol     Policy
	refusal Reason
	limit   int64 // the most cost one request may have: Limit or Capacity
	window  int64
	// SlidingBuckets: the number of sub-windows and their length.
	buckets, sub int64
	// TickQueue: the tick in ns, the parts of a request, the capacity and
	// the delay threshold in parts, and the drain per tick in parts,
	// leakA/leakB in lowest terms.
	tick, parts, capParts, delayParts int64
	leakA, leakB                      uint64
	n, per                            uint64 // Rate in lowest terms

	// GCRA and LeakyQueue: the emission interval T = per/n and the burst
	// tolerance (Capacity-1)*T, each as whole ns plus a fraction in 1/n ns.
	tNs, tFrac         uint64
	burst1Ns, burst1Fr uint64

	// form is the state type stores keep the rule's states in (see
	// form); kmin and cbits are a narrow window form's lowest window
	// index and the bits of each count.
	form  form
	kmin  int64
	cbits uint

	lib libRule // the library kinds' own figures
}

// NewRule validates p for algorithm a and returns the rule.
func NewRule(a Algorithm, p Policy) (*Rule, error) {
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	k := a.kind()
	r := &Rule{alg: a, k: k, pol: p, refusal: k.refusal, window: int64(p.Window)}
	if limit, ok := p.Field(k.params[0]).(*int64); ok {
		r.limit = *limit // else setup sets it
	}
	if k.setup != nil {
		k.setup(r)
	}
	r.form = formOf(r)
	return r, nil
}

// setupRate derives a bucket rule's rate fields.
func setupRate(r *Rule) {
	p := r.pol
	g := gcd(uint64(p.Rate.N), uint64(p.Rate.Per))
	r.n, r.per = uint64(p.Rate.N)/g, uint64(p.Rate.Per)/g
	r.tNs, r.tFrac = r.interval(1)
	r.burst1Ns, r.burst1Fr = r.interval(uint64(p.Capacity - 1))
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
	return r != nil && r.k != nil && r.alg == a
}

// same reports whether r and o are rules of one algorithm under the same
// policy.
func (r *Rule) same(o *Rule) bool {
	return r.alg == o.alg && r.pol.SameFor(r.alg, o.pol)
}
