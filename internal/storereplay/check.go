package storereplay

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// A BoundKind is the shape of the tight bound a lane's algorithm keeps
// for one key.
type BoundKind uint8

const (
	// BoundSpans: at most Limit in any Spans consecutive aligned spans
	// [k*Span, (k+1)*Span). One span of the window is the limit per
	// aligned window (a fixed window, a sliding counter: and so at most
	// twice the limit across an edge); sliding buckets keep the limit in
	// any Buckets consecutive sub-windows.
	BoundSpans BoundKind = iota
	// BoundRolling: at most Limit in any closed interval [t-Window, t]:
	// the sliding log.
	BoundRolling
	// BoundMeter: an ideal meter that fills by every allowed cost and
	// drains at Rate, never refusing, never holds more than Capacity: at
	// most Capacity + Rate x elapsed between any two allowed requests.
	BoundMeter
)

// A Bound is the most a lane's algorithm may allow one key, and what the
// check of every key found.
type Bound struct {
	Kind BoundKind
	// BoundSpans and BoundRolling.
	Limit  int64
	Span   time.Duration // BoundSpans: the aligned span
	Spans  int64         // BoundSpans: how many consecutive spans hold Limit
	Window time.Duration // BoundRolling
	// BoundMeter.
	Capacity int64
	Rate     limiters.Rate
	// Tick, when not 0, is the unit an algorithm that takes a tick reads
	// time in: its meter is judged at the start of each request's tick.
	Tick time.Duration

	// Violations counts the allowed requests that broke the bound;
	// MaxExcess is the most cost beyond it at once, at the request of
	// WorstKey whose time the trace wrote as WorstAt.
	Violations int64
	MaxExcess  int64
	WorstKey   string
	WorstAt    string
}

// Holds reports whether no allowed request broke the bound.
func (b *Bound) Holds() bool { return b.Violations == 0 }

// boundOf derives lane l's bound from what the table of kinds says of
// its algorithm: aligned spans (BackWithin) hold the limit per window's
// worth of them; a window without spans is the rolling window; the rest
// are meters, read in whole ticks by an algorithm that takes a tick.
func boundOf(a limiters.Algorithm, p limiters.Policy) Bound {
	switch span := a.BackWithin(p); {
	case a.Windowed() && span > 0:
		return Bound{Kind: BoundSpans, Limit: p.Limit, Span: span, Spans: int64(p.Window / span)}
	case a.Windowed():
		return Bound{Kind: BoundRolling, Limit: p.Limit, Window: p.Window}
	}
	b := Bound{Kind: BoundMeter, Capacity: p.Capacity, Rate: p.Rate}
	if slices.Contains(a.Params(), "tick") {
		b.Tick = p.Tick
		if b.Tick == 0 {
			b.Tick = limiters.DefaultTick
		}
	}
	return b
}

// checker checks, lane by lane and key by key, the requests a store
// allowed against the tight bound of the lane's algorithm, at the times
// the store judged them (Result.At: a request's own time, or its key's
// latest under ClockClamp), in the order of those times, which for one
// key is the order the store judged its requests in. With --route spread
// the store decides a key's requests in no fixed order, so its decisions
// cannot be compared with the in-memory replay's; these bounds must hold
// all the same, and a store that races (--naive) breaks them.
//
// The writer hands it the requests in trace order; with --route spread
// a key's requests may then come a little out of the store's order, and
// the check puts them back: each key keeps its allowed requests of the
// last few windows sorted by time.
type checker struct {
	lanes []laneCheck
	keys  map[string][]keyCheck // per key, one per lane
	seen  int                   // requests since the last sweep
	now   int64                 // the latest time checked
}

type laneCheck struct {
	b Bound
	// Meters: the rate n per per ns in lowest terms.
	n, per int64
	// How long a key's allowed requests are kept: any that can still
	// share a window or a meter's fill with a new one, and as long again
	// for requests that come out of order.
	horizon int64
}

// keyCheck is one key's allowed requests under one lane, sorted by the
// time the store judged them.
type keyCheck struct {
	evs    []event
	latest int64
	// Meters: the ideal meter's level x per just before evs[0].
	base int64
}

