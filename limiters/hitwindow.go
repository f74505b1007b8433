package limiters

import (
	"math"
	"strconv"
	"time"
)

// fixedWindowHits is the kinds table's entry for FixedWindowHits.
var fixedWindowHits = kind{
	name:    "fixed-window-hits",
	summary: "fixed window that counts refused hits too (Envoy's ratelimit)",
	doc: Doc{
		How: "Cuts time into aligned windows of --window, as fixed-window does, but counts every hit, the refused ones included: " +
			"a request passes while the count after it stays within --limit. " +
			"This is what Envoy's ratelimit service does: it increments the window's counter for every hit, then compares.",
		State: "constant: the window start and a count of hits",
		Bursts: "As fixed-window: up to twice the limit across a window edge. " +
			"A client that goes on sending over the limit stays refused for the rest of the window, " +
			"even if the limit is raised in the meantime: its refused hits are on the counter.",
		Explain: "\"window [0,3600) hits 50 near 2 over 40\": the key's window and its count after the decision, " +
			"the hits counted near the limit (above 80% of it, within it) and over it, as Envoy's near_limit and over_limit statistics count them.",
		Choose: "Reproducing Envoy's global rate limiting, or any counter that is incremented before it is checked.",
	},
	params:     windowParams,
	refusal:    ReasonOverLimit,
	ops:        ops[FixedWindowHitsState, *FixedWindowHitsState]{},
	fast:       fastOf((*FixedWindowHitsState).decide),
	bound:      alignedBound,
	backWithin: func(p Policy) int64 { return int64(p.Window) },
	gauge:      gaugeSpec{quantity: "hits in window"},
	aligned:    func(p Policy) int64 { return int64(p.Window) },
}

// ReasonOverLimit is FixedWindowHits' plain refusal, Envoy's OVER_LIMIT.
const ReasonOverLimit Reason = "over limit"

// NearLimitRatio is the share of the limit above which FixedWindowHits'
// state text counts hits as near the limit: Envoy's ratelimit service's
// default NEAR_LIMIT_RATIO.
const NearLimitRatio = 0.8

// FixedWindowHitsState is one key's state under FixedWindowHits: the
// index of its current window and the cost of every hit counted in it,
// allowed or not. The zero value is the fresh state. It holds no pointers
// and may be copied freely.
type FixedWindowHitsState struct {
	window int64 // index k of the window [k*W, (k+1)*W)
	hits   int64 // 0 only in the fresh state; saturates at math.MaxInt64
}

// Step judges a request of cost at now for rule r (which must be a
// FixedWindowHits rule) and returns the new state and the decision. It
// does not change s.
//
// Windows are those of FixedWindow. A request of cost c is allowed when
// the hits counted in its window, plus c, are at most Limit; either way c
// is added to the count, so a refused request uses up room as an allowed
// one does. A request whose cost exceeds the limit, or whose time is in an
// earlier window than the state's (a backwards clock), is refused and not
// counted.
func (s FixedWindowHitsState) Step(r *Rule, now, cost int64) (FixedWindowHitsState, Decision) {
	if !r.fits(FixedWindowHits) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *FixedWindowHitsState) boundary(r *Rule, now int64) (int64, bool) {
	if s.hits == 0 {
		return 0, false
	}
	k, _ := floorDivMod(now, r.window)
	if k >= s.window {
		return 0, false
	}
	return s.window * r.window, true
}

func (s *FixedWindowHitsState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	k, m := floorDivMod(now, r.window)
	if s.hits != 0 && k < s.window {
		return false, true
	}
	if s.hits == 0 || k > s.window {
		s.window, s.hits = k, 0
	}
	allowed = cost <= r.limit-s.hits
	if commit {
		// Every hit counts, allowed or not.
		if s.hits > math.MaxInt64-cost {
			s.hits = math.MaxInt64
		} else {
			s.hits += cost
		}
	}
	if out == nil {
		return allowed, false
	}
	d := Decision{Allowed: allowed, Remaining: max(0, r.limit-s.hits)}
	untilNext := span64(uint64(r.window - m))
	if !allowed {
		d.Reason = r.refusal
		// The count only grows within the window: the next one.
		setRetry(&d, x, untilNext)
	}
	if s.hits > 0 {
		setReset(&d, x, untilNext)
	}
	*out = d
	return allowed, false
}

func (s *FixedWindowHitsState) idle(r *Rule, now int64) bool {
	if s.hits == 0 {
		return true
	}
	k, _ := floorDivMod(now, r.window)
	return k > s.window
}

// NearLimit returns the hits above which Envoy's ratelimit service counts
// hits as near the limit: floor(limit * NearLimitRatio), computed as it
// computes it (the limit as a float32 times the ratio).
func NearLimit(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return int64(math.Floor(float64(float32(limit) * NearLimitRatio)))
}

// nearOver returns the hits of a window's count that Envoy counts near
// the limit (above NearLimit, up to the limit) and over it.
func nearOver(limit, hits int64) (near, over int64) {
	thr := NearLimit(limit)
	near = min(hits, limit) - min(hits, thr)
	if hits > limit {
		over = hits - limit
	}
	return near, over
}

// gauge is the hits counted in the window that holds now, until the
// window ends.
func (s *FixedWindowHitsState) gauge(r *Rule, now int64) (float64, int64) {
	if k, _ := floorDivMod(now, r.window); s.hits == 0 || k > s.window {
		return 0, math.MaxInt64
	}
	return float64(s.hits), edgeAfter(now, r.window)
}

func (s *FixedWindowHitsState) appendText(r *Rule, _ *FixedWindowHitsState, at int64, unit time.Duration, dst []byte) []byte {
	k := s.window
	if s.hits == 0 {
		k, _ = floorDivMod(at, r.window)
	}
	dst = append(dst, "window ["...)
	dst = appendWindowSpan(dst, k, r.window, unit)
	dst = append(dst, ") hits "...)
	dst = strconv.AppendUint(dst, uint64(s.hits), 10)
	near, over := nearOver(r.limit, s.hits)
	if near > 0 || over > 0 {
		dst = append(dst, " near "...)
		dst = strconv.AppendInt(dst, near, 10)
		dst = append(dst, " over "...)
		dst = strconv.AppendInt(dst, over, 10)
	}
	return dst
}

func (s *FixedWindowHitsState) appendBinary(dst []byte) []byte {
	return appendWords(dst, uint64(s.window), uint64(s.hits))
}

func (s *FixedWindowHitsState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 0)
	if !ok || int64(w[1]) < 0 {
		return false
	}
	s.window, s.hits = int64(w[0]), int64(w[1])
	return true
}
