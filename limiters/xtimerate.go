package limiters

import (
	"fmt"
	"math"
	"time"
)

// xTimeRate is the kinds table's entry for XTimeRate.
var xTimeRate = kind{
	name:    "x-time-rate-tokens",
	summary: "golang.org/x/time/rate's token bucket with float64 tokens (AllowN)",
	doc: Doc{
		How: "golang.org/x/time/rate's Limiter as AllowN(t, n) uses it: a bucket of --capacity tokens, full at first, refilled at the rate.Limit, " +
			"with the tokens a float64 and the refill elapsed.Seconds() * limit. A request passes when the tokens left after it are not negative, " +
			"or when the wait for the missing part of a token, converted to a time.Duration, truncates to 0 ns. " +
			"A time earlier than the last one refills nothing, and an allowed one moves the limiter's clock back to it.",
		State:   "constant: the tokens (a float64) and the time they were counted",
		Bursts:  "As the token bucket, give or take the rounding of the float64 tokens.",
		Explain: "\"tokens 0.9999999999999998\": the tokens after the decision, as the library holds them.",
		Choose:  "Reproducing a Go service that limits with golang.org/x/time/rate.",
	},
	params:   bucketParams,
	refusal:  ReasonNoTokens,
	ops:      ops[XTimeRateState, *XTimeRateState]{},
	gauge:    gaugeSpec{quantity: "tokens", free: true},
	fast:     fastOf((*XTimeRateState).decide),
	validate: validateXTimeRate,
	setup: func(r *Rule) {
		r.lib.xLimit = r.pol.Library.XTimeRate.Limit
		r.lib.xBurst = float64(r.pol.Capacity)
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
}

// XTimeRateConfig is XTimeRate's configuration: the rate.Limit, which the
// library holds as a float64. Policy.Capacity is the burst b of
// rate.NewLimiter(limit, b); Policy.Rate is the rate exactly, for reports.
type XTimeRateConfig struct {
	// Limit is the rate.Limit in tokens per second, exactly the float64
	// the library holds: rate.Limit(0.3) or rate.Every(7*time.Millisecond).
	// math.MaxFloat64 is rate.Inf, which allows every request; 0 allows
	// the burst and then nothing.
	Limit float64
}

func validateXTimeRate(p Policy) error {
	l := p.Library.XTimeRate.Limit
	if l < 0 || math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("limiters: x/time/rate limit must be a finite float64 of at least 0, got %v", l)
	}
	return nil
}

// XTimeRateState is one key's state under XTimeRate: the limiter's tokens
// and the time of its last update, as rate.Limiter keeps them. The zero
// value is the fresh state: a limiter from rate.NewLimiter, full. It holds
// no pointers and may be copied freely.
type XTimeRateState struct {
	tokens float64
	last   int64 // the time the tokens were counted at
	seen   bool  // false only in the fresh state
}

// Step judges a request of cost at now for rule r (which must be an
// XTimeRate rule) and returns the new state and the decision. It does not
// change s.
//
// It is rate.Limiter.AllowN(time.Unix(0, now), cost): the tokens are
// refilled by elapsed.Seconds()*limit from the last update (none when now
// is earlier), capped at the burst; the request passes when the tokens
// less cost are not negative or their deficit's wait,
// time.Duration(deficit/limit*1e9), is not positive, and then the tokens
// and the time are updated. Remaining is the tokens after the decision,
// truncated (Limiter.TokensAt), RetryAfter the wait a reservation at now
// would get (Reservation.DelayFrom), ResetAfter the time until the tokens
// are back at the burst.
func (s XTimeRateState) Step(r *Rule, now, cost int64) (XTimeRateState, Decision) {
	if !r.fits(XTimeRate) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *XTimeRateState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// advance returns the tokens at now, as Limiter.advance computes them: a
// time before the last refills nothing.
func (s *XTimeRateState) advance(r *Rule, now int64) float64 {
	if !s.seen {
		// NewLimiter's tokens, b, and its last time, the zero Time:
		// any time refills it to b at once.
		return r.lib.xBurst
	}
	last := s.last
	if now < last {
		last = now
	}
	tokens := s.tokens + xTokens(r.lib.xLimit, time.Duration(satSub(now, last)))
	if tokens > r.lib.xBurst {
		tokens = r.lib.xBurst
	}
	return tokens
}

// xTokens is Limit.tokensFromDuration.
func xTokens(limit float64, d time.Duration) float64 {
	if limit <= 0 {
		return 0
	}
	return d.Seconds() * limit
}

// xDuration is Limit.durationFromTokens.
func xDuration(limit, tokens float64) time.Duration {
	if limit <= 0 {
		return InfDuration
	}
	d := (tokens / limit) * float64(time.Second)
	if d > float64(math.MaxInt64) {
		return InfDuration
	}
	return time.Duration(d)
}

func (s *XTimeRateState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	limit := r.lib.xLimit
	before := s.advance(r, now)
	tokens := before
	var wait time.Duration
	if limit == math.MaxFloat64 {
		allowed = true // rate.Inf: reserveN allows and changes nothing
	} else {
		tokens -= float64(cost)
		if tokens < 0 {
			wait = xDuration(limit, -tokens)
		}
		allowed = wait <= 0 // cost <= burst: the shared rule refused the others
		if allowed && commit {
			s.tokens, s.last, s.seen = tokens, now, true
		}
	}
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed}
	left := before
	if allowed && limit != math.MaxFloat64 {
		left = tokens
	}
	if !allowed {
		d.Reason = r.refusal
		setRetry(&d, x, spanOf(int64(wait)))
	}
	if left > 0 {
		d.Remaining = int64(left) // TokensAt, truncated
	}
	// The state the limiter holds after the decision, and when it is full.
	held, at := s.tokens, s.last
	if !s.seen {
		held, at = r.lib.xBurst, now
	}
	if e, ok := xFullAfter(held, limit, r.lib.xBurst); !ok {
		setReset(&d, x, maxSpan)
	} else if held < r.lib.xBurst {
		setReset(&d, x, spanOf(satAdd(at, e)-now))
	}
	*out = d
	return allowed, false
}

