package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// Tests of what the report says around the decisions: bursts, forgetting,
// keys and time order.

// TestEmptyKeyForgotten replays a key that is the empty string, followed
// by enough other keys that it is forgotten as idle. Its worst interval
// must keep its own (empty) name, not crash or take the name of the key
// that reuses its id.
func TestEmptyKeyForgotten(t *testing.T) {
	events := []event{{user: "", time: 0, cost: 1}, {user: "", time: 0, cost: 1}, {user: "", time: 0, cost: 1}}
	for n := range 3000 {
		events = append(events, event{user: "e" + strconv.Itoa(n), time: int64(n+1) * 100 * int64(time.Millisecond), cost: 1})
	}
	for _, workers := range []int{1, 2} {
		keep := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Workers: workers, KeepKeys: true, Top: 3}
		forget := keep
		forget.KeepKeys, forget.sweepAt = false, 64
		_, _, want := collect(t, events, keep)
		_, _, got := collect(t, events, forget)
		if got.KeysHeld >= got.Keys {
			t.Errorf("%d workers: held %d keys of %d: none forgotten", workers, got.KeysHeld, got.Keys)
		}
		got.KeysHeld = want.KeysHeld
		if diff := quickDiff(want, got); diff != "" {
			t.Errorf("%d workers: report (-kept +forgetting):\n%s", workers, diff)
		}
		for _, s := range got.Algos {
			if s.Burst.Key != "" || s.Burst.Count != 3 {
				t.Errorf("%d workers, %v: worst interval %+v, want 3 for the empty key", workers, s.Algorithm, s.Burst)
			}
		}
	}
}

// TestBurstOwnTimes checks that each algorithm's burst counts the requests
// it allowed at their own times, whatever the order they came in and
// whatever other algorithms run beside it.
func TestBurstOwnTimes(t *testing.T) {
	sec := int64(time.Second)
	ms := int64(time.Millisecond)
	// A fixed window admits 0 and 0.5 after 9: they are in its window
	// [0,10). The worst second holds 0 and 0.5, not three requests "at 9".
	events := []event{{"u", 9 * sec, 1}, {"u", 0, 1}, {"u", 500 * ms, 1}}
	for _, algos := range [][]limiters.Algorithm{
		{limiters.FixedWindow},
		{limiters.FixedWindow, limiters.TokenBucket},
		{limiters.TokenBucket, limiters.SlidingLog, limiters.FixedWindow},
	} {
		cfg := Config{Algorithms: algos, Policy: seedPolicy, Interval: time.Second}
		_, _, rep := collect(t, events, cfg)
		fw := rep.Algos[slices.Index(algos, limiters.FixedWindow)]
		if want := (Interval{Algorithm: limiters.FixedWindow, Name: "fixed-window", Key: "u", From: 0, To: 500 * ms, Count: 2}); fw.Burst != want {
			t.Errorf("%v: fixed-window burst %+v, want %+v", algos, fw.Burst, want)
		}
	}
	// Costs 1 at 1, 2 at 8 and 1 at 2 under 2 per 10s: the fixed window
	// admits 1, refuses 8 (a count of 3) and admits 2, which is still in
	// its window. Its worst 2s holds 1 and 2, with or without a token
	// bucket beside it.
	policy := seedPolicy
	policy.Limit, policy.Capacity = 2, 2
	events = []event{{"u", 1 * sec, 1}, {"u", 8 * sec, 2}, {"u", 2 * sec, 1}}
	for _, algos := range [][]limiters.Algorithm{
		{limiters.FixedWindow},
		{limiters.FixedWindow, limiters.TokenBucket},
	} {
		cfg := Config{Algorithms: algos, Policy: policy, Interval: 2 * time.Second}
		_, _, rep := collect(t, events, cfg)
		if got := rep.Algos[0].Burst.Count; got != 2 {
			t.Errorf("%v: fixed-window burst %d, want 2", algos, got)
		}
	}
}

