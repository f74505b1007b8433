package limiters

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/keyhash"
)

// model runs one key through the exported state types' Step functions;
// an algorithm with no case here runs through its entry in the kinds
// table, on a state of the type the entry keeps (gen).
type model struct {
	r   *Rule
	gen reflect.Value // a pointer to the state, for the kinds table's path
	// generic: the model steps through the kinds table.
	generic bool
	t       testing.TB
	fw      FixedWindowState
	sl      SlidingLogState
	sc      SlidingCounterState
	tb      TokenBucketState
	lb      LeakyBucketState
	g       GCRAState
	q       LeakyQueueState
	sb      SlidingBucketsState
	fh      FixedWindowHitsState
	tq      TickQueueState
}

func newModel(t testing.TB, a Algorithm, p Policy) *model {
	r, err := NewRule(a, p)
	if err != nil {
		t.Fatal(err)
	}
	return &model{r: r, gen: reflect.New(r.k.ops.stateType()), t: t}
}

func (m *model) step(now, cost int64) (d Decision) {
	switch m.r.alg {
	case FixedWindow:
		m.fw, d = m.fw.Step(m.r, now, cost)
	case SlidingLog:
		m.sl, d = m.sl.Step(m.r, now, cost)
	case SlidingCounter:
		m.sc, d = m.sc.Step(m.r, now, cost)
	case TokenBucket:
		m.tb, d = m.tb.Step(m.r, now, cost)
	case LeakyBucket:
		m.lb, d = m.lb.Step(m.r, now, cost)
	case GCRA:
		m.g, d = m.g.Step(m.r, now, cost)
	case LeakyQueue:
		m.q, d = m.q.Step(m.r, now, cost)
	case SlidingBuckets:
		m.sb, d = m.sb.Step(m.r, now, cost)
	case FixedWindowHits:
		m.fh, d = m.fh.Step(m.r, now, cost)
	case TickQueue:
		m.tq, d = m.tq.Step(m.r, now, cost)
	default:
		var out Decision
		m.generic = true
		d = m.r.k.ops.allow(m.r, m.gen.UnsafePointer(), now, cost, &out, nil)
	}
	return d
}

func (m *model) clone() *model {
	c := *m
	if m.sl.buf != nil {
		c.sl.buf = slices.Clone(m.sl.buf)
	}
	if m.sb.log.buf != nil {
		c.sb.log.buf = slices.Clone(m.sb.log.buf)
	}
	// The table's state goes through its encoding, which holds it whole
	// and shares nothing with it; a state never stepped is the fresh one.
	c.gen = reflect.New(m.gen.Type().Elem())
	if m.generic && !c.gen.Interface().(codec).readBinary(m.r, m.gen.Interface().(codec).appendBinary(nil)) {
		m.t.Fatalf("%s: a state that does not read back its encoding", m.r.alg)
	}
	return &c
}

func (m *model) idle(now int64) bool {
	switch m.r.alg {
	case FixedWindow:
		return m.fw.idle(m.r, now)
	case SlidingLog:
		return m.sl.idle(m.r, now)
	case SlidingCounter:
		return m.sc.idle(m.r, now)
	case TokenBucket:
		return m.tb.b.idle(m.r, now)
	case LeakyBucket:
		return m.lb.b.idle(m.r, now)
	case GCRA:
		return m.g.g.idle(m.r, now)
	case SlidingBuckets:
		return m.sb.idle(m.r, now)
	case FixedWindowHits:
		return m.fh.idle(m.r, now)
	case TickQueue:
		return m.tq.idle(m.r, now)
	case LeakyQueue:
		return m.q.g.idle(m.r, now)
	default:
		return m.r.k.ops.idle(m.r, m.gen.UnsafePointer(), now)
	}
}

type request struct {
	key  uint32
	t    int64
	cost int64
}

