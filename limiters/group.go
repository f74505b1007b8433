package limiters

import (
	"errors"
	"fmt"
	"time"
)

// A Group decides one request under several algorithms at once, for keys
// the caller has interned as dense ids 0, 1, 2, .... It keeps all of a
// key's states side by side, so a request touches one small block of
// memory however many algorithms judge it; with many keys, where every
// request's first touch of its key is a cache miss, that is what makes a
// replay through every algorithm fast. Token and leaky buckets under one
// policy are one meter seen from two sides, so they share one state.
//
// A Group is not safe for concurrent use. An id never used before has the
// fresh state of every algorithm.
type Group struct {
	algs   []Algorithm
	rules  []Rule
	states chunks[groupState]
	debts  chunks[debtPair] // only with GCRA or LeakyQueue
	debt   bool             // the group has GCRA or LeakyQueue
	// bucketFace is the index of the first bucket algorithm (token or
	// leaky) in algs, or -1: the other face reuses its decision.
	bucketFace int
	// single is the whole group when it has one algorithm: a Table keeps
	// only that algorithm's state, so a key takes less memory.
	single *Table
	// fw, sl, sc, gc and lq are, per kind of state, the index in algs of
	// the algorithm that uses it, or -1 (bucketFace is the bucket's): Admit
	// runs straight through them rather than looping over the rules.
	fw, sl, sc, gc, lq int
	bucketBits         uint64 // the mask bits of both bucket faces
}

// groupState is one key's state under the seed's five algorithms, a small
// sliding log included: three cache lines, aligned (chunks are allocated
// whole, so element i of a chunk starts at a multiple of the element size).
type groupState struct {
	fw FixedWindowState
	sc SlidingCounterState
	bk bucket // token-bucket and leaky-bucket
	sl SlidingLogState
	_  [192 - 184]byte
}

// debtPair is one key's state under GCRA and LeakyQueue, kept apart so
// that groups without them do not carry it.
type debtPair struct {
	gc, lq debt
}

// NewGroup returns an empty group running algs, in that order, under policy
// p. Each algorithm may appear once; p must be valid for every one.
func NewGroup(algs []Algorithm, p Policy) (*Group, error) {
	if len(algs) == 0 {
		return nil, errors.New("limiters: a group needs at least one algorithm")
	}
	g := &Group{algs: append([]Algorithm(nil), algs...), bucketFace: -1, fw: -1, sl: -1, sc: -1, gc: -1, lq: -1}
	seen := map[Algorithm]bool{}
	for i, a := range algs {
		if seen[a] {
			return nil, fmt.Errorf("limiters: %v appears twice in the group", a)
		}
		seen[a] = true
		r, err := NewRule(a, p)
		if err != nil {
			return nil, err
		}
		g.rules = append(g.rules, *r)
		if (a == TokenBucket || a == LeakyBucket) && g.bucketFace < 0 {
			g.bucketFace = i
		}
		switch a {
		case FixedWindow:
			g.fw = i
		case SlidingLog:
			g.sl = i
		case SlidingCounter:
			g.sc = i
		case TokenBucket, LeakyBucket:
			g.bucketBits |= 1 << i
		case GCRA:
			g.gc = i
		default:
			g.lq = i
		}
		if a == GCRA || a == LeakyQueue {
			g.debt = true
		}
	}
	if len(algs) == 1 {
		g.single = &Table{rule: g.rules[0]}
	}
	return g, nil
}

// Algorithms returns the group's algorithms, in decision order.
func (g *Group) Algorithms() []Algorithm { return append([]Algorithm(nil), g.algs...) }

// at returns id's states, creating them fresh if needed; dp is nil when
// the group has neither GCRA nor LeakyQueue.
func (g *Group) at(id uint32) (s *groupState, dp *debtPair) {
	if g.debt {
		dp = g.debts.at(id)
	}
	return g.states.at(id), dp
}

// Prefetch asks the CPU to start loading id's states into its caches and
// returns at once; see Table.Prefetch. It creates nothing.
func (g *Group) Prefetch(id uint32) {
	if g.single != nil {
		g.single.Prefetch(id)
		return
	}
	prefetchState(g.states.get(id))
	if g.debt {
		prefetchState(g.debts.get(id))
	}
}