// TestTopWithForgotten checks that forgetting keys never changes the top
// list: here key "a" lives twice, each life with the worst interval of
// the trace, and must not push key "b" out of a top two.
func TestTopWithForgotten(t *testing.T) {
	sec := int64(time.Second)
	var events []event
	add := func(user string, at int64, n int) {
		for range n {
			events = append(events, event{user: user, time: at, cost: 1})
		}
	}
	add("a", 0, 3)
	add("b", 0, 2)
	// Many one-request keys, each retired with a worst interval of 1.
	for i := range 400 {
		add("k"+strconv.Itoa(i), sec+int64(i)*sec, 1)
	}
	add("a", 500*sec, 3)
	for i := range 400 {
		add("m"+strconv.Itoa(i), 501*sec+int64(i)*sec, 1)
	}
	keep := Config{Algorithms: []limiters.Algorithm{limiters.SlidingLog}, Policy: seedPolicy, Workers: 1, KeepKeys: true, Top: 2}
	forget := keep
	forget.KeepKeys, forget.sweepAt = false, 16
	_, _, want := collect(t, events, keep)
	_, _, got := collect(t, events, forget)
	var keys []string
	for _, iv := range got.Top {
		keys = append(keys, iv.Key+":"+strconv.FormatInt(iv.Count, 10))
	}
	if strings.Join(keys, " ") != "a:3 b:2" {
		t.Errorf("top two: %v, want a:3 b:2", keys)
	}
	if diff := quickDiff(want.Top, got.Top); diff != "" {
		t.Errorf("top (-kept +forgetting):\n%s", diff)
	}
}

// TestCompositeKeysDistinct checks that key fields joined into one key
// cannot collide: ("a:b", "c") and ("a", "b:c") are two keys.
func TestCompositeKeysDistinct(t *testing.T) {
	trace := "user,timestamp,x,y\nu,0,a:b,c\nu,0,a,b:c\nu,0,a\\,:c\n"
	r, err := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := seedPolicy
	p.Limit, p.Capacity = 1, 1
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.FixedWindow}, Policy: p, KeyFields: []string{"x", "y"}, Rows: true}
	var keys []string
	rep, err := Run(r, cfg, func(b *Batch) error {
		for i, rq := range b.Requests {
			keys = append(keys, string(rq.Key))
			if !b.Allowed(i, 0) {
				t.Errorf("request %d (key %q) refused: it is the only one of its key", i, rq.Key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`[a:b]:c`, `a:[b:c]`, `a\:[:c]`}
	if diff := quickDiff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if rep.Keys != 3 {
		t.Errorf("%d keys, want 3", rep.Keys)
	}
}

// TestClockBackwardsCounted checks that a newest-first trace is counted as
// going back in time, request by request, and the first one named.
func TestClockBackwardsCounted(t *testing.T) {
	var events []event
	for i := range 100 {
		events = append(events, event{user: "u", time: int64(100-i) * int64(time.Second), cost: 1})
	}
	events = append(events, event{user: "v", time: 0, cost: 1}) // another key: not back in time
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy}
	_, _, rep := collect(t, events, cfg)
	if rep.ClockBackwards != 99 {
		t.Errorf("clock went backwards %d times, want 99", rep.ClockBackwards)
	}
	if f := rep.FirstBackwards; f == nil || f.Line != 3 || f.Key != "u" || f.TimeText != "99" {
		t.Errorf("first backwards %+v, want line 3, key u, time 99", f)
	}
	_, _, rep = collect(t, secs("u", 1, 2, 2, 3), cfg)
	if rep.ClockBackwards != 0 || rep.FirstBackwards != nil {
		t.Errorf("in-order trace: %d backwards, first %+v", rep.ClockBackwards, rep.FirstBackwards)
	}
}

// TestQueueBurstAtRelease checks that the queue form's burst is measured
// when its requests leave the queue: three at once, with capacity 3 and a
// rate of 0.3/s, leave 3⅓s apart, so no second holds more than one.
func TestQueueBurstAtRelease(t *testing.T) {
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.TokenBucket, limiters.LeakyQueue}, Policy: seedPolicy, Interval: time.Second}
	for _, detail := range []bool{true, false} {
		var rep *Report
		if detail {
			_, _, rep = collect(t, secs("u", 0, 0, 0), cfg)
		} else {
			_, rep = collectAllowed(t, secs("u", 0, 0, 0), cfg)
		}
		if tb := rep.Algos[0].Burst; tb.Count != 3 {
			t.Errorf("detail %v: token-bucket burst %+v, want 3", detail, tb)
		}
		if q := rep.Algos[1].Burst; q.Count != 1 || q.From != 0 || q.To != 0 {
			t.Errorf("detail %v: leaky-queue burst %+v, want 1 at 0", detail, q)
		}
	}
	// With a 10s interval, all three leave within it: 0, 3.33, 6.67.
	cfg.Interval = 10 * time.Second
	_, _, rep := collect(t, secs("u", 0, 0, 0), cfg)
	if q := rep.Algos[1].Burst; q.Count != 3 || q.To != 6666666667 {
		t.Errorf("leaky-queue burst over 10s %+v, want 3 to 6.666666667", q)
	}
}

