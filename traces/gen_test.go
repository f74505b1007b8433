package traces

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

func generate(t testing.TB, o GenOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Generate(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readGenerated(t testing.TB, data []byte, o GenOptions) []rec {
	t.Helper()
	got, err := readAll(t, "gen", string(data), Options{Format: o.Format, Unit: o.Unit})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestGenerateProperties(t *testing.T) {
	for _, pattern := range Patterns() {
		for _, f := range []Format{CSV, YAML, JSONL} {
			o := GenOptions{Pattern: pattern, Users: 50, Requests: 3000, Seed: 42, Format: f}
			data := generate(t, o)
			if again := generate(t, o); !bytes.Equal(data, again) {
				t.Errorf("%s %v: two runs differ", pattern, f)
			}
			o2 := o
			o2.Seed = 43
			if bytes.Equal(data, generate(t, o2)) {
				t.Errorf("%s %v: seeds 42 and 43 give the same trace", pattern, f)
			}
			got := readGenerated(t, data, o)
			if len(got) != o.Requests {
				t.Fatalf("%s %v: %d requests, want %d", pattern, f, len(got), o.Requests)
			}
			counts := map[string]int{}
			for i, r := range got {
				if i > 0 && r.Time < got[i-1].Time {
					t.Fatalf("%s %v: time goes back at line %d", pattern, f, r.Line)
				}
				if r.Time%int64(time.Millisecond) != 0 || r.Time < 0 {
					t.Fatalf("%s %v: time %d not on the 1ms grid", pattern, f, r.Time)
				}
				counts[r.User]++
			}
			for u := range counts {
				n := 0
				for _, c := range u[1:] {
					n = n*10 + int(c-'0')
				}
				if u[0] != 'u' || n < 1 || n > o.Users || "u"+itoa(n) != u {
					t.Fatalf("%s %v: user %q", pattern, f, u)
				}
			}
			// Skewed: the first user is far busier than the last ones.
			if counts["u1"] < 5*max(1, counts["u50"]) {
				t.Errorf("%s %v: u1 has %d requests, u50 %d: not skewed", pattern, f, counts["u1"], counts["u50"])
			}
		}
	}
}

func TestGenerateShapes(t *testing.T) {
	const w = 10 * time.Second
	// boundary: every request lies within a quarter window of a boundary.
	o := GenOptions{Pattern: "boundary", Users: 20, Requests: 6000, Seed: 1}
	got := readGenerated(t, generate(t, o), o)
	for _, r := range got {
		if m := r.Time % int64(w); m >= int64(w)/4 && m < 3*int64(w)/4 {
			t.Fatalf("boundary: request at %d, %d into its window", r.Time, m)
		}
	}
	// And a cluster straddles: a user has Burst requests within half a
	// window around some boundary, more than a 3-per-window limit allows.
	if m := maxInWindow(got, w/2); m < 6 {
		t.Errorf("boundary: at most %d requests of one user within %v", m, w/2)
	}

	// bursty: bursts put Burst requests of a user within a quarter window,
	// far more often than steady arrivals at the same mean rate do.
	o = GenOptions{Pattern: "bursty", Users: 200, Requests: 6000, Seed: 1, Uniform: true}
	bursty := dense(readGenerated(t, generate(t, o), o), w/4, 5)
	o.Pattern = "steady"
	steady := dense(readGenerated(t, generate(t, o), o), w/4, 5)
	if bursty < 1000 || bursty < 5*steady {
		t.Errorf("requests starting 5 of a user within %v: bursty %d, steady %d", w/4, bursty, steady)
	}

	// steady: the span is about as asked.
	o = GenOptions{Pattern: "steady", Users: 10, Requests: 20000, Seed: 3, Span: time.Hour}
	got = readGenerated(t, generate(t, o), o)
	if last := time.Duration(got[len(got)-1].Time); last < 55*time.Minute || last > 65*time.Minute {
		t.Errorf("steady over an hour: last request at %v", last)
	}
	o.Span, o.Rate = 0, 100
	got = readGenerated(t, generate(t, o), o)
	if last := time.Duration(got[len(got)-1].Time); last < 180*time.Second || last > 220*time.Second {
		t.Errorf("steady at 100/s: last request at %v, want about 200s", last)
	}

	// ramp: the middle half of the span holds most requests.
	o = GenOptions{Pattern: "ramp", Users: 10, Requests: 20000, Seed: 3, Span: time.Hour}
	got = readGenerated(t, generate(t, o), o)
	mid := 0
	for _, r := range got {
		if d := time.Duration(r.Time); d >= 15*time.Minute && d < 45*time.Minute {
			mid++
		}
	}
	// A triangle puts 3/4 of its mass in the middle half.
	if frac := float64(mid) / float64(len(got)); frac < 0.72 || frac > 0.78 {
		t.Errorf("ramp: %.3f of requests in the middle half, want about 0.75", frac)
	}
}

// dense counts the requests that start a run of k or more requests of
// their user within d.
func dense(rs []rec, d time.Duration, k int) int {
	byUser := map[string][]int64{}
	for _, r := range rs {
		byUser[r.User] = append(byUser[r.User], r.Time)
	}
	n := 0
	for _, ts := range byUser {
		for i := range ts {
			if i+k-1 < len(ts) && ts[i+k-1]-ts[i] <= int64(d) {
				n++
			}
		}
	}
	return n
}

// maxInWindow returns the most requests one user has within any closed
// interval of length d.
func maxInWindow(rs []rec, d time.Duration) int {
	byUser := map[string][]int64{}
	for _, r := range rs {
		byUser[r.User] = append(byUser[r.User], r.Time)
	}
	best := 0
	for _, ts := range byUser {
		j := 0
		for i := range ts {
			for ts[i]-ts[j] > int64(d) {
				j++
			}
			best = max(best, i-j+1)
		}
	}
	return best
}

func TestGenerateOptions(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	o := GenOptions{Users: 1000, Requests: 5000, Seed: 9, Keys: KeysUUID}
	got := readGenerated(t, generate(t, o), o)
	users := map[string]bool{}
	for _, r := range got {
		if !uuid.MatchString(r.User) {
			t.Fatalf("key %q is not UUID-like", r.User)
		}
		users[r.User] = true
	}
	if len(users) < 300 || len(users) > 1000 {
		t.Errorf("%d distinct UUID keys", len(users))
	}
	// Every key differs: user k's key is a function of k alone.
	g, _ := newGenerator(o)
	seen := map[string]int{}
	for k := 1; k <= 100000; k++ {
		s := string(g.key(nil, k))
		if prev, dup := seen[s]; dup {
			t.Fatalf("users %d and %d share key %s", prev, k, s)
		}
		seen[s] = k
	}

	// RFC 3339 from a start, and milliseconds.
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	o = GenOptions{Pattern: "boundary", Requests: 100, Seed: 2, Start: start, RFC3339: true, Format: JSONL}
	data := generate(t, o)
	r, err := NewReader(bytes.NewReader(data), "g", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := drain(r)
	if err != nil || len(rs) != 100 || !r.RFC3339() || rs[0].Time < start || !strings.HasPrefix(rs[0].Text, "2024-01-01T00:00:") {
		t.Errorf("RFC 3339: %v, %v, RFC3339 %v", rs[:1], err, r.RFC3339())
	}
	o = GenOptions{Requests: 100, Seed: 2, Unit: time.Millisecond, Resolution: time.Microsecond}
	ms := readGenerated(t, generate(t, o), o)
	o.Unit = 0
	s := readGenerated(t, generate(t, o), o)
	for i := range ms {
		if ms[i].Time != s[i].Time {
			t.Fatalf("ms and s traces differ at %d: %d vs %d", i, ms[i].Time, s[i].Time)
		}
	}

	for _, tt := range []struct {
		o    GenOptions
		want string
	}{
		{GenOptions{Pattern: "spiky"}, `traces: unknown pattern "spiky" (valid: steady, bursty, boundary, ramp)`},
		{GenOptions{Users: -1}, "traces: users must be positive, got -1"},
		{GenOptions{Requests: -1}, "traces: requests must not be negative, got -1"},
		{GenOptions{Span: -1}, "traces: span must be positive, got -1ns"},
		{GenOptions{Skew: -1}, "traces: skew must be a positive number, got -1"},
		{GenOptions{Burst: -2}, "traces: burst must be between 1 and 1048576, got -2"},
	} {
		if err := Generate(io.Discard, tt.o); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: error %v, want %s", tt.o, err, tt.want)
		}
	}
}

// TestGenerateStreams checks that the generator's memory does not grow
// with the number of requests: a hundred times more requests make no more
// allocations.
func TestGenerateStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 400,000 requests")
	}
	for _, p := range Patterns() {
		allocs := func(n int) float64 {
			return testing.AllocsPerRun(1, func() {
				if err := Generate(io.Discard, GenOptions{Pattern: p, Users: 20, Requests: n, Seed: 5, Span: time.Duration(n) * time.Second}); err != nil {
					t.Fatal(err)
				}
			})
		}
		small, big := allocs(1000), allocs(100_000)
		if big > small+2 {
			t.Errorf("%s: %v allocations for 1000 requests, %v for 100,000", p, small, big)
		}
	}
}
