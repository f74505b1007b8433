package sim

import (
	"math/rand/v2"
	"testing"
)

// TestOutcomeTable counts random outcomes, enough distinct ones to grow
// the table several times, and checks every count against a map's.
func TestOutcomeTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type key struct {
		mask   uint64
		oracle bool
	}
	want := map[key]int64{}
	tab := newOutcomeTable()
	for i := 0; i < 200_000; i++ {
		// Masks of a few bits set and the extremes, each with both
		// oracle words; 0 and ^0 collide under the oracle's flip.
		var k key
		switch i % 5 {
		case 0:
			k = key{0, i%2 == 0}
		case 1:
			k = key{^uint64(0), i%3 == 0}
		default:
			k = key{uint64(1)<<rng.IntN(64) | uint64(1)<<rng.IntN(64)<<rng.IntN(2), rng.IntN(2) == 0}
		}
		want[k]++
		tab.add(k.mask, k.oracle)
	}
	got := map[key]int64{}
	tab.each(func(mask uint64, oracle bool, count int64) {
		k := key{mask, oracle}
		if _, dup := got[k]; dup {
			t.Errorf("outcome %+v listed twice", k)
		}
		got[k] = count
	})
	if len(got) != len(want) {
		t.Errorf("%d outcomes, want %d", len(got), len(want))
	}
	for k, c := range want {
		if got[k] != c {
			t.Errorf("outcome %+v: count %d, want %d", k, got[k], c)
		}
	}
	if n := tab.total(); n != 200_000 {
		t.Errorf("total %d, want 200000", n)
	}
	if len(tab.slots) < 2*tab.n {
		t.Errorf("%d outcomes in %d slots: more than half full", tab.n, len(tab.slots))
	}
}
