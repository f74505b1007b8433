package limiters

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
)

// narrowKinds are the algorithms with a narrow form.
func narrowKinds() []Algorithm {
	var out []Algorithm
	for _, a := range AllAlgorithms() {
		if a.kind().narrow != nil {
			out = append(out, a)
		}
	}
	return out
}

// isNarrow reports whether r keeps its states in a narrow form.
func isNarrow(r *Rule) bool { return r.form.ops != r.k.ops }

// firstFitting returns the smallest window (ns) whose indexes, beside
// count fields of a limit's bits each, fit one word: windows one shorter
// do not.
func firstFitting(limit int64, count int) int64 {
	lo, hi := int64(1), int64(math.MaxInt64)
	for lo < hi {
		mid := lo + (hi-lo)/2
		r := &Rule{window: mid, limit: limit}
		if indexBits(r, count) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// narrowPolicies are policies on both sides of every narrow form's bound,
// and common ones.
func narrowPolicies(rng *rand.Rand) []Policy {
	var ps []Policy
	add := func(limit int64, window int64, capacity int64, n int64, per int64) {
		ps = append(ps, Policy{Limit: limit, Window: time.Duration(window), Capacity: capacity,
			Rate: Rate{N: n, Per: time.Duration(per)}, Clock: Clock(rng.IntN(2))})
	}
	for _, limit := range []int64{1, 2, 3, 4, 5, 7, 1 << 20, 1<<31 - 1, 1 << 33} {
		for _, count := range []int{1, 2} {
			w := firstFitting(limit, count)
			add(limit, w, 3, 1, int64(time.Second))
			if w > 1 {
				add(limit, w-1, 3, 1, int64(time.Second))
			}
		}
		add(limit, int64(10*time.Second), limit, 3, int64(10*time.Second))
		add(limit, 1+rng.Int64N(50), limit, 1+rng.Int64N(4), 1+rng.Int64N(50))
	}
	// Buckets whose capacity*per is just below and at 2^63.
	for _, per := range []int64{1, 3, 1 << 20, 1000000007} {
		c := int64((uint64(1)<<63 - 1) / uint64(per))
		for _, capacity := range []int64{c, c + 1, c - 1} {
			if capacity >= 1 {
				add(3, 10, capacity, 1, per)
			}
		}
	}
	return ps
}

// narrowTrace returns requests of one key that start near 0 or near either
// end of the int64 range, step by steps near the policy's window and
// rate, go back now and then, and cost 0 to a little past the limit, the
// limit itself often.
func narrowTrace(rng *rand.Rand, p Policy, limit int64, n int) []request {
	steps := []int64{0, 1, int64(p.Window) / 3, int64(p.Window), int64(p.Window) + 1, int64(p.Rate.Per), int64(p.Rate.Per) / 2}
	var ts int64
	switch rng.IntN(4) {
	case 0:
		ts = math.MinInt64 + rng.Int64N(3)
	case 1:
		ts = math.MaxInt64 - int64(p.Window)*3 - rng.Int64N(3)
		if ts < 0 {
			ts = math.MaxInt64 - rng.Int64N(3)
		}
	default:
		ts = rng.Int64N(1000) - 500
	}
	trace := make([]request, n)
	for i := range trace {
		step := max(steps[rng.IntN(len(steps))], 0)
		switch x := rng.IntN(12); {
		case x == 0:
			if ts >= math.MinInt64+step {
				ts -= step
			}
		case x < 3:
		default:
			if ts <= math.MaxInt64-step {
				ts += step
			}
		}
		var cost int64
		switch x := rng.IntN(8); {
		case x == 0:
			cost = rng.Int64N(3) // 0, 1 or 2
		case x == 1:
			cost = limit
		case x == 2:
			cost = limit + 1
		default:
			cost = 1 + rng.Int64N(min(limit, 3))
		}
		trace[i] = request{t: ts, cost: cost}
	}
	return trace
}

// TestNarrowMatchesWide replays random traces through every algorithm
// with a narrow form, kept narrow and kept wide, under policies on both
// sides of the narrow forms' bounds, and checks that every decision (its
// durations in full), state text, gauge, idle verdict and decision time
// agree. It also checks that the narrow form is chosen exactly when its
// bound holds.
func TestNarrowMatchesWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	chosen, kept := 0, 0
	for trial := range 6 {
		for _, p := range narrowPolicies(rng) {
			for _, a := range narrowKinds() {
				if p.Validate(a) != nil {
					continue
				}
				r, err := NewRule(a, p)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := isNarrow(r), narrowFits(r); got != want {
					t.Fatalf("%s %+v: narrow %v, want %v", a, p, got, want)
				}
				if !isNarrow(r) {
					kept++
					continue
				}
				chosen++
				compareForms(t, fmt.Sprintf("trial %d %s %+v", trial, a, p), r, narrowTrace(rng, p, r.limit, 120))
			}
		}
	}
	if chosen == 0 || kept == 0 {
		t.Fatalf("narrow forms chosen %d times, kept wide %d: the bounds are not tested on both sides", chosen, kept)
	}
}

// narrowFits says, from the policy alone and independently of the
// forms' code, whether rule r's every state fits its narrow form.
func narrowFits(r *Rule) bool {
	switch r.alg {
	case FixedWindow, SlidingCounter:
		fields := 1
		if r.alg == SlidingCounter {
			fields = 2
		}
		// The indexes of the windows of every int64 time, and counts of 0
		// to the limit. (Euclidean division by a positive window floors.)
		w := big.NewInt(r.window)
		first := new(big.Int).Div(big.NewInt(math.MinInt64), w)
		last := new(big.Int).Div(big.NewInt(math.MaxInt64), w)
		indexes := new(big.Int).Sub(last, first).BitLen()
		return indexes+fields*bits.Len64(uint64(r.limit)) <= 64
	case SlidingLog:
		return r.limit <= 4
	case TokenBucket, LeakyBucket:
		hi, lo := bits.Mul64(uint64(r.limit), r.per)
		return hi == 0 && lo < 1<<63
	}
	return false
}

// compareForms replays trace through rule r in its narrow form and in the
// wide one.
func compareForms(t *testing.T, where string, r *Rule, trace []request) {
	t.Helper()
	narrow, wide := newStore([]*Rule{r}), newStore([]*Rule{r.wide()})
	nd, wd := make([]Decision, 1), make([]Decision, 1)
	nx, wx := make([]Exact, 1), make([]Exact, 1)
	ne, we := make([]int, 1), make([]int, 1)
	for i, rq := range trace {
		at := fmt.Sprintf("%s request %d (t=%d cost %d)", where, i, rq.t, rq.cost)
		if n, w := narrow.idle(0, rq.t), wide.idle(0, rq.t); n != w {
			t.Fatalf("%s: idle %v narrow, %v wide", at, n, w)
		}
		if n, w := narrow.decidedAt(0, 0, rq.t), wide.decidedAt(0, 0, rq.t); n != w {
			t.Fatalf("%s: decided at %d narrow, %d wide", at, n, w)
		}
		if nw, ww := narrow.members[0].wait, wide.members[0].wait; (nw == nil) != (ww == nil) {
			t.Fatalf("%s: a wait in one form only", at)
		} else if nw != nil && validCost(r, rq.cost) {
			// A refusal's wait alone, and whether it refuses, before the
			// decision changes the state.
			n0, n1, n2 := nw(narrow.blocks.At(0), &narrow.members[0].rule, rq.t, rq.cost)
			w0, w1, w2 := ww(wide.blocks.At(0), &wide.members[0].rule, rq.t, rq.cost)
			if n0 != w0 || n1 != w1 || n2 != w2 {
				t.Fatalf("%s: wait %v refused %v back %v narrow, %v %v %v wide", at, n0, n1, n2, w0, w1, w2)
			}
		}
		var ntext, wtext []byte
		var nm, wm uint64
		explained := i%3 != 0
		if explained {
			ntext, nm = narrow.explain(0, rq.t, rq.cost, time.Millisecond, nd, nx, nil, ne)
			wtext, wm = wide.explain(0, rq.t, rq.cost, time.Millisecond, wd, wx, nil, we)
		} else {
			// The allow-only path, then the refusal's decision.
			nd[0], wd[0], nx[0], wx[0] = Decision{}, Decision{}, Exact{}, Exact{}
			if nm, wm = narrow.admit(0, rq.t, rq.cost), wide.admit(0, rq.t, rq.cost); nm == 0 && wm == 0 {
				if narrow.refused(0, rq.t, rq.cost, 1, nd, nx) != 0 || wide.refused(0, rq.t, rq.cost, 1, wd, wx) != 0 {
					t.Fatalf("%s: refused, then allowed", at)
				}
			}
		}
		if nm != wm || nd[0] != wd[0] || nx[0] != wx[0] || string(ntext) != string(wtext) {
			t.Fatalf("%s: narrow %b %+v %+v %q, wide %b %+v %+v %q", at, nm, nd[0], nx[0], ntext, wm, wd[0], wx[0], wtext)
		}
		nm0 := &narrow.members[0]
		wm0 := &wide.members[0]
		for _, later := range []int64{rq.t, rq.t + 1, rq.t + int64(r.pol.Window)} {
			if later < rq.t {
				continue // overflowed
			}
			nv, nu := nm0.ops.gauge(&nm0.rule, narrow.blocks.At(0), later)
			wv, wu := wm0.ops.gauge(&wm0.rule, wide.blocks.At(0), later)
			if nv != wv || nu != wu {
				t.Fatalf("%s: gauge at %d narrow %v until %d, wide %v until %d", at, later, nv, nu, wv, wu)
			}
		}
	}
}

// TestRefusedWaits checks, for every algorithm under random policies and
// traces (narrow states and wide, costs past the limit, the clock going
// back), that RefusedWaits gives each refusal exactly the RetryAfter of
// Refused's full decision.
func TestRefusedWaits(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	algs := AllAlgorithms()
	refusals := 0
	for trial := range 200 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		var rules []*Rule
		for _, a := range algs {
			r, err := NewRule(a, p)
			if err != nil {
				t.Fatal(err)
			}
			if trial%2 == 1 {
				r = r.wide()
			}
			rules = append(rules, r)
		}
		g, err := NewGroupOf(rules)
		if err != nil {
			t.Fatal(err)
		}
		out, exact, waits := make([]Decision, len(rules)), make([]Exact, len(rules)), make([]Span, len(rules))
		all := uint64(1)<<len(rules) - 1
		if len(rules) == 64 {
			all = ^uint64(0)
		}
		for i, rq := range randomTrace(rng, 60, tick, 4, true) {
			cost := rq.cost
			if i%17 == 0 {
				cost = 0
			}
			allowed := g.Admit(0, rq.t, cost)
			refused := all &^ allowed
			if w := g.Refused(0, rq.t, cost, refused, out, exact); w != 0 {
				t.Fatalf("trial %d request %d: Refused says %b of %b would allow", trial, i, w, refused)
			}
			if w := g.RefusedWaits(0, rq.t, cost, refused, waits); w != 0 {
				t.Fatalf("trial %d request %d: RefusedWaits says %b of %b would allow", trial, i, w, refused)
			}
			for m := refused; m != 0; m &= m - 1 {
				k := bits.TrailingZeros64(m)
				refusals++
				if waits[k] != exact[k].RetryAfter {
					t.Fatalf("trial %d request %d (t=%d cost %d) %v %+v: wait %v, Refused's %v", trial, i, rq.t, cost, algs[k], p, waits[k], exact[k].RetryAfter)
				}
			}
		}
	}
	if refusals == 0 {
		t.Fatal("nothing was refused")
	}
}