type event struct {
	t, cost int64
	level   int64 // meters: the level x per after it
	flagged bool  // counted as a violation
}

// sweepEvery is how many requests pass between sweeps of the keys whose
// check state is empty again.
const sweepEvery = 1 << 16

func newChecker(lanes []Lane) *checker {
	c := &checker{keys: map[string][]keyCheck{}}
	for _, l := range lanes {
		lc := laneCheck{b: boundOf(l.Algorithm, l.Policy)}
		switch lc.b.Kind {
		case BoundSpans:
			lc.horizon = satMul(2, satMul(lc.b.Spans, int64(lc.b.Span)))
		case BoundRolling:
			lc.horizon = satMul(2, int64(lc.b.Window))
		case BoundMeter:
			g := gcd(lc.b.Rate.N, int64(lc.b.Rate.Per))
			lc.n, lc.per = lc.b.Rate.N/g, int64(lc.b.Rate.Per)/g
			// A full meter drains in Capacity*per/n ns.
			hi, lo := bits.Mul64(uint64(lc.b.Capacity), uint64(lc.per))
			if hi != 0 || lo > math.MaxInt64 {
				lc.horizon = math.MaxInt64
			} else {
				lc.horizon = satMul(2, int64(lo)/lc.n+1)
			}
		}
		c.lanes = append(c.lanes, lc)
	}
	return c
}

// add checks one request: allowed[l] says whether lane l allowed it, at
// the time at[l] the store judged it, for cost.
func (c *checker) add(key, timeText []byte, cost int64, allowed []bool, at []int64) {
	ks, ok := c.keys[string(key)]
	if !ok {
		ks = make([]keyCheck, len(c.lanes))
		for i := range ks {
			ks[i].latest = math.MinInt64
		}
		c.keys[string(key)] = ks
	}
	for l := range c.lanes {
		if !allowed[l] {
			continue
		}
		lc, k := &c.lanes[l], &ks[l]
		c.now = max(c.now, at[l])
		k.latest = max(k.latest, at[l])
		var excess int64
		switch lc.b.Kind {
		case BoundSpans:
			excess = k.spans(lc, at[l], cost)
		case BoundRolling:
			excess = k.rolling(lc, at[l], cost)
		case BoundMeter:
			t := at[l]
			if tick := int64(lc.b.Tick); tick > 0 && t >= math.MinInt64+tick {
				t = floorDiv(t, tick) * tick
			}
			excess = k.meter(lc, t, cost)
		}
		k.prune(lc)
		if excess > 0 {
			b := &lc.b
			b.Violations++
			if excess > b.MaxExcess {
				b.MaxExcess, b.WorstKey, b.WorstAt = excess, string(key), string(timeText)
			}
		}
	}
	if c.seen++; c.seen >= sweepEvery && len(c.keys) > sweepEvery {
		c.sweep()
	}
}

// insert puts an event at t in order (after those at t) and returns its
// index.
func (k *keyCheck) insert(t, cost int64) int {
	i := len(k.evs)
	for i > 0 && k.evs[i-1].t > t {
		i--
	}
	k.evs = slices.Insert(k.evs, i, event{t: t, cost: cost})
	return i
}

// prune drops the events older than the lane's horizon before the key's
// latest time, keeping for a meter the level they leave.
func (k *keyCheck) prune(lc *laneCheck) {
	from := k.latest - lc.horizon
	if k.latest < math.MinInt64+lc.horizon {
		return
	}
	drop := sort.Search(len(k.evs), func(i int) bool { return k.evs[i].t >= from })
	if drop == 0 {
		return
	}
	if lc.b.Kind == BoundMeter {
		k.base = k.evs[drop-1].level
		// The base stands just before the first event kept: bring it
		// forward to there.
		if drop < len(k.evs) {
			k.base = drain(lc, k.base, int64(min(since(k.evs[drop].t, k.evs[drop-1].t), math.MaxInt64)))
		}
	}
	k.evs = append(k.evs[:0], k.evs[drop:]...)
}