// randomPolicy returns a small policy on a time grid of tick nanoseconds.
func randomPolicy(rng *rand.Rand, tick int64) Policy {
	p := Policy{
		Limit:    1 + rng.Int64N(6),
		Window:   time.Duration(tick * (1 + rng.Int64N(12))),
		Capacity: 1 + rng.Int64N(6),
		Rate:     Rate{N: 1 + rng.Int64N(4), Per: time.Duration(tick * (1 + rng.Int64N(10)))},
		Clock:    Clock(rng.IntN(2)),
	}
	// Buckets: a divisor of the window in ticks, chosen from the other
	// parameters so that the random streams stay as they were.
	var divisors []int64
	for w, d := int64(p.Window)/tick, int64(1); d <= w; d++ {
		if w%d == 0 {
			divisors = append(divisors, d)
		}
	}
	p.Buckets = divisors[(p.Limit+p.Capacity)%int64(len(divisors))]
	// TickQueue: a tick that divides the window (so that shifts by
	// windows are shifts by ticks), parts and a delay threshold, again
	// from the other parameters.
	p.Tick = p.Window / time.Duration(p.Buckets)
	p.Parts = []int64{1000, 1, 3}[p.Limit%3]
	p.Delay = p.Limit % (p.Capacity + 1)
	// BlockingCounter: no block, half a window or a whole one.
	p.Block = p.Window * time.Duration((p.Limit+p.Capacity)%3) / 2
	return p
}

// randomTrace returns n requests of one key on a grid of tick ns, with
// costs up to maxCost, going back in time now and then if back is set.
func randomTrace(rng *rand.Rand, n int, tick, maxCost int64, back bool) []request {
	trace := make([]request, n)
	ts := (rng.Int64N(41) - 20) * tick
	for i := range trace {
		switch x := rng.IntN(20); {
		case x == 0 && back:
			ts -= rng.Int64N(20) * tick
		case x < 6:
		default:
			ts += rng.Int64N(6) * tick
			if rng.IntN(4) == 0 {
				ts += rng.Int64N(tick)
			}
		}
		trace[i] = request{t: ts, cost: 1 + rng.Int64N(maxCost)}
	}
	return trace
}

var ticks = []int64{1, 3, 1000, int64(time.Second)}

// TestRetryResetRemainingExact checks on random traces, for every
// algorithm, that a retry at now+RetryAfter is allowed and one a
// nanosecond earlier is not, that the key is idle (fresh) exactly
// ResetAfter after the decision, and that Remaining unit requests at the
// same instant pass and the next does not.
func TestRetryResetRemainingExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 150; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 60, tick, 4, true)
		for _, alg := range AllAlgorithms() {
			checkExact(t, alg, p, trace)
		}
	}
}

func checkExact(t *testing.T, alg Algorithm, p Policy, trace []request) {
	t.Helper()
	m := newModel(t, alg, p)
	for i, rq := range trace {
		pre := m.clone()
		d := m.step(rq.t, rq.cost)
		where := func() string {
			return fmt.Sprintf("%s %+v request %d (t=%d cost %d) -> %+v", alg, p, i, rq.t, rq.cost, d)
		}
		if d.Allowed != (d.Reason == ReasonNone) {
			t.Fatalf("%s: allowed and reason disagree", where())
		}
		if d.Remaining < 0 || d.Remaining > m.r.limit {
			t.Fatalf("%s: remaining out of range", where())
		}
		if d.Reason == ReasonCost {
			if d.RetryAfter != InfDuration {
				t.Fatalf("%s: cost above the limit, retry after %v, want InfDuration", where(), d.RetryAfter)
			}
		} else if !d.Allowed {
			ra := int64(d.RetryAfter)
			if ra <= 0 {
				t.Fatalf("%s: refused with no retry time", where())
			}
			// From the state the refusal left: one that counts it
			// (FixedWindowHits) or blocks the key (BlockingCounter)
			// waits for that too.
			if got := m.clone().step(rq.t+ra, rq.cost); !got.Allowed {
				t.Fatalf("%s: retry at +%d refused: %+v", where(), ra, got)
			}
			if got := m.clone().step(rq.t+ra-1, rq.cost); got.Allowed {
				t.Fatalf("%s: retry at +%d-1 allowed: %+v", where(), ra, got)
			}
		} else if d.RetryAfter != 0 {
			t.Fatalf("%s: allowed with a retry time", where())
		}
		reset := int64(d.ResetAfter)
		if !m.idle(rq.t + reset) {
			t.Fatalf("%s: not idle after ResetAfter", where())
		}
		if reset > 0 && m.idle(rq.t+reset-1) {
			t.Fatalf("%s: idle before ResetAfter", where())
		}
		if pre.clone().step(rq.t, 1).Reason != ReasonClock && d.Remaining <= 20 {
			c := m.clone()
			for k := int64(0); k < d.Remaining; k++ {
				if got := c.step(rq.t, 1); !got.Allowed {
					t.Fatalf("%s: remaining request %d refused: %+v", where(), k, got)
				}
			}
			if got := c.step(rq.t, 1); got.Allowed {
				t.Fatalf("%s: request beyond remaining allowed: %+v", where(), got)
			}
		}
	}
}