// TestHugeCosts checks that limits and costs up to the largest int64 are
// replayed, and that an interval whose cost overflows stops the run with
// an error naming the line rather than wrapping around.
func TestHugeCosts(t *testing.T) {
	p := limiters.Policy{Limit: math.MaxInt64, Window: 10 * time.Second, Capacity: math.MaxInt64, Rate: limiters.Rate{N: math.MaxInt64, Per: time.Second}}
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.SlidingLog, limiters.TokenBucket}, Policy: p}
	events := []event{{"u", 0, math.MaxInt64}}
	_, _, rep := collect(t, events, cfg)
	for _, s := range rep.Algos {
		if s.Burst.Count != math.MaxInt64 {
			t.Errorf("%v: burst %d, want MaxInt64", s.Algorithm, s.Burst.Count)
		}
	}
	// The token bucket refills MaxInt64 tokens a second: a second request
	// a second later passes, and the interval's cost no longer fits.
	events = append(events, event{"u", int64(time.Second), math.MaxInt64})
	cfg.Algorithms = []limiters.Algorithm{limiters.TokenBucket}
	cfg.Rows = true
	_, err := Run(&sliceSource{events: events}, cfg, func(*Batch) error { return nil })
	var pe *traces.ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), "token-bucket allowed this key more than 9223372036854775807 units of cost within one burst interval") {
		t.Errorf("overflowing interval: error %v, want one at line 3", err)
	}
}

// TestManyLanes replays 24 limiters in one run, several of one algorithm
// under different policies and several alike, and checks every decision
// and figure against each limiter replayed on its own.
func TestManyLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var lanes []Lane
	for i, a := range limiters.AllAlgorithms() {
		for j := range 3 {
			p := seedPolicy
			p.Limit, p.Window = int64(2+j), time.Duration(5+5*j)*time.Second
			p.Capacity, p.Rate = int64(1+2*j), limiters.Rate{N: int64(1 + j), Per: 3 * time.Second}
			if i%2 == 1 && j == 2 {
				p = seedPolicy // the same as another lane of its kind
			}
			lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, j), Algorithm: a, Policy: p})
		}
	}
	lanes = append(lanes, Lane{Name: "tb-again", Algorithm: limiters.TokenBucket, Policy: seedPolicy}, Lane{Name: "lb", Algorithm: limiters.LeakyBucket, Policy: seedPolicy}, Lane{Name: "gcra", Algorithm: limiters.GCRA, Policy: seedPolicy})
	if len(lanes) < 24 {
		t.Fatalf("%d lanes", len(lanes))
	}
	for trial := range 3 {
		events := randomTrace(rng, 3000, 1+trial*20, trial > 0)
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial%2, Top: 4 * trial}
		decisions, oracle, rep := collect(t, events, cfg)
		want := reference(t, events, cfg)
		if diff := quickDiff(want.decisions, decisions); diff != "" {
			t.Fatalf("trial %d: decisions (-reference +sim):\n%s", trial, diff)
		}
		if diff := quickDiff(want.oracle, oracle); diff != "" {
			t.Fatalf("trial %d: oracle (-reference +sim):\n%s", trial, diff)
		}
		if diff := quickDiff(want.report, rep); diff != "" {
			t.Fatalf("trial %d: report (-reference +sim):\n%s", trial, diff)
		}
		_, lean := collectAllowed(t, events, cfg)
		if diff := quickDiff(want.report, lean); diff != "" {
			t.Fatalf("trial %d: report without Detail (-reference +sim):\n%s", trial, diff)
		}
	}
}

