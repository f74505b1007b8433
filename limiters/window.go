package limiters

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// FixedWindowState is one key's state under FixedWindow: the index of its
// current window and the cost counted in it. The zero value is the fresh
// state. It holds no pointers and may be copied freely.
type FixedWindowState struct {
	window int64 // index k of the window [k*W, (k+1)*W)
	count  int64 // 0 only in the fresh state
}

// Step judges a request of cost at now for rule r (which must be a
// FixedWindow rule) and returns the new state and the decision. It does
// not change s.
//
// Window starts use floor division, so t = -1 and t = 1 fall in different
// windows of any length above 1. A request in an earlier window than the
// state's current one is a backwards clock.
func (s FixedWindowState) Step(r *Rule, now, cost int64) (FixedWindowState, Decision) {
	if !r.fits(FixedWindow) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *FixedWindowState) boundary(r *Rule, now int64) (int64, bool) {
	if s.count == 0 {
		return 0, false
	}
	k, _ := floorDivMod(now, r.window)
	if k >= s.window {
		return 0, false
	}
	return s.window * r.window, true
}

func (s *FixedWindowState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	full := out != nil
	k, m := floorDivMod(now, r.window)
	if s.count != 0 && k < s.window {
		return false, true
	}
	if s.count == 0 || k > s.window {
		s.window, s.count = k, 0
	}
	if cost > r.limit-s.count {
		if !full {
			return false, false
		}
		untilNext := span64(uint64(r.window - m))
		d := Decision{Remaining: r.limit - s.count, Reason: r.refusal}
		setRetry(&d, x, untilNext)
		setReset(&d, x, untilNext)
		*out = d
		return d.Allowed, false
	}
	s.count += cost
	if !full {
		return true, false
	}
	d := Decision{Allowed: true, Remaining: r.limit - s.count}
	if s.count > 0 {
		setReset(&d, x, span64(uint64(r.window-m)))
	}
	*out = d
	return d.Allowed, false
}

func (s *FixedWindowState) idle(r *Rule, now int64) bool {
	if s.count == 0 {
		return true
	}
	k, _ := floorDivMod(now, r.window)
	return k > s.window
}

// gauge is the count of the window that holds now, until the window ends.
func (s *FixedWindowState) gauge(r *Rule, now int64) (float64, int64) {
	if k, _ := floorDivMod(now, r.window); s.count == 0 || k > s.window {
		return 0, math.MaxInt64
	}
	return float64(s.count), edgeAfter(now, r.window)
}

func (s *FixedWindowState) appendText(r *Rule, _ *FixedWindowState, at int64, unit time.Duration, dst []byte) []byte {
	k := s.window
	if s.count == 0 {
		k, _ = floorDivMod(at, r.window)
	}
	dst = append(dst, "window ["...)
	dst = appendWindowSpan(dst, k, r.window, unit)
	dst = append(dst, ") count "...)
	return strconv.AppendUint(dst, uint64(s.count), 10)
}

// SlidingCounterState is one key's state under SlidingCounter: the index
// of its current window and the cost counted in it and in the window
// before. The zero value is the fresh state. It holds no pointers and may
// be copied freely.
type SlidingCounterState struct {
	window int64 // index k of the current window
	prev   int64 // cost counted in window k-1
	cur    int64 // cost counted in window k
}

// Step judges a request of cost at now for rule r (which must be a
// SlidingCounter rule) and returns the new state and the decision. It does
// not change s.
//
// The estimate is prev*(W-elapsed)/W + cur, computed exactly. A request of
// cost c is allowed when the estimate is below Limit-c+1, which for c = 1
// is the classic rule "refuse when the estimate has reached the limit", and
// in general admits c unit requests at once or none.
func (s SlidingCounterState) Step(r *Rule, now, cost int64) (SlidingCounterState, Decision) {
	if !r.fits(SlidingCounter) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *SlidingCounterState) used() bool { return s.prev != 0 || s.cur != 0 }

func (s *SlidingCounterState) boundary(r *Rule, now int64) (int64, bool) {
	if !s.used() {
		return 0, false
	}
	k, _ := floorDivMod(now, r.window)
	if k >= s.window {
		return 0, false
	}
	return s.window * r.window, true
}

