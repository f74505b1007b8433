package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

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
