package limiters

import (
	"strings"
	"testing"
	"time"
)

const sec = int64(time.Second)

// seedPolicy is the policy of the seed's main(): a limit of 3 per 10
// seconds, and buckets of 3 at 0.2 per second.
var seedPolicy = Policy{
	Limit:    3,
	Window:   10 * time.Second,
	Capacity: 3,
	Rate:     Rate{N: 1, Per: 5 * time.Second},
}

type step struct {
	key   uint32
	t     int64 // seconds
	allow bool
	state string
}

// TestSeedMain replays every line of the seed's main(), with the state
// texts of its walkthroughs.
func TestSeedMain(t *testing.T) {
	buckets := []step{
		{0, 0, true, "tokens 2"}, {0, 0, true, "tokens 1"}, {0, 0, true, "tokens 0"},
		{0, 0, false, "tokens 0"}, {0, 5, true, "tokens 0"}, {0, 6, false, "tokens 0.2"},
	}
	tests := []struct {
		alg   Algorithm
		steps []step
	}{
		{FixedWindow, []step{
			{0, 1, true, "window [0,10) count 1"},
			{0, 2, true, "window [0,10) count 2"},
			{0, 3, true, "window [0,10) count 3"},
			{0, 4, false, "window [0,10) count 3"},
			{0, 11, true, "window [10,20) count 1"},
			{1, 4, true, "window [0,10) count 1"}, // independent user
		}},
		{SlidingLog, []step{
			{0, 1, true, "log [1]"},
			{0, 3, true, "log [1 3]"},
			{0, 5, true, "log [1 3 5]"},
			{0, 8, false, "log [1 3 5]"},
			{0, 12, true, "log [3 5 12]"},  // 1 is older than the cutoff 2
			{0, 13, false, "log [3 5 12]"}, // 3 is exactly on the cutoff
		}},
		{SlidingCounter, []step{
			{0, 1, true, "estimate 0"},
			{0, 3, true, "estimate 1"},
			{0, 5, true, "estimate 2"},
			{0, 8, false, "estimate 3"},
			{0, 12, true, "estimate 2.4"},
			{0, 13, false, "estimate 3.1"},
		}},
		{TokenBucket, buckets},
		{LeakyBucket, []step{
			{0, 0, true, "level 1"}, {0, 0, true, "level 2"}, {0, 0, true, "level 3"},
			{0, 0, false, "level 3"}, {0, 5, true, "level 3"}, {0, 6, false, "level 2.8"},
		}},
		{GCRA, []step{
			{0, 0, true, "tat 5"}, {0, 0, true, "tat 10"}, {0, 0, true, "tat 15"},
			{0, 0, false, "tat 15"}, {0, 5, true, "tat 20"}, {0, 6, false, "tat 20"},
		}},
		{LeakyQueue, []step{
			{0, 0, true, "queue 1 until 5"}, {0, 0, true, "queue 2 until 10"}, {0, 0, true, "queue 3 until 15"},
			{0, 0, false, "queue 3 until 15"}, {0, 5, true, "queue 3 until 20"}, {0, 6, false, "queue 2.8 until 20"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			tab, err := NewTable(tt.alg, seedPolicy)
			if err != nil {
				t.Fatal(err)
			}
			keyed, err := NewKeyed(tt.alg, seedPolicy)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				d, text := tab.AllowExplain(s.key, s.t*sec, 1, time.Second, nil)
				if d.Allowed != s.allow || string(text) != s.state {
					t.Errorf("step %d: Allow(u%d, %d) = %v %q, want %v %q", i, s.key+1, s.t, d.Allowed, text, s.allow, s.state)
				}
				if (d.Reason == ReasonNone) != d.Allowed {
					t.Errorf("step %d: reason %q with allowed %v", i, d.Reason, d.Allowed)
				}
				kd := keyed.Allow(string(rune('a'+s.key)), s.t*sec, 1)
				if kd != d {
					t.Errorf("step %d: Keyed decided %+v, Table %+v", i, kd, d)
				}
			}
		})
	}
}