// TestSlidingLogNeverExceeds: no closed interval of the window's length
// holds more admitted cost than the limit.
func TestSlidingLogNeverExceeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 300; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		p.Clock = ClockReject
		trace := randomTrace(rng, 200, tick, 3, true)
		checkWindowBound(t, p, run(t, SlidingLog, p, trace), trace)
	}
}

func run(t testing.TB, alg Algorithm, p Policy, trace []request) []Decision {
	tab, err := NewTable(alg, p)
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]Decision, len(trace))
	for i, rq := range trace {
		ds[i] = tab.Allow(rq.key, rq.t, rq.cost)
	}
	return ds
}

func checkWindowBound(t testing.TB, p Policy, ds []Decision, trace []request) {
	t.Helper()
	for i := range trace {
		if !ds[i].Allowed {
			continue
		}
		var sum int64
		for j := i; j < len(trace); j++ {
			if ds[j].Allowed && trace[j].t-trace[i].t <= int64(p.Window) {
				sum += trace[j].cost
			}
		}
		if sum > p.Limit {
			t.Fatalf("%+v: %d admitted in [%d, %d+W]", p, sum, trace[i].t, trace[i].t)
		}
	}
}

// TestBucketBound: in any interval [a, b], a bucket admits at most
// capacity + rate*(b-a).
func TestBucketBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 200; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		p.Clock = ClockReject
		trace := randomTrace(rng, 150, tick, 3, true)
		for _, alg := range []Algorithm{TokenBucket, LeakyBucket, GCRA, LeakyQueue} {
			checkBucketBound(t, alg, p, run(t, alg, p, trace), trace)
		}
	}
}

func checkBucketBound(t testing.TB, alg Algorithm, p Policy, ds []Decision, trace []request) {
	t.Helper()
	for i := range trace {
		if !ds[i].Allowed {
			continue
		}
		var sum int64
		for j := i; j < len(trace); j++ {
			if !ds[j].Allowed {
				continue
			}
			sum += trace[j].cost
			// sum <= C + N*(tj-ti)/Per, in integers.
			lh, ll := bits.Mul64(uint64(sum), uint64(p.Rate.Per))
			rh, rl := bits.Mul64(uint64(p.Capacity), uint64(p.Rate.Per))
			eh, el := bits.Mul64(uint64(p.Rate.N), since(trace[j].t, trace[i].t))
			rh, rl = add128(rh, rl, eh, el)
			if less128(rh, rl, lh, ll) {
				t.Fatalf("%s %+v: %d admitted in [%d, %d]", alg, p, sum, trace[i].t, trace[j].t)
			}
		}
	}
}

// TestShiftInvariance: shifting every time by a multiple of the window,
// into negative times too, changes no decision.
func TestShiftInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 60; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 100, tick, 3, true)
		want := map[Algorithm][]Decision{}
		for _, alg := range AllAlgorithms() {
			want[alg] = run(t, alg, p, trace)
		}
		for _, k := range []int64{-1_000_003, -7, -1, 1, 5, 1 << 20} {
			shift := k * int64(p.Window)
			moved := slices.Clone(trace)
			for i := range moved {
				moved[i].t += shift
			}
			for _, alg := range AllAlgorithms() {
				got := run(t, alg, p, moved)
				for i := range got {
					if got[i] != want[alg][i] {
						t.Fatalf("%s %+v shift %d: request %d: %+v, unshifted %+v", alg, p, shift, i, got[i], want[alg][i])
					}
				}
			}
		}
	}
}