// TestAdmitWaits checks, for every algorithm under random policies and
// traces (narrow states and wide, each rule given twice so that members
// share states, costs past the limit, the clock going back), and for
// grids of token buckets alone (two-word states, with leaky buckets of
// the same figures beside some, which share theirs), that AdmitWaits
// allows what Admit allows and gives each refusal of the rules it is
// asked about the RetryAfter RefusedWaits gives it just after Admit, on
// a twin of the group fed the same requests.
func TestAdmitWaits(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	algs := AllAlgorithms()
	newRule := func(a Algorithm, p Policy) *Rule {
		r, err := NewRule(a, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	refusals, grids := 0, 0
	for trial := range 400 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		var rules []*Rule
		if trial%2 == 0 {
			for range 2 {
				for _, a := range algs {
					r := newRule(a, p)
					if trial%4 == 2 {
						r = r.wide()
					}
					rules = append(rules, r)
				}
			}
		} else {
			// A sweep's grid: capacities 1 to 40 and a few rates.
			for c := range int64(40) {
				q := p
				q.Capacity = 1 + c
				q.Rate.N = 1 + c%3
				rules = append(rules, newRule(TokenBucket, q))
				if c%7 == 0 {
					rules = append(rules, newRule(LeakyBucket, q))
				}
			}
		}
		ref, err := NewGroupOf(rules)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGroupOf(rules)
		if err != nil {
			t.Fatal(err)
		}
		if g.s.lean[0].word {
			grids++
		}
		want, got := make([]Span, len(rules)), make([]Span, len(rules))
		all := uint64(1)<<len(rules) - 1
		for i, rq := range randomTrace(rng, 60, tick, 4, true) {
			cost := rq.cost
			switch {
			case i%17 == 0:
				cost = 0
			case i%13 == 0:
				cost = 30 // past some capacities only
			}
			asked := rng.Uint64() & all
			if i%3 == 0 {
				asked = all
			}
			allowed := ref.Admit(0, rq.t, cost)
			if w := ref.RefusedWaits(0, rq.t, cost, all&^allowed, want); w != 0 {
				t.Fatalf("trial %d request %d: RefusedWaits says %b would allow", trial, i, w)
			}
			clear(got)
			a, w := g.AdmitWaits(0, rq.t, cost, asked, got)
			if a != allowed || w != 0 {
				t.Fatalf("trial %d request %d (t=%d cost %d) %+v: AdmitWaits allowed %b (wrong %b), Admit %b", trial, i, rq.t, cost, p, a, w, allowed)
			}
			for m := asked &^ allowed; m != 0; m &= m - 1 {
				k := bits.TrailingZeros64(m)
				refusals++
				if got[k] != want[k] {
					t.Fatalf("trial %d request %d (t=%d cost %d) %v %+v: wait %v, RefusedWaits' %v", trial, i, rq.t, cost, rules[k].alg, rules[k].pol, got[k], want[k])
				}
			}
		}
	}
	if refusals == 0 || grids == 0 {
		t.Fatalf("%d refusals, %d grids of two-word buckets: the test does not test them", refusals, grids)
	}
}