// Allow judges a request of cost at time now (in nanoseconds) for key id
// under every algorithm of the group, writing algorithm i's decision to
// out[i] (out must hold one per algorithm), and updates the key's states.
// It returns the set of algorithms that allowed the request as a bit mask,
// bit i for algorithm i. Each decision equals what a Table of that
// algorithm would decide. It allocates nothing, except when the group
// grows or a sliding log's ring changes size.
func (g *Group) Allow(id uint32, now, cost int64, out []Decision) uint64 {
	return g.allow(id, now, cost, out, nil)
}

// AllowExact is Allow that also writes algorithm i's durations in full to
// exact[i] (exact must hold one per algorithm); see Table.AllowExact.
func (g *Group) AllowExact(id uint32, now, cost int64, out []Decision, exact []Exact) uint64 {
	return g.allow(id, now, cost, out, exact)
}

// allow is Allow, and AllowExact when exact is not nil.
func (g *Group) allow(id uint32, now, cost int64, out []Decision, exact []Exact) uint64 {
	if g.single != nil {
		var x *Exact
		if exact != nil {
			x = &exact[0]
		}
		out[0] = g.single.allow(id, now, cost, x)
		return allowedBit(out[0])
	}
	s, dp := g.at(id)
	var mask uint64
	var face Decision
	for i := range g.rules {
		r := &g.rules[i]
		var d Decision
		var x *Exact
		if exact != nil {
			x = &exact[i]
		}
		switch r.alg {
		case FixedWindow:
			d = applyExact(&s.fw, r, now, cost, x)
		case SlidingLog:
			d = applyExact(&s.sl, r, now, cost, x)
		case SlidingCounter:
			d = applyExact(&s.sc, r, now, cost, x)
		case TokenBucket, LeakyBucket:
			if i == g.bucketFace {
				d = applyExact(&s.bk, r, now, cost, x)
				face = d
			} else {
				d = otherFace(face, r)
				if x != nil {
					*x = exact[g.bucketFace]
				}
			}
		case GCRA:
			d = applyExact(&dp.gc, r, now, cost, x)
		default:
			d = applyExact(&dp.lq, r, now, cost, x)
		}
		out[i] = d
		if d.Allowed {
			mask |= 1 << i
		}
	}
	return mask
}

// Idle reports whether id's states decide every request at or after now
// exactly as fresh states would, under every algorithm of the group, so
// that the id may be reset and reused.
func (g *Group) Idle(id uint32, now int64) bool {
	if g.single != nil {
		return g.single.Idle(id, now)
	}
	s := g.states.get(id)
	if s == nil {
		return true
	}
	var dp *debtPair
	if g.debt {
		dp = g.debts.get(id)
	}
	for i := range g.rules {
		r := &g.rules[i]
		var idle bool
		switch r.alg {
		case FixedWindow:
			idle = s.fw.idle(r, now)
		case SlidingLog:
			idle = s.sl.idle(r, now)
		case SlidingCounter:
			idle = s.sc.idle(r, now)
		case TokenBucket, LeakyBucket:
			idle = s.bk.idle(r, now)
		case GCRA:
			idle = dp == nil || dp.gc.idle(r, now)
		default:
			idle = dp == nil || dp.lq.idle(r, now)
		}
		if !idle {
			return false
		}
	}
	return true
}

// DecidedAt returns the time at which id's state under algorithm i of the
// group takes a request at now; see Table.DecidedAt.
func (g *Group) DecidedAt(id uint32, i int, now int64) int64 {
	if g.single != nil {
		return g.single.DecidedAt(id, now)
	}
	s := g.states.get(id)
	if s == nil {
		return now
	}
	r := &g.rules[i]
	switch r.alg {
	case FixedWindow:
		return decidedAt(&s.fw, r, now)
	case SlidingLog:
		return decidedAt(&s.sl, r, now)
	case SlidingCounter:
		return decidedAt(&s.sc, r, now)
	case TokenBucket, LeakyBucket:
		return decidedAt(&s.bk, r, now)
	}
	dp := g.debts.get(id)
	switch {
	case dp == nil:
		return now
	case r.alg == GCRA:
		return decidedAt(&dp.gc, r, now)
	default:
		return decidedAt(&dp.lq, r, now)
	}
}

// Reset puts id back in the fresh state under every algorithm and releases
// any storage it holds.
func (g *Group) Reset(id uint32) {
	if g.single != nil {
		g.single.Reset(id)
		return
	}
	if s := g.states.get(id); s != nil {
		*s = groupState{}
	}
	if d := g.debts.get(id); d != nil {
		*d = debtPair{}
	}
}

