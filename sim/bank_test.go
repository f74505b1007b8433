package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestBankedBursts checks the bursts of lanes kept in a bank (many lanes
// of one mask word that take requests at their own times) against the
// reference, on traces in and out of time order, with lanes that reach
// their bounds and close, and with workers that forget idle keys.
func TestBankedBursts(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var lanes []Lane
	for i := range 70 { // a full first word and some of the next
		a := []limiters.Algorithm{limiters.TokenBucket, limiters.GCRA, limiters.SlidingLog, limiters.LeakyBucket}[i%4]
		p := seedPolicy
		p.Limit, p.Window = int64(1+i%9), time.Duration(1+i%5)*time.Second
		p.Capacity, p.Rate = int64(1+i%11), limiters.Rate{N: int64(1 + i%4), Per: time.Duration(1+i%3) * time.Second}
		lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, i), Algorithm: a, Policy: p})
	}
	for trial := range 4 {
		var events []event
		if trial < 2 {
			events = randomTrace(rng, 3000, 1+trial*20, true)
		} else {
			events = churnTrace(rng, 3000, true)
		}
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial%2, KeepKeys: trial < 2, sweepAt: 64}
		want := reference(t, events, cfg)
		_, rep := collectAllowed(t, events, cfg)
		for a := range lanes {
			if diff := quickDiff(want.report.Algos[a].Burst, rep.Algos[a].Burst); diff != "" {
				t.Errorf("trial %d, %s: burst (-reference +sim):\n%s", trial, lanes[a].Name, diff)
			}
		}
	}
}
