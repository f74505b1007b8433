package limiters

import (
	"math/rand/v2"
	"testing"
)

// TestTableIsStep: for every algorithm, on random policies and traces
// that go back in time now and then, a Table (whose common case is the
// state's decide called directly) decides each request as the state's
// Step does (through the boundary first).
func TestTableIsStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 300; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 80, tick, 4, true)
		for _, alg := range AllAlgorithms() {
			m := newModel(t, alg, p)
			tab, err := NewTable(alg, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, rq := range trace {
				want := m.step(rq.t, rq.cost)
				if got := tab.Allow(0, rq.t, rq.cost); got != want {
					t.Fatalf("%s %+v: request %d (t=%d cost %d): Table %+v, Step %+v", alg, p, i, rq.t, rq.cost, got, want)
				}
			}
		}
	}
}
