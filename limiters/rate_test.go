package limiters

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		unit time.Duration
		want Rate
		fmt  string
	}{
		{"0.2", time.Second, Rate{1, 5 * time.Second}, "0.2"},
		{"1/5", time.Second, Rate{1, 5 * time.Second}, "0.2"},
		{"3/10s", time.Second, Rate{3, 10 * time.Second}, "0.3"},
		{"300/1m", time.Second, Rate{1, 200 * time.Millisecond}, "5"},
		{"2.5/1ms", time.Second, Rate{1, 400 * time.Microsecond}, "2500"},
		{"1/3", time.Second, Rate{1, 3 * time.Second}, "1/3"},
		{"0.1", time.Second, Rate{1, 10 * time.Second}, "0.1"},
		{"1/2.5", time.Second, Rate{1, 2500 * time.Millisecond}, "0.4"},
		{"3", time.Millisecond, Rate{3, time.Millisecond}, "3"},
		{" 0.125 ", 0, Rate{1, 8 * time.Second}, "0.125"},
		{"2/3", time.Nanosecond, Rate{2, 3}, "2/3"},
		{"0.000000001", time.Second, Rate{1, time.Second * 1_000_000_000}, "0.000000001"},
		{"7/1h", time.Minute, Rate{7, time.Hour}, "7/60"},
		// Exponents, as timestamps and durations take them.
		{"1e3", time.Second, Rate{1, time.Millisecond}, "1000"},
		{"2.5e-1", time.Second, Rate{1, 4 * time.Second}, "0.25"},
		{"1E+2/1e1", time.Second, Rate{1, 100 * time.Millisecond}, "10"},
		{"3/1.5e1", time.Second, Rate{1, 5 * time.Second}, "0.2"},
		// Periods are read exactly, past what time.ParseDuration holds.
		{"1000/1000000000000s", time.Second, Rate{1, time.Second * 1_000_000_000}, "0.000000001"},
		{"1/1.5ns", time.Nanosecond, Rate{2, 3}, "2/3"},
		{"3/1h30m", time.Second, Rate{1, 30 * time.Minute}, "1/1800"},
		{"1/5µs", time.Second, Rate{1, 5 * time.Microsecond}, "200000"},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in, tt.unit)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q, %v) = %v, %v; want %v", tt.in, tt.unit, got, err, tt.want)
			continue
		}
		if f := got.Format(tt.unit); f != tt.fmt {
			t.Errorf("ParseRate(%q).Format(%v) = %q, want %q", tt.in, tt.unit, f, tt.fmt)
		}
		back, err := ParseRate(got.Format(tt.unit), tt.unit)
		if err != nil || back != got {
			t.Errorf("ParseRate(Format(%v)) = %v, %v", got, back, err)
		}
	}
}

func TestParseRateErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"0", "must be positive"},
		{"0.0", "must be positive"},
		{"-1", "must be positive"},
		{"NaN", "not a finite number"},
		{"Inf", "not a finite number"},
		{"-inf", "not a finite number"},
		{"1e", "not a decimal number"},
		{"e3", "not a decimal number"},
		{"1e+", "not a decimal number"},
		{"1e5000", "out of range"},
		{"1e-5000", "out of range"},
		{"1/1e3s", "bad period"},
		{"1/1..5s", "bad period"},
		{"1/0.0s", "period must be positive"},
		{"abc", "not a decimal number"},
		{"", "empty number"},
		{".", "not a decimal number"},
		{"1/0", "must be positive"},
		{"1/0s", "period must be positive"},
		{"1/-5s", "period must be positive"},
		{"1/5x", "bad period"},
		{"1/", "empty number"},
		{"1/2/3", "not a decimal number"},
		{"99999999999999999999", "too many digits"}, // 20 significant digits; at most 19
		{"99999999999999999999e-1", "too many digits"},
		{"1000000000000000000000000000000", "out of range"}, // 1e30: many digits, one significant
		{"1/99999999999s", "out of range"},
		{"1/1000000000000s", "out of range"},
		{"1/9999999999999999999", "out of range"},
		{strings.Repeat("9", 80), "too many digits"},
	}
	for _, tt := range tests {
		_, err := ParseRate(tt.in, time.Second)
		if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "limiters: bad rate") {
			t.Errorf("ParseRate(%q) error %v, want %q", tt.in, err, tt.msg)
		}
	}
}

