package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// throttled is the kinds table's entry for Throttled.
var throttled = kind{
	name:    "throttled-gcra",
	summary: "throttled/throttled's GCRARateLimiter, in whole nanoseconds",
	doc: Doc{
		How: "throttled/throttled's GCRARateLimiter: GCRA with the emission interval in whole nanoseconds and a delay variation tolerance " +
			"of --capacity intervals. A request passes when now - (max(tat, now) + cost*interval - tolerance) is not negative. " +
			"With its Redis store the time is Redis TIME, in microseconds, and a key expires after its ttl in whole seconds, rounded down.",
		State:   "constant: the tat and, with the Redis store, when the key expires",
		Bursts:  "As GCRA; with the Redis store a key may expire before its tat and let a burst through early.",
		Explain: "\"tat 15\": the theoretical arrival time the store holds after the decision.",
		Choose:  "Reproducing throttled/throttled (GCRARateLimiterCtx) with its memstore or its Redis store.",
	},
	params:   bucketParams,
	refusal:  ReasonTooEarly,
	ops:      ops[ThrottledState, *ThrottledState]{},
	gauge:    gaugeSpec{quantity: "debt (requests)"},
	fast:     fastOf((*ThrottledState).decide),
	validate: validateThrottled,
	setup: func(r *Rule) {
		period := int64(r.pol.Rate.Per) / r.pol.Rate.N
		r.lib.tEmission = period
		r.lib.tDVT = period * r.pol.Capacity // as throttled computes it, wrapping
		r.lib.tRedis = r.pol.Library.Throttled.Redis
		noCostLimit(r)
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
}

// ThrottledConfig is Throttled's configuration beyond its RateQuota
// (Policy.Capacity is MaxBurst + 1, Policy.Rate one request per the
// Rate's period in whole nanoseconds).
type ThrottledConfig struct {
	// Redis: the store is its Redis store (goredisstore), which reads
	// the time from Redis in microseconds and keeps each key for its ttl
	// in whole seconds, rounded down, at least one; otherwise the
	// memstore, which reads the time in nanoseconds and keeps keys until
	// they are evicted (not modelled: unbounded).
	Redis bool
}

func validateThrottled(p Policy) error {
	if int64(p.Rate.Per)%p.Rate.N != 0 {
		return fmt.Errorf("limiters: throttled's rate is one request per a whole number of nanoseconds, got %d per %dns", p.Rate.N, int64(p.Rate.Per))
	}
	return nil
}

// ThrottledState is one key's state under Throttled: the tat the store
// holds, in Unix nanoseconds, and with the Redis store when the key
// expires. The zero value is the fresh state: no key. It holds no
// pointers and may be copied freely.
type ThrottledState struct {
	tat    int64
	expire int64 // the last millisecond the key lives in (Redis store)
	seen   bool  // false while there is no key
}

// Step judges a request of cost at now for rule r (which must be a
// Throttled rule) and returns the new state and the decision. It does not
// change s.
//
// It is GCRARateLimiterCtx.RateLimitCtx(ctx, key, cost) with a store whose
// clock reads now: the decision, and the RateLimitResult's Remaining,
// ResetAfter and RetryAfter as throttled computes them, quirks included: a
// cost above MaxBurst+1 is refused with the ttl left at 0, so Remaining is
// MaxBurst+1 and ResetAfter 0.
func (s ThrottledState) Step(r *Rule, now, cost int64) (ThrottledState, Decision) {
	if !r.fits(Throttled) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *ThrottledState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// clock returns the store's time for now and its millisecond.
func (s *ThrottledState) clock(r *Rule, now int64) (t, ms int64) {
	if r.lib.tRedis {
		us, _ := floorDivMod(now, int64(time.Microsecond))
		now = us * int64(time.Microsecond)
	}
	ms, _ = floorDivMod(now, int64(time.Millisecond))
	return now, ms
}

// live reports whether the store holds the key at the millisecond ms.
func (s *ThrottledState) live(r *Rule, ms int64) bool {
	return s.seen && (!r.lib.tRedis || ms <= s.expire)
}

// subAdd returns a - b + c, saturated to the int64 range as time.Time.Sub
// saturates.
func subAdd(a, b, c int64) int64 {
	ext := func(v int64) uint64 { return uint64(v >> 63) }
	hi, lo := sub128(ext(a), uint64(a), ext(b), uint64(b))
	hi, lo = add128(hi, lo, ext(c), uint64(c))
	switch {
	case int64(hi) < -1 || int64(hi) == -1 && int64(lo) >= 0:
		return math.MinInt64
	case int64(hi) > 0 || hi == 0 && int64(lo) < 0:
		return math.MaxInt64
	}
	return int64(lo)
}

func (s *ThrottledState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	now, ms := s.clock(r, now)
	live := s.live(r, ms)
	tat := now
	if live {
		tat = s.tat
	}
	emission, dvt := r.lib.tEmission, r.lib.tDVT
	increment := cost * emission // time.Duration(quantity) * interval, wrapping
	var newTat int64
	if now > tat {
		newTat = now + increment
	} else {
		newTat = tat + increment
	}
	diff := subAdd(now, newTat, dvt) // now.Sub(newTat.Add(-dvt))
	limited := diff < 0
	var ttl int64
	retry := Span{}
	if limited {
		if increment <= dvt {
			retry = spanOf(-diff)
			ttl = subAdd(tat, now, 0)
		} else {
			retry = maxSpan // RetryAfter stays -1: never
		}
	} else {
		ttl = subAdd(newTat, now, 0)
		if commit && cost > 0 {
			if r.lib.tRedis {
				var secs int64
				if !live {
					// SetIfNotExistsWithTTL: EXPIRE with at least a
					// second, in whole seconds.
					secs = max(ttl, int64(time.Second)) / int64(time.Second)
				} else {
					// CompareAndSwapWithTTL: int(ttl.Seconds()), at
					// least 1.
					secs = max(int64(time.Duration(ttl).Seconds()), 1)
				}
				s.expire = satAdd(ms, satMulInt(secs, 1000))
			}
			s.tat, s.seen = newTat, true
		}
	}
	if out == nil {
		return !limited, false
	}
	d := Decision{Allowed: !limited}
	if next := dvt - ttl; next > -emission {
		d.Remaining = max(next/emission, 0)
	}
	setReset(&d, x, spanOf(ttl))
	if limited {
		d.Reason = r.refusal
		if increment > dvt {
			d.Reason = ReasonCost
		}
		setRetry(&d, x, retry)
	}
	*out = d
	return !limited, false
}

// satMulInt returns a*b for a, b >= 0, saturating.
func satMulInt(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

func (s *ThrottledState) idle(r *Rule, now int64) bool {
	now, ms := s.clock(r, now)
	return !s.live(r, ms) || s.tat <= now
}

// appendText appends "tat T", the tat the store holds, or "no tat".
func (s *ThrottledState) appendText(r *Rule, _ *ThrottledState, at int64, unit time.Duration, dst []byte) []byte {
	_, ms := s.clock(r, at)
	if !s.live(r, ms) {
		return append(dst, "no tat"...)
	}
	dst = append(dst, "tat "...)
	return appendTime(dst, s.tat, unit)
}

func (s *ThrottledState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.tat), uint64(s.expire))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *ThrottledState) readBinary(_ *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 {
		return false
	}
	s.tat, s.expire, s.seen = int64(w[0]), int64(w[1]), b[16] == 1
	return true
}

// Key returns what the store holds for the key: the tat in Unix
// nanoseconds and, with the Redis store, the last millisecond the key
// lives in; ok is false when it has never held one.
func (s ThrottledState) Key() (tat, expire int64, ok bool) {
	return s.tat, s.expire, s.seen
}

// gauge is the debt in requests, (tat - now) / emission interval, until
// the tat (with the Redis store, which reads the clock in microseconds,
// it stands still within a microsecond), or until the store's key
// expires before it: 0 when the store holds no key.
func (s *ThrottledState) gauge(r *Rule, now int64) (float64, int64) {
	t, ms := s.clock(r, now)
	if !s.live(r, ms) || s.tat <= t || r.lib.tEmission <= 0 {
		return 0, math.MaxInt64
	}
	until := s.tat
	if r.lib.tRedis {
		until = min(satAdd(t, int64(time.Microsecond)), satMulInt64(satAdd(s.expire, 1), int64(time.Millisecond)))
	}
	return float64(s.tat-t) / float64(r.lib.tEmission), until
}
