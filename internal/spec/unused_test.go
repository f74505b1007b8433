package spec

import (
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestUnusedFlags: bucket flags beside window algorithms alone, and a
// parameter no limiter takes, are said to have no effect.
func TestUnusedFlags(t *testing.T) {
	sp := bind(t, Inputs{Algos: []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingLog}})
	got := sp.UnusedFlags(map[string]bool{"capacity": true, "rate": true}, false)
	want := []string{"--capacity and --rate have no effect: only window algorithms run (fixed-window, sliding-log), and they use --limit and --window"}
	if !slices.Equal(got, want) {
		t.Errorf("UnusedFlags = %q, want %q", got, want)
	}
	if got := sp.UnusedFlags(map[string]bool{"limit": true, "window": true}, true); got != nil {
		t.Errorf("window flags beside window algorithms: UnusedFlags = %q, want none", got)
	}
}

// TestCheckUnit: a duration --unit cannot hold but seconds can waits for
// the trace; one neither can is an error at once.
func TestCheckUnit(t *testing.T) {
	plan, err := Resolve(Inputs{Flags: Params{"window": {Value: "1.5", At: "--window"}}})
	if err != nil {
		t.Fatal(err)
	}
	if deferred, err := plan.CheckUnit(time.Nanosecond); deferred == nil || err != nil {
		t.Errorf("--window 1.5 in ns: deferred %v, err %v; want it deferred", deferred, err)
	}
	if deferred, err := plan.CheckUnit(time.Second); deferred != nil || err != nil {
		t.Errorf("--window 1.5 in s: deferred %v, err %v; want neither", deferred, err)
	}
}