// TestParsePeriodMatchesTime: a period with a unit means what
// time.ParseDuration says it means, wherever that is a whole number of
// nanoseconds.
func TestParsePeriodMatchesTime(t *testing.T) {
	for _, s := range []string{"1ns", "10s", "1m30s", "1.5h", ".5m", "5.s", "2h45m10.5s", "1us", "3µs", "3μs", "250ms", "+7s", "010s", "2562047h47m16.854775807s"} {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("time.ParseDuration(%q): %v", s, err)
		}
		r, err := ParseRate("1/"+s, time.Second)
		if err != nil || r != (Rate{1, d}) {
			t.Errorf("ParseRate(%q) = %v, %v; want 1 per %v", "1/"+s, r, err, d)
		}
	}
}

func TestRateFormatInvalid(t *testing.T) {
	if got := (Rate{}).Format(time.Second); got != "0/0ns" {
		t.Errorf("zero rate formats as %q", got)
	}
	if got := (Rate{1, time.Second}).Format(0); got != "1" {
		t.Errorf("unit 0 formats as %q", got)
	}
}

func TestValidate(t *testing.T) {
	good := Policy{Limit: 3, Window: time.Second, Capacity: 3, Rate: Rate{1, time.Second}}
	tests := []struct {
		alg Algorithm
		p   func(*Policy)
		msg string
	}{
		{FixedWindow, func(p *Policy) { p.Limit = 0 }, "limiters: limit must be positive, got 0"},
		{SlidingLog, func(p *Policy) { p.Window = -1 }, "limiters: window must be positive, got -1ns"},
		{TokenBucket, func(p *Policy) { p.Capacity = -3 }, "limiters: capacity must be positive, got -3"},
		{LeakyBucket, func(p *Policy) { p.Rate.N = 0 }, "limiters: rate must be positive"},
		{GCRA, func(p *Policy) { p.Rate.Per = 0 }, "limiters: rate period must be positive"},
		{LeakyQueue, func(p *Policy) { p.Capacity = 1 << 62; p.Rate = Rate{1, time.Hour} }, "takes longer than 2^63ns"},
		{GCRA, func(p *Policy) { p.Capacity = 1 << 40; p.Rate = Rate{1, time.Hour} }, "takes longer than 2^63ns"},
		{FixedWindow, func(p *Policy) { p.Clock = 7 }, "unknown clock mode"},
		{TickQueue, func(p *Policy) { p.Parts = -1 }, "limiters: parts must be positive, got -1"},
		{TickQueue, func(p *Policy) { p.Delay = -1 }, "limiters: delay must not be negative, got -1"},
		{TickQueue, func(p *Policy) { p.Tick = -1 }, "limiters: tick must be positive, got -1ns"},
		{TickQueue, func(p *Policy) { p.Capacity = 1 << 60 }, "does not fit 62 bits"},
		{TickQueue, func(p *Policy) { p.Rate = Rate{1 << 62, 1}; p.Tick = time.Hour }, "does not reduce to numbers below 2^63"},
		{Algorithm(99), func(p *Policy) {}, "unknown algorithm"},
	}
	for _, tt := range tests {
		p := good
		tt.p(&p)
		err := p.Validate(tt.alg)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: Validate = %v, want %q", tt.alg, err, tt.msg)
		}
		if _, err := NewTable(tt.alg, p); err == nil {
			t.Errorf("%s: NewTable accepted %+v", tt.alg, p)
		}
		if _, err := NewKeyed(tt.alg, p); err == nil {
			t.Errorf("%s: NewKeyed accepted %+v", tt.alg, p)
		}
	}
	for _, a := range AllAlgorithms() {
		if err := good.Validate(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
		// Parameters of the other family are not checked.
		p := good
		if a.Windowed() {
			p.Capacity, p.Rate = 0, Rate{}
		} else {
			p.Limit, p.Window = 0, 0
		}
		if err := p.Validate(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestAlgorithms(t *testing.T) {
	for _, a := range AllAlgorithms() {
		b, err := ParseAlgorithm(a.String())
		if err != nil || b != a {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", a.String(), b, err)
		}
		if a.Summary() == "" {
			t.Errorf("%s: no summary", a)
		}
	}
	// The list of valid names is every algorithm's, in the table's order.
	var names []string
	for _, a := range AllAlgorithms() {
		names = append(names, a.String())
	}
	_, err := ParseAlgorithm("x")
	if err == nil || err.Error() != `limiters: unknown algorithm "x" (valid: `+strings.Join(names, ", ")+`)` {
		t.Errorf("ParseAlgorithm(x): %v", err)
	}
	if Algorithm(42).String() != "Algorithm(42)" || Algorithm(42).Summary() != "" {
		t.Error("unknown algorithm names")
	}
	// The article's five come first; every constant of the table is in
	// AllAlgorithms or, a library kind, in LibraryAlgorithms, once, in
	// order, and none after the last has a name.
	all, lib := AllAlgorithms(), LibraryAlgorithms()
	if len(ClassicAlgorithms()) != 5 || !slices.Equal(all[:5], ClassicAlgorithms()) {
		t.Errorf("ClassicAlgorithms %v are not the first five of %v", ClassicAlgorithms(), all)
	}
	every := slices.Concat(all, lib)
	slices.Sort(every)
	if len(every) != int(numAlgorithms) || Algorithm(len(every)).String() != fmt.Sprintf("Algorithm(%d)", len(every)) {
		t.Errorf("AllAlgorithms and LibraryAlgorithms: %d of %d, or a named algorithm after them", len(every), numAlgorithms)
	}
	for i, a := range every {
		if a != Algorithm(i) {
			t.Errorf("algorithm %d: %v", i, a)
		}
	}
	if !slices.IsSorted(all) || !slices.IsSorted(lib) {
		t.Errorf("AllAlgorithms %v or LibraryAlgorithms %v out of order", all, lib)
	}
	for _, a := range all {
		if a.Library() {
			t.Errorf("%s: a library kind in AllAlgorithms", a)
		}
	}
	for _, a := range lib {
		if !a.Library() {
			t.Errorf("%s: in LibraryAlgorithms, not a library kind", a)
		}
	}
	if !SlidingCounter.Windowed() || GCRA.Windowed() {
		t.Error("Windowed")
	}
	if TokenBucket.Refusal() != ReasonNoTokens || SlidingBuckets.Refusal() != ReasonBuckets || Algorithm(42).Refusal() != ReasonNone {
		t.Error("Refusal")
	}
}

// TestStepRuleMismatch: a state's Step with a rule for another algorithm,
// or a nil rule, refuses instead of panicking.
func TestStepRuleMismatch(t *testing.T) {
	r, _ := NewRule(TokenBucket, seedPolicy)
	want := Decision{Reason: ReasonBadRule}
	var ds []Decision
	_, d := FixedWindowState{}.Step(r, 0, 1)
	ds = append(ds, d)
	_, d = SlidingLogState{}.Step(r, 0, 1)
	ds = append(ds, d)
	_, d = SlidingCounterState{}.Step(nil, 0, 1)
	ds = append(ds, d)
	_, d = TokenBucketState{}.Step(&Rule{}, 0, 1)
	ds = append(ds, d)
	_, d = LeakyBucketState{}.Step(r, 0, 1)
	ds = append(ds, d)
	_, d = GCRAState{}.Step(r, 0, 1)
	ds = append(ds, d)
	_, d = LeakyQueueState{}.Step(r, 0, 1)
	ds = append(ds, d)
	for i, d := range ds {
		if d != want {
			t.Errorf("%d: %+v", i, d)
		}
	}
	if r.Algorithm() != TokenBucket || r.Policy() != seedPolicy {
		t.Error("rule accessors")
	}
}

func TestStateTexts(t *testing.T) {
	tests := []struct {
		alg   Algorithm
		p     Policy
		unit  time.Duration
		reqs  [][2]int64 // ns, cost
		state string
	}{
		{SlidingLog, Policy{Limit: 100, Window: time.Hour}, time.Second,
			[][2]int64{{1e9, 1}, {2e9, 2}, {3e9, 1}, {4e9, 1}, {5e9, 1}, {6e9, 1}, {7e9, 1}, {8e9, 3}},
			"log [1 2x2 3 ... 6 7 8x3] (8 entries)"},
		{SlidingLog, Policy{Limit: 5, Window: time.Hour}, time.Millisecond,
			[][2]int64{{1500000, 1}, {1500000, 1}, {-2, 1}}, "log [1.5x2]"},
		{FixedWindow, Policy{Limit: 5, Window: 3}, time.Second,
			[][2]int64{{-1, 1}}, "window [-0.000000003,0) count 1"},
		{FixedWindow, Policy{Limit: 5, Window: time.Second}, time.Minute,
			[][2]int64{{61e9, 1}}, "window [~1.017,~1.033) count 1"},
		{FixedWindow, Policy{Limit: 5, Window: 10}, time.Second,
			[][2]int64{{0, 9}}, "window [0,0.00000001) count 0"},
		{TokenBucket, Policy{Capacity: 2, Rate: Rate{1, 3 * time.Second}}, time.Second,
			[][2]int64{{0, 2}, {1e9, 1}}, "tokens ~0.333"},
		{LeakyBucket, Policy{Capacity: 2, Rate: Rate{1, 3 * time.Second}}, time.Second,
			[][2]int64{{0, 2}, {2e9, 1}}, "level ~1.333"},
		{TokenBucket, Policy{Capacity: 2, Rate: Rate{1, 3 * time.Second}}, time.Second,
			[][2]int64{{0, 3}}, "tokens 2"},
		{GCRA, Policy{Capacity: 2, Rate: Rate{1, 3}}, time.Nanosecond,
			[][2]int64{{-10, 1}}, "tat -7"},
		{GCRA, Policy{Capacity: 2, Rate: Rate{3, 1}}, time.Nanosecond,
			[][2]int64{{-10, 1}}, "tat ~-9.667"},
		{GCRA, Policy{Capacity: 2, Rate: Rate{1 << 62, 1}}, time.Second,
			[][2]int64{{5, 1}}, "tat ~0.000000006"},
		{LeakyQueue, Policy{Capacity: 4, Rate: Rate{1, 2 * time.Second}}, time.Second,
			[][2]int64{{0, 1}, {1e9, 2}}, "queue 2.5 until 6"},
		{LeakyQueue, Policy{Capacity: 4, Rate: Rate{1, 2 * time.Second}}, time.Second,
			[][2]int64{{0, 5}}, "queue 0 until 0"},
		{SlidingCounter, Policy{Limit: 3, Window: 3 * time.Second}, time.Second,
			[][2]int64{{0, 3}, {4e9, 1}}, "estimate 2"},
		{SlidingCounter, Policy{Limit: 3, Window: 3 * time.Second}, time.Second,
			[][2]int64{{0, 3}, {4e9, 1}, {5e9, 1}, {1e9, 1}}, "estimate 5"},
	}
	for _, tt := range tests {
		tab, err := NewTable(tt.alg, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		var text []byte
		for _, rq := range tt.reqs {
			_, text = tab.AllowExplain(0, rq[0], rq[1], tt.unit, text[:0])
		}
		if string(text) != tt.state {
			t.Errorf("%s %v: state %q, want %q", tt.alg, tt.reqs, text, tt.state)
		}
	}
}

func TestTableTouchIdleReset(t *testing.T) {
	for _, a := range AllAlgorithms() {
		tab, _ := NewTable(a, seedPolicy)
		if tab.Algorithm() != a || tab.Policy() != seedPolicy || !tab.rule().fits(a) {
			t.Errorf("%s: accessors", a)
		}
		if tableHolds(tab, 5000) || !tab.Idle(5000, 0) {
			t.Errorf("%s: unused id", a)
		}
		tab.Allow(7, 13*sec, 1)
		tab.Allow(7, 14*sec, 1)
		if !tableHolds(tab, 7) {
			t.Errorf("%s: a used id holds no state", a)
		}
		if tab.Idle(7, 14*sec) {
			t.Errorf("%s: idle right after a request", a)
		}
		if !tab.Idle(7, 1000*sec) {
			t.Errorf("%s: not idle long after", a)
		}
		tab.Reset(7)
		tab.Reset(1 << 30)
		if !tab.Idle(7, 0) {
			t.Errorf("%s: not idle after Reset", a)
		}
		k, _ := NewKeyed(a, seedPolicy)
		if k.Algorithm() != a || k.Policy() != seedPolicy {
			t.Errorf("%s: Keyed accessors", a)
		}
		d, text := k.AllowExplain("u", 0, 1, time.Second, nil)
		if !d.Allowed || len(text) == 0 {
			t.Errorf("%s: Keyed.AllowExplain %+v %q", a, d, text)
		}
		if d, _ := k.AllowExplain("v", 0, 9, time.Second, nil); d.Reason != ReasonCost || k.Len() != 1 {
			t.Errorf("%s: a refused new key is kept: %+v, Len %d", a, d, k.Len())
		}
	}
}

func TestAppendRat(t *testing.T) {
	tests := []struct {
		neg         bool
		hi, lo, den uint64
		want        string
	}{
		{false, 0, 12, 5, "2.4"},
		{true, 0, 1, 3, "~-0.333"},
		{false, 0, 2, 3, "~0.667"},
		{false, 0, 1999999, 2000000, "0.9999995"},
		{false, 0, 19999999999, 20000000000, "~1.000"},
		{true, 0, 0, 7, "0"},
		{false, 1, 0, 1, "18446744073709551616"},
		{true, 1, 1, 3, "~-6148914691236517205.667"},
		{true, 5, 1, 2, "~-46116860184273879040.500"},
		{false, 4, 0, 2, "36893488147419103232"},
	}
	for _, tt := range tests {
		if got := string(appendRat(nil, tt.neg, tt.hi, tt.lo, tt.den)); got != tt.want {
			t.Errorf("appendRat(%v, %d, %d, %d) = %q, want %q", tt.neg, tt.hi, tt.lo, tt.den, got, tt.want)
		}
	}
	if got := string(appendTime(nil, -1500, 0)); got != "-0.0000015" {
		t.Errorf("appendTime = %q", got)
	}
	if got := string(appendWindowSpan(nil, -1, 10, 0)); got != "-0.00000001,0" {
		t.Errorf("appendWindowSpan = %q", got)
	}
	var s SlidingLogState
	r, _ := NewRule(SlidingLog, seedPolicy)
	s, _ = s.Step(r, 1, 1)
	s, _ = s.Step(r, 2, 1)
	if s.Len() != 2 {
		t.Errorf("Len = %d", s.Len())
	}
}

func TestZeroStores(t *testing.T) {
	var tab Table
	var k Keyed
	want := Decision{Reason: ReasonBadRule}
	d1 := tab.Allow(0, 0, 1)
	d2, _ := tab.AllowExplain(0, 0, 1, 0, nil)
	d3 := k.Allow("a", 0, 1)
	d4, _ := k.AllowExplain("a", 0, 1, 0, nil)
	for i, d := range []Decision{d1, d2, d3, d4} {
		if d != want {
			t.Errorf("%d: %+v", i, d)
		}
	}
	if tableHolds(&tab, 0) || !tab.Idle(0, 0) || k.Len() != 0 {
		t.Error("zero stores hold state")
	}
}

func TestRateEqual(t *testing.T) {
	for _, c := range []struct {
		a, b Rate
		want bool
	}{
		{Rate{1, 5 * time.Second}, Rate{2, 10 * time.Second}, true},
		{Rate{3, 10 * time.Second}, Rate{3, 10 * time.Second}, true},
		{Rate{1, 5 * time.Second}, Rate{1, 4 * time.Second}, false},
		{Rate{math.MaxInt64, 1}, Rate{math.MaxInt64, 1}, true},
		{Rate{math.MaxInt64, 2}, Rate{math.MaxInt64 - 1, 2}, false},
		{Rate{0, time.Second}, Rate{0, 2 * time.Second}, false},
	} {
		if got := c.a.Equal(c.b); got != c.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
