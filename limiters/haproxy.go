package limiters

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// haproxyRate is the kinds table's entry for HAProxyRate.
var haproxyRate = kind{
	name:    "haproxy-http-req-rate",
	summary: "HAProxy's stick-table http_req_rate: freq_ctr's two-period sliding estimate in ms ticks",
	doc: Doc{
		How: "HAProxy's http_req_rate(period) of a stick table tracked with track-sc0, and http-request deny if { sc_http_req_rate(0) gt N }: " +
			"the freq_ctr counts the current period's requests and keeps the previous period's; the rate is " +
			"(previous * time left in the current period + current * period) / period, in whole milliseconds and integers. " +
			"Every tracked request is counted, denied ones included, and the request is denied when the rate after it is above --limit.",
		State:   "constant: the period's start tick, two counts and when the entry was last touched",
		Bursts:  "Up to about twice the limit within a period when the previous one was quiet; a client that keeps sending over the limit stays denied.",
		Explain: "\"rate 12 (prev 3 curr 10 tick 1500)\": the rate the decision read, and the counter it read it from.",
		Choose:  "Reproducing an HAProxy frontend that denies on sc_http_req_rate.",
	},
	params:   windowParams,
	refusal:  ReasonOverLimit,
	ops:      ops[HAProxyState, *HAProxyState]{},
	gauge:    gaugeSpec{quantity: "http_req_rate"},
	fast:     fastOf((*HAProxyState).decide),
	validate: validateHAProxy,
	setup: func(r *Rule) {
		r.lib.hPeriod = uint32(r.pol.Window / time.Millisecond)
		r.lib.hExpire = int64(r.pol.Library.HAProxy.Expire / time.Millisecond)
		noCostLimit(r)
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
}

// HAProxyConfig is HAProxyRate's configuration beyond the deny's limit
// (Policy.Limit, the N of "gt N") and the counter's period
// (Policy.Window, http_req_rate's).
type HAProxyConfig struct {
	// Expire is the stick table's expire: an entry idle that long is
	// purged, and a later request starts a fresh one. It must be at least
	// two periods, after which the counter reads 0 anyway, so that when
	// HAProxy's purge task runs makes no difference.
	Expire time.Duration
}

// haproxyMaxTicks is the most milliseconds a period or an expiry may
// span: HAProxy's ticks are 32-bit.
const haproxyMaxTicks = 1<<31 - 1

func validateHAProxy(p Policy) error {
	e := p.Library.HAProxy.Expire
	switch {
	case p.Window%time.Millisecond != 0 || p.Window > haproxyMaxTicks*time.Millisecond:
		return fmt.Errorf("limiters: HAProxy's period is a whole number of milliseconds up to %d, got %v", haproxyMaxTicks, p.Window)
	case e%time.Millisecond != 0 || e > haproxyMaxTicks*time.Millisecond:
		return fmt.Errorf("limiters: HAProxy's expire is a whole number of milliseconds up to %d, got %v", haproxyMaxTicks, e)
	case e < 2*p.Window:
		return fmt.Errorf("limiters: HAProxy's expire %v is below two periods (%v): when its purge task runs would decide", e, 2*p.Window)
	case p.Limit > math.MaxUint32:
		return fmt.Errorf("limiters: HAProxy's limit %d does not fit its 32-bit counters", p.Limit)
	}
	return nil
}

// HAProxyState is one key's stick-table entry under HAProxyRate: the
// http_req_rate freq_ctr (its tick and two counts, 32-bit as HAProxy's)
// and the millisecond the entry was last touched. The zero value is the
// fresh state: no entry. It holds no pointers and may be copied freely.
type HAProxyState struct {
	tick, curr, prev uint32
	touched          int64 // the millisecond of the last tracked request
	seen             bool  // false while there is no entry
}

// Step judges a request of cost at now for rule r (which must be an
// HAProxyRate rule) and returns the new state and the decision. It does
// not change s.
//
// now is read as HAProxy's now_ms, the millisecond, truncated to 32 bits.
// The request is counted (update_freq_ctr_period, cost requests at once),
// then the rate is read (read_freq_ctr_period) and the request denied when
// it is above Limit: a denied request is counted too. An entry not touched
// for Expire is purged first. Remaining is how many more requests at the
// same millisecond would pass, RetryAfter when one of the same cost
// would, ResetAfter when the counter reads 0 again.
func (s HAProxyState) Step(r *Rule, now, cost int64) (HAProxyState, Decision) {
	if !r.fits(HAProxyRate) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *HAProxyState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// entry returns the entry a request at the millisecond ms finds: a fresh
// one when there is none, or when it was purged.
func (s *HAProxyState) entry(r *Rule, ms int64) HAProxyState {
	if !s.seen || ms-s.touched >= r.lib.hExpire {
		return HAProxyState{}
	}
	return *s
}

// update is update_freq_ctr_period(ctr, period, inc) at the tick now.
func (s *HAProxyState) update(period, now, inc uint32) {
	if now-s.tick < period {
		s.curr += inc
		return
	}
	s.prev, s.curr = s.curr, inc
	tick := s.tick + period
	if now-tick >= period { // at least two periods missed
		s.prev, tick = 0, now
	}
	s.tick = tick &^ 1 // bit 0 is the rotation lock
}

// read is read_freq_ctr_period(ctr, period) at the tick now.
func (s *HAProxyState) read(period, now uint32) uint64 {
	curr, past := uint64(s.curr), uint64(s.prev)
	remain := int32(s.tick + period - now)
	if remain < 0 {
		remain += int32(period)
		if remain < 0 {
			past = 0
		} else {
			past = curr
		}
		curr = 0
	}
	if curr == 0 && past <= 1 {
		return past // the flapping correction: past*period/period
	}
	return (past*uint64(uint32(remain)) + curr*uint64(period)) / uint64(period)
}

// haproxyInc is what a request of cost adds to the 32-bit counters: its
// cost, as that many requests at once, at most what a counter holds.
func haproxyInc(cost int64) uint32 {
	return uint32(min(cost, math.MaxUint32))
}

// rateAt returns the rate a request of cost at the millisecond ms would
// read, after being counted, against the entry e.
func (r *Rule) haproxyRateAt(e HAProxyState, ms, cost int64) uint64 {
	e.update(r.lib.hPeriod, uint32(ms), haproxyInc(cost))
	return e.read(r.lib.hPeriod, uint32(ms))
}

func (s *HAProxyState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	e := s.entry(r, ms)
	if commit {
		// Counted whether it passes or not. Judged again uncommitted
		// (Group.Refused, after the fact), the entry already holds it.
		e.update(r.lib.hPeriod, uint32(ms), haproxyInc(cost))
		e.touched, e.seen = ms, true
		*s = e
	}
	rate := e.read(r.lib.hPeriod, uint32(ms))
	limit := uint64(r.pol.Limit)
	allowed = rate <= limit
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed}
	if rate < limit {
		d.Remaining = int64(limit - rate)
	}
	if !allowed {
		d.Reason = r.refusal
		if uint64(cost) > limit {
			d.Reason = ReasonCost
			setRetry(&d, x, maxSpan)
		} else {
			setRetry(&d, x, until(r.haproxyRetry(e, ms, cost), uint64(time.Millisecond), now))
		}
	}
	setReset(&d, x, until(e.zeroAt(r), uint64(time.Millisecond), now))
	*out = d
	return allowed, false
}

// haproxyRetry returns the first millisecond after ms at which a request
// of cost would pass against the entry e, counted at ms: the rate falls
// as time passes, so a binary search finds it, and by the entry's expiry
// it has.
func (r *Rule) haproxyRetry(e HAProxyState, ms, cost int64) int64 {
	limit := uint64(r.pol.Limit)
	pass := func(m int64) bool { return r.haproxyRateAt(e.entry(r, m), m, cost) <= limit }
	lo, hi := ms, e.touched+r.lib.hExpire // pass(lo) false; the entry is purged at hi
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if pass(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// zeroAt returns the millisecond from which the entry's counter reads 0
// and a request finds it as a fresh one: two periods after its tick, or
// when it is purged.
func (s *HAProxyState) zeroAt(r *Rule) int64 {
	if !s.seen {
		return math.MinInt64
	}
	tick := s.touched - int64(uint32(s.touched)-s.tick) // the tick as a millisecond
	return min(tick+2*int64(r.lib.hPeriod), s.touched+r.lib.hExpire)
}

func (s *HAProxyState) idle(r *Rule, now int64) bool {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	return !s.seen || ms >= s.zeroAt(r)
}

// appendText appends "rate R (prev P curr C tick T)": the rate the entry
// reads at at, and its counter.
func (s *HAProxyState) appendText(r *Rule, _ *HAProxyState, at int64, _ time.Duration, dst []byte) []byte {
	ms, _ := floorDivMod(at, int64(time.Millisecond))
	e := s.entry(r, ms)
	dst = append(dst, "rate "...)
	dst = strconv.AppendUint(dst, e.read(r.lib.hPeriod, uint32(ms)), 10)
	dst = append(dst, " (prev "...)
	dst = strconv.AppendUint(dst, uint64(e.prev), 10)
	dst = append(dst, " curr "...)
	dst = strconv.AppendUint(dst, uint64(e.curr), 10)
	dst = append(dst, " tick "...)
	dst = strconv.AppendUint(dst, uint64(e.tick), 10)
	return append(dst, ')')
}

func (s *HAProxyState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.tick)|uint64(s.curr)<<32, uint64(s.prev), uint64(s.touched))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *HAProxyState) readBinary(_ *Rule, b []byte) bool {
	w, ok := words(b, 3, 1)
	if !ok || b[24] > 1 || w[1] > math.MaxUint32 {
		return false
	}
	s.tick, s.curr, s.prev = uint32(w[0]), uint32(w[0]>>32), uint32(w[1])
	s.touched, s.seen = int64(w[2]), b[24] == 1
	return true
}

// gauge is the rate sc_http_req_rate reads at now's millisecond, which
// changes from one millisecond to the next until the entry reads 0.
func (s *HAProxyState) gauge(r *Rule, now int64) (float64, int64) {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	if !s.seen || ms >= s.zeroAt(r) {
		return 0, math.MaxInt64
	}
	e := s.entry(r, ms)
	return float64(e.read(r.lib.hPeriod, uint32(ms))), satMulInt64(satAdd(ms, 1), int64(time.Millisecond))
}
