package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/ratesim/ratesim/limiters"
)

// TestStackMatch: a policy with a match decides the requests it applies
// to as if it were alone with them, and the others pass it by: neither
// its state nor its counts see them. A request no enforcing policy
// applies to is unlimited (a shadow policy that sees it limits nothing),
// and each policy counts the requests it applied to.
func TestStackMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	p := seedPolicy
	odd := &Match{Fields: []string{"user"}, Applies: func(v [][]byte) bool { return len(v[0]) > 0 && (v[0][len(v[0])-1]-'0')%2 == 1 }}
	stack := []StackPolicy{
		{Lane: Lane{Name: "odd-users", Algorithm: limiters.SlidingLog, Policy: p}, KeyFields: []string{}, Match: odd},
		{Lane: Lane{Name: "watch", Algorithm: limiters.FixedWindow, Policy: p}, KeyFields: []string{}, Shadow: true},
	}
	events := randomTrace(rng, 2000, 5, true)
	sortEvents(events)
	keyed, _ := limiters.NewKeyed(limiters.SlidingLog, p)
	i, applied, refused := 0, 0, int64(0)
	rep, err := RunStack(&sliceSource{events: events}, Config{}, Stack{Policies: stack, Mode: StackConsume}, func(d *StackDecision) error {
		e := events[i]
		i++
		want := limiters.Decision{Allowed: true}
		if odd.Applies([][]byte{[]byte(e.user)}) {
			applied++
			want = keyed.Allow("", e.time, e.cost)
			if !want.Allowed {
				refused++
			}
		}
		if d.Decision.Allowed != want.Allowed || d.Decisions[0].Allowed != want.Allowed {
			t.Fatalf("request %d (%s at %d): allowed %v, want %v", i, e.user, e.time, d.Decision.Allowed, want.Allowed)
		}
		applies := odd.Applies([][]byte{[]byte(e.user)})
		if d.Applies[0] != applies || !d.Applies[1] || d.Limited != applies {
			t.Fatalf("request %d (%s at %d): applies %v, limited %v; want [%v true], %v", i, e.user, e.time, d.Applies, d.Limited, applies, applies)
		}
		if applies && (d.Decision.Remaining != want.Remaining || d.Decision.ResetAfter != want.ResetAfter) {
			t.Fatalf("request %d (%s at %d): remaining %d, reset after %v; want %d, %v", i, e.user, e.time, d.Decision.Remaining, d.Decision.ResetAfter, want.Remaining, want.ResetAfter)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if applied == 0 || applied == len(events) || refused == 0 {
		t.Fatalf("the match applied to %d of %d requests, %d refused: the trace does not test it", applied, len(events), refused)
	}
	if rep.Policies[0].Refused != refused {
		t.Errorf("refused %d, want %d", rep.Policies[0].Refused, refused)
	}
	if rep.Policies[0].Requests != int64(applied) || rep.Policies[1].Requests != int64(len(events)) {
		t.Errorf("the policies applied to %d and %d requests, want %d and %d", rep.Policies[0].Requests, rep.Policies[1].Requests, applied, len(events))
	}
	if rep.Unlimited != int64(len(events)-applied) {
		t.Errorf("%d requests under no enforcing policy, want %d", rep.Unlimited, len(events)-applied)
	}
}
