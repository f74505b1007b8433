package limiters

import (
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/prefetch"
)

const (
	chunkBits = 10
	chunkSize = 1 << chunkBits
)

// chunks is a growable array of states indexed by a dense id, kept in
// fixed-size chunks so that growing never copies states and, for states
// without pointers, the garbage collector never scans them.
type chunks[S any] struct {
	c []*[chunkSize]S
}

// at returns the state of id, creating it (fresh) if needed.
func (c *chunks[S]) at(id uint32) *S {
	i := int(id >> chunkBits)
	if i >= len(c.c) || c.c[i] == nil {
		c.grow(i)
	}
	return &c.c[i][id&(chunkSize-1)]
}

func (c *chunks[S]) grow(i int) {
	if i >= len(c.c) {
		c.c = append(c.c, make([]*[chunkSize]S, i+1-len(c.c))...)
	}
	chunk := new([chunkSize]S)
	prefault(chunk[:])
	c.c[i] = chunk
}

// prefault writes a fresh state into every 4 KiB of a new chunk. The
// chunk's memory is most likely new from the operating system, and
// deciding reads a state before it writes it. Reading a new
// page maps the shared zero page; the write that follows then takes a
// second, copy-on-write fault, whose TLB flush interrupts every other CPU
// the process runs on. Writing first takes one plain fault a page.
func prefault[S any](s []S) {
	var fresh S
	step := max(1, 4096/int(unsafe.Sizeof(fresh)))
	for i := 0; i < len(s); i += step {
		s[i] = fresh
	}
}

// get returns the state of id, or nil if it was never created.
func (c *chunks[S]) get(id uint32) *S {
	i := int(id >> chunkBits)
	if i >= len(c.c) || c.c[i] == nil {
		return nil
	}
	return &c.c[i][id&(chunkSize-1)]
}

// A Table holds the per-key state of one algorithm under one policy, for
// keys the caller has interned as dense ids 0, 1, 2, .... An id never used
// before has the fresh state. The table grows by itself, in chunks; the
// states of every algorithm but SlidingLog hold no pointers, so the garbage
// collector does not scan them.
//
// A Table is not safe for concurrent use; see Keyed for that. Use NewTable
// to make one: the zero Table refuses every request with ReasonBadRule.
type Table struct {
	rule  Rule
	exact Exact // AllowExact's, kept here so that it need not escape
	fw    chunks[FixedWindowState]
	sc    chunks[SlidingCounterState]
	sl    chunks[SlidingLogState]
	bk    chunks[bucket]
	db    chunks[debt]
}

// NewTable returns an empty table for algorithm a under policy p, or an
// error if p is not valid for a.
func NewTable(a Algorithm, p Policy) (*Table, error) {
	r, err := NewRule(a, p)
	if err != nil {
		return nil, err
	}
	return &Table{rule: *r}, nil
}

// Algorithm returns the table's algorithm.
func (t *Table) Algorithm() Algorithm { return t.rule.alg }

// Policy returns the table's policy.
func (t *Table) Policy() Policy { return t.rule.pol }

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

// admit is Allow for callers that need only whether the request was
// allowed; see Group.Admit.
func (t *Table) admit(id uint32, now, cost int64) bool {
	r := &t.rule
	if !validCost(r, cost) {
		return t.Allow(id, now, cost).Allowed // refused, and the zero Table
	}
	switch r.alg {
	case FixedWindow:
		return t.fw.at(id).admit(r, now, cost)
	case SlidingLog:
		return t.sl.at(id).admit(r, now, cost)
	case SlidingCounter:
		return t.sc.at(id).admit(r, now, cost)
	case TokenBucket, LeakyBucket:
		return t.bk.at(id).admit(r, now, cost)
	default:
		return t.db.at(id).admit(r, now, cost)
	}
}

