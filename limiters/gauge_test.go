package limiters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGaugeDescribed: every algorithm names the number its state stands
// for and the limit it is drawn against, its first parameter.
func TestGaugeDescribed(t *testing.T) {
	p := Policy{Limit: 7, Window: time.Second, Capacity: 9, Rate: Rate{N: 1, Per: time.Second}}
	for _, a := range AllAlgorithms() {
		g := a.Gauge()
		if g.Quantity == "" {
			t.Errorf("%s names no quantity", a)
		}
		if g.Limit != a.Params()[0] {
			t.Errorf("%s: gauge limit %q, want its first parameter %q", a, g.Limit, a.Params()[0])
		}
		want := p.Limit
		if g.Limit == "capacity" {
			want = p.Capacity
		}
		if got := a.Limit(p); got != want {
			t.Errorf("%s: Limit %d, want %d", a, got, want)
		}
	}
	if g := Algorithm(200).Gauge(); g != (Gauge{}) {
		t.Errorf("unknown algorithm: %+v", g)
	}
}

// gaugeStep is one step of an example: a request (cost > 0) or, with
// cost 0, only a reading of the gauge.
type gaugeStep struct {
	at, cost int64 // seconds, and the request's cost
	want     float64
	until    int64 // ns; 0: math.MaxInt64
}

// TestGaugeExamples follows the article's walkthroughs and the boundary
// example: the number after each request, and between requests as it
// falls (the sliding counter's estimate decays: 2.7 just before 11) or
// refills.
func TestGaugeExamples(t *testing.T) {
	s := int64(time.Second)
	window := Policy{Limit: 3, Window: 10 * time.Second}
	bucket := Policy{Capacity: 3, Rate: Rate{N: 1, Per: 5 * time.Second}}
	for _, tc := range []struct {
		alg   Algorithm
		p     Policy
		steps []gaugeStep
	}{
		{SlidingCounter, window, []gaugeStep{
			{7, 1, 1, 10 * s}, {8, 1, 2, 10 * s}, {9, 1, 3, 10 * s},
			{10, 0, 3, 20 * s}, {10, 1, 3, 20 * s}, // refused: the estimate has reached 3
			{11, 0, 2.7, 20 * s}, {11, 1, 3.7, 20 * s}, // 3 x 0.9 + 0 = 2.7 passes; then 3.7
			{12, 0, 3.4, 20 * s}, {12, 1, 3.4, 20 * s}, // 3 x 0.8 + 1 = 3.4: refused
			{20, 0, 1, 30 * s}, {25, 0, 0.5, 30 * s}, {30, 0, 0, 0},
		}},
		{FixedWindow, window, []gaugeStep{
			{7, 1, 1, 10 * s}, {8, 1, 2, 10 * s}, {9, 1, 3, 10 * s}, {10, 0, 0, 0}, {10, 1, 1, 20 * s},
		}},
		{SlidingLog, window, []gaugeStep{
			{1, 1, 1, 11*s + 1}, {3, 1, 2, 11*s + 1}, {5, 1, 3, 11*s + 1}, {8, 1, 3, 11*s + 1},
			{12, 0, 2, 13*s + 1}, {12, 1, 3, 13*s + 1}, {13, 1, 3, 13*s + 1}, // 3 sits on the window's edge
			{14, 0, 2, 15*s + 1},
		}},
		{TokenBucket, bucket, []gaugeStep{
			{0, 1, 2, 5 * s}, {0, 1, 1, 10 * s}, {0, 1, 0, 15 * s}, {0, 1, 0, 15 * s},
			{5, 1, 0, 20 * s}, {6, 0, 0.2, 20 * s}, {6, 1, 0.2, 20 * s}, {20, 0, 3, 0},
		}},
		{LeakyBucket, bucket, []gaugeStep{
			{0, 1, 1, 5 * s}, {0, 1, 2, 10 * s}, {0, 1, 3, 15 * s}, {0, 1, 3, 15 * s},
			{5, 1, 3, 20 * s}, {6, 1, 2.8, 20 * s}, {20, 0, 0, 0},
		}},
		{GCRA, bucket, []gaugeStep{
			{0, 1, 1, 5 * s}, {0, 1, 2, 10 * s}, {0, 1, 3, 15 * s}, {0, 1, 3, 15 * s}, {6, 0, 1.8, 15 * s},
		}},
		{LeakyQueue, bucket, []gaugeStep{
			{0, 1, 1, 5 * s}, {0, 1, 2, 10 * s}, {0, 1, 3, 15 * s}, {0, 1, 3, 15 * s}, {15, 0, 0, 0},
		}},
	} {
		tb, err := NewTable(tc.alg, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range tc.steps {
			if st.cost > 0 {
				tb.Allow(0, st.at*s, st.cost)
			}
			v, until := tb.Gauge(0, st.at*s)
			want := st.until
			if want == 0 {
				want = math.MaxInt64
			}
			if math.Abs(v-st.want) > 1e-12 || until != want {
				t.Errorf("%s step %d (t=%d cost %d): Gauge = %v until %d, want %v until %d", tc.alg, i, st.at, st.cost, v, until, st.want, want)
			}
		}
	}
}

// textGauge reads the number a decision's state text (AllowExplain's,
// times in nanoseconds) says for the state at at, the time the request
// was judged at: the value, the time it holds at, whether the text is of
// the state before the request rather than after it, and ok false when
// the text does not show enough to tell (a long log shortened).
type textGauge func(text string, at int64, p Policy) (v float64, when int64, pre, ok bool, err error)

// stateTextGauges holds a reading of every algorithm's state text.
var stateTextGauges = map[Algorithm]textGauge{
	FixedWindow:     windowText("count"),
	FixedWindowHits: windowText("hits"),
	SlidingLog: func(text string, at int64, p Policy) (float64, int64, bool, bool, error) {
		body, ok := strings.CutPrefix(text, "log [")
		if !ok || strings.Contains(text, "...") {
			return 0, 0, false, false, nil
		}
		body, _, _ = strings.Cut(body, "]")
		sum := 0.0
		for _, e := range strings.Fields(body) {
			ts, cost, _ := strings.Cut(e, "x")
			n, err := strconv.ParseInt(ts, 10, 64)
			if err != nil {
				return 0, 0, false, false, err
			}
			c := int64(1)
			if cost != "" {
				if c, err = strconv.ParseInt(cost, 10, 64); err != nil {
					return 0, 0, false, false, err
				}
			}
			if at-n <= int64(p.Window) {
				sum += float64(c)
			}
		}
		return sum, at, false, true, nil
	},
	SlidingCounter: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "estimate ")
		return v, at, true, true, err
	},
	BlockingCounter: func(text string, at int64, p Policy) (float64, int64, bool, bool, error) {
		if strings.Contains(text, " blocked until ") {
			return 0, at, false, false, nil // the estimate after the decision is not shown
		}
		v, err := textNumber(text, "estimate ")
		return v, at, true, true, err
	},
	TokenBucket: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "tokens ")
		return v, at, false, true, err
	},
	LeakyBucket: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "level ")
		return v, at, false, true, err
	},
	GCRA: func(text string, at int64, p Policy) (float64, int64, bool, bool, error) {
		tat, err := textNumber(text, "tat ")
		return math.Max(0, tat-float64(at)) * float64(p.Rate.N) / float64(p.Rate.Per), at, false, true, err
	},
	LeakyQueue: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "queue ")
		return v, at, false, true, err
	},
	SlidingBuckets: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "count ")
		return v, at, false, true, err
	},
	TickQueue: func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		v, err := textNumber(text, "queue ")
		if err != nil {
			return 0, 0, false, false, err
		}
		when, err := textNumber(text, " at ")
		return v, int64(when), false, true, err // the queue at its tick
	},
}