// TestSeedDecisions checks the other decision fields of the seed's main()
// sequences.
func TestSeedDecisions(t *testing.T) {
	type want struct {
		t            int64 // seconds
		remaining    int64
		retry, reset time.Duration
		delay        time.Duration
		reason       Reason
	}
	s := time.Second
	tests := []struct {
		alg  Algorithm
		want []want
	}{
		{FixedWindow, []want{
			{1, 2, 0, 9 * s, 0, ""}, {2, 1, 0, 8 * s, 0, ""}, {3, 0, 0, 7 * s, 0, ""},
			{4, 0, 6 * s, 6 * s, 0, ReasonWindow}, {11, 2, 0, 9 * s, 0, ""},
		}},
		{SlidingLog, []want{
			{1, 2, 0, 10*s + 1, 0, ""}, {3, 1, 0, 10*s + 1, 0, ""}, {5, 0, 0, 10*s + 1, 0, ""},
			// 1 leaves the closed window [t-10, t] at 11+1ns.
			{8, 0, 3*s + 1, 7*s + 1, 0, ReasonLog},
			{12, 0, 0, 10*s + 1, 0, ""},
			{13, 0, 1, 9*s + 1, 0, ReasonLog},
		}},
		{SlidingCounter, []want{
			{1, 2, 0, 19 * s, 0, ""}, {3, 1, 0, 17 * s, 0, ""}, {5, 0, 0, 15 * s, 0, ""},
			// At 10 the estimate is 3*(10-0)/10 = 3; just after, below 3.
			{8, 0, 2*s + 1, 12 * s, 0, ReasonEstimate},
			{12, 0, 0, 18 * s, 0, ""},
			// 3*(10-e)/10 + 1 < 3 for e > 10/3.
			{13, 0, 333333334 * time.Nanosecond, 17 * s, 0, ReasonEstimate},
		}},
		{TokenBucket, []want{
			{0, 2, 0, 5 * s, 0, ""}, {0, 1, 0, 10 * s, 0, ""}, {0, 0, 0, 15 * s, 0, ""},
			{0, 0, 5 * s, 15 * s, 0, ReasonNoTokens}, {5, 0, 0, 15 * s, 0, ""}, {6, 0, 4 * s, 14 * s, 0, ReasonNoTokens},
		}},
		{LeakyBucket, []want{
			{0, 2, 0, 5 * s, 0, ""}, {0, 1, 0, 10 * s, 0, ""}, {0, 0, 0, 15 * s, 0, ""},
			{0, 0, 5 * s, 15 * s, 0, ReasonOverflow}, {5, 0, 0, 15 * s, 0, ""}, {6, 0, 4 * s, 14 * s, 0, ReasonOverflow},
		}},
		{GCRA, []want{
			{0, 2, 0, 5 * s, 0, ""}, {0, 1, 0, 10 * s, 0, ""}, {0, 0, 0, 15 * s, 0, ""},
			{0, 0, 5 * s, 15 * s, 0, ReasonTooEarly}, {5, 0, 0, 15 * s, 0, ""}, {6, 0, 4 * s, 14 * s, 0, ReasonTooEarly},
		}},
		{LeakyQueue, []want{
			{0, 2, 0, 5 * s, 0, ""}, {0, 1, 0, 10 * s, 5 * s, ""}, {0, 0, 0, 15 * s, 10 * s, ""},
			{0, 0, 5 * s, 15 * s, 0, ReasonQueueFull}, {5, 0, 0, 15 * s, 10 * s, ""}, {6, 0, 4 * s, 14 * s, 0, ReasonQueueFull},
		}},
	}
	for _, tt := range tests {
		tab, _ := NewTable(tt.alg, seedPolicy)
		for i, w := range tt.want {
			d := tab.Allow(0, w.t*sec, 1)
			want := Decision{Allowed: w.reason == "", Remaining: w.remaining, RetryAfter: w.retry, ResetAfter: w.reset, Delay: w.delay, Reason: w.reason}
			if d != want {
				t.Errorf("%s step %d: Allow(%d) = %+v, want %+v", tt.alg, i, w.t, d, want)
			}
		}
	}
}

// TestBoundaryBurst is the seed's boundary example: 7, 8, 9 and 10, 11, 12.
func TestBoundaryBurst(t *testing.T) {
	want := map[Algorithm]string{
		FixedWindow:    "111111",
		SlidingLog:     "111000",
		SlidingCounter: "111010", // at 11 the estimate is 3*0.9 = 2.7
	}
	for alg, w := range want {
		tab, _ := NewTable(alg, seedPolicy)
		var got strings.Builder
		for _, ts := range []int64{7, 8, 9, 10, 11, 12} {
			if tab.Allow(0, ts*sec, 1).Allowed {
				got.WriteByte('1')
			} else {
				got.WriteByte('0')
			}
		}
		if got.String() != w {
			t.Errorf("%s: %s, want %s", alg, got.String(), w)
		}
	}
}

