package limiters

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// TestGroupEqualsTables checks that a Group decides, and explains, every
// request exactly as one Table per algorithm does, for random subsets and
// orders of the algorithms, random policies and multi-key traces that go
// back in time and carry costs up to above the limit. Admit must allow
// exactly what the tables allow: it keeps the states as Allow does.
func TestGroupEqualsTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 300 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		algs := AllAlgorithms()
		rng.Shuffle(len(algs), func(i, j int) { algs[i], algs[j] = algs[j], algs[i] })
		algs = algs[:1+rng.IntN(len(algs))]
		trace := randomTrace(rng, 60, tick, 8, true)
		for i := range trace {
			trace[i].key = uint32(rng.IntN(3))
		}
		g, err := NewGroup(algs, p)
		if err != nil {
			t.Fatal(err)
		}
		mode := trial % 4 // 0: Allow, 1: AllowExplain, 2: Admit, 3: Admit, then Refused
		explain := mode == 1
		tables := make([]*Table, len(algs))
		for i, a := range algs {
			if tables[i], err = NewTable(a, p); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]Decision, len(algs))
		ends := make([]int, len(algs))
		for step, rq := range trace {
			var mask uint64
			var text []byte
			switch mode {
			case 0:
				mask = g.Allow(rq.key, rq.t, rq.cost, out)
			case 1:
				text, mask = g.AllowExplain(rq.key, rq.t, rq.cost, time.Duration(tick), out, nil, nil, ends)
			case 2, 3:
				mask = g.Admit(rq.key, rq.t, rq.cost)
			}
			if mode == 3 {
				for i := range out {
					out[i] = Decision{Reason: "unset"}
				}
				all := uint64(1)<<len(algs) - 1
				if wrong := g.Refused(rq.key, rq.t, rq.cost, all&^mask, out, nil); wrong != 0 {
					t.Fatalf("trial %d step %d: Refused finds %b allowed", trial, step, wrong)
				}
			}
			start := 0
			for i, tb := range tables {
				var want Decision
				var wantText []byte
				if explain {
					want, wantText = tb.AllowExplain(rq.key, rq.t, rq.cost, time.Duration(tick), nil)
					if got := string(text[start:ends[i]]); got != string(wantText) {
						t.Fatalf("trial %d step %d %v: state %q, table says %q", trial, step, algs[i], got, wantText)
					}
					start = ends[i]
				} else {
					want = tb.Allow(rq.key, rq.t, rq.cost)
				}
				if mode == 3 && !want.Allowed {
					if diff := cmp.Diff(want, out[i]); diff != "" {
						t.Fatalf("trial %d step %d %v (%+v): Refused (-table +group)\n%s", trial, step, algs[i], p, diff)
					}
				}
				if mode >= 2 {
					if (mask&(1<<i) != 0) != want.Allowed {
						t.Fatalf("trial %d step %d %v (%+v): Admit says %v, table %+v", trial, step, algs[i], p, mask&(1<<i) != 0, want)
					}
					continue
				}
				if diff := cmp.Diff(want, out[i]); diff != "" {
					t.Fatalf("trial %d step %d %v (%+v): (-table +group)\n%s", trial, step, algs[i], p, diff)
				}
				if (mask&(1<<i) != 0) != want.Allowed {
					t.Fatalf("trial %d step %d %v: mask %b", trial, step, algs[i], mask)
				}
			}
		}
	}
}

