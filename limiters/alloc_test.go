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

// TestRefusedWaitsAllocatesNothing: the waits of a group's refusals, narrow
// states and wide, allocate nothing.
func TestRefusedWaitsAllocatesNothing(t *testing.T) {
	p := Policy{Limit: 2, Window: time.Second, Capacity: 2, Rate: Rate{1, time.Second}}
	var rules []*Rule
	for _, a := range AllAlgorithms() {
		r, err := NewRule(a, p)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r, r.wide())
	}
	g, err := NewGroupOf(rules)
	if err != nil {
		t.Fatal(err)
	}
	waits := make([]Span, len(rules))
	for i := range 3 {
		g.Admit(0, int64(i), 1)
	}
	all := uint64(1)<<len(rules) - 1
	ts := int64(3)
	n := testing.AllocsPerRun(1000, func() {
		ts++
		g.RefusedWaits(0, ts, 1, all&^g.Admit(0, ts, 1), waits)
	})
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
	n = testing.AllocsPerRun(1000, func() {
		ts++
		g.AdmitWaits(0, ts, 1, all, waits)
	})
	if n != 0 {
		t.Errorf("AdmitWaits: %v allocations per request", n)
	}
}
