package sweep

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/spec"
)

// TestFlagsCheck: a preset's parameter whose name another flag has, or
// that is one letter, gets the preset's name before it, and its errors
// name that flag; --pick on label columns needs labelled requests.
func TestFlagsCheck(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs, func(name string) bool { return name == "unit" })
	if FlagName("unit", func(string) bool { return true }) != "envoy-unit" || FlagName("capacity", nil) != "capacity" {
		t.Fatalf("FlagName: %q, %q", FlagName("unit", func(string) bool { return true }), FlagName("capacity", nil))
	}
	if err := fs.Parse([]string{"--algos", "x-time-rate", "--x-time-rate-b", "1..3"}); err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	g, algos, _, err := f.Check(given, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(algos) != 1 || len(g.Values("b")) != 3 {
		t.Errorf("algos %v, b %v", algos, g.Values("b"))
	}
	f.Pick = "legit_reject_pct<=1"
	if _, _, _, err := f.Check(given, false); err == nil {
		t.Error("--pick legit_reject_pct without labels: no error")
	}
	if _, _, _, err := f.Check(given, true); err != nil {
		t.Errorf("--pick legit_reject_pct with labels: %v", err)
	}
}

// TestLimiters: a sweep replays its candidates, then the intent's sliding
// log.
func TestLimiters(t *testing.T) {
	g := &Grid{}
	if err := g.Set("capacity", "1..3"); err != nil {
		t.Fatal(err)
	}
	algos, err := ParseAlgos([]string{"token-bucket"})
	if err != nil {
		t.Fatal(err)
	}
	cands, err := g.Candidates(algos)
	if err != nil {
		t.Fatal(err)
	}
	lims := Limiters(cands)
	if len(lims) != 4 || lims[3].Name != IntentLane || lims[3].Algorithm.String() != "sliding-log" {
		t.Errorf("Limiters = %+v", lims)
	}
}

// TestDeployed: the deployed config's limiter is a candidate of the
// index given, of its preset when it is one.
func TestDeployed(t *testing.T) {
	l, err := spec.ParseLimiter("edge=nginx:rate=10r/s,burst=5")
	if err != nil {
		t.Fatal(err)
	}
	c := Deployed(l, 7)
	if c.Index != 7 || c.Algo.Preset == nil || c.Algo.String() != "nginx" || c.Limiter.Name != "edge" {
		t.Errorf("Deployed = %+v", c)
	}
}
