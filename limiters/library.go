package limiters

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// Library is the configuration of a library kind (Algorithm.Library)
// beyond the parameters of Params: how the real library it reproduces is
// set up, in that library's own terms, where the exact parameters would
// lose what the library computes with (a float64 rate, a rate and a
// period kept apart, a zone's size). Package presets fills it from the
// library's own parameters. Each library kind reads its own field; every
// other kind ignores it. The zero Library is the zero of every field.
type Library struct {
	XTimeRate XTimeRateConfig
	RedisRate RedisRateConfig
	Throttled ThrottledConfig
	Nginx     NginxConfig
	HAProxy   HAProxyConfig
	Spring    SpringConfig
}

// libRule holds what the library kinds derive from a policy once, in
// NewRule: each kind's setup fills its own fields.
type libRule struct {
	// XTimeRate: the rate.Limit and the burst as a float64.
	xLimit, xBurst float64
	// RedisRate: the script's emission_interval and burst_offset, in
	// float64 seconds.
	emission, burstOffset float64
	// Throttled: the emission interval and the delay variation tolerance
	// in nanoseconds (as throttled computes them, wrapping on overflow),
	// and whether its Redis store keeps the keys.
	tEmission, tDVT int64
	tRedis          bool
	// EnvoyRateLimit: the unit in whole seconds.
	divider int64
	// NginxLimitReq: the rate in thousandths of a request per second, and
	// burst and delay in thousandths of a request, as nginx keeps them.
	nRate, nBurst, nDelay uint64
	// HAProxyRate: the period and the expiry in milliseconds.
	hPeriod uint32
	hExpire int64
	// SpringGateway: replenishRate, burstCapacity, requestedTokens and the
	// script's TTL in seconds (0: it keeps no state).
	sRate, sCapacity, sTokens, sTTL int64
}

// noBound is the bound of a kind for which no bound is worked out.
func noBound(Policy, int64) int64 { return math.MaxInt64 }

// noCostLimit sets a library kind's limit beyond any cost: its own decide
// judges a cost its library refuses, since the library counts that cost,
// or reports it in its own way, where the shared rule would refuse it
// untouched.
func noCostLimit(r *Rule) { r.limit = math.MaxInt64 }

// satAdd returns a+b, saturating at the ends of the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64
	}
	return s
}

// satSub returns a-b as time.Time.Sub does for two times of the int64
// range: exactly when it fits a Duration, else saturated.
func satSub(a, b int64) int64 {
	d := a - b
	if (a >= 0) != (b >= 0) && (d >= 0) != (a >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// until returns how long after now the instant k*unit nanoseconds begins
// (an instant that may lie beyond the int64 range), or 0 when it has
// begun.
func until(k int64, unit uint64, now int64) Span {
	// k*unit - now in 128-bit two's complement: |k*unit| < 2^127.
	hi, lo := bits.Mul64(abs64(k), unit)
	if k < 0 {
		hi, lo = sub128(0, 0, hi, lo)
	}
	var nh uint64
	if now < 0 {
		nh = math.MaxUint64
	}
	hi, lo = sub128(hi, lo, nh, uint64(now))
	if int64(hi) < 0 || hi|lo == 0 {
		return Span{}
	}
	return Span{hi, lo}
}

// spanOf returns a non-negative count of nanoseconds as a Span.
func spanOf(ns int64) Span {
	if ns <= 0 {
		return Span{}
	}
	return span64(uint64(ns))
}

// appendFloat appends v in the shortest form that reads back to it.
func appendFloat(dst []byte, v float64) []byte {
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// errZoned is Rule.StepEncoded's error for a kind whose keys share a zone.
var errZoned = errors.New("limiters: StepEncoded: the rule's keys share one zone, so a key is not decided alone: use a Table, Group or Keyed")

// parseFloatBytes parses b as a float64 without copying it.
func parseFloatBytes(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	return v
}
