package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ratesim/ratesim/limiters"
)

// TestStackConsume: under StackConsume each policy is an independent
// limiter on its own keys (limiters.Keyed), the stack allows what every
// enforcing policy allows, the first enforcing refusal names the policy,
// a shadow policy never refuses, and Refused and Alone count as they say.
func TestStackConsume(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	p := seedPolicy
	global := p
	global.Limit, global.Capacity = 7, 7
	stack := []StackPolicy{
		{Lane: Lane{Name: "per-user", Algorithm: limiters.SlidingLog, Policy: p}, KeyFields: []string{"user"}},
		{Lane: Lane{Name: "global", Algorithm: limiters.TokenBucket, Policy: global}},
		{Lane: Lane{Name: "watch", Algorithm: limiters.FixedWindow, Policy: p}, KeyFields: []string{"user"}, Shadow: true},
	}
	events := randomTrace(rng, 2000, 5, true)
	sortEvents(events)
	keyed := make([]*limiters.Keyed, len(stack))
	for i, sp := range stack {
		keyed[i], _ = limiters.NewKeyed(sp.Algorithm, sp.Policy)
	}
	want := make([]StackStats, len(stack))
	var wantAllowed int64
	i := 0
	rep, err := RunStack(&sliceSource{events: events}, Config{}, Stack{Policies: stack, Mode: StackConsume}, func(d *StackDecision) error {
		e := events[i]
		i++
		refused, pass := -1, true
		ds := make([]limiters.Decision, len(stack))
		for j, sp := range stack {
			key := e.user
			if len(sp.KeyFields) == 0 {
				key = ""
			}
			ds[j] = keyed[j].Allow(key, e.time, e.cost)
			want[j].Requests++
			if !ds[j].Allowed && !sp.Shadow && refused < 0 {
				refused, pass = j, false
			}
		}
		for j := range stack {
			if ds[j].Allowed {
				continue
			}
			want[j].Refused++
			alone := true
			for k, q := range stack {
				if k != j && !q.Shadow && !ds[k].Allowed {
					alone = false
				}
			}
			if alone {
				want[j].Alone++
			}
		}
		if pass {
			wantAllowed++
		}
		if d.Decision.Allowed != pass || d.Refused != refused {
			t.Fatalf("request %d: stack allowed %v refused by %d, want %v by %d", i, d.Decision.Allowed, d.Refused, pass, refused)
		}
		for j := range stack {
			if d.Decisions[j] != ds[j] {
				t.Fatalf("request %d, %s: %+v, Keyed says %+v", i, stack[j].Name, d.Decisions[j], ds[j])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stats, allowed := rep.Policies, rep.Allowed
	if rep.Requests != int64(len(events)) {
		t.Errorf("%d requests, want %d", rep.Requests, len(events))
	}
	for j := range stack {
		if stats[j] != want[j] {
			t.Errorf("%s: %+v, want %+v", stack[j].Name, stats[j], want[j])
		}
		if want[j].Refused == 0 || want[j].Alone == 0 {
			t.Errorf("%s: nothing refused, or nothing refused alone: the test tests little", stack[j].Name)
		}
	}
	if allowed != wantAllowed {
		t.Errorf("allowed %d, want %d", allowed, wantAllowed)
	}
}

// TestStackRefund: a global limit of 3 per 10s and a per-user one of 2.
// u1 sends 3 requests at 0, then u2 2 at 1. Consume: u1's third is
// refused by per-user but still takes the global's third unit, so u2's
// first is refused by global. Refund: u1's third takes nothing, so u2's
// first passes and its second is refused by global.
func TestStackRefund(t *testing.T) {
	perUser := seedPolicy
	perUser.Limit = 2
	global := seedPolicy
	global.Limit = 3
	stack := []StackPolicy{
		{Lane: Lane{Name: "per-user", Algorithm: limiters.FixedWindow, Policy: perUser}, KeyFields: []string{"user"}},
		{Lane: Lane{Name: "global", Algorithm: limiters.FixedWindow, Policy: global}},
	}
	events := append(secs("u1", 0, 0, 0), secs("u2", 1, 1)...)
	for _, c := range []struct {
		mode    StackMode
		allowed []bool
		refused []int
	}{
		{StackConsume, []bool{true, true, false, false, false}, []int{-1, -1, 0, 1, 1}},
		{StackRefund, []bool{true, true, false, true, false}, []int{-1, -1, 0, -1, 1}},
	} {
		var allowed []bool
		var refused []int
		_, err := RunStack(&sliceSource{events: events}, Config{}, Stack{Policies: stack, Mode: c.mode}, func(d *StackDecision) error {
			allowed = append(allowed, d.Decision.Allowed)
			refused = append(refused, d.Refused)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(allowed, c.allowed) || !slices.Equal(refused, c.refused) {
			t.Errorf("mode %d: allowed %v refused by %v, want %v by %v", c.mode, allowed, refused, c.allowed, c.refused)
		}
	}
}

// stackReference decides a stack the slow and obvious way: each policy's
// history is the requests it took (or counted) so far, and every question
// about its state is answered by a fresh limiter (a limiters.Table's key
// reset to the fresh state) fed that history and then the question.
type stackReference struct {
	stack  []StackPolicy
	mode   StackMode
	hist   [][]event // per policy, the requests fed to it, of every key
	tables []*limiters.Table
}

func newStackReference(stack []StackPolicy, mode StackMode) *stackReference {
	r := &stackReference{stack: stack, mode: mode, hist: make([][]event, len(stack))}
	for _, sp := range stack {
		tb, err := limiters.NewTable(sp.Algorithm, sp.Policy)
		if err != nil {
			panic(err)
		}
		r.tables = append(r.tables, tb)
	}
	return r
}

// keyOf is policy p's key of e.
func (r *stackReference) keyOf(p int, e event) string {
	if len(r.stack[p].KeyFields) == 0 {
		return ""
	}
	return e.user
}

// ask returns what policy p decides on a request like e, but at time at
// and of cost, given its history.
func (r *stackReference) ask(p int, e event, at, cost int64) limiters.Decision {
	tb := r.tables[p]
	tb.Reset(0)
	key := r.keyOf(p, e)
	for _, h := range r.hist[p] {
		if r.keyOf(p, h) == key {
			tb.Allow(0, h.time, h.cost)
		}
	}
	return tb.Allow(0, at, cost)
}

// passes reports whether every enforcing policy allows e retried at at.
func (r *stackReference) passes(e event, at int64) bool {
	for p, sp := range r.stack {
		if !sp.Shadow && !r.ask(p, e, at, e.cost).Allowed {
			return false
		}
	}
	return true
}

// step decides e, feeds it to the policies that take (or count) it, and
// returns the policies' decisions and whether the stack allowed it.
func (r *stackReference) step(e event) ([]limiters.Decision, bool) {
	ds := make([]limiters.Decision, len(r.stack))
	pass := true
	for p, sp := range r.stack {
		ds[p] = r.ask(p, e, e.time, e.cost)
		if !ds[p].Allowed && !sp.Shadow {
			pass = false
		}
	}
	for p, sp := range r.stack {
		// A refusal is fed too: a limiter that counts refused hits
		// counts it, the others change nothing.
		if r.mode == StackConsume || pass || !ds[p].Allowed || sp.Shadow {
			r.hist[p] = append(r.hist[p], e)
		}
	}
	return ds, pass
}

// freshWhenFull are the algorithms whose state is fresh exactly when a
// request of the full limit passes, and whose Remaining is the most cost a
// request at the same instant can have and pass: for them the reference
// checks Remaining and ResetAfter by trying requests.
var freshWhenFull = []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingLog, limiters.TokenBucket, limiters.LeakyBucket, limiters.GCRA}

// limitOf is the most cost one request may have under sp.
func limitOf(sp StackPolicy) int64 {
	return *sp.Policy.Field(sp.Algorithm.Params()[0]).(*int64)
}

// TestStackMatchesReference replays random traces through random stacks
// of every algorithm, keyed per user and globally, with a shadow policy,
// in both modes, and checks each answer against stackReference: which
// policies allowed, the stack's decision, and for a refusal its
// RetryAfter by trying the retry at every half second up to it, at it
// and a nanosecond before it. Where the algorithm says what Remaining and
// ResetAfter are by requests that pass, they are checked so too: the most
// cost that passes at the same instant, and the first time the full limit
// passes.
func TestStackMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 19))
	const grid = int64(250 * time.Millisecond)
	algos := limiters.AllAlgorithms()
	checked := map[string]int{}
	for trial := range 40 {
		mode := StackMode(trial % 2)
		var stack []StackPolicy
		for p := range 2 + rng.IntN(2) {
			a := algos[rng.IntN(len(algos))]
			pol := limiters.Policy{
				Limit:    int64(1 + rng.IntN(4)),
				Window:   time.Duration(1+rng.IntN(10)) * time.Second,
				Capacity: int64(1 + rng.IntN(4)),
				Rate:     limiters.Rate{N: int64(1 + rng.IntN(3)), Per: time.Duration(1+rng.IntN(10)) * time.Second},
				Buckets:  1,
			}
			if a == limiters.SlidingBuckets {
				pol.Buckets = 2
				pol.Window = 2 * pol.Window
			}
			if err := pol.Validate(a); err != nil {
				t.Fatalf("%v: %v", a, err)
			}
			sp := StackPolicy{Lane: Lane{Name: fmt.Sprint("p", p), Algorithm: a, Policy: pol}}
			if rng.IntN(2) == 0 {
				sp.KeyFields = []string{"user"}
			}
			stack = append(stack, sp)
		}
		stack = append(stack, StackPolicy{Lane: Lane{Name: "watch", Algorithm: limiters.FixedWindow, Policy: seedPolicy}, KeyFields: []string{"user"}, Shadow: true})
		var events []event
		now := int64(0)
		for range 100 {
			now += int64(rng.IntN(8)) * grid
			cost := int64(1)
			if rng.IntN(5) == 0 {
				cost = 2
			}
			events = append(events, event{user: fmt.Sprint("u", rng.IntN(3)), time: now, cost: cost})
		}
		ref := newStackReference(stack, mode)
		i := 0
		_, err := RunStack(&sliceSource{events: events}, Config{}, Stack{Policies: stack, Mode: mode}, func(d *StackDecision) error {
			e := events[i]
			i++
			ds, pass := ref.step(e)
			where := fmt.Sprintf("trial %d (mode %d, %v), request %d (%s at %v, cost %d)", trial, mode, stackNames(stack), i, e.user, time.Duration(e.time), e.cost)
			if d.Decision.Allowed != pass {
				t.Fatalf("%s: allowed %v, want %v", where, d.Decision.Allowed, pass)
			}
			remaining := int64(-1)
			for p, sp := range stack {
				if d.Decisions[p].Allowed != ds[p].Allowed {
					t.Fatalf("%s: %s allowed %v, want %v", where, sp.Name, d.Decisions[p].Allowed, ds[p].Allowed)
				}
				if sp.Shadow {
					continue
				}
				// What the policy holds now, asked with requests.
				if slices.Contains(freshWhenFull, sp.Algorithm) {
					var most int64
					for c := int64(1); c <= limitOf(sp); c++ {
						if ref.ask(p, e, e.time, c).Allowed {
							most = c
						}
					}
					if d.Decisions[p].Remaining != most {
						t.Fatalf("%s: %s says remaining %d, and a request of %d passes", where, sp.Name, d.Decisions[p].Remaining, most)
					}
					reset := int64(d.Decisions[p].ResetAfter)
					if !ref.ask(p, e, e.time+reset, limitOf(sp)).Allowed || reset > 0 && ref.ask(p, e, e.time+reset-1, limitOf(sp)).Allowed {
						t.Fatalf("%s: %s says reset after %v, but the full limit passes otherwise", where, sp.Name, time.Duration(reset))
					}
					checked["remaining"]++
				} else if pass || mode == StackConsume || !ds[p].Allowed {
					// Taken as it decided: the decision is the reference's.
					if d.Decisions[p] != ds[p] {
						t.Fatalf("%s: %s decided %+v, want %+v", where, sp.Name, d.Decisions[p], ds[p])
					}
				}
				if remaining < 0 || d.Decisions[p].Remaining < remaining {
					remaining = d.Decisions[p].Remaining
				}
			}
			if d.Decision.Remaining != remaining {
				t.Fatalf("%s: stack remaining %d, the least of the policies' is %d", where, d.Decision.Remaining, remaining)
			}
			if pass {
				if d.Decision.RetryAfter != 0 {
					t.Fatalf("%s: allowed with retry after %v", where, d.Decision.RetryAfter)
				}
				return nil
			}
			if !d.Exact.RetryAfter.Never() {
				retry := int64(d.Decision.RetryAfter)
				if retry <= 0 || !ref.passes(e, e.time+retry) || ref.passes(e, e.time+retry-1) {
					t.Fatalf("%s: retry after %v does not pass, or a nanosecond earlier does", where, time.Duration(retry))
				}
				for at := e.time; at < e.time+retry; at += 2 * grid {
					if ref.passes(e, at) {
						t.Fatalf("%s: retry after %v, but one after %v passes", where, time.Duration(retry), time.Duration(at-e.time))
					}
				}
				// The answer is not only the refusing policy's own wait.
				if retry != int64(d.Decisions[d.Refused].RetryAfter) {
					checked["later than the refusal's"]++
				}
				checked["retry"]++
				return nil
			}
			// Never: a cost above a limit, or no retry in the next
			// half minute passes either.
			for p, sp := range stack {
				if !sp.Shadow && e.cost > limitOf(sp) {
					checked["never: cost"]++
					if d.Decisions[p].Allowed {
						t.Fatalf("%s: %s allowed a cost above its limit", where, sp.Name)
					}
					return nil
				}
			}
			for at := e.time; at < e.time+int64(30*time.Second); at += grid {
				if ref.passes(e, at) {
					t.Fatalf("%s: retry never passes, but one after %v does", where, time.Duration(at-e.time))
				}
			}
			checked["never"]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, what := range []string{"remaining", "retry", "later than the refusal's", "never: cost"} {
		if checked[what] == 0 {
			t.Errorf("no %s checked: the test tests little", what)
		}
	}
	t.Logf("checked: %v", checked)
}

func stackNames(stack []StackPolicy) []string {
	var out []string
	for _, sp := range stack {
		key := "global"
		if len(sp.KeyFields) > 0 {
			key = "user"
		}
		out = append(out, fmt.Sprintf("%s=%v/%s", sp.Name, sp.Algorithm, key))
	}
	return out
}

// TestStackAnswers: the two stacks of the bug reports, by hand. Consume:
// a per-user limit of 1 per 100s and a global one of 1 per 10s; u2 at 5 is
// refused by global, but per-user took it, so the retry that passes both
// is at 100, not 10. Refund: a per-user token bucket of 2 and a global
// limit of 3 per 10s; u2's cost 2 at 0 is refused by global and taken by
// none, so per-user still holds 2 and the stack has 1 left until 10.
func TestStackAnswers(t *testing.T) {
	fixed := func(limit int64, window time.Duration) limiters.Policy {
		return limiters.Policy{Limit: limit, Window: window}
	}
	user := []string{"user"}
	type answer struct {
		allowed           bool
		remaining         int64
		retry, reset      time.Duration
		policyRemaining   []int64
		policyResetAfters []time.Duration
	}
	cases := []struct {
		name   string
		stack  Stack
		events []event
		want   []answer
	}{
		{"consume", Stack{Mode: StackConsume, Policies: []StackPolicy{
			{Lane: Lane{Name: "per-user", Algorithm: limiters.FixedWindow, Policy: fixed(1, 100*time.Second)}, KeyFields: user},
			{Lane: Lane{Name: "global", Algorithm: limiters.FixedWindow, Policy: fixed(1, 10*time.Second)}},
		}}, []event{{"u1", 0, 1}, {"u2", 5e9, 1}, {"u2", 10e9, 1}}, []answer{
			{true, 0, 0, 100 * time.Second, []int64{0, 0}, []time.Duration{100 * time.Second, 10 * time.Second}},
			{false, 0, 95 * time.Second, 95 * time.Second, []int64{0, 0}, []time.Duration{95 * time.Second, 5 * time.Second}},
			{false, 0, 90 * time.Second, 90 * time.Second, []int64{0, 0}, []time.Duration{90 * time.Second, 10 * time.Second}},
		}},
		{"refund", Stack{Mode: StackRefund, Policies: []StackPolicy{
			{Lane: Lane{Name: "per-user", Algorithm: limiters.TokenBucket, Policy: limiters.Policy{Capacity: 2, Rate: limiters.Rate{N: 1, Per: 10 * time.Second}}}, KeyFields: user},
			{Lane: Lane{Name: "global", Algorithm: limiters.FixedWindow, Policy: fixed(3, 10*time.Second)}},
		}}, []event{{"u1", 0, 2}, {"u2", 0, 2}, {"u2", 0, 1}}, []answer{
			{true, 0, 0, 20 * time.Second, []int64{0, 1}, []time.Duration{20 * time.Second, 10 * time.Second}},
			{false, 1, 10 * time.Second, 10 * time.Second, []int64{2, 1}, []time.Duration{0, 10 * time.Second}},
			{true, 0, 0, 10 * time.Second, []int64{1, 0}, []time.Duration{10 * time.Second, 10 * time.Second}},
		}},
	}
	for _, c := range cases {
		var got []answer
		_, err := RunStack(&sliceSource{events: c.events}, Config{}, c.stack, func(d *StackDecision) error {
			a := answer{allowed: d.Decision.Allowed, remaining: d.Decision.Remaining, retry: d.Decision.RetryAfter, reset: d.Decision.ResetAfter}
			for _, pd := range d.Decisions {
				a.policyRemaining = append(a.policyRemaining, pd.Remaining)
				a.policyResetAfters = append(a.policyResetAfters, pd.ResetAfter)
			}
			got = append(got, a)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(answer{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
