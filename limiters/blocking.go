package limiters

import (
	"math"
	"time"
)

// blockingCounter is the kinds table's entry for BlockingCounter.
var blockingCounter = kind{
	name:    "blocking-counter",
	summary: "sliding counter that blocks a key for --block once it is over (Cloudflare's rate limiting rules)",
	doc: Doc{
		How: "Estimates the rolling count as sliding-counter does (the previous window's count, weighted by how much of it the rolling interval still covers, plus the current one). " +
			"A request passes while the estimate leaves room for it within --limit. The first request that does not pass blocks its key for --block: " +
			"every request of the key until then is refused, whatever the estimate says, and none is counted. " +
			"This is what a Cloudflare rate limiting rule with the block action does: once the rate is reached, further requests are blocked for the mitigation timeout.",
		State:   "constant: a window start, two counts and when the key was blocked",
		Bursts:  "At most sliding-counter's: a block only refuses more.",
		Explain: "\"estimate 2.4 blocked until 70\": the estimate the decision was judged by, and the end of the key's block when it is blocked after it.",
		Choose:  "Reproducing Cloudflare's rate limiting rules, or any limit that punishes a client over it with a time out, not only a refusal.",
	},
	params:     []string{"limit", "window", "block"},
	refusal:    ReasonEstimate,
	ops:        ops[BlockingCounterState, *BlockingCounterState]{},
	fast:       fastOf((*BlockingCounterState).decide),
	bound:      alignedBound,
	backWithin: func(p Policy) int64 { return int64(p.Window) },
	gauge:      gaugeSpec{quantity: "estimate"},
	aligned:    func(p Policy) int64 { return int64(p.Window) },
}

// ReasonBlocked is BlockingCounter's refusal of a request of a key it
// blocked.
const ReasonBlocked Reason = "blocked"

// BlockingCounterState is one key's state under BlockingCounter: its
// sliding counter, and whether it is blocked and until when. The zero
// value is the fresh state. It holds no pointers and may be copied
// freely.
//
// A Block of 0 blocks nothing: it decides as SlidingCounter.
type BlockingCounterState struct {
	counter SlidingCounterState
	from    int64 // when blocked: the time of the refusal that blocked it
	blocked bool
}

