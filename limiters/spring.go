package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// springGateway is the kinds table's entry for SpringGateway.
var springGateway = kind{
	name:    "spring-token-bucket",
	summary: "Spring Cloud Gateway's RedisRateLimiter: tokens in whole seconds (request_rate_limiter.lua)",
	doc: Doc{
		How: "Spring Cloud Gateway's request_rate_limiter.lua: a bucket of burstCapacity tokens refilled replenishRate tokens per whole second " +
			"of Redis TIME, each request taking requestedTokens. Every request, refused or not, stores the tokens and the second it saw, " +
			"for floor(2 * burstCapacity / replenishRate) seconds; when that is 0 the script stores nothing and every request finds a full bucket.",
		State:   "constant: the tokens and the second they were counted at",
		Bursts:  "burstCapacity / requestedTokens requests at once, then replenishRate tokens at each whole second.",
		Explain: "\"tokens 4 at 12\": the tokens stored after the decision and the second they were counted at.",
		Choose:  "Reproducing Spring Cloud Gateway's RequestRateLimiter filter with its RedisRateLimiter.",
	},
	params:   []string{"rate"},
	refusal:  ReasonNoTokens,
	ops:      ops[SpringState, *SpringState]{},
	gauge:    gaugeSpec{quantity: "tokens", free: true, limit: springCapacity, limitName: "burstCapacity"},
	fast:     fastOf((*SpringState).decide),
	validate: validateSpring,
	setup: func(r *Rule) {
		c := r.pol.Library.Spring
		hi, lo := bits.Mul64(uint64(r.pol.Rate.N), uint64(time.Second))
		perSec, _ := bits.Div64(hi, lo, uint64(r.pol.Rate.Per))
		r.lib.sRate = int64(perSec)
		r.lib.sCapacity, r.lib.sTokens = c.BurstCapacity, c.RequestedTokens
		// local ttl = math.floor(capacity / rate * 2)
		r.lib.sTTL = int64(math.Floor(float64(c.BurstCapacity) / float64(r.lib.sRate) * 2))
		noCostLimit(r)
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
}

// SpringConfig is SpringGateway's configuration beyond replenishRate
// (Policy.Rate, whole tokens per second).
type SpringConfig struct {
	// BurstCapacity is the bucket's size in tokens; 0 refuses everything.
	BurstCapacity int64
	// RequestedTokens is what one request takes; a request of cost c
	// takes c times as many.
	RequestedTokens int64
}

// springMaxTokens bounds the tokens and the counts the script handles in
// Lua numbers exactly: REDIS_LUA_MAX_SAFE_INTEGER.
const springMaxTokens = 1<<53 - 1

func validateSpring(p Policy) error {
	c := p.Library.Spring
	hi, lo := bits.Mul64(uint64(p.Rate.N), uint64(time.Second))
	if hi >= uint64(p.Rate.Per) {
		return fmt.Errorf("limiters: Spring's replenishRate %d per %dns is out of range", p.Rate.N, int64(p.Rate.Per))
	}
	if perSec, rem := bits.Div64(hi, lo, uint64(p.Rate.Per)); rem != 0 || perSec > math.MaxInt32 {
		return fmt.Errorf("limiters: Spring's replenishRate is a whole number of tokens per second up to %d, got %d per %dns", math.MaxInt32, p.Rate.N, int64(p.Rate.Per))
	}
	if c.BurstCapacity < 0 || c.BurstCapacity > springMaxTokens {
		return fmt.Errorf("limiters: Spring's burstCapacity must be from 0 to %d, got %d", int64(springMaxTokens), c.BurstCapacity)
	}
	if c.RequestedTokens < 1 || c.RequestedTokens > springMaxTokens {
		return fmt.Errorf("limiters: Spring's requestedTokens must be from 1 to %d, got %d", int64(springMaxTokens), c.RequestedTokens)
	}
	return nil
}

// SpringState is one key's state under SpringGateway: the tokens and
// timestamp keys the script keeps. The zero value is the fresh state: no
// keys. It holds no pointers and may be copied freely.
type SpringState struct {
	tokens int64 // whole tokens, at most BurstCapacity
	last   int64 // the Unix second they were counted at
	seen   bool
}

// Step judges a request of cost at now for rule r (which must be a
// SpringGateway rule) and returns the new state and the decision. It does
// not change s.
//
// now is read as the script reads Redis TIME, in whole Unix seconds. The
// bucket is refilled by replenishRate * max(0, now - last) tokens up to
// burstCapacity (a missing key is a full bucket last refilled at second
// 0), the request passes when it holds cost * requestedTokens, and the
// tokens and now are stored, whether it passed or not, unless the
// script's TTL is 0. Remaining is the tokens left, as the
// X-RateLimit-Remaining header says; RetryAfter and ResetAfter are when
// a whole second brings enough tokens back. The keys' expiry is not
// kept: the script's TTL is never shorter than the time the bucket takes
// to fill, after which an expired key and a kept one decide alike.
func (s SpringState) Step(r *Rule, now, cost int64) (SpringState, Decision) {
	if !r.fits(SpringGateway) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *SpringState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// filled returns the tokens the script computes at the second sec:
// math.min(capacity, last_tokens + delta * rate), in Lua numbers.
func (s *SpringState) filled(r *Rule, sec int64) float64 {
	tokens, last := r.lib.sCapacity, int64(0)
	if s.seen && r.lib.sTTL > 0 {
		tokens, last = s.tokens, s.last
	}
	delta := max(0, float64(sec)-float64(last))
	return math.Min(float64(r.lib.sCapacity), float64(tokens)+delta*float64(r.lib.sRate))
}

func (s *SpringState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	sec, _ := floorDivMod(now, int64(time.Second))
	filled := s.filled(r, sec)
	requested := float64(r.lib.sTokens) * float64(cost)
	allowed = filled >= requested
	left := filled
	if allowed {
		left = filled - requested
	}
	if commit && r.lib.sTTL > 0 {
		s.tokens, s.last, s.seen = int64(left), sec, true
	}
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed, Remaining: int64(left)}
	rate := float64(r.lib.sRate)
	if !allowed {
		d.Reason = r.refusal
		if requested > float64(r.lib.sCapacity) {
			d.Reason = ReasonCost
			setRetry(&d, x, maxSpan)
		} else {
			// The whole seconds after which the stored tokens, or a full
			// bucket, hold enough.
			k := int64(math.Ceil((requested - left) / rate))
			setRetry(&d, x, until(satAdd(sec, k), uint64(time.Second), now))
		}
	}
	if r.lib.sTTL > 0 && left < float64(r.lib.sCapacity) {
		k := int64(math.Ceil((float64(r.lib.sCapacity) - left) / rate))
		setReset(&d, x, until(satAdd(sec, k), uint64(time.Second), now))
	}
	*out = d
	return allowed, false
}

func (s *SpringState) idle(r *Rule, now int64) bool {
	if !s.seen || r.lib.sTTL == 0 {
		return true
	}
	sec, _ := floorDivMod(now, int64(time.Second))
	return sec >= s.last && s.filled(r, sec) >= float64(r.lib.sCapacity)
}

// appendText appends "tokens T at S": the tokens stored after a decision
// at at and the second they were counted at, or "no state" when the
// script stores none.
func (s *SpringState) appendText(r *Rule, _ *SpringState, at int64, _ time.Duration, dst []byte) []byte {
	if r.lib.sTTL == 0 {
		return append(dst, "no state"...)
	}
	sec, _ := floorDivMod(at, int64(time.Second))
	tokens, last := r.lib.sCapacity, sec
	if s.seen {
		tokens, last = s.tokens, s.last
	}
	dst = append(dst, "tokens "...)
	dst = strconv.AppendInt(dst, tokens, 10)
	dst = append(dst, " at "...)
	return strconv.AppendInt(dst, last, 10)
}

func (s *SpringState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.tokens), uint64(s.last))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *SpringState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 || int64(w[0]) < 0 || int64(w[0]) > r.lib.sCapacity {
		return false
	}
	s.tokens, s.last, s.seen = int64(w[0]), int64(w[1]), b[16] == 1
	return true
}

// gauge is burstCapacity less the tokens the script would find at now's
// second, which change at each whole second until the bucket is full.
func (s *SpringState) gauge(r *Rule, now int64) (float64, int64) {
	sec, _ := floorDivMod(now, int64(time.Second))
	used := float64(r.lib.sCapacity) - s.filled(r, sec)
	if used <= 0 {
		return 0, math.MaxInt64
	}
	return used, satMulInt64(satAdd(sec, 1), int64(time.Second))
}

// springCapacity is the limit SpringGateway's gauge is drawn against: its
// burstCapacity.
func springCapacity(p Policy) int64 { return p.Library.Spring.BurstCapacity }