func TestGroupErrors(t *testing.T) {
	p := Policy{Limit: 3, Window: 10, Capacity: 3, Rate: Rate{N: 3, Per: 10}}
	for _, tc := range []struct {
		algs []Algorithm
		want string
	}{
		{nil, "at least one"},
		{[]Algorithm{FixedWindow, FixedWindow}, "twice"},
		{[]Algorithm{TokenBucket}, ""},
	} {
		g, err := NewGroup(tc.algs, p)
		if tc.want == "" {
			if err != nil || !slices.Equal(g.Algorithms(), tc.algs) {
				t.Errorf("NewGroup(%v): %v, %v", tc.algs, g, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewGroup(%v) error = %v, want one saying %q", tc.algs, err, tc.want)
		}
	}
	if _, err := NewGroup([]Algorithm{TokenBucket}, Policy{Limit: 3, Window: 10}); err == nil {
		t.Error("NewGroup with no rate: no error")
	}
	g, _ := NewGroup([]Algorithm{FixedWindow}, p)
	if groupHolds(g, 5) {
		t.Error("an unused id holds state")
	}
}

// TestPrefetch checks that prefetching, a hint, changes nothing: not the
// decisions that follow, and not what ids exist.
func TestPrefetch(t *testing.T) {
	p := seedPolicy
	p.Limit, p.Capacity = 2, 2
	all := AllAlgorithms()
	for _, algs := range [][]Algorithm{all, all[:1], {GCRA}, {SlidingLog, LeakyQueue}} {
		plain, _ := NewGroup(algs, p)
		hinted, _ := NewGroup(algs, p)
		out := make([]Decision, len(algs))
		for i := range 300 {
			id, now := uint32(i%7)*900, int64(i)*int64(time.Second)/3
			hinted.Prefetch(id)
			hinted.Prefetch(id + 5000) // never used
			want := plain.Allow(id, now, 1, out)
			if got := hinted.Allow(id, now, 1, out); got != want {
				t.Fatalf("%v, request %d: allowed %b after Prefetch, %b without", algs, i, got, want)
			}
		}
		if groupHolds(hinted, 5000) || groupHolds(hinted, 100_000) {
			t.Errorf("%v: Prefetch made an id", algs)
		}
	}
}

func TestGroupStateSize(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		want uintptr
		why  string
	}{
		// Narrow states: a request for the classic five touches one
		// cache line.
		{Policy{Limit: 3, Window: 10 * time.Second, Capacity: 3, Rate: Rate{3, 10 * time.Second}}, 64, "narrow states"},
		// A window of 10 ns has too many indexes for a sliding counter's
		// index and two counts in one word: it keeps the wide state.
		{Policy{Limit: 3, Window: 10, Capacity: 3, Rate: Rate{1, 5}}, 128, "a wide sliding counter"},
		// A limit of 5 is more entries than a narrow log holds.
		{Policy{Limit: 5, Window: 10 * time.Second, Capacity: 5, Rate: Rate{1, time.Second}}, 192, "a wide sliding log"},
	} {
		g, err := NewGroup(ClassicAlgorithms(), c.p)
		if err != nil {
			t.Fatal(err)
		}
		if n := g.s.blocks.Size(); n != c.want {
			t.Errorf("%s: the classic five's block is %d bytes, want %d", c.why, n, c.want)
		}
	}
}

// TestGroupIdleReset checks Idle against what it promises: a key reported
// idle, once reset, decides the rest of the trace exactly as the key that
// kept its state.
func TestGroupIdleReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	resets := 0
	for trial := range 300 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		algs := AllAlgorithms()
		rng.Shuffle(len(algs), func(i, j int) { algs[i], algs[j] = algs[j], algs[i] })
		algs = algs[:1+rng.IntN(len(algs))]
		trace := randomTrace(rng, 80, tick, 3, false)
		kept, _ := NewGroup(algs, p)
		forgetful, _ := NewGroup(algs, p)
		want := make([]Decision, len(algs))
		got := make([]Decision, len(algs))
		for step, rq := range trace {
			if forgetful.Idle(0, rq.t) {
				forgetful.Reset(0)
				resets++
			}
			kept.Allow(0, rq.t, rq.cost, want)
			forgetful.Allow(0, rq.t, rq.cost, got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("trial %d step %d %v %+v: after resets (-kept +reset)\n%s", trial, step, algs, p, diff)
			}
		}
	}
	if resets == 0 {
		t.Fatal("no key was ever idle: the test checks nothing")
	}
}

// TestDecidedAt checks the time a request is taken at: its own, unless the
// clock went backwards for its key, when the clamp clock moves it to the
// earliest time the state accepts.
func TestDecidedAt(t *testing.T) {
	p := seedPolicy
	p.Clock = ClockClamp
	want := map[Algorithm]int64{
		FixedWindow:     10 * sec, // the start of the window of 12
		SlidingLog:      12 * sec, // the newest logged request
		SlidingCounter:  10 * sec,
		TokenBucket:     12 * sec, // the last request
		LeakyBucket:     12 * sec,
		GCRA:            12 * sec,
		LeakyQueue:      12 * sec,
		SlidingBuckets:  12 * sec, // the start of the sub-window of 12
		FixedWindowHits: 10 * sec,
		TickQueue:       12 * sec, // the tick of the last request
		BlockingCounter: 10 * sec, // the counter's window: 12 was not refused
	}
	g, err := NewGroup(AllAlgorithms(), p)
	if err != nil {
		t.Fatal(err)
	}
	g.Allow(0, 12*sec, 1, make([]Decision, len(AllAlgorithms())))
	for i, a := range AllAlgorithms() {
		tab, _ := NewTable(a, p)
		tab.Allow(0, 12*sec, 1)
		for _, c := range []struct {
			name     string
			at, want int64
		}{{"later", 15 * sec, 15 * sec}, {"same", 12 * sec, 12 * sec}, {"earlier", 7 * sec, want[a]}} {
			if got := tab.DecidedAt(0, c.at); got != c.want {
				t.Errorf("%v: Table.DecidedAt(%s) = %d, want %d", a, c.name, got, c.want)
			}
			if got := g.DecidedAt(0, i, c.at); got != c.want {
				t.Errorf("%v: Group.DecidedAt(%s) = %d, want %d", a, c.name, got, c.want)
			}
		}
		if got := tab.DecidedAt(1, 7*sec); got != 7*sec {
			t.Errorf("%v: fresh key taken at %d, want its own time", a, got)
		}
	}
}