// xFullAfter returns the shortest time e after its last update at which
// a limiter holding tokens is full: tokens + e.Seconds()*limit >= burst,
// as advance computes it; false when it never is.
func xFullAfter(tokens, limit, burst float64) (int64, bool) {
	full := func(e int64) bool { return tokens+xTokens(limit, time.Duration(e)) >= burst }
	if tokens >= burst {
		return 0, true
	}
	if !full(math.MaxInt64) {
		return 0, false
	}
	// full is monotone in e: search around the estimate, then halve.
	lo, hi := int64(-1), int64(math.MaxInt64) // full(lo) false, full(hi) true
	if est := int64(xDuration(limit, burst-tokens)); est > 0 && est < math.MaxInt64 {
		if full(est) {
			hi = est
			for step := int64(1); est-step > lo; step *= 2 {
				if !full(est - step) {
					lo = est - step
					break
				}
				hi = est - step
			}
		} else {
			lo = est
			for step := int64(1); est < math.MaxInt64-step; step *= 2 {
				if full(est + step) {
					hi = est + step
					break
				}
				lo = est + step
			}
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if full(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

func (s *XTimeRateState) idle(r *Rule, now int64) bool {
	return !s.seen || s.advance(r, now) >= r.lib.xBurst
}

// appendText appends "tokens T": the tokens after a decision at at, as
// the float64 the library holds.
func (s *XTimeRateState) appendText(r *Rule, _ *XTimeRateState, at int64, _ time.Duration, dst []byte) []byte {
	dst = append(dst, "tokens "...)
	return appendFloat(dst, s.advance(r, at))
}

func (s *XTimeRateState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, math.Float64bits(s.tokens), uint64(s.last))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *XTimeRateState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 {
		return false
	}
	tokens := math.Float64frombits(w[0])
	if math.IsNaN(tokens) || tokens > r.lib.xBurst {
		return false
	}
	s.tokens, s.last, s.seen = tokens, int64(w[1]), b[16] == 1
	return true
}

// gauge is the burst less the tokens at now, as the library counts them
// (TokensAt), until the bucket is full; before the last update nothing
// refills, so it stands still until then.
func (s *XTimeRateState) gauge(r *Rule, now int64) (float64, int64) {
	used := r.lib.xBurst - s.advance(r, now)
	limit := r.lib.xLimit
	switch {
	case used <= 0 || limit <= 0 || limit == math.MaxFloat64:
		return max(used, 0), math.MaxInt64
	case now < s.last:
		return used, s.last
	}
	return used, s.fullAt(r)
}

// fullAt returns the first time from the last update at which the tokens
// are back at the burst, as advance counts them: from the wait for the
// missing tokens, which durationFromTokens truncates, to the nanosecond
// at which the float64 sum reaches the burst.
func (s *XTimeRateState) fullAt(r *Rule) int64 {
	full := func(t int64) bool {
		return s.tokens+xTokens(r.lib.xLimit, time.Duration(satSub(t, s.last))) >= r.lib.xBurst
	}
	t := satAdd(s.last, int64(xDuration(r.lib.xLimit, r.lib.xBurst-s.tokens)))
	for i := 0; i < 64 && t > s.last && full(t-1); i++ {
		t--
	}
	for i := 0; i < 64 && t < math.MaxInt64 && !full(t); i++ {
		t++
	}
	return t
}
