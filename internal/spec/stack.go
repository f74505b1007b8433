package spec

import (
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// KeyIn returns the key p keys on in a replay keyed by key: its own, else
// key, else the user.
func (p StackPolicy) KeyIn(key []string) []string {
	switch {
	case p.Key != nil:
		return p.Key
	case key != nil:
		return key
	}
	return []string{"user"}
}

// StackPolicies returns the policies of stack as the engine replays
// them, lanes[i] being the i-th's, in a replay keyed by key; a policy
// the engine cannot stack is an *Error.
func StackPolicies(stack []StackPolicy, lanes []sim.Lane, key []string) ([]sim.StackPolicy, error) {
	policies := make([]sim.StackPolicy, len(stack))
	for i, p := range stack {
		policies[i] = sim.StackPolicy{Lane: lanes[i], KeyFields: p.KeyIn(key), Shadow: p.Shadow, Match: p.Match}
		if err := sim.StackCheck(policies[i]); err != nil {
			return nil, errorf("%s", strings.TrimPrefix(err.Error(), "sim: "))
		}
	}
	return policies, nil
}
