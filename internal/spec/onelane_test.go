package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/sim"
)

// TestOneLane: a stack of one policy over every request becomes a
// limiter named as the policy, keyed as it is; any other stack is an
// *Error that names why.
func TestOneLane(t *testing.T) {
	tb := mustLimiter(t, "token-bucket:capacity=3")
	one := func(p StackPolicy) *File {
		return &File{Path: "p.yaml", Policies: []StackPolicy{p}}
	}
	lane, err := one(StackPolicy{Limiter: Limiter{Name: "per-ip", Algorithm: tb.Algorithm, Params: tb.Params}, Key: []string{"ip"}}).OneLane("p.yaml", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(lane.File.Policies) != 0 || len(lane.File.Limiters) != 1 || lane.File.Limiters[0].Name != "per-ip" {
		t.Errorf("file = %+v, want the policy as its one limiter", lane.File)
	}
	if !slices.Equal(lane.Key, []string{"ip"}) || lane.Warning != "" {
		t.Errorf("key %v, warning %q; want [ip] and none", lane.Key, lane.Warning)
	}
	lane, err = one(StackPolicy{Limiter: tb, Key: []string{"ip"}, Match: &sim.Match{}, EmptyKeyOnly: true}).OneLane("p.yaml", []string{"ip"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lane.Warning, "a request whose ip is empty passes nginx unaccounted") {
		t.Errorf("warning %q, want the empty key's", lane.Warning)
	}
	for _, tc := range []struct {
		file     *File
		key      []string
		keyGiven bool
		want     string
	}{
		{&File{Path: "p.yaml", Policies: []StackPolicy{{Limiter: Limiter{Name: "a"}}, {Limiter: Limiter{Name: "b"}}}}, nil, false, "p.yaml: 2 policies (a, b) apply together as a stack"},
		{one(StackPolicy{Limiter: Limiter{Name: "a"}, Match: &sim.Match{}}), nil, false, "policy a applies to some requests only"},
		{one(StackPolicy{Limiter: Limiter{Name: "a"}, Shadow: true}), nil, false, "policy a is a shadow policy"},
		{one(StackPolicy{Limiter: Limiter{Name: "a"}, Key: []string{}}), nil, false, "policy a is one limit for every request"},
		{one(StackPolicy{Limiter: Limiter{Name: "a"}, Key: []string{"ip"}}), []string{"user"}, true, "--key user: policy a keys on ip"},
	} {
		_, err := tc.file.OneLane("p.yaml", tc.key, tc.keyGiven)
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OneLane = %v, want an *Error saying %q", err, tc.want)
		}
	}
}

// TestKeyIn: a stack's policy keys on its own key, else the replay's,
// else the user.
func TestKeyIn(t *testing.T) {
	for _, tc := range []struct {
		own, replay, want []string
	}{
		{[]string{"ip"}, []string{"user"}, []string{"ip"}},
		{[]string{}, []string{"user"}, []string{}},
		{nil, []string{"path"}, []string{"path"}},
		{nil, nil, []string{"user"}},
	} {
		if got := (StackPolicy{Key: tc.own}).KeyIn(tc.replay); !slices.Equal(got, tc.want) {
			t.Errorf("KeyIn(%v) of a policy keyed %v = %v, want %v", tc.replay, tc.own, got, tc.want)
		}
	}
}