// Step judges a request of cost at now for rule r (which must be a
// BlockingCounter rule) and returns the new state and the decision. It
// does not change s.
//
// While the key is blocked (now before the block's end) the request is
// refused with ReasonBlocked and changes nothing. Otherwise the sliding
// counter judges it, as SlidingCounter does; a request it refuses blocks
// the key for the policy's Block from now (the end saturating at the
// latest time an int64 holds). A refusal's RetryAfter is the later of the
// block's end and the time the counter lets the request through.
func (s BlockingCounterState) Step(r *Rule, now, cost int64) (BlockingCounterState, Decision) {
	if !r.fits(BlockingCounter) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

// boundary is the counter's, or, when the key was blocked, the time of
// the refusal that blocked it: the block starts there, and a time before
// it went backwards.
func (s *BlockingCounterState) boundary(r *Rule, now int64) (int64, bool) {
	if s.blocked && now < s.from {
		return s.from, true
	}
	return s.counter.boundary(r, now)
}

// until is the end of the block, exclusive, saturating at the latest
// time an int64 holds.
func (s *BlockingCounterState) until(r *Rule) int64 { return later(s.from, uint64(r.pol.Block)) }

// blockedAt reports whether the key is blocked at now, which is not
// before the boundary.
func (s *BlockingCounterState) blockedAt(r *Rule, now int64) bool {
	return s.blocked && now < s.until(r)
}

func (s *BlockingCounterState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if s.blocked && now < s.from {
		// Before the refusal that blocked the key: the clock went
		// back, as boundary says, and the caller judges the request by
		// the clock rule.
		return false, true
	}
	if s.blockedAt(r, now) {
		if out == nil {
			return false, false
		}
		// The counter, untouched by the block, judges the request once
		// the block is over: the retry is the later of the two.
		c := s.counter
		if _, back := c.decide(r, now, cost, false, out, x); back {
			return false, true
		}
		retry, _ := s.counterWaits(out, x)
		if out.Allowed {
			retry = 0
		}
		// The request is not counted: the counter's reset is its own.
		reset := s.counter.resetAfter(r, now)
		wait := since(s.until(r), now)
		d := Decision{Reason: ReasonBlocked}
		if now == s.from {
			// The instant of the refusal that blocked the key: the same
			// request is refused as that one was, and for the same
			// reason.
			d.Reason = r.refusal
		}
		setRetry(&d, x, span64(max(retry, wait)))
		setReset(&d, x, span64(max(reset, wait)))
		*out = d
		return false, false
	}
	if s.blocked {
		s.blocked, s.from = false, 0 // the block is over
	}
	allowed, back = s.counter.decide(r, now, cost, commit, out, x)
	if back || allowed {
		return allowed, back
	}
	// A refusal that is not taken (commit false: a request judged for
	// what it would take, not decided) blocks nothing.
	block := uint64(r.pol.Block)
	if !commit || block == 0 {
		return false, false
	}
	s.blocked, s.from = true, now
	if out != nil {
		retry, reset := s.counterWaits(out, x)
		out.Remaining = 0 // blocked: nothing is left
		setRetry(out, x, span64(max(retry, block)))
		setReset(out, x, span64(max(reset, block)))
	}
	return false, false
}

// resetAfter returns how long after now the counter, untouched, is
// fresh again, as SlidingCounter's decisions count it.
func (s *SlidingCounterState) resetAfter(r *Rule, now int64) uint64 {
	c := *s
	m, _ := c.rotate(r, now)
	untilNext := uint64(r.window - m)
	switch {
	case c.cur > 0:
		return untilNext + uint64(r.window)
	case c.prev > 0:
		return untilNext
	}
	return 0
}

// counterWaits returns the retry and reset of the counter's decision
// out (x in full, when not nil): both under two windows, so they fit
// 64 bits.
func (s *BlockingCounterState) counterWaits(out *Decision, x *Exact) (retry, reset uint64) {
	if x != nil {
		return x.RetryAfter.Lo, x.ResetAfter.Lo
	}
	return uint64(out.RetryAfter), uint64(out.ResetAfter)
}

func (s *BlockingCounterState) idle(r *Rule, now int64) bool {
	return !s.blockedAt(r, now) && s.counter.idle(r, now)
}

// gauge is the counter's estimate, and while the key is blocked the
// whole limit above it: nothing is left to the key, and the number
// falls as the estimate does, dropping by the limit when the block ends.
func (s *BlockingCounterState) gauge(r *Rule, now int64) (float64, int64) {
	v, until := s.counter.gauge(r, now)
	if s.blockedAt(r, now) {
		return v + float64(r.limit), min(until, s.until(r))
	}
	return v, until
}

// appendText appends the counter's "estimate X", then " blocked until T"
// when the key is blocked after the decision.
func (s *BlockingCounterState) appendText(r *Rule, pre *BlockingCounterState, at int64, unit time.Duration, dst []byte) []byte {
	dst = s.counter.appendText(r, &pre.counter, at, unit, dst)
	if s.blockedAt(r, at) {
		dst = append(dst, " blocked until "...)
		if s.until(r) == math.MaxInt64 {
			return append(dst, "the end of time"...)
		}
		dst = appendTime(dst, s.until(r), unit)
	}
	return dst
}

func (s *BlockingCounterState) appendBinary(dst []byte) []byte {
	dst = s.counter.appendBinary(dst)
	if !s.blocked {
		return append(dst, 0)
	}
	return append(appendWords(dst, uint64(s.from)), 1)
}

func (s *BlockingCounterState) readBinary(r *Rule, b []byte) bool {
	const counter = 3 * 8
	switch {
	case len(b) == counter+1 && b[counter] == 0:
		s.blocked, s.from = false, 0
	case len(b) == counter+9 && b[counter+8] == 1:
		w, _ := words(b[counter:counter+8], 1, 0)
		s.blocked, s.from = true, int64(w[0])
	default:
		return false
	}
	return s.counter.readBinary(r, b[:counter])
}