// windowText reads "window [a,b) WORD n": n while at is in [a, b), then 0.
func windowText(word string) textGauge {
	return func(text string, at int64, _ Policy) (float64, int64, bool, bool, error) {
		var from, to, n int64
		if _, err := fmt.Sscanf(text, "window [%d,%d) "+word+" %d", &from, &to, &n); err != nil {
			return 0, 0, false, false, fmt.Errorf("%q: %v", text, err)
		}
		if at < from || at >= to {
			n = 0
		}
		return float64(n), at, false, true, nil
	}
}

// textNumber reads the number after prefix in text ("~" marks a rounded
// one).
func textNumber(text, prefix string) (float64, error) {
	_, rest, ok := strings.Cut(text, prefix)
	if !ok {
		return 0, fmt.Errorf("no %q in %q", prefix, text)
	}
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	return strconv.ParseFloat(strings.TrimPrefix(rest, "~"), 64)
}

// near reports whether a and b agree as far as float64 and a state text's
// decimals (exact to nine digits, or rounded to three and marked) allow.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))+1e-6
}

// TestGaugeMatchesState checks, on random traces for every algorithm,
// that the gauge after each request is the number its state text says
// (before it, for a text of the state the request was judged by), and
// that Remaining is the whole part of what the gauge leaves of the limit:
// within 1 of limit-used, never below 0.
func TestGaugeMatchesState(t *testing.T) {
	for _, a := range AllAlgorithms() {
		if stateTextGauges[a] == nil {
			t.Errorf("no reading of %s's state text for its gauge", a)
		}
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 60; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 80, tick, 4, true)
		for _, a := range AllAlgorithms() {
			read := stateTextGauges[a]
			if read == nil {
				continue
			}
			tb, err := NewTable(a, p)
			if err != nil {
				t.Fatal(err)
			}
			g := a.Gauge()
			limit := float64(a.Limit(p))
			for i, rq := range trace {
				at := tb.DecidedAt(0, rq.t)
				before, _ := tb.Gauge(0, at)
				d, text := tb.AllowExplain(0, rq.t, rq.cost, time.Nanosecond, nil)
				after, _ := tb.Gauge(0, at)
				where := fmt.Sprintf("%s %+v request %d (t=%d cost %d, judged at %d) %q -> %+v", a, p, i, rq.t, rq.cost, at, text, d)
				used := after
				if g.Left {
					used = limit - after
				}
				if free := math.Max(0, limit-used); d.Remaining < 0 || math.Abs(float64(d.Remaining)-free) >= 1+1e-9 || free == 0 && d.Remaining != 0 {
					t.Fatalf("%s: remaining %d, but the gauge %v leaves %v of %v", where, d.Remaining, after, free, limit)
				}
				if d.Reason == ReasonCost {
					continue // judged by its cost alone: the text is the state as it stood
				}
				v, when, pre, ok, err := read(string(text), at, p)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if !ok {
					continue
				}
				got := after
				switch {
				case pre:
					got = before
				case when != at:
					got, _ = tb.Gauge(0, when)
				}
				// A "~" number is rounded to three digits (a time in ns: GCRA's
				// debt in tokens is off by as much times the rate per ns).
				rounded := 5e-4 * math.Max(1, float64(p.Rate.N)/float64(p.Rate.Per))
				if !near(got, v) && !(strings.Contains(string(text), "~") && math.Abs(got-v) <= rounded+1e-9) {

					t.Fatalf("%s: gauge %v (before %v, after %v), the text says %v", where, got, before, after, v)
				}
			}
		}
	}
}

