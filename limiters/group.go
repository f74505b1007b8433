package limiters

import (
	"errors"
	"fmt"
	"time"
)

// A Group decides one request under several limiters at once, for keys
// the caller has interned as dense ids 0, 1, 2, .... Each limiter is a
// rule, an algorithm with a policy of its own. The group keeps all of a
// key's states side by side, so a request touches one small block of
// memory however many limiters judge it; with many keys, where every
// request's first touch of its key is a cache miss, that is what makes a
// replay through many limiters fast. Rules that would keep the same state
// (a rule given twice; a token bucket and a leaky bucket with the same
// capacity and rate, which are one meter seen from two sides) share it.
//
// A Group is not safe for concurrent use. An id never used before has the
// fresh state of every rule.
type Group struct {
	s store
}

// NewGroup returns an empty group running algs, in that order, under policy
// p. Each algorithm may appear once; p must be valid for every one.
func NewGroup(algs []Algorithm, p Policy) (*Group, error) {
	if len(algs) == 0 {
		return nil, errors.New("limiters: a group needs at least one algorithm")
	}
	var rules []*Rule
	seen := map[Algorithm]bool{}
	for _, a := range algs {
		if seen[a] {
			return nil, fmt.Errorf("limiters: %v appears twice in the group", a)
		}
		seen[a] = true
		r, err := NewRule(a, p)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return NewGroupOf(rules)
}

// MaxGroup is the most rules a Group holds: the allowed mask has a bit
// for each.
const MaxGroup = 64

// NewGroupOf returns an empty group running rules, in that order: any
// algorithms, each under its own policy, the same one more than once if
// need be. Decisions are written and masks reported in that order.
func NewGroupOf(rules []*Rule) (*Group, error) {
	if len(rules) == 0 {
		return nil, errors.New("limiters: a group needs at least one rule")
	}
	if len(rules) > MaxGroup {
		return nil, fmt.Errorf("limiters: a group holds at most %d rules, got %d", MaxGroup, len(rules))
	}
	for i, r := range rules {
		if r == nil || r.k == nil {
			return nil, fmt.Errorf("limiters: rule %d is not valid", i)
		}
	}
	return &Group{s: newStore(rules)}, nil
}

// Algorithms returns the group's algorithms, in decision order.
func (g *Group) Algorithms() []Algorithm {
	algs := make([]Algorithm, len(g.s.members))
	for i := range g.s.members {
		algs[i] = g.s.members[i].rule.alg
	}
	return algs
}

// Prefetch asks the CPU to start loading id's states into its caches and
// returns at once; see Table.Prefetch. It creates nothing.
func (g *Group) Prefetch(id uint32) { g.s.prefetch(id) }

// Allow judges a request of cost at time now (in nanoseconds) for key id
// under every rule of the group, writing rule i's decision to out[i] (out
// must hold one per rule), and updates the key's states. It returns the
// set of rules that allowed the request as a bit mask, bit i for rule i.
// Each decision equals what a Table of that rule would decide. It
// allocates nothing, except when the group grows or a sliding log's ring
// changes size.
func (g *Group) Allow(id uint32, now, cost int64, out []Decision) uint64 {
	return g.s.allow(id, now, cost, out[:len(g.s.members)], nil)
}

// AllowExact is Allow that also writes rule i's durations in full to
// exact[i] (exact must hold one per rule); see Table.AllowExact.
func (g *Group) AllowExact(id uint32, now, cost int64, out []Decision, exact []Exact) uint64 {
	n := len(g.s.members)
	return g.s.allow(id, now, cost, out[:n], exact[:n])
}

// Idle reports whether id's states decide every request at or after now
// exactly as fresh states would, under every rule of the group, so that
// the id may be reset and reused.
func (g *Group) Idle(id uint32, now int64) bool { return g.s.idle(id, now) }

// DecidedAt returns the time at which id's state under rule i of the
// group takes a request at now; see Table.DecidedAt.
func (g *Group) DecidedAt(id uint32, i int, now int64) int64 { return g.s.decidedAt(id, i, now) }

// Reset puts id back in the fresh state under every rule and releases any
// storage it holds.
func (g *Group) Reset(id uint32) { g.s.reset(id) }

// Admit is Allow for callers that need only whether each rule allowed the
// request: it makes the same decisions and the same changes to the key's
// states, but computes none of the other Decision fields, which saves
// most of the arithmetic. It returns the allowed mask.
func (g *Group) Admit(id uint32, now, cost int64) uint64 { return g.s.admit(id, now, cost) }

// Refused writes, for each rule i in mask that Admit (or Allow) has just
// refused the request of cost at now for key id, the full decision that
// Allow gave or would have given to out[i], and its durations in full to
// exact[i] unless exact is nil. It changes no state: a refused request
// takes nothing, and judging it again at the same time decides it alike.
// A rule in mask that would allow the request is not written, and Refused
// returns those rules' mask (0 when mask held refusals only).
func (g *Group) Refused(id uint32, now, cost int64, mask uint64, out []Decision, exact []Exact) uint64 {
	return g.s.refused(id, now, cost, mask, out, exact)
}

// RefusedWaits is Refused that writes, for each rule i in mask that has
// just refused the request, only the decision's RetryAfter, in full, to
// waits[i]: for some algorithms (the buckets) far less arithmetic than
// the whole decision, where a replay needs only how long its refusals
// were told to wait. It changes no state, and returns, as Refused does,
// the rules of mask that would allow the request.
func (g *Group) RefusedWaits(id uint32, now, cost int64, mask uint64, waits []Span) uint64 {
	return g.s.waits(id, now, cost, mask, waits)
}

// AdmitWaits is Admit that also writes, for each rule i in want that
// refuses the request, its decision's RetryAfter in full to waits[i], as
// RefusedWaits just after Admit would, in one pass over the key's states.
// It returns the allowed mask, as Admit does, and the rules of want whose
// wait, judged again, would have allowed the request (0 unless there is a
// bug). waits holds one Span per rule.
func (g *Group) AdmitWaits(id uint32, now, cost int64, want uint64, waits []Span) (allowed, wrong uint64) {
	return g.s.admitWaits(id, now, cost, want, waits)
}

// AllowExplain is Allow that also appends each rule's state text (as
// Table.AllowExplain writes it) to dst, in order, and sets ends[i] to the
// length of dst after rule i's text. When exact is not nil it holds one
// per rule and gets each decision's durations in full, as AllowExact
// writes them. It returns the extended dst and the allowed mask.
func (g *Group) AllowExplain(id uint32, now, cost int64, unit time.Duration, out []Decision, exact []Exact, dst []byte, ends []int) ([]byte, uint64) {
	n := len(g.s.members)
	if exact != nil {
		exact = exact[:n]
	}
	return g.s.explain(id, now, cost, unit, out[:n], exact, dst, ends[:n])
}
