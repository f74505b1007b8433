package spec

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/sim"
)

// TestFlagsParams: only the flags given become parameters, each from its
// flag unless another source is named, and --limiter and --algos parse
// into lanes.
func TestFlagsParams(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--limit", "5", "--rate", "1/2", "--limiter", "tb=token-bucket:capacity=3"}); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	p := f.Params(set, map[string]Source{"limit": "--intent"})
	if len(p) != 2 || p["limit"] != (Setting{Value: "5", At: "--intent"}) || p["rate"] != (Setting{Value: "1/2", At: "--rate"}) {
		t.Errorf("Params = %v", p)
	}
	algos, lims, err := f.Lanes([]string{"gcra"})
	if err != nil {
		t.Fatal(err)
	}
	if len(algos) != 1 || algos[0].String() != "gcra" || len(lims) != 1 || lims[0].Name != "tb" {
		t.Errorf("Lanes = %v, %v", algos, lims)
	}
	if algos, _, _ := f.Lanes(nil); algos != nil {
		t.Errorf("Lanes(nil) = %v, want nil: the default depends on the limiters", algos)
	}
}

// TestLimiterCompletions: before a ':' a --limiter completes to the
// algorithms and presets after its NAME=, after it to the keys a
// limiter takes.
func TestLimiterCompletions(t *testing.T) {
	names := LimiterCompletions("tb=").Names()
	if !slices.Contains(names, "tb=token-bucket") || !slices.Contains(names, "tb=nginx") {
		t.Errorf("tb=: %v", names)
	}
	keys := LimiterCompletions("token-bucket:capacity=3,").Names()
	if !slices.Contains(keys, "token-bucket:capacity=3,rate=") {
		t.Errorf("token-bucket:capacity=3,: %v", keys)
	}
	if got := AlgorithmCompletions("gcra,").Names(); slices.Contains(got, "gcra,gcra") || !slices.Contains(got, "gcra,token-bucket") {
		t.Errorf("gcra,: %v", got)
	}
}

// TestStackMode: --stack given wins over the file's stack:, which wins
// over the default.
func TestStackMode(t *testing.T) {
	file := &File{Stack: "refund"}
	for _, tc := range []struct {
		flag  string
		given bool
		file  *File
		want  sim.StackMode
	}{
		{"consume", false, nil, sim.StackConsume},
		{"consume", false, file, sim.StackRefund},
		{"consume", true, file, sim.StackConsume},
		{"", false, nil, sim.StackConsume},
	} {
		f := Flags{Stack: tc.flag}
		if got, err := f.StackMode(tc.given, tc.file); err != nil || got != tc.want {
			t.Errorf("--stack %q given %v: %v, %v; want %v", tc.flag, tc.given, got, err, tc.want)
		}
	}
	if _, err := (&Flags{Stack: "share"}).StackMode(true, nil); err == nil {
		t.Error("--stack share: no error")
	}
}