// Admit is Allow for callers that need only whether each algorithm
// allowed the request: it makes the same decisions and the same changes
// to the key's states, but computes none of the other Decision fields,
// which saves most of the arithmetic. It returns the allowed mask.
func (g *Group) Admit(id uint32, now, cost int64) uint64 {
	if g.single != nil {
		if g.single.admit(id, now, cost) {
			return 1
		}
		return 0
	}
	s, dp := g.at(id)
	var mask uint64
	// One branch per kind of state, each taken the same way for every
	// request, and no dispatch on the algorithm.
	if i := g.fw; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && s.fw.admit(r, now, cost) {
			mask |= 1 << i
		}
	}
	if i := g.sc; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && s.sc.admit(r, now, cost) {
			mask |= 1 << i
		}
	}
	if i := g.bucketFace; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && s.bk.admit(r, now, cost) {
			mask |= g.bucketBits
		}
	}
	if i := g.sl; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && s.sl.admit(r, now, cost) {
			mask |= 1 << i
		}
	}
	if i := g.gc; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && dp.gc.admit(r, now, cost) {
			mask |= 1 << i
		}
	}
	if i := g.lq; i >= 0 {
		if r := &g.rules[i]; validCost(r, cost) && dp.lq.admit(r, now, cost) {
			mask |= 1 << i
		}
	}
	return mask
}

// validCost reports whether a request of cost can ever pass rule r: a cost
// of zero, below zero or above the limit (or capacity) is refused and
// changes nothing.
func validCost(r *Rule, cost int64) bool {
	return uint64(cost-1) < uint64(r.limit)
}

// AllowExplain is Allow that also appends each algorithm's state text (as
// Table.AllowExplain writes it) to dst, in order, and sets ends[i] to the
// length of dst after algorithm i's text. When exact is not nil it holds
// one per algorithm and gets each decision's durations in full, as
// AllowExact writes them. It returns the extended dst and the allowed
// mask.
func (g *Group) AllowExplain(id uint32, now, cost int64, unit time.Duration, out []Decision, exact []Exact, dst []byte, ends []int) ([]byte, uint64) {
	if g.single != nil {
		var x *Exact
		if exact != nil {
			x = &exact[0]
		}
		out[0], dst = g.single.allowExplain(id, now, cost, unit, dst, x)
		ends[0] = len(dst)
		return dst, allowedBit(out[0])
	}
	s, dp := g.at(id)
	var mask uint64
	var face Decision
	var faceState bucket // the shared bucket after the first face decided
	for i := range g.rules {
		r := &g.rules[i]
		var d Decision
		var x *Exact
		if exact != nil {
			x = &exact[i]
		}
		switch r.alg {
		case FixedWindow:
			d, dst = explainFixedWindow(&s.fw, r, now, cost, unit, dst, x)
		case SlidingLog:
			d, dst = explainSlidingLog(&s.sl, r, now, cost, unit, dst, x)
		case SlidingCounter:
			d, dst = explainSlidingCounter(&s.sc, r, now, cost, dst, x)
		case TokenBucket, LeakyBucket:
			if i == g.bucketFace {
				d, dst = explainBucket(&s.bk, r, now, cost, dst, x)
				face, faceState = d, s.bk
			} else {
				d = otherFace(face, r)
				if x != nil {
					*x = exact[g.bucketFace]
				}
				dst = faceState.appendState(r, now, dst)
			}
		case GCRA:
			d, dst = explainDebt(&dp.gc, r, now, cost, unit, dst, x)
		default:
			d, dst = explainDebt(&dp.lq, r, now, cost, unit, dst, x)
		}
		out[i] = d
		ends[i] = len(dst)
		if d.Allowed {
			mask |= 1 << i
		}
	}
	return dst, mask
}

// otherFace turns the decision of one bucket face into the other's: the
// same in every field but the name of a plain refusal.
func otherFace(d Decision, r *Rule) Decision {
	if d.Reason == ReasonNoTokens || d.Reason == ReasonOverflow {
		d.Reason = r.refusal
	}
	return d
}

// allowedBit is the allowed mask of a one-algorithm group.
func allowedBit(d Decision) uint64 {
	if d.Allowed {
		return 1
	}
	return 0
}
