package spec

import (
	"testing"
)

// TestSweepIntent: a sweep's intent is its --intent, else its one
// --limit and --window; inside a replay, each of them it does not give
// is the replay's, and the sweep says where each came from.
func TestSweepIntent(t *testing.T) {
	sp, err := SweepIntent(nil, SweepFlags{Intent: "100/1m"})
	if err != nil || sp.Limit != 100 || sp.Window != "1m" || sp.At["limit"] != "--intent" || sp.From != "--intent" {
		t.Errorf("--intent 100/1m: %+v, %v", sp, err)
	}
	_, err = SweepIntent(nil, SweepFlags{Limit: "3", Window: "10", Limits: []string{"3", "4"}})
	if want := "--limit gives 2 values: say which policy you mean with --intent LIMIT/WINDOW"; err == nil || err.Error() != want {
		t.Errorf("two limits: %v, want %q", err, want)
	}
	for _, bad := range []string{"100", "x/1m", "0/1m"} {
		if _, _, err := ParseIntent(bad); err == nil {
			t.Errorf("ParseIntent(%q) took it", bad)
		}
	}
	replay := bind(t, Inputs{Flags: Params{"limit": {Value: "5", At: "--limit"}}})
	in := Inherit(replay, "10", map[string]bool{"limit": true}, "", nil)
	sp, err = SweepIntent(in, SweepFlags{Given: map[string]bool{"window": true}, Windows: []string{"20"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "limit from the report's --limit, window from --window, clock the report's default"
	if sp.From != want || sp.Window != "20" || sp.Inherit["limit"].Value != "5" || sp.Set["limit"] {
		t.Errorf("inherited: %+v, want From %q", sp, want)
	}
}
