package sim

import (
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

// maxLanes bounds the lanes of one run: each, and the oracle after them,
// has a bit in the masks that say which allowed a request.
const maxLanes = limiters.MaxGroup - 1

// laneSet decides a request under every lane of a run, and under the
// oracle, for one worker's keys: one limiters.Group whose rules are the
// lanes, in order, then the oracle. The Group keeps a key's states side
// by side, and a lane that is the same sliding log as the oracle shares
// its state, so the oracle costs nothing more.
type laneSet struct {
	n     int // lanes; the oracle, when there is one, is bit n of a mask
	group *limiters.Group
}

// newLaneSet builds the Group for lanes and, unless withOracle is false,
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
	if withOracle {
		r, err := limiters.NewRule(limiters.SlidingLog, limiters.Policy{Limit: oracle.Limit, Window: oracle.Window, Clock: oracle.Clock})
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	g, err := limiters.NewGroupOf(rules)
	if err != nil {
		return nil, err
	}
	return &laneSet{n: len(lanes), group: g}, nil
}

// admit decides a request of cost at now for key id under every lane
// and returns which allowed it: bit l for lane l, bit n for the oracle.
func (ls *laneSet) admit(id uint32, now, cost int64) uint64 {
	return ls.group.Admit(id, now, cost)
}

// allow is admit that also writes lane l's decision to out[l] and its
// durations in full to exact[l]; the oracle's go to out[n] and exact[n].
func (ls *laneSet) allow(id uint32, now, cost int64, out []limiters.Decision, exact []limiters.Exact) uint64 {
	return ls.group.AllowExact(id, now, cost, out, exact)
}

// allowExplain is allow that also appends each lane's state text to dst
// and sets starts[l] and ends[l] to where lane l's text is in it.
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
func (ls *laneSet) prefetch(id uint32) { ls.group.Prefetch(id) }

// idle reports whether id's states are all fresh from now on.
func (ls *laneSet) idle(id uint32, now int64) bool { return ls.group.Idle(id, now) }

// reset puts id back in the fresh state everywhere.
func (ls *laneSet) reset(id uint32) { ls.group.Reset(id) }

// decidedAt returns the time at which lane l takes a request at now for
// key id; see limiters.Group.DecidedAt.
func (ls *laneSet) decidedAt(id uint32, l int, now int64) int64 {
	return ls.group.DecidedAt(id, l, now)
}