// allow is Allow that also sets *x, unless x is nil, to the decision's
// durations in full. x must be nil or point to memory on the heap (see
// applyExact).
func (t *Table) allow(id uint32, now, cost int64, x *Exact) Decision {
	r := &t.rule
	if x != nil {
		*x = Exact{}
	}
	if !r.ok {
		return Decision{Reason: ReasonBadRule} // a zero Table
	}
	// The common case, a valid cost at a time the state accepts, calls the
	// algorithm directly; apply handles the rest.
	valid := uint64(cost-1) < uint64(r.limit)
	switch r.alg {
	case FixedWindow:
		s := t.fw.at(id)
		if _, back := s.boundary(r, now); valid && !back {
			return s.decide(r, now, cost, true, x)
		}
		return applyExact(s, r, now, cost, x)
	case SlidingLog:
		s := t.sl.at(id)
		if _, back := s.boundary(r, now); valid && !back {
			return s.decide(r, now, cost, true, x)
		}
		return applyExact(s, r, now, cost, x)
	case SlidingCounter:
		s := t.sc.at(id)
		if _, back := s.boundary(r, now); valid && !back {
			return s.decide(r, now, cost, true, x)
		}
		return applyExact(s, r, now, cost, x)
	case TokenBucket, LeakyBucket:
		s := t.bk.at(id)
		if valid && (!s.seen || now >= s.last) {
			return s.decide(r, now, cost, true, x)
		}
		return applyExact(s, r, now, cost, x)
	default:
		s := t.db.at(id)
		if valid && (!s.seen || now >= s.last) {
			return s.decide(r, now, cost, true, x)
		}
		return applyExact(s, r, now, cost, x)
	}
}

// AllowExplain is Allow that also appends to dst a short text of the state
// the decision was based on, and returns the extended slice. Times in the
// text are decimal numbers of unit (a unit of 0 or less means
// time.Second); amounts are exact decimals when they have at most nine
// fractional digits, and otherwise are rounded to three and marked with a
// leading "~". The texts are:
//
//	fixed-window     window [10,20) count 1   the key's window and count after the decision
//	sliding-log      log [3 5 12]             the log after the decision; "12x2" is an entry of cost 2;
//	                                          more than 7 entries show as "log [1 2 3 ... 8 9 10] (10 entries)"
//	sliding-counter  estimate 2.4             the estimate the decision was judged by
//	token-bucket     tokens 2                 the tokens after the decision
//	leaky-bucket     level 1                  the level after the decision
//	gcra             tat 15                   the theoretical arrival time after the decision
//	leaky-queue      queue 2 until 15         units queued after the decision, and when the queue empties
func (t *Table) AllowExplain(id uint32, now, cost int64, unit time.Duration, dst []byte) (Decision, []byte) {
	return t.allowExplain(id, now, cost, unit, dst, nil)
}

// allowExplain is AllowExplain that also sets *x, unless x is nil, to the
// decision's durations in full, as allow does.
func (t *Table) allowExplain(id uint32, now, cost int64, unit time.Duration, dst []byte, x *Exact) (Decision, []byte) {
	r := &t.rule
	if !r.ok {
		return Decision{Reason: ReasonBadRule}, dst
	}
	switch r.alg {
	case FixedWindow:
		return explainFixedWindow(t.fw.at(id), r, now, cost, unit, dst, x)
	case SlidingLog:
		return explainSlidingLog(t.sl.at(id), r, now, cost, unit, dst, x)
	case SlidingCounter:
		return explainSlidingCounter(t.sc.at(id), r, now, cost, dst, x)
	case TokenBucket, LeakyBucket:
		return explainBucket(t.bk.at(id), r, now, cost, dst, x)
	default:
		return explainDebt(t.db.at(id), r, now, cost, unit, dst, x)
	}
}

// The explain functions are apply for one kind of state, plus the state
// text AllowExplain documents.

func explainFixedWindow(s *FixedWindowState, r *Rule, now, cost int64, unit time.Duration, dst []byte, x *Exact) (Decision, []byte) {
	d := applyExact(s, r, now, cost, x)
	return d, s.appendText(r, now, unit, dst)
}

func explainSlidingLog(s *SlidingLogState, r *Rule, now, cost int64, unit time.Duration, dst []byte, x *Exact) (Decision, []byte) {
	d := applyExact(s, r, now, cost, x)
	return d, s.appendText(unit, dst)
}

func explainSlidingCounter(s *SlidingCounterState, r *Rule, now, cost int64, dst []byte, x *Exact) (Decision, []byte) {
	pre := *s
	d := applyExact(s, r, now, cost, x)
	at := now
	if b, back := pre.boundary(r, now); back {
		at = b
	}
	return d, pre.appendEstimate(r, at, dst)
}

func explainBucket(s *bucket, r *Rule, now, cost int64, dst []byte, x *Exact) (Decision, []byte) {
	d := applyExact(s, r, now, cost, x)
	return d, s.appendState(r, now, dst)
}