// TestInterleaving: requests of other keys change no decision, in a Table
// or in a Keyed.
func TestInterleaving(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 60; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 100, tick, 3, true)
		var mixed []request
		var mine []int
		for _, rq := range trace {
			for rng.IntN(2) == 0 {
				o := randomTrace(rng, 1, tick, 3, false)[0]
				o.key = 1 + uint32(rng.IntN(3))
				o.t += rq.t
				mixed = append(mixed, o)
			}
			mine = append(mine, len(mixed))
			mixed = append(mixed, rq)
		}
		for _, alg := range AllAlgorithms() {
			want := run(t, alg, p, trace)
			got := run(t, alg, p, mixed)
			keyed, _ := NewKeyed(alg, p)
			for i, rq := range mixed {
				kd := keyed.Allow(fmt.Sprint("user", rq.key), rq.t, rq.cost)
				if kd != got[i] {
					t.Fatalf("%s: Keyed %+v, Table %+v", alg, kd, got[i])
				}
			}
			for i, j := range mine {
				if got[j] != want[i] {
					t.Fatalf("%s %+v: request %d: %+v interleaved, %+v alone", alg, p, i, got[j], want[i])
				}
			}
		}
	}
}

// TestGCRAIsTokenBucket: GCRA and LeakyQueue decide exactly as TokenBucket,
// every field, costs, backwards clocks and both clock modes included.
func TestGCRAIsTokenBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 250; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 150, tick, 7, true)
		tb := run(t, TokenBucket, p, trace)
		for _, alg := range []Algorithm{GCRA, LeakyQueue, LeakyBucket} {
			got := run(t, alg, p, trace)
			for i := range got {
				g := got[i]
				g.Delay = 0
				if g.Reason == kinds[alg].refusal {
					g.Reason = ReasonNoTokens
				}
				if g != tb[i] {
					t.Fatalf("%s %+v: request %d: %+v, token-bucket %+v", alg, p, i, got[i], tb[i])
				}
			}
		}
	}
}

