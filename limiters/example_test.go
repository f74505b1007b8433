package limiters_test

import (
	"fmt"
	"math"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// The seed's token bucket: 3 tokens, refilled at 0.2 per second.
func Example() {
	rate, err := limiters.ParseRate("0.2", time.Second)
	if err != nil {
		panic(err)
	}
	lim, err := limiters.NewKeyed(limiters.TokenBucket, limiters.Policy{Capacity: 3, Rate: rate})
	if err != nil {
		panic(err)
	}
	for _, t := range []time.Duration{0, 0, 0, 0, 5 * time.Second, 6 * time.Second} {
		d := lim.Allow("u1", int64(t), 1)
		if d.Allowed {
			fmt.Printf("t=%v allowed, %d left\n", t, d.Remaining)
		} else {
			fmt.Printf("t=%v refused (%s), retry after %v\n", t, d.Reason, d.RetryAfter)
		}
	}
	// Output:
	// t=0s allowed, 2 left
	// t=0s allowed, 1 left
	// t=0s allowed, 0 left
	// t=0s refused (no tokens), retry after 5s
	// t=5s allowed, 0 left
	// t=6s refused (no tokens), retry after 4s
}

// A Table holds the state of keys interned as dense ids; AllowExplain shows
// the state each decision was based on.
func ExampleTable_AllowExplain() {
	tab, err := limiters.NewTable(limiters.SlidingCounter, limiters.Policy{Limit: 3, Window: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	var text []byte
	for _, s := range []int64{1, 3, 5, 8, 12, 13} {
		var d limiters.Decision
		d, text = tab.AllowExplain(0, s*int64(time.Second), 1, time.Second, text[:0])
		fmt.Printf("t=%d %-5v %s\n", s, d.Allowed, text)
	}
	// Output:
	// t=1 true  estimate 0
	// t=3 true  estimate 1
	// t=5 true  estimate 2
	// t=8 false estimate 3
	// t=12 true  estimate 2.4
	// t=13 false estimate 3.1
}

// A state value and its Step function are the whole algorithm; storing the
// state is up to the caller.
func ExampleLeakyQueueState_Step() {
	rule, err := limiters.NewRule(limiters.LeakyQueue, limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 2, Per: time.Second}})
	if err != nil {
		panic(err)
	}
	var q limiters.LeakyQueueState
	for i := 0; i < 4; i++ {
		var d limiters.Decision
		q, d = q.Step(rule, 0, 1)
		fmt.Printf("allowed=%v delay=%v reason=%q\n", d.Allowed, d.Delay, d.Reason)
	}
	// Output:
	// allowed=true delay=0s reason=""
	// allowed=true delay=500ms reason=""
	// allowed=true delay=1s reason=""
	// allowed=false delay=0s reason="queue full"
}

// A Group decides under several algorithms at once; Admit reports only
// which of them allowed each request, bit i for the i-th algorithm.
func ExampleGroup_Admit() {
	algs := []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingLog}
	g, err := limiters.NewGroup(algs, limiters.Policy{Limit: 3, Window: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	for _, s := range []int64{7, 8, 9, 10, 11, 12} {
		mask := g.Admit(0, s*int64(time.Second), 1)
		fmt.Printf("t=%d fixed-window %-5v sliding-log %v\n", s, mask&1 != 0, mask&2 != 0)
	}
	// Output:
	// t=7 fixed-window true  sliding-log true
	// t=8 fixed-window true  sliding-log true
	// t=9 fixed-window true  sliding-log true
	// t=10 fixed-window true  sliding-log false
	// t=11 fixed-window true  sliding-log false
	// t=12 fixed-window true  sliding-log false
}

// A wait can be longer than a time.Duration holds: the Decision then says
// InfDuration, and AllowExact gives the wait in full.
func ExampleTable_AllowExact() {
	// 20 tokens, one more every 10^9 seconds.
	slow := limiters.Policy{Capacity: 20, Rate: limiters.Rate{N: 1, Per: 1e9 * time.Second}}
	tab, err := limiters.NewTable(limiters.TokenBucket, slow)
	if err != nil {
		panic(err)
	}
	tab.Allow(0, 0, 20)
	d, x := tab.AllowExact(0, 0, 20)
	fmt.Println(d.RetryAfter == limiters.InfDuration, x.RetryAfter.Big(), "ns")
	d, x = tab.AllowExact(0, 0, 21)
	fmt.Println(d.Reason, d.RetryAfter == limiters.InfDuration, x.RetryAfter.Never())
	// Output:
	// true 20000000000000000000 ns
	// cost exceeds capacity true true
}

// A Group holds any rules, each with its own policy: here token buckets of
// capacity 3 and 10 at 0.3 per second, and a sliding log of 3 per 10 s,
// side by side for every key.
func ExampleNewGroupOf() {
	rate := limiters.Rate{N: 3, Per: 10 * time.Second}
	var rules []*limiters.Rule
	for _, p := range []struct {
		a limiters.Algorithm
		p limiters.Policy
	}{
		{limiters.TokenBucket, limiters.Policy{Capacity: 3, Rate: rate}},
		{limiters.TokenBucket, limiters.Policy{Capacity: 10, Rate: rate}},
		{limiters.SlidingLog, limiters.Policy{Limit: 3, Window: 10 * time.Second}},
	} {
		r, err := limiters.NewRule(p.a, p.p)
		if err != nil {
			panic(err)
		}
		rules = append(rules, r)
	}
	g, err := limiters.NewGroupOf(rules)
	if err != nil {
		panic(err)
	}
	for s := int64(7); s <= 12; s++ {
		mask := g.Admit(0, s*int64(time.Second), 1)
		fmt.Printf("t=%d tb3 %-5v tb10 %-5v log %v\n", s, mask&1 != 0, mask&2 != 0, mask&4 != 0)
	}
	// Output:
	// t=7 tb3 true  tb10 true  log true
	// t=8 tb3 true  tb10 true  log true
	// t=9 tb3 true  tb10 true  log true
	// t=10 tb3 false tb10 true  log false
	// t=11 tb3 true  tb10 true  log false
	// t=12 tb3 false tb10 true  log false
}

// Gauge reads the number that stands for a key's state at any time,
// without changing it, and when that number next stops moving on a
// straight line: here the sliding counter's estimate, which decays as the
// previous window slides out of the rolling one.
func ExampleTable_Gauge() {
	tab, err := limiters.NewTable(limiters.SlidingCounter, limiters.Policy{Limit: 3, Window: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	g := limiters.SlidingCounter.Gauge()
	for _, s := range []int64{7, 8, 9} {
		tab.Allow(0, s*int64(time.Second), 1)
	}
	for _, s := range []int64{9, 10, 11, 15, 20} {
		v, until := tab.Gauge(0, s*int64(time.Second))
		bend := "it stays"
		if until != math.MaxInt64 {
			bend = fmt.Sprintf("straight until %v", time.Duration(until))
		}
		fmt.Printf("t=%d %s %.1f (%s %d), %s\n", s, g.Quantity, v, g.Limit, limiters.SlidingCounter.Limit(tab.Policy()), bend)
	}
	// Output:
	// t=9 estimate 3.0 (limit 3), straight until 10s
	// t=10 estimate 3.0 (limit 3), straight until 20s
	// t=11 estimate 2.7 (limit 3), straight until 20s
	// t=15 estimate 1.5 (limit 3), straight until 20s
	// t=20 estimate 0.0 (limit 3), it stays
}