// appendState appends "tokens T" or "level L" for the state after a
// decision at now.
func (b *bucket) appendState(r *Rule, now int64, dst []byte) []byte {
	c := *b
	if !c.seen {
		c.drain(r, now)
	}
	if r.alg == TokenBucket {
		dst = append(dst, "tokens "...)
	} else {
		dst = append(dst, "level "...)
	}
	return c.appendAmount(r, r.alg == TokenBucket, dst)
}

func explainDebt(s *debt, r *Rule, now, cost int64, unit time.Duration, dst []byte, x *Exact) (Decision, []byte) {
	d := applyExact(s, r, now, cost, x)
	c := *s
	if !c.seen {
		c.advance(now)
	}
	return d, c.appendText(r, r.alg == LeakyQueue, unit, dst)
}

// Prefetch asks the CPU to start loading id's state into its caches and
// returns at once. It does not wait for the load, so a caller
// that prefetches the ids of the next few requests while deciding this one
// overlaps the cache misses with work. It creates nothing, and it is only
// a hint: on architectures without a prefetch instruction it does nothing.
func (t *Table) Prefetch(id uint32) {
	switch t.rule.alg {
	case FixedWindow:
		prefetchState(t.fw.get(id))
	case SlidingLog:
		prefetchState(t.sl.get(id))
	case SlidingCounter:
		prefetchState(t.sc.get(id))
	case TokenBucket, LeakyBucket:
		prefetchState(t.bk.get(id))
	default:
		prefetchState(t.db.get(id))
	}
}

// prefetchState prefetches the state s points at, if any.
func prefetchState[S any](s *S) {
	if s != nil {
		prefetch.Range(unsafe.Pointer(s), unsafe.Sizeof(*s))
	}
}

// Idle reports whether id's state decides every request at or after now
// exactly as a fresh state would (its window has passed, its bucket is full
// or empty again), so that the id may be reset and reused.
func (t *Table) Idle(id uint32, now int64) bool {
	r := &t.rule
	switch r.alg {
	case FixedWindow:
		if s := t.fw.get(id); s != nil {
			return s.idle(r, now)
		}
	case SlidingLog:
		if s := t.sl.get(id); s != nil {
			return s.idle(r, now)
		}
	case SlidingCounter:
		if s := t.sc.get(id); s != nil {
			return s.idle(r, now)
		}
	case TokenBucket, LeakyBucket:
		if s := t.bk.get(id); s != nil {
			return s.idle(r, now)
		}
	default:
		if s := t.db.get(id); s != nil {
			return s.idle(r, now)
		}
	}
	return true
}

// DecidedAt returns the time at which id's state takes a request at now:
// now itself, unless the clock went backwards for the key, when it is the
// earliest time the state accepts (the start of its window, its newest
// logged request, its last request). Asked right after Allow admitted a
// request at now, it tells the time the request was judged at, which
// under ClockClamp may be later than now.
func (t *Table) DecidedAt(id uint32, now int64) int64 {
	r := &t.rule
	switch r.alg {
	case FixedWindow:
		if s := t.fw.get(id); s != nil {
			return decidedAt(s, r, now)
		}
	case SlidingLog:
		if s := t.sl.get(id); s != nil {
			return decidedAt(s, r, now)
		}
	case SlidingCounter:
		if s := t.sc.get(id); s != nil {
			return decidedAt(s, r, now)
		}
	case TokenBucket, LeakyBucket:
		if s := t.bk.get(id); s != nil {
			return decidedAt(s, r, now)
		}
	default:
		if s := t.db.get(id); s != nil {
			return decidedAt(s, r, now)
		}
	}
	return now
}

// Reset puts id back in the fresh state and releases any storage it holds.
func (t *Table) Reset(id uint32) {
	switch t.rule.alg {
	case FixedWindow:
		if s := t.fw.get(id); s != nil {
			*s = FixedWindowState{}
		}
	case SlidingLog:
		if s := t.sl.get(id); s != nil {
			*s = SlidingLogState{}
		}
	case SlidingCounter:
		if s := t.sc.get(id); s != nil {
			*s = SlidingCounterState{}
		}
	case TokenBucket, LeakyBucket:
		if s := t.bk.get(id); s != nil {
			*s = bucket{}
		}
	default:
		if s := t.db.get(id); s != nil {
			*s = debt{}
		}
	}
}
