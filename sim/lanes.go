package sim

import (
	"math/bits"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// A Lane is one limiter of a run: an algorithm with its own policy, under
// a name that the report and the output use for it.
type Lane struct {
	Name      string
	Algorithm limiters.Algorithm
	Policy    limiters.Policy
}

// maxLanes bounds the lanes of one run.
const maxLanes = 4096

// wordLanes is how many lanes a Group after the first holds: one mask word
// each. The first holds one fewer, beside the oracle.
const wordLanes = limiters.MaxGroup - 1

// laneSet decides a request under every lane of a run, and under the
// oracle, for one worker's keys. The first limiters.Group holds the first
// lanes (up to 63) and then the oracle: a Group keeps a key's states side
// by side, and a lane that is the same sliding log as the oracle shares
// its state, so the oracle costs nothing more. Runs of more lanes keep the
// rest in more Groups of up to 63, each with a mask word of its own.
type laneSet struct {
	n     int // lanes
	n0    int // lanes in the first Group; the oracle, if any, is bit n0
	group *limiters.Group
	more  []*limiters.Group // lanes n0+63k to n0+63k+62
}

// newLaneSet builds the Groups for lanes and, unless withOracle is false,
// the oracle: a sliding log under oracle's limit, window and clock.
func newLaneSet(lanes []Lane, oracle limiters.Policy, withOracle bool) (*laneSet, error) {
	var rules []*limiters.Rule
	for _, l := range lanes {
		r, err := limiters.NewRule(l.Algorithm, l.Policy)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	ls := &laneSet{n: len(lanes), n0: min(len(lanes), wordLanes)}
	first := rules[:ls.n0:ls.n0]
	if withOracle {
		r, err := limiters.NewRule(limiters.SlidingLog, limiters.Policy{Limit: oracle.Limit, Window: oracle.Window, Clock: oracle.Clock})
		if err != nil {
			return nil, err
		}
		first = append(first, r)
	}
	g, err := limiters.NewGroupOf(first)
	if err != nil {
		return nil, err
	}
	ls.group = g
	for off := ls.n0; off < len(rules); off += wordLanes {
		g, err := limiters.NewGroupOf(rules[off:min(off+wordLanes, len(rules))])
		if err != nil {
			return nil, err
		}
		ls.more = append(ls.more, g)
	}
	return ls, nil
}

// word returns the mask word of lane l (0 the first Group's) and its bit.
func (ls *laneSet) word(l int) (w, bit int) {
	if l < ls.n0 {
		return 0, l
	}
	return 1 + (l-ls.n0)/wordLanes, (l - ls.n0) % wordLanes
}

// admit decides a request of cost at now for key id under the first
// Group's lanes and returns which allowed it: bit l for lane l, bit n0 for
// the oracle. admitMore decides the others.
func (ls *laneSet) admit(id uint32, now, cost int64) uint64 {
	return ls.group.Admit(id, now, cost)
}

// admitMore decides the request under the lanes past the first Group,
// writing Group k's mask to masks[k].
func (ls *laneSet) admitMore(id uint32, now, cost int64, masks []uint64) {
	for k, g := range ls.more {
		masks[k] = g.Admit(id, now, cost)
	}
}

// admitWaits is admit and admitMore that also write, as refusedWaits
// would just after, the RetryAfter of each lane of want that refused the
// request: want[0] holds the first Group's lanes (bit l lane l), want[k+1]
// Group k's past it (bit j lane n0+63k+j), and the waits of mask word w go
// to spans[w*limiters.MaxGroup:], bit j's at j. It returns admit's mask,
// and false when a lane's wait would allow the request, which would be a
// bug.
func (ls *laneSet) admitWaits(id uint32, now, cost int64, want, masks []uint64, spans []limiters.Span) (uint64, bool) {
	all, wrong := ls.group.AdmitWaits(id, now, cost, want[0], spans[:limiters.MaxGroup])
	for k, g := range ls.more {
		mk, wk := g.AdmitWaits(id, now, cost, want[k+1], spans[(k+1)*limiters.MaxGroup:(k+2)*limiters.MaxGroup])
		masks[k], wrong = mk, wrong|wk
	}
	return all, wrong == 0
}

// refusedWaits writes the RetryAfter of each lane that refused the request
// just admitted, rejected0 of the first Group (bit l for lane l) and, by
// Group k past it, all but masks[k], lane l's to waits[l], with the
// arithmetic of the wait alone where a lane's algorithm has it (see
// limiters.Group.RefusedWaits). spans is scratch of limiters.MaxGroup. It
// reports false when a lane would now allow the request, which would be a
// bug.
func (ls *laneSet) refusedWaits(id uint32, now, cost int64, rejected0 uint64, masks []uint64, spans []limiters.Span, waits []time.Duration) bool {
	ok := true
	if rejected0 != 0 {
		ok = ls.group.RefusedWaits(id, now, cost, rejected0, spans) == 0
		for m := rejected0; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			waits[l] = spans[l].Duration()
		}
	}
	for k, g := range ls.more {
		off := ls.n0 + k*wordLanes
		n := min(wordLanes, ls.n-off)
		r := (uint64(1)<<n - 1) &^ masks[k]
		if r == 0 {
			continue
		}
		if g.RefusedWaits(id, now, cost, r, spans) != 0 {
			ok = false
		}
		for m := r; m != 0; m &= m - 1 {
			l := bits.TrailingZeros64(m)
			waits[off+l] = spans[l].Duration()
		}
	}
	return ok
}

// allow is admit that also writes lane l's decision to out[l] and its
// durations in full to exact[l]; the oracle's go to out[n] and exact[n].
func (ls *laneSet) allow(id uint32, now, cost int64, out []limiters.Decision, exact []limiters.Exact) uint64 {
	m := ls.group.AllowExact(id, now, cost, out, exact)
	if ls.n0 < ls.n {
		// The oracle's decision is at n0, where the next Group's first
		// lane goes.
		out[ls.n], exact[ls.n] = out[ls.n0], exact[ls.n0]
	}
	return m
}

// allowMore is admitMore that also writes the decisions as allow does.
func (ls *laneSet) allowMore(id uint32, now, cost int64, out []limiters.Decision, exact []limiters.Exact, masks []uint64) {
	for k, g := range ls.more {
		off := ls.n0 + k*wordLanes
		masks[k] = g.AllowExact(id, now, cost, out[off:], exact[off:])
	}
}

// allowExplain is allow that also appends each lane's state text to dst
// and sets starts[l] and ends[l] to where lane l's text is in it. It
// serves runs of one Group.
func (ls *laneSet) allowExplain(id uint32, now, cost int64, unit time.Duration, out []limiters.Decision, exact []limiters.Exact, dst []byte, starts, ends []int) ([]byte, uint64) {
	start := len(dst)
	dst, mask := ls.group.AllowExplain(id, now, cost, unit, out, exact, dst, ends)
	for l := range ls.n {
		starts[l] = start
		start = ends[l]
	}
	return dst, mask
}

// prefetch starts loading id's states.
func (ls *laneSet) prefetch(id uint32) {
	ls.group.Prefetch(id)
	for _, g := range ls.more {
		g.Prefetch(id)
	}
}

// idle reports whether id's states are all fresh from now on.
func (ls *laneSet) idle(id uint32, now int64) bool {
	if !ls.group.Idle(id, now) {
		return false
	}
	for _, g := range ls.more {
		if !g.Idle(id, now) {
			return false
		}
	}
	return true
}

// reset puts id back in the fresh state everywhere.
func (ls *laneSet) reset(id uint32) {
	ls.group.Reset(id)
	for _, g := range ls.more {
		g.Reset(id)
	}
}

// decidedAt returns the time at which lane l takes a request at now for
// key id; see limiters.Group.DecidedAt.
func (ls *laneSet) decidedAt(id uint32, l int, now int64) int64 {
	w, bit := ls.word(l)
	if w == 0 {
		return ls.group.DecidedAt(id, bit, now)
	}
	return ls.more[w-1].DecidedAt(id, bit, now)
}