// TestExtremeTimes: times and parameters at the ends of the int64 range
// neither panic nor break the basic invariants.
func TestExtremeTimes(t *testing.T) {
	const maxI, minI = int64(1<<63 - 1), int64(-1 << 63)
	times := []int64{minI, minI + 1, -1, 0, 1, maxI - 1, maxI, minI / 2, maxI / 2}
	policies := []Policy{
		{Limit: 1, Window: 1, Capacity: 1, Rate: Rate{1, 1}},
		{Limit: maxI, Window: time.Duration(maxI), Capacity: maxI, Rate: Rate{maxI, 1}},
		{Limit: 3, Window: time.Duration(maxI), Capacity: 3, Rate: Rate{1, time.Duration(maxI / 3)}},
		{Limit: 2, Window: 3, Capacity: maxI / 2, Rate: Rate{maxI, time.Duration(maxI - 1)}, Clock: ClockClamp},
		{Limit: 2, Window: time.Duration(maxI - 1), Capacity: 2, Rate: Rate{1, time.Duration(maxI/2 - 1)}, Clock: ClockClamp},
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for _, p := range policies {
		for _, alg := range AllAlgorithms() {
			if p.Validate(alg) != nil {
				continue
			}
			tab, _ := NewTable(alg, p)
			keyed, _ := NewKeyed(alg, p)
			for i := 0; i < 300; i++ {
				ts := times[rng.IntN(len(times))]
				if rng.IntN(3) == 0 {
					ts = int64(rng.Uint64())
				}
				cost := []int64{1, 2, maxI, -1, 0}[rng.IntN(5)]
				d, text := tab.AllowExplain(0, ts, cost, time.Duration(1+rng.IntN(3)), nil)
				if d.Remaining < 0 || d.Remaining > max(p.Limit, p.Capacity) || len(text) == 0 {
					t.Fatalf("%s %+v at %d cost %d: %+v %q", alg, p, ts, cost, d, text)
				}
				keyed.Allow("k", ts, cost)
			}
		}
	}
}

// TestKeyedForgetsIdleKeys: a long trace over many short-lived keys keeps
// the number of stored keys bounded, and the decisions equal a Table's that
// never forgets.
func TestKeyedForgetsIdleKeys(t *testing.T) {
	const keys = 20_000
	names := make([]string, keys)
	for k := range names {
		names[k] = fmt.Sprint("k", k)
	}
	for _, alg := range AllAlgorithms() {
		p := Policy{Limit: 2, Window: 10 * time.Second, Capacity: 2, Rate: Rate{1, 5 * time.Second}}
		keyed, _ := NewKeyed(alg, p)
		tab, _ := NewTable(alg, p)
		most := 0
		for i := 0; i < keys*3; i++ {
			// Key k sends three requests a second apart, starting at k/10 s.
			k := i / 3
			ts := int64(k)*sec/10 + int64(i%3)*sec
			got := keyed.Allow(names[k], ts, 1)
			want := tab.Allow(uint32(k), ts, 1)
			if got != want {
				t.Fatalf("%s: request %d: Keyed %+v, Table %+v", alg, i, got, want)
			}
			if i%1000 == 0 {
				most = max(most, keyed.Len())
			}
		}
		if most > keys/4 {
			t.Errorf("%s: %d keys held at once of %d", alg, most, keys)
		}
		t.Logf("%s: at most %d keys held of %d", alg, most, keys)
	}
}

// TestKeyedConcurrent: concurrent callers share each key's limit exactly.
func TestKeyedConcurrent(t *testing.T) {
	for _, alg := range AllAlgorithms() {
		p := Policy{Limit: 50, Window: time.Hour, Capacity: 50, Rate: Rate{1, time.Hour}}
		keyed, _ := NewKeyed(alg, p)
		var wg sync.WaitGroup
		allowed := make([][16]int, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 400; i++ {
					k := i % 16
					if keyed.Allow(fmt.Sprint("key", k), sec, 1).Allowed {
						allowed[g][k]++
					}
				}
			}()
		}
		wg.Wait()
		for k := 0; k < 16; k++ {
			sum := 0
			for g := range allowed {
				sum += allowed[g][k]
			}
			if sum != 50 {
				t.Errorf("%s: key %d: %d allowed, want 50", alg, k, sum)
			}
		}
		if keyed.Len() != 16 {
			t.Errorf("%s: Len = %d", alg, keyed.Len())
		}
	}
}

// TestKeyedOutOfOrderAcrossKeys: requests of different keys that reach a
// shard out of time order (callers whose clocks differ a little) must not
// make the shard forget a key that is still live for its own requests.
func TestKeyedOutOfOrderAcrossKeys(t *testing.T) {
	p := Policy{Limit: 2, Window: 10 * time.Second}
	keyed, _ := NewKeyed(FixedWindow, p)
	// Keys that land in one shard.
	shard := keyhash.String("a") & (keyedShards - 1)
	var others []string
	for i := 0; len(others) < 3*minSweepShard; i++ {
		if k := fmt.Sprint("o", i); keyhash.String(k)&(keyedShards-1) == shard {
			others = append(others, k)
		}
	}
	// Two callers whose clocks are 7 s apart: the shard learns that
	// requests reach it up to 7 s out of order.
	keyed.Allow(others[0], 12*sec, 1)
	keyed.Allow(others[1], 5*sec, 1)
	keyed.Allow("a", 0, 1)
	// The caller 12 s on sends many keys: the shard sweeps while its
	// latest time is in the window after a's.
	for _, k := range others[2:] {
		keyed.Allow(k, 12*sec, 1)
	}
	// a's own second request, 5 s after its first: its window holds one.
	if d := keyed.Allow("a", 5*sec, 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("a's second request in its window: %+v, want allowed with 0 remaining", d)
	}
}
