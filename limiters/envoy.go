package limiters

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// envoyRateLimit is the kinds table's entry for EnvoyRateLimit.
var envoyRateLimit = kind{
	name:    "envoy-fixed-window",
	summary: "Envoy's ratelimit service: Redis fixed window of Unix seconds, every hit counted",
	doc: Doc{
		How: "Envoy's ratelimit service with its Redis cache: the window is the Unix time in whole seconds divided by the unit " +
			"(in Go, so truncated toward zero), and every hit is added to the window's counter (INCRBY) before it is compared, " +
			"a cost above the limit included. A request passes while the counter after it is within --limit.",
		State:   "constant: the window and its counter",
		Bursts:  "As fixed-window-hits: up to twice the limit across a window edge.",
		Explain: "\"window [0,3600) hits 12 near 2 over 2\": the window, its counter, and the hits its near_limit and over_limit statistics count.",
		Choose:  "Reproducing Envoy's global rate limiting (envoyproxy/ratelimit).",
	},
	params:   windowParams,
	refusal:  ReasonOverLimit,
	ops:      ops[EnvoyState, *EnvoyState]{},
	gauge:    gaugeSpec{quantity: "hits in window"},
	fast:     fastOf((*EnvoyState).decide),
	validate: validateEnvoy,
	setup:    func(r *Rule) { r.lib.divider = int64(r.pol.Window / time.Second); noCostLimit(r) },
	bound:    envoyBound,
	library:  true,
}

func validateEnvoy(p Policy) error {
	if p.Window%time.Second != 0 {
		return fmt.Errorf("limiters: Envoy's unit is a whole number of seconds, got %v", p.Window)
	}
	return nil
}

// envoyBound: at most the limit per window, and the window around 0,
// where truncation merges two, is 2W-1 seconds long.
func envoyBound(p Policy, interval int64) int64 {
	return satMul(uint64(interval)/uint64(p.Window)+3, uint64(p.Limit))
}

// EnvoyState is one key's state under EnvoyRateLimit: its window and the
// window's counter. The zero value is the fresh state. It holds no
// pointers and may be copied freely.
type EnvoyState struct {
	window int64 // Unix seconds / unit, truncated toward zero
	hits   int64 // the counter; saturates at math.MaxInt64
	seen   bool
}

// Step judges a request of cost at now for rule r (which must be an
// EnvoyRateLimit rule) and returns the new state and the decision. It
// does not change s.
//
// now is a Unix time in nanoseconds. The service reads it in whole
// seconds (time.Now().Unix()) and names the window (now/unit)*unit, with
// Go's division, truncated toward zero: before 1970 the windows differ
// from the aligned ones, and the one around 0 is 2*unit-1 seconds long.
// Every hit is added to the window's counter, then the counter is
// compared with the limit: OK within it, OVER_LIMIT above it, whatever
// the cost. Remaining is the service's LimitRemaining (0 when over),
// ResetAfter its DurationUntilReset, unit - now%unit whole seconds. A
// request in a window earlier than the key's is judged by the clock rule.
func (s EnvoyState) Step(r *Rule, now, cost int64) (EnvoyState, Decision) {
	if !r.fits(EnvoyRateLimit) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

// envoyWindowOf returns the window of the Unix second sec, sec/unit with
// Go's division, and the second the next window starts at: a negative
// window k holds the seconds (k*unit-unit, k*unit], window 0 those of
// (-unit, unit).
func envoyWindowOf(r *Rule, sec int64) (k, next int64) {
	d := r.lib.divider
	k = sec / d
	if sec >= 0 || k == 0 {
		return k, (k + 1) * d
	}
	return k, k*d + 1
}

// envoyStart returns the second window k starts at.
func envoyStart(r *Rule, k int64) int64 {
	d := r.lib.divider
	if k > 0 {
		return k * d
	}
	return k*d - d + 1
}

func (s *EnvoyState) boundary(r *Rule, now int64) (int64, bool) {
	if !s.seen {
		return 0, false
	}
	sec, _ := floorDivMod(now, int64(time.Second))
	if k, _ := envoyWindowOf(r, sec); k < s.window {
		start := envoyStart(r, s.window)
		if start > math.MaxInt64/int64(time.Second) {
			return math.MaxInt64, true
		}
		return start * int64(time.Second), true
	}
	return 0, false
}

func (s *EnvoyState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	sec, _ := floorDivMod(now, int64(time.Second))
	k, next := envoyWindowOf(r, sec)
	if s.seen && k < s.window {
		return false, true
	}
	before := int64(0)
	if s.seen && k == s.window {
		before = s.hits
	}
	after := satAdd(before, cost)
	limit := r.pol.Limit
	allowed = after <= limit
	if commit && cost > 0 {
		s.window, s.hits, s.seen = k, after, true
	}
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed}
	if allowed {
		d.Remaining = limit - after
	} else {
		d.Reason = r.refusal
		retry := until(next, uint64(time.Second), now)
		if cost > limit {
			d.Reason, retry = ReasonCost, maxSpan
		}
		setRetry(&d, x, retry)
	}
	// DurationUntilReset: unit - now%unit, Go's remainder.
	setReset(&d, x, span64(uint64(r.lib.divider-sec%r.lib.divider)*uint64(time.Second)))
	*out = d
	return allowed, false
}

