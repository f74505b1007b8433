package limiters

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// redisRate is the kinds table's entry for RedisRate.
var redisRate = kind{
	name:    "redis-rate-gcra",
	summary: "go-redis/redis_rate's GCRA in float64 seconds since 2017 (its Lua script)",
	doc: Doc{
		How: "go-redis/redis_rate's allowN script: GCRA with emission_interval = period / rate and burst_offset = emission_interval * burst, " +
			"in float64 seconds since 2017-01-01 from a clock read in microseconds. A request passes when " +
			"now - (max(tat, now) + emission_interval * cost - burst_offset) is not negative; the key then holds the new tat " +
			"and expires after ceil(reset_after) seconds.",
		State:   "constant: the tat (a float64) and when the key expires",
		Bursts:  "As GCRA, give or take the rounding of the float64 seconds, which grows with the date.",
		Explain: "\"tat 0.29999995231628418s ahead\": how far the stored tat is ahead of now, in the script's seconds.",
		Choose:  "Reproducing go-redis/redis_rate (Allow, AllowN).",
	},
	params:   bucketParams,
	refusal:  ReasonTooEarly,
	ops:      ops[RedisRateState, *RedisRateState]{},
	gauge:    gaugeSpec{quantity: "debt (requests)"},
	fast:     fastOf((*RedisRateState).decide),
	validate: validateRedisRate,
	setup: func(r *Rule) {
		c := r.pol.Library.RedisRate
		// AllowN passes limit.Period.Seconds() and the integers; the
		// script divides and multiplies them as Lua numbers.
		r.lib.emission = c.Period.Seconds() / float64(c.Rate)
		r.lib.burstOffset = r.lib.emission * float64(r.pol.Capacity)
		noCostLimit(r)
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
}

// RedisRateConfig is RedisRate's configuration: redis_rate.Limit's Rate
// and Period, which its script computes with apart (Policy.Rate holds
// their ratio in lowest terms, for reports). Policy.Capacity is
// Limit.Burst.
type RedisRateConfig struct {
	Rate   int64         // Limit.Rate: requests per period
	Period time.Duration // Limit.Period
}

// RedisRateEpoch is the Unix time, in seconds, that redis_rate's script
// counts its seconds from: 2017-01-01T00:00:00Z.
const RedisRateEpoch = 1483228800

func validateRedisRate(p Policy) error {
	c := p.Library.RedisRate
	if c.Rate < 1 || c.Period <= 0 {
		return fmt.Errorf("limiters: redis_rate rate and period must be positive, got %d per %v", c.Rate, c.Period)
	}
	if !p.Rate.Equal(Rate{N: c.Rate, Per: c.Period}) {
		return fmt.Errorf("limiters: redis_rate rate %d per %v is not the policy's rate %d per %dns", c.Rate, c.Period, p.Rate.N, int64(p.Rate.Per))
	}
	return nil
}

// RedisRateState is one key's state under RedisRate: the tat the script
// stored, and when Redis expires the key. The zero value is the fresh
// state: no key. It holds no pointers and may be copied freely.
type RedisRateState struct {
	tat    float64 // seconds since RedisRateEpoch, as stored
	expire int64   // the last millisecond the key lives in
	seen   bool    // false while there is no key
}

// Step judges a request of cost at now for rule r (which must be a
// RedisRate rule) and returns the new state and the decision. It does not
// change s.
//
// now is a Unix time in nanoseconds, read as Redis TIME reads it: whole
// seconds and microseconds, the script's now being (seconds - 1483228800)
// + microseconds/1e6 as a float64. Every step of the script's arithmetic
// is a float64 operation in its order. The decision reports what
// redis_rate's Result does: Remaining is the script's remaining,
// truncated, and 0 on a refusal; RetryAfter and ResetAfter are its
// retry_after and reset_after as Lua's tostring writes them (14
// significant digits), read back and converted to a time.Duration as
// redis_rate converts them. A cost above the burst gets a finite
// RetryAfter there, and so here, with ReasonCost. The key expires
// ceil(reset_after) seconds after the request, counted in Redis's
// milliseconds: a later request finds none.
func (s RedisRateState) Step(r *Rule, now, cost int64) (RedisRateState, Decision) {
	if !r.fits(RedisRate) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *RedisRateState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// redisNow returns the script's now for the time t: TIME's seconds less
// the epoch, plus its microseconds over 1e6.
func redisNow(t int64) float64 {
	sec, ns := floorDivMod(t, int64(time.Second))
	return float64(sec-RedisRateEpoch) + float64(ns/1000)/1000000
}

// live reports whether the key is there at the millisecond ms.
func (s *RedisRateState) live(ms int64) bool { return s.seen && ms <= s.expire }

func (s *RedisRateState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	nowS := redisNow(now)
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	tat := nowS
	if s.live(ms) {
		tat = s.tat
	}
	if nowS > tat { // math.max(tat, now)
		tat = nowS
	}
	newTat := tat + r.lib.emission*float64(cost)
	allowAt := newTat - r.lib.burstOffset
	diff := nowS - allowAt
	remaining := diff / r.lib.emission
	allowed = !(remaining < 0)
	var reset float64
	if allowed {
		reset = newTat - nowS
		if reset > 0 && commit && cost > 0 {
			s.tat, s.seen = newTat, true
			s.expire = satAdd(ms, int64(math.Ceil(reset))*1000)
		}
	} else {
		reset = tat - nowS
	}
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed, ResetAfter: luaDuration(reset)}
	if allowed {
		d.Remaining = int64(remaining)
	} else {
		d.Reason = r.refusal
		if cost > r.pol.Capacity {
			d.Reason = ReasonCost // never passes, though its retry_after is finite
		}
		d.RetryAfter = luaDuration(diff * -1)
	}
	if x != nil {
		x.RetryAfter, x.ResetAfter = spanOf(int64(d.RetryAfter)), spanOf(int64(d.ResetAfter))
	}
	*out = d
	return allowed, false
}

// luaDuration is what redis_rate makes of a number the script returns as
// tostring(v): Lua 5.1 writes it with "%.14g", redis_rate parses that and
// multiplies it by a second, truncating. It saturates at InfDuration.
func luaDuration(v float64) time.Duration {
	var buf [32]byte
	f := parseFloatBytes(strconv.AppendFloat(buf[:0], v, 'g', 14, 64))
	d := f * float64(time.Second)
	if d >= float64(math.MaxInt64) {
		return InfDuration
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(d)
}

func (s *RedisRateState) idle(r *Rule, now int64) bool {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	return !s.live(ms) || !(s.tat > redisNow(now))
}

// appendText appends "tat Ds ahead", how far the stored tat is ahead of
// the script's now at at, or "no key".
func (s *RedisRateState) appendText(r *Rule, _ *RedisRateState, at int64, _ time.Duration, dst []byte) []byte {
	ms, _ := floorDivMod(at, int64(time.Millisecond))
	if !s.live(ms) {
		return append(dst, "no key"...)
	}
	dst = append(dst, "tat "...)
	dst = appendFloat(dst, s.tat-redisNow(at))
	return append(dst, "s ahead"...)
}

func (s *RedisRateState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, math.Float64bits(s.tat), uint64(s.expire))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *RedisRateState) readBinary(_ *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 || math.IsNaN(math.Float64frombits(w[0])) {
		return false
	}
	s.tat, s.expire, s.seen = math.Float64frombits(w[0]), int64(w[1]), b[16] == 1
	return true
}

// Key returns what Redis holds for the key: the tat, in the script's
// seconds since RedisRateEpoch, and the last millisecond the key lives
// in; ok is false when it has never held one.
func (s RedisRateState) Key() (tat float64, expire int64, ok bool) {
	return s.tat, s.expire, s.seen
}

// gauge is the debt in requests, (tat - now) / emission_interval, as the
// script computes it at the microsecond it reads: it stands still within
// a microsecond and falls at the next, until the tat; 0 when there is no
// key.
func (s *RedisRateState) gauge(r *Rule, now int64) (float64, int64) {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	nowS := redisNow(now)
	if !s.live(ms) || !(s.tat > nowS) {
		return 0, math.MaxInt64
	}
	us, _ := floorDivMod(now, int64(time.Microsecond))
	return (s.tat - nowS) / r.lib.emission, satMulInt64(satAdd(us, 1), int64(time.Microsecond))
}