// TestLanesBeyondOneWord replays 150 limiters in one run, more than one
// Group and one mask word hold, including leaky queues and lanes alike
// across the words, and checks every decision and figure against the
// reference; the agreement matrix is left out past 63 lanes.
func TestLanesBeyondOneWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var lanes []Lane
	for i := range 150 {
		a := limiters.AllAlgorithms()[i%len(limiters.AllAlgorithms())]
		p := seedPolicy
		p.Limit, p.Window = int64(1+i%5), time.Duration(2+i%7)*time.Second
		p.Capacity, p.Rate = int64(1+i%6), limiters.Rate{N: int64(1 + i%3), Per: time.Duration(1+i%4) * time.Second}
		if i%40 == 39 {
			p = seedPolicy // alike lanes in different words
		}
		lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, i), Algorithm: a, Policy: p})
	}
	for trial := range 3 {
		events := randomTrace(rng, 2000, 1+trial*15, trial > 0)
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial%2, Top: 3 * trial}
		decisions, oracle, rep := collect(t, events, cfg)
		want := reference(t, events, cfg)
		want.report.Agree = nil
		if rep.Agree != nil {
			t.Fatalf("trial %d: an agreement matrix for %d lanes", trial, len(lanes))
		}
		if diff := quickDiff(want.decisions, decisions); diff != "" {
			t.Fatalf("trial %d: decisions (-reference +sim):\n%s", trial, diff)
		}
		if diff := quickDiff(want.oracle, oracle); diff != "" {
			t.Fatalf("trial %d: oracle (-reference +sim):\n%s", trial, diff)
		}
		if diff := quickDiff(want.report, rep); diff != "" {
			t.Fatalf("trial %d: report (-reference +sim):\n%s", trial, diff)
		}
		allowed, lean := collectAllowed(t, events, cfg)
		if diff := quickDiff(want.report, lean); diff != "" {
			t.Fatalf("trial %d: report without Detail (-reference +sim):\n%s", trial, diff)
		}
		for a := range lanes {
			for i := range allowed[a] {
				if allowed[a][i] != want.decisions[a][i].Allowed {
					t.Fatalf("trial %d: Batch.Allowed(%d, %d) = %v", trial, i, a, allowed[a][i])
				}
			}
		}
	}
}

// TestKeyOfFields: a key of one field is the field's value as it is (an
// IPv6 address stays one); a composite key reads back, field by field,
// with a reader that knows only the rule: fields joined with ':', one
// that holds a ':' or starts with '[' in brackets, ']' and '\' in them
// escaped.
func TestKeyOfFields(t *testing.T) {
	event := func(vals ...string) *traces.Event {
		ev := &traces.Event{User: []byte("u")}
		var kv []string
		for i, v := range vals {
			kv = append(kv, fmt.Sprint("f", i), v)
		}
		ev.SetAttrs(kv...)
		return ev
	}
	fields := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprint("f", i))
		}
		return out
	}
	for _, v := range []string{"2001:db8::1", "::1", `a\b`, "[x", "", "u1"} {
		if got, missing := appendKeyOf(nil, event(v), fields(1)); string(got) != v || missing != "" {
			t.Errorf("key of the one field %q: %q", v, got)
		}
	}
	for _, c := range []struct {
		vals []string
		want string
	}{
		{[]string{"2001:db8::1", "/login"}, "[2001:db8::1]:/login"},
		{[]string{"u1", "/login"}, "u1:/login"},
		{[]string{"a]b", "[c"}, `a]b:[[c]`},
		{[]string{"x:]", `y\:`}, `[x:\]]:[y\\:]`},
		{[]string{"", ""}, ":"},
	} {
		if got, _ := appendKeyOf(nil, event(c.vals...), fields(len(c.vals))); string(got) != c.want {
			t.Errorf("key of %q: %q, want %q", c.vals, got, c.want)
		}
	}
	if _, missing := appendKeyOf(nil, event("a"), []string{"f0", "nope"}); missing != "nope" {
		t.Errorf("a missing field is named %q", missing)
	}
	// decode reads a composite key back into its fields.
	decode := func(key string) ([]string, bool) {
		var out []string
		for {
			var f strings.Builder
			if strings.HasPrefix(key, "[") {
				i := 1
				for ; i < len(key) && key[i] != ']'; i++ {
					if key[i] == '\\' {
						i++
						if i == len(key) {
							return nil, false
						}
					}
					f.WriteByte(key[i])
				}
				if i == len(key) {
					return nil, false
				}
				key = key[i+1:]
			} else {
				i := strings.IndexByte(key, ':')
				if i < 0 {
					i = len(key)
				}
				f.WriteString(key[:i])
				key = key[i:]
			}
			out = append(out, f.String())
			if key == "" {
				return out, true
			}
			if key[0] != ':' {
				return nil, false
			}
			key = key[1:]
		}
	}
	rng := rand.New(rand.NewPCG(26, 26))
	for range 20000 {
		vals := make([]string, 2+rng.IntN(3))
		for i := range vals {
			b := make([]byte, rng.IntN(4))
			for j := range b {
				b[j] = "a:[]\\"[rng.IntN(5)]
			}
			vals[i] = string(b)
		}
		key, _ := appendKeyOf(nil, event(vals...), fields(len(vals)))
		if got, ok := decode(string(key)); !ok || !slices.Equal(got, vals) {
			t.Fatalf("key %q of %q reads back as %q", key, vals, got)
		}
	}
}