func (s *EnvoyState) idle(r *Rule, now int64) bool {
	if !s.seen {
		return true
	}
	sec, _ := floorDivMod(now, int64(time.Second))
	k, _ := envoyWindowOf(r, sec)
	return k > s.window
}

// appendText appends "window [a,b) hits N", with Envoy's near and over
// counts when there are any.
func (s *EnvoyState) appendText(r *Rule, _ *EnvoyState, at int64, unit time.Duration, dst []byte) []byte {
	sec, _ := floorDivMod(at, int64(time.Second))
	k, next := envoyWindowOf(r, sec)
	hits := int64(0)
	if s.seen && s.window >= k {
		k, hits = s.window, s.hits
		_, next = envoyWindowOf(r, envoyStart(r, k))
	}
	start := envoyStart(r, k)
	if k == 0 && sec >= 0 {
		start = 0 // the window's part since 1970, which is all a later request sees
	}
	dst = append(dst, "window ["...)
	dst = appendTime(dst, satMulInt64(start, int64(time.Second)), unit)
	dst = append(dst, ',')
	dst = appendTime(dst, satMulInt64(next, int64(time.Second)), unit)
	dst = append(dst, ") hits "...)
	dst = strconv.AppendInt(dst, hits, 10)
	near, over := nearOver(r.pol.Limit, hits)
	if near > 0 || over > 0 {
		dst = append(dst, " near "...)
		dst = strconv.AppendInt(dst, near, 10)
		dst = append(dst, " over "...)
		dst = strconv.AppendInt(dst, over, 10)
	}
	return dst
}

// satMulInt64 returns a*b saturated to the int64 range, for b > 0.
func satMulInt64(a, b int64) int64 {
	if a >= 0 {
		return satMulInt(a, b)
	}
	if m := satMulInt(-a, b); m < math.MaxInt64 {
		return -m
	}
	return math.MinInt64
}

func (s *EnvoyState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.window), uint64(s.hits))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *EnvoyState) readBinary(_ *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 || int64(w[1]) < 0 {
		return false
	}
	s.window, s.hits, s.seen = int64(w[0]), int64(w[1]), b[16] == 1
	return true
}

// gauge is the counter of the window that holds now, every hit counted,
// until the window ends.
func (s *EnvoyState) gauge(r *Rule, now int64) (float64, int64) {
	sec, _ := floorDivMod(now, int64(time.Second))
	k, next := envoyWindowOf(r, sec)
	end := max(satMulInt64(next, int64(time.Second)), satAdd(now, 1))
	if !s.seen || k != s.window {
		return 0, end
	}
	return float64(s.hits), end
}
