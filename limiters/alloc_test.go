package limiters

import (
	"testing"
	"time"
)

// TestNewKindsAllocateNothing: a decision of fixed-window-hits or
// tick-queue in a Table allocates nothing.
func TestNewKindsAllocateNothing(t *testing.T) {
	for _, a := range []Algorithm{FixedWindowHits, TickQueue} {
		tab, _ := NewTable(a, Policy{Limit: 5, Window: time.Second, Capacity: 5, Rate: Rate{1, time.Second}})
		tab.Allow(0, 0, 1)
		ts := int64(0)
		n := testing.AllocsPerRun(1000, func() { ts += 1e8; tab.Allow(0, ts, 1) })
		if n != 0 {
			t.Errorf("%s: %v allocations per request", a, n)
		}
	}
}