// TestExact checks the durations kept in full: equal to the Decision's
// wherever those fit, exact where the Decision says InfDuration.
func TestExact(t *testing.T) {
	// Capacity 20, one token per 10^9 s: a second request of cost 20 waits
	// 2*10^10 s, longer than a Duration holds.
	slow := Policy{Capacity: 20, Rate: Rate{N: 1, Per: 1e9 * time.Second}}
	for _, a := range []Algorithm{TokenBucket, LeakyBucket} {
		tab, err := NewTable(a, slow)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Mul(big.NewInt(2e10), big.NewInt(1e9))
		d, x := tab.AllowExact(0, 0, 20)
		if !d.Allowed || d.ResetAfter != InfDuration || x.ResetAfter.Big().Cmp(want) != 0 {
			t.Errorf("%v: first request %+v, exact reset %v, want %v", a, d, x.ResetAfter.Big(), want)
		}
		d, x = tab.AllowExact(0, 0, 20)
		if d.Allowed || d.RetryAfter != InfDuration || x.RetryAfter.Big().Cmp(want) != 0 {
			t.Errorf("%v: second request %+v, exact retry %v, want %v", a, d, x.RetryAfter.Big(), want)
		}
		d, x = tab.AllowExact(0, 0, 21)
		if d.Reason != ReasonCost || d.RetryAfter != InfDuration || !x.RetryAfter.Never() {
			t.Errorf("%v: cost above capacity %+v, exact %+v", a, d, x)
		}
	}
	// The clock going back from the largest time to the smallest: the
	// retry counts from the request's own time, 2^64-1 ns before.
	for _, a := range AllAlgorithms() {
		tab, _ := NewTable(a, seedPolicy)
		tab.Allow(0, math.MaxInt64, 3)
		d, x := tab.AllowExact(0, math.MinInt64, 1)
		back := new(big.Int).SetUint64(math.MaxUint64)
		if d.Reason != ReasonClock || d.RetryAfter != InfDuration || x.RetryAfter.Big().Cmp(back) <= 0 || x.ResetAfter.Big().Cmp(back) < 0 {
			t.Errorf("%v: back from the largest time: %+v, exact retry %v reset %v", a, d, x.RetryAfter.Big(), x.ResetAfter.Big())
		}
		// The same wait from the largest time itself fits.
		c, _ := NewTable(a, seedPolicy)
		c.Allow(0, math.MaxInt64, 3)
		near := c.Allow(0, math.MaxInt64, 1)
		want := new(big.Int).Add(back, big.NewInt(int64(near.RetryAfter)))
		if x.RetryAfter.Big().Cmp(want) != 0 {
			t.Errorf("%v: exact retry %v, want %v", a, x.RetryAfter.Big(), want)
		}
	}
	// Everywhere else the exact figures are the Decision's, and a Group
	// gives the same as a Table.
	rng := rand.New(rand.NewPCG(5, 6))
	g, _ := NewGroup(AllAlgorithms(), seedPolicy)
	out := make([]Decision, len(AllAlgorithms()))
	exact := make([]Exact, len(AllAlgorithms()))
	var tables []*Table
	for _, a := range AllAlgorithms() {
		tab, _ := NewTable(a, seedPolicy)
		tables = append(tables, tab)
	}
	now := int64(0)
	for step := range 3000 {
		now += int64(rng.IntN(3000)-500) * int64(time.Millisecond)
		id, cost := uint32(rng.IntN(3)), int64(rng.IntN(5))
		g.AllowExact(id, now, cost, out, exact)
		for i, tab := range tables {
			d, x := tab.AllowExact(id, now, cost)
			if d != out[i] || x != exact[i] {
				t.Fatalf("step %d, %v: Table %+v %+v, Group %+v %+v", step, tab.Algorithm(), d, x, out[i], exact[i])
			}
			if (d.Reason != ReasonCost && x.RetryAfter.Duration() != d.RetryAfter) || x.ResetAfter.Duration() != d.ResetAfter || x.Delay.Duration() != d.Delay {
				t.Fatalf("step %d, %v: %+v, exact %+v", step, tab.Algorithm(), d, x)
			}
		}
	}
}

// storeHolds reports whether s keeps a state for id other than the fresh
// one.
func storeHolds(s *store, id uint32) bool {
	p := s.blocks.Get(id)
	if p == nil {
		return false
	}
	for _, b := range unsafe.Slice((*byte)(p), s.blocks.Size()) {
		if b != 0 {
			return true
		}
	}
	return false
}

// tableHolds reports whether t keeps a state for id other than the fresh
// one.
func tableHolds(t *Table, id uint32) bool { return storeHolds(&t.s, id) }

// groupHolds is tableHolds for a Group.
func groupHolds(g *Group, id uint32) bool { return storeHolds(&g.s, id) }
