package tables

import (
	"slices"
	"testing"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// TestBurstHeading: burst's heading names the trace, its requests and
// keys, the policy, and what the table lists.
func TestBurstHeading(t *testing.T) {
	plan, err := spec.Resolve(spec.Inputs{Algos: []limiters.Algorithm{limiters.FixedWindow}})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := plan.Bind(1e9)
	if err != nil {
		t.Fatal(err)
	}
	sp := &Policy{Spec: bound}
	rep := &sim.Report{Requests: 12, Keys: 1}
	got := BurstHeading("t.csv", rep, sp, 3)
	if got[0] != "burst on t.csv: 12 requests, 1 key" || !slices.Contains(got, "") || got[len(got)-1] != "the 3 worst intervals of 10s (at most one per algorithm and key)" {
		t.Errorf("BurstHeading = %q", got)
	}
}