// spans adds cost at t and returns by how much the most loaded run of
// Spans consecutive aligned spans that holds t passes the limit.
func (k *keyCheck) spans(lc *laneCheck, t, cost int64) int64 {
	k.insert(t, cost)
	b := &lc.b
	span := int64(b.Span)
	idx := floorDiv(t, span)
	// The sums of the spans idx-Spans+1 .. idx+Spans-1.
	n := 2*b.Spans - 1
	sums := make([]int64, n)
	first := idx - b.Spans + 1
	for _, e := range k.evs {
		if j := floorDiv(e.t, span) - first; j >= 0 && j < n {
			sums[j] = satAdd(sums[j], e.cost)
		}
	}
	var worst, run int64
	for j := int64(0); j < n; j++ {
		run = satAdd(run, sums[j])
		if j >= b.Spans {
			run -= sums[j-b.Spans]
		}
		if j >= b.Spans-1 {
			worst = max(worst, run)
		}
	}
	return max(0, worst-b.Limit)
}

// rolling adds cost at t and returns by how much the most loaded closed
// interval of the window's length that holds t passes the limit.
func (k *keyCheck) rolling(lc *laneCheck, t, cost int64) int64 {
	k.insert(t, cost)
	w := int64(lc.b.Window)
	// The intervals [s, s+W] that hold t, with s an event's time in
	// [t-W, t]: the heaviest of them ends at the last event within W of s.
	var worst int64
	lo := sort.Search(len(k.evs), func(i int) bool { return k.evs[i].t > t || since(t, k.evs[i].t) <= uint64(w) })
	hi, sum := lo, int64(0)
	for s := lo; s < len(k.evs) && k.evs[s].t <= t; s++ {
		for hi < len(k.evs) && since(k.evs[hi].t, k.evs[s].t) <= uint64(w) {
			sum = satAdd(sum, k.evs[hi].cost)
			hi++
		}
		worst = max(worst, sum)
		sum -= k.evs[s].cost
	}
	return max(0, worst-lc.b.Limit)
}

// meter adds cost at t to the ideal meter and returns by how much it
// holds more than the capacity, in whole units, at this request or at a
// later one it puts over (0 when none).
func (k *keyCheck) meter(lc *laneCheck, t, cost int64) int64 {
	i := k.insert(t, cost)
	limit := satMul(lc.per, lc.b.Capacity)
	var worst int64
	for j := i; j < len(k.evs); j++ {
		e := &k.evs[j]
		level := k.base
		if j > 0 {
			level = drain(lc, k.evs[j-1].level, int64(min(since(e.t, k.evs[j-1].t), math.MaxInt64)))
		}
		e.level = satAdd(level, satMul(lc.per, e.cost))
		if over := e.level - limit; over > 0 && (j == i || !e.flagged) {
			e.flagged = true
			worst = max(worst, (over+lc.per-1)/lc.per)
		}
	}
	return worst
}

// drain returns a meter's level x per after elapsed ns.
func drain(lc *laneCheck, level, elapsed int64) int64 {
	if level <= 0 || elapsed <= 0 {
		return max(level, 0)
	}
	return max(0, level-satMul(lc.n, elapsed))
}

// idle reports whether a key's check state can no longer meet a new
// request at or after now.
func (c *checker) idle(ks []keyCheck, now int64) bool {
	for l := range ks {
		if k := &ks[l]; len(k.evs) > 0 && (k.latest >= now || since(now, k.latest) <= uint64(c.lanes[l].horizon)) {
			return false
		}
	}
	return true
}

// sweep forgets the keys whose state is empty again, so that memory
// follows the live keys.
func (c *checker) sweep() {
	c.seen = 0
	for key, ks := range c.keys {
		if c.idle(ks, c.now) {
			delete(c.keys, key)
		}
	}
}

// since returns a - b for a >= b, in full.
func since(a, b int64) uint64 { return uint64(a) - uint64(b) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// satMul returns a*b for a, b >= 0, saturating at math.MaxInt64.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// satAdd returns a+b for a, b >= 0, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