// TestGaugeChangesNothing: reading the gauge at any time, earlier than the
// state's too, between requests changes no decision and no state text.
func TestGaugeChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 100; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 80, tick, 4, true)
		for _, a := range AllAlgorithms() {
			plain, _ := NewTable(a, p)
			read, err := NewTable(a, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, rq := range trace {
				for range rng.IntN(3) {
					read.Gauge(0, rq.t+(rng.Int64N(40)-20)*tick)
				}
				d1, t1 := plain.AllowExplain(0, rq.t, rq.cost, time.Nanosecond, nil)
				d2, t2 := read.AllowExplain(0, rq.t, rq.cost, time.Nanosecond, nil)
				if d1 != d2 || string(t1) != string(t2) {
					t.Fatalf("%s %+v request %d: %+v %q without reading the gauge, %+v %q with", a, p, i, d1, t1, d2, t2)
				}
			}
		}
	}
}

// TestGaugeLinearUntil: between two requests the gauge moves on straight
// lines, each up to the time Gauge says it stops, that time is the same
// read from anywhere on the line, and the number never turns back.
func TestGaugeLinearUntil(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for trial := 0; trial < 80; trial++ {
		tick := ticks[rng.IntN(len(ticks))]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 40, tick, 4, false)
		for _, a := range AllAlgorithms() {
			tb, err := NewTable(a, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, rq := range trace {
				tb.Allow(0, rq.t, rq.cost)
				end := rq.t + 30*tick // past the next request too: the state as the request left it
				if i+1 < len(trace) {
					end = max(end, trace[i+1].t)
				}
				checkGaugeLines(t, tb, rng, rq.t, end, fmt.Sprintf("%s %+v after request %d (t=%d)", a, p, i, rq.t))
			}
		}
	}
}

// checkGaugeLines walks tb's gauge for key 0 from from to to.
func checkGaugeLines(t *testing.T, tb *Table, rng *rand.Rand, from, to int64, where string) {
	t.Helper()
	dir := 0 // the direction the number has moved in: -1, 0 or 1
	move := func(a, b float64) {
		if near(a, b) {
			return
		}
		d := 1
		if b < a {
			d = -1
		}
		if dir != 0 && d != dir {
			t.Fatalf("%s: the gauge turns back at %v -> %v", where, a, b)
		}
		dir = d
	}
	c := from
	for pieces := 0; c < to; pieces++ {
		if pieces > 10000 {
			t.Fatalf("%s: more than 10000 lines before %d", where, to)
		}
		v, until := tb.Gauge(0, c)
		if until <= c {
			t.Fatalf("%s: Gauge(%d) stops being linear at %d, not after it", where, c, until)
		}
		last := min(until-1, to)
		vl, ul := tb.Gauge(0, last)
		if ul != until {
			t.Fatalf("%s: Gauge(%d) says the line ends at %d, Gauge(%d) at %d", where, c, until, last, ul)
		}
		for range 4 {
			if last <= c {
				break
			}
			s := c + rng.Int64N(last-c)
			vs, us := tb.Gauge(0, s)
			want := v + (vl-v)*float64(s-c)/float64(last-c)
			if !near(vs, want) || us != until {
				t.Fatalf("%s: Gauge(%d) = %v until %d, want %v on the line from (%d, %v) to (%d, %v) until %d", where, s, vs, us, want, c, v, last, vl, until)
			}
		}
		move(v, vl)
		if until > to {
			break
		}
		vu, _ := tb.Gauge(0, until)
		move(vl, vu)
		c = until
	}
}
