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

// TestBackwardsWarning: requests earlier than their key's latest are
// counted, the first located, with the remedy the clock rule calls for.
func TestBackwardsWarning(t *testing.T) {
	if got := BackwardsWarning(&sim.Report{}, "t.csv", false); got != "" {
		t.Errorf("no request back in time: %q", got)
	}
	rep := &sim.Report{ClockBackwards: 2, FirstBackwards: &sim.Rejection{Line: 7}}
	want := "2 requests came earlier than their key's latest request, the first at t.csv:7: the trace is not in time order; --clock clamp judged them at their key's latest time; --sort judges them at their own"
	if got := BackwardsWarning(rep, "t.csv", true); got != want {
		t.Errorf("BackwardsWarning = %q, want %q", got, want)
	}
}