// rotate brings the state to the window of now and returns the elapsed
// time in that window; back, and no change, when now is in an earlier
// window than the state's.
func (s *SlidingCounterState) rotate(r *Rule, now int64) (m int64, back bool) {
	k, m := floorDivMod(now, r.window)
	switch {
	case s.used() && k < s.window:
		return 0, true
	case !s.used():
		s.window = k
	case k > s.window:
		if uint64(k)-uint64(s.window) == 1 {
			s.prev = s.cur
		} else {
			s.prev = 0
		}
		s.cur = 0
		s.window = k
	}
	return m, false
}

// estimate returns prev*(W-m) + cur*W, the estimate scaled by W.
func (s *SlidingCounterState) estimate(r *Rule, m int64) (hi, lo uint64) {
	ph, pl := bits.Mul64(uint64(s.prev), uint64(r.window-m))
	ch, cl := bits.Mul64(uint64(s.cur), uint64(r.window))
	return add128(ph, pl, ch, cl)
}

func (s *SlidingCounterState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	full := out != nil
	m, back := s.rotate(r, now)
	if back {
		return false, true
	}
	w := uint64(r.window)
	eh, el := s.estimate(r, m)
	k := uint64(r.limit - cost + 1)
	kh, kl := bits.Mul64(k, w)
	allowed = less128(eh, el, kh, kl)
	if allowed {
		s.cur += cost
		ch, cl := bits.Mul64(uint64(cost), w)
		eh, el = add128(eh, el, ch, cl)
	}
	if !full {
		return allowed, false
	}
	var d Decision
	d.Allowed = allowed
	// Remaining: how many more unit requests the estimate admits now,
	// ceil((L*W - E)/W) when positive.
	lh, ll := bits.Mul64(uint64(r.limit), w)
	if less128(eh, el, lh, ll) {
		rh, rl := sub128(lh, ll, eh, el)
		d.Remaining = int64(divCeil128(rh, rl, w))
	}
	untilNext := uint64(r.window - m)
	switch {
	case s.cur > 0:
		setReset(&d, x, span64(untilNext+w))
	case s.prev > 0:
		setReset(&d, x, span64(untilNext))
	}
	if !allowed {
		d.Reason = r.refusal
		setRetry(&d, x, span64(s.retry(r, uint64(m), k)))
	}
	*out = d
	return d.Allowed, false
}

// retry returns how long after elapsed time m in the current window the
// estimate first drops below k.
func (s *SlidingCounterState) retry(r *Rule, m, k uint64) uint64 {
	w := uint64(r.window)
	prev, cur := uint64(s.prev), uint64(s.cur)
	if cur < k && prev > 0 {
		// In this window: prev*(W-e) < (k-cur)*W, that is
		// e > (prev*W - (k-cur)*W)/prev.
		e := firstAbove(prev, w, k-cur)
		if e < w {
			return e - m
		}
	}
	untilNext := w - m
	// In the next window prev becomes cur and cur becomes 0.
	if cur < k {
		return untilNext
	}
	e := firstAbove(cur, w, k)
	if e < w {
		return untilNext + e
	}
	// Two windows on, both counts are 0.
	return untilNext + w
}

// firstAbove returns the least integer e with p*(W-e) < k*W, for p >= k >= 1:
// e = floor((p-k)*W/p) + 1.
func firstAbove(p, w, k uint64) uint64 {
	if p < k {
		return 0
	}
	hi, lo := bits.Mul64(p-k, w)
	q, _ := bits.Div64(hi, lo, p) // (p-k)*W/p < W, so hi < p
	return q + 1
}

func (s *SlidingCounterState) idle(r *Rule, now int64) bool {
	if !s.used() {
		return true
	}
	k, _ := floorDivMod(now, r.window)
	return k > s.window && (uint64(k)-uint64(s.window) >= 2 || s.cur == 0)
}

// gauge is the estimate a request at now would be judged by, less its own
// cost: it falls by prev/W a nanosecond until the window ends, where prev
// becomes cur and it falls by that.
func (s *SlidingCounterState) gauge(r *Rule, now int64) (float64, int64) {
	c := *s
	m, _ := c.rotate(r, now)
	if !c.used() {
		return 0, math.MaxInt64
	}
	eh, el := c.estimate(r, m)
	return ratio(eh, el, uint64(r.window)), edgeAfter(now, r.window)
}

// appendText appends "estimate X", the estimate the request at at was
// judged by: pre's.
func (s *SlidingCounterState) appendText(r *Rule, pre *SlidingCounterState, at int64, _ time.Duration, dst []byte) []byte {
	c := *pre
	m, _ := c.rotate(r, at)
	eh, el := c.estimate(r, m)
	dst = append(dst, "estimate "...)
	return appendRat(dst, false, eh, el, uint64(r.window))
}
