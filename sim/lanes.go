package sim

import (
	"fmt"
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
const maxLanes = 63

// laneSet decides a request under every lane of a run, and under the
// oracle, for one worker's keys. It keeps them in as few limiters.Groups
// as their policies allow, each a layer: a Group keeps a key's states side
// by side under one policy, with each algorithm at most once, so lanes of
// one algorithm under different policies (token buckets of capacities 3
// and 10) go to different layers. The usual run, every algorithm under
// one policy, is a single layer, decided straight through its Group.
type laneSet struct {
	n      int // lanes; the oracle, when there is one, is bit n of a mask
	layers []layer
	// direct says there is one layer, whose members are lanes 0..n-1 in
	// order and then, unless a lane is the oracle or there is none, the
	// oracle: its masks need no mapping.
	direct bool
	// oracleBit is the bit of the direct layer's masks that is the
	// oracle's, or -1.
	oracleBit int
	scratch   []limiters.Decision // per layer member, by layer
	exact     []limiters.Exact
	ends      []int
}

// layer is one Group of a laneSet.
type layer struct {
	group *limiters.Group
	// lanes holds the lane of each member, in the Group's order: n stands
	// for the oracle; a lane also holds the oracle's bit when oracle is
	// its index here.
	lanes  []int
	oracle int // index of the member that is the oracle too, or -1
	off    int // index of its first member in scratch
}

// newLaneSet builds the layers for lanes, and for the oracle: a sliding
// log under oracle's limit, window and clock; withOracle false leaves it
// out.
func newLaneSet(lanes []Lane, oracle limiters.Policy, withOracle bool) (*laneSet, error) {
	ls := &laneSet{n: len(lanes), oracleBit: -1}
	type member struct {
		lane int
		alg  limiters.Algorithm
		pol  limiters.Policy
	}
	var groups [][]member
	var policies []limiters.Policy
	has := func(ms []member, a limiters.Algorithm) bool {
		for _, m := range ms {
			if m.alg == a {
				return true
			}
		}
		return false
	}
	place := func(m member) {
		for g, ms := range groups {
			if p, ok := merge(policies[g], m.alg, m.pol); ok && !has(ms, m.alg) {
				groups[g], policies[g] = append(ms, m), p
				return
			}
		}
		p, _ := merge(limiters.Policy{Clock: m.pol.Clock}, m.alg, m.pol)
		groups, policies = append(groups, []member{m}), append(policies, p)
	}
	for l, lane := range lanes {
		place(member{l, lane.Algorithm, lane.Policy})
	}
	oracleLayer, oracleMember := -1, -1
	if withOracle {
		op := limiters.Policy{Limit: oracle.Limit, Window: oracle.Window, Clock: oracle.Clock}
		// A lane that is the same sliding log is the oracle too.
		for g, ms := range groups {
			for i, m := range ms {
				if m.alg == limiters.SlidingLog && m.pol.Limit == op.Limit && m.pol.Window == op.Window && m.pol.Clock == op.Clock {
					oracleLayer, oracleMember = g, i
				}
			}
			if oracleLayer >= 0 {
				break
			}
		}
		if oracleLayer < 0 {
			place(member{len(lanes), limiters.SlidingLog, op})
		}
	}
	for g, ms := range groups {
		algs := make([]limiters.Algorithm, len(ms))
		ly := layer{oracle: -1, off: len(ls.scratch)}
		for i, m := range ms {
			algs[i] = m.alg
			ly.lanes = append(ly.lanes, m.lane)
		}
		if g == oracleLayer {
			ly.oracle = oracleMember
		}
		grp, err := limiters.NewGroup(algs, policies[g])
		if err != nil {
			return nil, err
		}
		ly.group = grp
		ls.layers = append(ls.layers, ly)
		ls.scratch = append(ls.scratch, make([]limiters.Decision, len(ms))...)
	}
	ls.exact = make([]limiters.Exact, len(ls.scratch))
	ls.ends = make([]int, len(ls.scratch))
	if len(ls.layers) == 1 {
		ly := &ls.layers[0]
		ls.direct = true
		for i, l := range ly.lanes {
			if l != i {
				ls.direct = false
			}
		}
		switch {
		case ly.oracle >= 0:
			ls.oracleBit = ly.oracle
		case len(ly.lanes) > ls.n:
			ls.oracleBit = ls.n
		}
	}
	return ls, nil
}

// merge returns the policy of a Group that holds a member of algorithm a
// under p beside members under q, and whether one policy serves them all:
// the window algorithms share the limit and the window (zero in q: none
// yet), the buckets the capacity and the rate, and all the clock.
func merge(q limiters.Policy, a limiters.Algorithm, p limiters.Policy) (limiters.Policy, bool) {
	if p.Clock != q.Clock {
		return q, false
	}
	if a.Windowed() {
		if q.Window != 0 && (q.Limit != p.Limit || q.Window != p.Window) {
			return q, false
		}
		q.Limit, q.Window = p.Limit, p.Window
		return q, true
	}
	if q.Capacity != 0 && (q.Capacity != p.Capacity || !q.Rate.Equal(p.Rate)) {
		return q, false
	}
	q.Capacity, q.Rate = p.Capacity, p.Rate
	return q, true
}

// admit decides a request of cost at now for key id under every lane
// and returns which allowed it: bit l for lane l, bit n for the oracle.
func (ls *laneSet) admit(id uint32, now, cost int64) uint64 {
	if ls.direct {
		return ls.fromDirect(ls.layers[0].group.Admit(id, now, cost))
	}
	var mask uint64
	for i := range ls.layers {
		ly := &ls.layers[i]
		mask |= ly.spread(ly.group.Admit(id, now, cost), ls.n)
	}
	return mask
}

// allow is admit that also writes lane l's decision to out[l] and its
// durations in full to exact[l]; the oracle's go to out[n] and exact[n].
func (ls *laneSet) allow(id uint32, now, cost int64, out []limiters.Decision, exact []limiters.Exact) uint64 {
	if ls.direct {
		return ls.fromDirect(ls.layers[0].group.AllowExact(id, now, cost, out, exact))
	}
	var mask uint64
	for i := range ls.layers {
		ly := &ls.layers[i]
		k := len(ly.lanes)
		m := ly.group.AllowExact(id, now, cost, ls.scratch[ly.off:ly.off+k], ls.exact[ly.off:ly.off+k])
		mask |= ly.spread(m, ls.n)
		ly.gather(ls, out, exact)
	}
	return mask
}

// allowExplain is allow that also appends each lane's state text to dst
// and sets starts[l] and ends[l] to where lane l's text is in it.
func (ls *laneSet) allowExplain(id uint32, now, cost int64, unit time.Duration, out []limiters.Decision, exact []limiters.Exact, dst []byte, starts, ends []int) ([]byte, uint64) {
	var mask uint64
	for i := range ls.layers {
		ly := &ls.layers[i]
		k := len(ly.lanes)
		start := len(dst)
		var m uint64
		dst, m = ly.group.AllowExplain(id, now, cost, unit, ls.scratch[ly.off:ly.off+k], ls.exact[ly.off:ly.off+k], dst, ls.ends[ly.off:ly.off+k])
		mask |= ly.spread(m, ls.n)
		ly.gather(ls, out, exact)
		for j, l := range ly.lanes {
			if l < ls.n {
				starts[l], ends[l] = start, ls.ends[ly.off+j]
			}
			start = ls.ends[ly.off+j]
		}
	}
	return dst, mask
}

// fromDirect turns a direct layer's mask into lanes and the oracle.
func (ls *laneSet) fromDirect(m uint64) uint64 {
	lanes := m & (1<<ls.n - 1)
	if ls.oracleBit >= 0 && m&(1<<ls.oracleBit) != 0 {
		lanes |= 1 << ls.n
	}
	return lanes
}

// spread turns the layer's mask m into lanes and the oracle (bit n).
func (ly *layer) spread(m uint64, n int) uint64 {
	var mask uint64
	for i, l := range ly.lanes {
		if m&(1<<i) != 0 {
			mask |= 1 << l
			if i == ly.oracle {
				mask |= 1 << n
			}
		}
	}
	return mask
}

// gather copies the layer's decisions from the scratch to their lanes.
func (ly *layer) gather(ls *laneSet, out []limiters.Decision, exact []limiters.Exact) {
	for i, l := range ly.lanes {
		out[l], exact[l] = ls.scratch[ly.off+i], ls.exact[ly.off+i]
		if i == ly.oracle {
			out[ls.n], exact[ls.n] = out[l], exact[l]
		}
	}
}

// prefetch starts loading id's states in every layer.
func (ls *laneSet) prefetch(id uint32) {
	for i := range ls.layers {
		ls.layers[i].group.Prefetch(id)
	}
}

// idle reports whether id's states are all fresh from now on.
func (ls *laneSet) idle(id uint32, now int64) bool {
	for i := range ls.layers {
		if !ls.layers[i].group.Idle(id, now) {
			return false
		}
	}
	return true
}

// reset puts id back in the fresh state everywhere.
func (ls *laneSet) reset(id uint32) {
	for i := range ls.layers {
		ls.layers[i].group.Reset(id)
	}
}

// decidedAt returns the time at which lane l takes a request at now for
// key id; see limiters.Group.DecidedAt.
func (ls *laneSet) decidedAt(id uint32, l int, now int64) int64 {
	for i := range ls.layers {
		ly := &ls.layers[i]
		for j, m := range ly.lanes {
			if m == l {
				return ly.group.DecidedAt(id, j, now)
			}
		}
	}
	panic(fmt.Sprintf("sim: no lane %d", l))
}
