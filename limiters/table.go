package limiters

import (
	"time"
)

// A Table holds the per-key state of one algorithm under one policy, for
// keys the caller has interned as dense ids 0, 1, 2, .... An id never used
// before has the fresh state. The table grows by itself, in chunks; the
// states of every algorithm but SlidingLog hold no pointers, so the garbage
// collector does not scan them.
//
// A Table is not safe for concurrent use; see Keyed for that. Use NewTable
// to make one: the zero Table refuses every request with ReasonBadRule.
type Table struct {
	s     store
	exact Exact // AllowExact's, kept here so that it need not escape
}

// NewTable returns an empty table for algorithm a under policy p, or an
// error if p is not valid for a.
func NewTable(a Algorithm, p Policy) (*Table, error) {
	r, err := NewRule(a, p)
	if err != nil {
		return nil, err
	}
	return &Table{s: newStore([]*Rule{r})}, nil
}

// rule returns the table's rule, or nil for the zero Table.
func (t *Table) rule() *Rule {
	if len(t.s.members) == 0 {
		return nil
	}
	return &t.s.members[0].rule
}

// Algorithm returns the table's algorithm.
func (t *Table) Algorithm() Algorithm {
	if r := t.rule(); r != nil {
		return r.alg
	}
	return 0
}

// Policy returns the table's policy.
func (t *Table) Policy() Policy {
	if r := t.rule(); r != nil {
		return r.pol
	}
	return Policy{}
}

// Allow judges a request of cost at time now (in nanoseconds) for key id
// and updates the key's state. It allocates nothing, except when the table
// grows or a sliding log's ring changes size.
func (t *Table) Allow(id uint32, now, cost int64) Decision {
	return t.allow(id, now, cost, nil)
}

// AllowExact is Allow that also returns the decision's durations in full:
// a RetryAfter, ResetAfter or Delay that does not fit a time.Duration is
// InfDuration in the Decision, and exact in the Exact.
func (t *Table) AllowExact(id uint32, now, cost int64) (Decision, Exact) {
	d := t.allow(id, now, cost, &t.exact)
	return d, t.exact
}

// allow is Allow that also sets *x, unless x is nil, to the decision's
// durations in full. x must be nil or point to memory on the heap (see
// applyExact).
func (t *Table) allow(id uint32, now, cost int64, x *Exact) Decision {
	if len(t.s.members) == 0 {
		if x != nil {
			*x = Exact{}
		}
		return Decision{Reason: ReasonBadRule} // a zero Table
	}
	m := &t.s.members[0]
	t.s.enter(m, id, now, cost)
	return m.allow(t.s.blocks.At(id), now, cost, x)
}

// AllowExplain is Allow that also appends to dst a short text of the state
// the decision was based on, and returns the extended slice. Times in the
// text are decimal numbers of unit (a unit of 0 or less means
// time.Second), or RFC 3339 times when unit is UnitRFC3339; amounts are exact decimals when they have at most nine
// fractional digits, and otherwise are rounded to three and marked with a
// leading "~". Algorithm.Doc().Explain describes each algorithm's text:
// "window [10,20) count 1" for a fixed window, "tokens 2" for a token
// bucket.
func (t *Table) AllowExplain(id uint32, now, cost int64, unit time.Duration, dst []byte) (Decision, []byte) {
	return t.allowExplain(id, now, cost, unit, dst, nil)
}

// allowExplain is AllowExplain that also sets *x, unless x is nil, to the
// decision's durations in full, as allow does.
func (t *Table) allowExplain(id uint32, now, cost int64, unit time.Duration, dst []byte, x *Exact) (Decision, []byte) {
	if len(t.s.members) == 0 {
		return Decision{Reason: ReasonBadRule}, dst
	}
	m := &t.s.members[0]
	t.s.enter(m, id, now, cost)
	return m.ops.explain(&m.rule, t.s.blocks.At(id), now, cost, unit, dst, &m.d, x)
}

// Prefetch asks the CPU to start loading id's state into its caches and
// returns at once. It does not wait for the load, so a caller
// that prefetches the ids of the next few requests while deciding this one
// overlaps the cache misses with work. It creates nothing, and it is only
// a hint: on architectures without a prefetch instruction it does nothing.
func (t *Table) Prefetch(id uint32) {
	if len(t.s.members) > 0 {
		t.s.prefetch(id)
	}
}

// Idle reports whether id's state decides every request at or after now
// exactly as a fresh state would (its window has passed, its bucket is full
// or empty again), so that the id may be reset and reused.
func (t *Table) Idle(id uint32, now int64) bool {
	return len(t.s.members) == 0 || t.s.idle(id, now)
}

// DecidedAt returns the time at which id's state takes a request at now:
// now itself, unless the clock went backwards for the key, when it is the
// earliest time the state accepts (the start of its window, its newest
// logged request, its last request). Asked right after Allow admitted a
// request at now, it tells the time the request was judged at, which
// under ClockClamp may be later than now.
func (t *Table) DecidedAt(id uint32, now int64) int64 {
	if len(t.s.members) == 0 {
		return now
	}
	return t.s.decidedAt(id, 0, now)
}

// Reset puts id back in the fresh state and releases any storage it holds.
func (t *Table) Reset(id uint32) {
	if len(t.s.members) > 0 {
		t.s.reset(id)
	}
}
