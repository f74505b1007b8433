package spec

import (
	"slices"
	"testing"

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