// TestFloorDivision: t = -1 and t = 1 fall in two windows.
func TestFloorDivision(t *testing.T) {
	p := Policy{Limit: 1, Window: 10 * time.Second}
	for _, alg := range []Algorithm{FixedWindow, SlidingCounter} {
		tab, _ := NewTable(alg, p)
		d1, text := tab.AllowExplain(0, -1*sec, 1, time.Second, nil)
		d2 := tab.Allow(0, 1*sec, 1)
		if !d1.Allowed || !d2.Allowed && alg == FixedWindow {
			t.Errorf("%s: -1 then 1: %v %v", alg, d1.Allowed, d2.Allowed)
		}
		if alg == FixedWindow && string(text) != "window [-10,0) count 1" {
			t.Errorf("state %q", text)
		}
	}
}

// TestExactRefill: ten refills of 0.1 token make one token.
func TestExactRefill(t *testing.T) {
	r, err := ParseRate("0.1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range []Algorithm{TokenBucket, LeakyBucket, GCRA, LeakyQueue} {
		tab, _ := NewTable(alg, Policy{Capacity: 1, Rate: r})
		if !tab.Allow(0, 0, 1).Allowed {
			t.Fatalf("%s: first request refused", alg)
		}
		for i := int64(1); i < 10; i++ {
			if d := tab.Allow(0, i*sec, 1); d.Allowed {
				t.Fatalf("%s: allowed at %ds with less than a token", alg, i)
			}
		}
		if d := tab.Allow(0, 10*sec, 1); !d.Allowed {
			t.Errorf("%s: ten refills of 0.1 did not make a token: %+v", alg, d)
		}
	}
}

// TestLeakyQueueDelays: C requests at once get delays 0, 1/r, ..., (C-1)/r
// and the next is refused.
func TestLeakyQueueDelays(t *testing.T) {
	for _, c := range []int64{1, 2, 5} {
		for _, rate := range []string{"0.2", "3", "1/3"} {
			r, _ := ParseRate(rate, time.Second)
			tab, _ := NewTable(LeakyQueue, Policy{Capacity: c, Rate: r})
			for i := int64(0); i < c; i++ {
				d := tab.Allow(0, 7*sec, 1)
				want := time.Duration((i*int64(r.Per) + r.N - 1) / r.N) // small numbers: no overflow
				if !d.Allowed || d.Delay != want {
					t.Errorf("C=%d rate %s: request %d: %+v, want delay %v", c, rate, i, d, want)
				}
			}
			if d := tab.Allow(0, 7*sec, 1); d.Allowed || d.Reason != ReasonQueueFull {
				t.Errorf("C=%d rate %s: request %d: %+v, want queue full", c, rate, c, d)
			}
		}
	}
}

func TestCostAndClock(t *testing.T) {
	for _, alg := range AllAlgorithms() {
		tab, _ := NewTable(alg, seedPolicy)
		if d := tab.Allow(0, 100*sec, 4); d.Allowed || d.Reason != ReasonCost || d.RetryAfter != InfDuration || d.Remaining != 3 {
			t.Errorf("%s: cost 4 > 3: %+v", alg, d)
		}
		if d := tab.Allow(0, 100*sec, 0); d.Allowed || d.Reason != ReasonBadCost {
			t.Errorf("%s: cost 0: %+v", alg, d)
		}
		if d := tab.Allow(0, 100*sec, 2); !d.Allowed || d.Remaining != 1 {
			t.Errorf("%s: cost 2: %+v", alg, d)
		}
		// Far enough back to be in an earlier window for every algorithm.
		d := tab.Allow(0, 80*sec, 1)
		if d.Allowed || d.Reason != ReasonClock {
			t.Errorf("%s: backwards: %+v", alg, d)
		}
		if d.RetryAfter < 20*time.Second {
			t.Errorf("%s: backwards retry after %v, want at least 20s", alg, d.RetryAfter)
		}
		clamp := seedPolicy
		clamp.Clock = ClockClamp
		tab, _ = NewTable(alg, clamp)
		tab.Allow(0, 100*sec, 1)
		if d := tab.Allow(0, 80*sec, 1); !d.Allowed {
			t.Errorf("%s: clamped: %+v", alg, d)
		}
	}
}
