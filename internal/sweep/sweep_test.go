package sweep

import (
	"math/big"
	"testing"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// TestFrontier: the frontier is the candidates no other has at most as
// many false allows and false rejects as, with fewer of one; equal ones
// are both on it. With constraints, it is that of the candidates that
// meet them, and the best is on it.
func TestFrontier(t *testing.T) {
	pairs := [][2]int64{{0, 9}, {1, 5}, {2, 5}, {3, 1}, {3, 1}, {5, 0}, {6, 0}, {4, 4}}
	want := []bool{true, true, false, true, true, true, false, false}
	var cands []*Candidate
	for i, p := range pairs {
		c := &Candidate{Index: i}
		c.Stats = &sim.AlgoStats{FalseAllows: p[0], FalseRejects: p[1]}
		c.Num = map[string]*big.Rat{"false_rejects": big.NewRat(p[1], 1)}
		cands = append(cands, c)
	}
	Pick(cands, nil)
	for i, c := range cands {
		if c.Front != want[i] {
			t.Errorf("%v: frontier %v, want %v", pairs[i], c.Front, want[i])
		}
	}
	// Of those with at least 4 false rejects, (1, 5) is the best and on
	// the frontier; (0, 9) too; (2, 5) and (4, 4)... (4, 4) is not beaten
	// by (1, 5) (more false rejects there), so it is on it.
	cons, err := ParsePick("false_rejects>=4")
	if err != nil {
		t.Fatal(err)
	}
	picked := Pick(cands, cons)
	if len(picked) != 4 || picked[0] != cands[0] || !picked[0].Best {
		t.Fatalf("picked %d, the best %+v", len(picked), picked[0].Stats)
	}
	wantFront := []bool{true, true, false, false, false, false, false, true}
	for i, c := range cands {
		if c.Front != wantFront[i] {
			t.Errorf("with %s: %v: frontier %v, want %v", cons, pairs[i], c.Front, wantFront[i])
		}
	}
}

// TestPresetGrid: a preset is swept by its own parameters, each
// candidate the preset's limiter with one combination of them.
func TestPresetGrid(t *testing.T) {
	algos, err := ParseAlgos([]string{"nginx", "token-bucket"})
	if err != nil {
		t.Fatal(err)
	}
	g := &Grid{}
	for name, text := range map[string]string{"burst": "0..4:2", "capacity": "2,3"} {
		if err := g.Set(name, text); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.Unused(algos); len(got) != 0 {
		t.Errorf("unused %v", got)
	}
	if err := g.Set("rate", "10r/s"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Candidates(algos); err == nil {
		t.Errorf("token-bucket took the rate 10r/s")
	}
	g = &Grid{}
	for _, kv := range [][2]string{{"burst", "0..4:2"}, {"rate", "10r/s"}} {
		if err := g.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	cands, err := g.Candidates(algos[:1])
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want 3", len(cands))
	}
	for i, c := range cands {
		if c.Limiter.Preset != "nginx" || c.Limiter.Algorithm != limiters.NginxLimitReq || c.Limiter.Policy.Capacity != int64(2*i+1) {
			t.Errorf("candidate %d: %+v", i, c.Limiter)
		}
	}
	if cands[2].Limiter.Name != "nginx:burst=4,rate=10r/s" {
		t.Errorf("name %q", cands[2].Limiter.Name)
	}
	// nginx refuses burst=0 written out: the sweep's 0, the default, is
	// burst left out.
	if cands[0].Limiter.Args != "rate=10r/s" {
		t.Errorf("burst 0's args %q, want the burst left out", cands[0].Limiter.Args)
	}
	g = &Grid{}
	for _, kv := range [][2]string{{"burst", "-1"}, {"rate", "10r/s"}} {
		if err := g.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Candidates(algos[:1]); err == nil || err.Error() != "--burst and --rate: nginx: burst must be at least 1, got -1 (nginx refuses burst=0: leave burst out for none)" {
		t.Errorf("a bad burst: %v", err)
	}
}
