package limiters

import "testing"

// TestZeroKeyed: the zero Keyed refuses every request and describes
// itself without panicking, with a policy valid for no algorithm.
func TestZeroKeyed(t *testing.T) {
	var k Keyed
	if d := k.Allow("u1", 0, 1); d.Allowed || d.Reason != ReasonBadRule {
		t.Errorf("Allow = %+v, want a refusal with %q", d, ReasonBadRule)
	}
	if a := k.Algorithm(); a != 0 {
		t.Errorf("Algorithm() = %v, want the zero Algorithm", a)
	}
	p := k.Policy()
	for _, a := range AllAlgorithms() {
		if p.Validate(a) == nil {
			t.Errorf("Policy() = %+v is valid for %v", p, a)
		}
	}
}
