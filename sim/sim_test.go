package sim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// event is a trace row for tests; times in seconds.
type event struct {
	user string
	time int64 // ns
	cost int64
}

// sliceSource serves events from memory, the way traces.Reader does: one
// reused Event whose slices are views.
type sliceSource struct {
	events []event
	next   int
	ev     traces.Event
	buf    []byte
	err    error // returned after the events, instead of io.EOF
}

func (s *sliceSource) Next() (*traces.Event, error) {
	if s.next == len(s.events) {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	e := s.events[s.next]
	s.next++
	s.buf = append(s.buf[:0], e.user...)
	s.buf = traces.AppendDecimal(s.buf, e.time, time.Second)
	s.ev.User = s.buf[:len(e.user)]
	s.ev.TimeText = s.buf[len(e.user):]
	s.ev.Time = e.time
	s.ev.Cost = e.cost
	s.ev.Line = s.next + 1
	return &s.ev, nil
}

func secs(user string, ts ...int64) []event {
	var out []event
	for _, t := range ts {
		out = append(out, event{user: user, time: t * int64(time.Second), cost: 1})
	}
	return out
}

var seedPolicy = limiters.Policy{
	Limit:    3,
	Window:   10 * time.Second,
	Capacity: 3,
	Rate:     limiters.Rate{N: 3, Per: 10 * time.Second},
}

// collect runs events through cfg and returns every decision by algorithm
// and the report.
func collect(t *testing.T, events []event, cfg Config) ([][]limiters.Decision, []bool, *Report) {
	t.Helper()
	cfg.Rows = true
	cfg.Detail = true
	n := lanesOf(cfg)
	decisions := make([][]limiters.Decision, n)
	var oracle []bool
	var seq int64
	rep, err := Run(&sliceSource{events: events}, cfg, func(b *Batch) error {
		for i, r := range b.Requests {
			if r.Seq != seq {
				return fmt.Errorf("request %d came as %d", seq, r.Seq)
			}
			seq++
			if want := events[r.Seq].user; string(r.User) != want || string(r.Key) != want {
				return fmt.Errorf("request %d: user %q key %q, want %q", r.Seq, r.User, r.Key, want)
			}
			for a := range n {
				decisions[a] = append(decisions[a], *b.Decision(i, a))
			}
			oracle = append(oracle, b.Oracle[i])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if seq != int64(len(events)) {
		t.Fatalf("emitted %d requests, want %d", seq, len(events))
	}
	return decisions, oracle, rep
}

// lanesOf returns the number of lanes cfg runs.
func lanesOf(cfg Config) int {
	if len(cfg.Lanes) > 0 {
		return len(cfg.Lanes)
	}
	return len(cfg.Algorithms)
}

// collectAllowed runs events through cfg without Detail and returns which
// algorithms allowed each request, and the report.
func collectAllowed(t *testing.T, events []event, cfg Config) ([][]bool, *Report) {
	t.Helper()
	cfg.Rows, cfg.Detail = true, false
	n := lanesOf(cfg)
	allowed := make([][]bool, n)
	rep, err := Run(&sliceSource{events: events}, cfg, func(b *Batch) error {
		if len(b.Decisions) != 0 {
			return errors.New("decisions filled without Detail")
		}
		for i := range b.Requests {
			for a := range n {
				allowed[a] = append(allowed[a], b.Allowed(i, a))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return allowed, rep
}

func TestBoundaryBurst(t *testing.T) {
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy}
	_, _, rep := collect(t, secs("u1", 7, 8, 9, 10, 11, 12), cfg)
	want := map[limiters.Algorithm]Interval{
		limiters.FixedWindow: {Algorithm: limiters.FixedWindow, Name: "fixed-window", Key: "u1", From: 7e9, To: 12e9, Count: 6},
		limiters.SlidingLog:  {Algorithm: limiters.SlidingLog, Name: "sliding-log", Key: "u1", From: 7e9, To: 9e9, Count: 3},
	}
	for _, s := range rep.Algos {
		if w, ok := want[s.Algorithm]; ok {
			if diff := quickDiff(w, s.Burst); diff != "" {
				t.Errorf("%v burst (-want +got):\n%s", s.Algorithm, diff)
			}
		}
	}
	fw := rep.Algos[0]
	if fw.Allowed != 6 || fw.FalseAllows != 3 || fw.FalseRejects != 0 {
		t.Errorf("fixed-window allowed %d, false allows %d, false rejects %d; want 6, 3, 0", fw.Allowed, fw.FalseAllows, fw.FalseRejects)
	}
	sl := rep.Algos[1]
	if sl.Allowed != 3 || sl.FalseAllows != 0 || sl.FalseRejects != 0 || sl.FirstRejection == nil || sl.FirstRejection.TimeText != "10" {
		t.Errorf("sliding-log: %+v, first rejection %+v; want 3 allowed, exact, first rejection at 10", sl, sl.FirstRejection)
	}
}

// randomTrace makes a multi-user trace with bursts, idle gaps, repeated
// times and, when costs, weighted requests.
func randomTrace(rng *rand.Rand, n, users int, costs bool) []event {
	var out []event
	now := int64(rng.IntN(20)-10) * int64(time.Second)
	for range n {
		switch rng.IntN(10) {
		case 0:
			now += int64(rng.IntN(30)) * int64(time.Second)
		case 1, 2, 3:
		default:
			now += int64(rng.IntN(2000)) * int64(time.Millisecond)
		}
		c := int64(1)
		if costs && rng.IntN(4) == 0 {
			c = int64(1 + rng.IntN(4))
		}
		out = append(out, event{user: "u" + strconv.Itoa(rng.IntN(users)), time: now, cost: c})
	}
	return out
}

// TestMatchesKeyed checks every decision of every algorithm against the
// same algorithm run key by key through limiters.Keyed, whatever the number
// of workers, and every report figure against a direct count.
func TestMatchesKeyed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 6 {
		users := 1 + trial*7
		if trial == 5 {
			users = 2500 // the interners grow in the middle of batches
		}
		n := 3000
		if trial == 4 {
			n = 2*batchSize + 1000 // several batches, the last one short
		}
		events := randomTrace(rng, n, users, trial%2 == 1)
		for _, workers := range []int{1, 2, 3} {
			algos := limiters.AllAlgorithms()
			if trial%3 == 2 {
				// Without sliding-log the oracle runs on its own.
				algos = slices.DeleteFunc(algos, func(a limiters.Algorithm) bool { return a == limiters.SlidingLog })
			}
			cfg := Config{Algorithms: algos, Policy: seedPolicy, Workers: workers}
			if workers != 2 {
				cfg.Top = 5 // every key's best, not only each algorithm's
			}
			decisions, oracle, rep := collect(t, events, cfg)
			want := reference(t, events, cfg)
			if diff := quickDiff(want.decisions, decisions); diff != "" {
				t.Fatalf("trial %d, %d workers: decisions (-keyed +sim):\n%s", trial, workers, diff)
			}
			if diff := quickDiff(want.oracle, oracle); diff != "" {
				t.Fatalf("trial %d, %d workers: oracle (-keyed +sim):\n%s", trial, workers, diff)
			}
			if diff := quickDiff(want.report, rep); diff != "" {
				t.Fatalf("trial %d, %d workers: report (-direct +sim):\n%s", trial, workers, diff)
			}
			// Without Detail the engine only admits; the outcomes and the
			// report must not change.
			allowed, lean := collectAllowed(t, events, cfg)
			for a := range cfg.Algorithms {
				for i, d := range want.decisions[a] {
					if allowed[a][i] != d.Allowed {
						t.Fatalf("trial %d, %d workers, %v, request %d: admitted %v, keyed %+v", trial, workers, cfg.Algorithms[a], i, allowed[a][i], d)
					}
				}
			}
			if diff := quickDiff(want.report, lean); diff != "" {
				t.Fatalf("trial %d, %d workers: report without Detail (-direct +sim):\n%s", trial, workers, diff)
			}
		}
	}
}

func TestExplainStates(t *testing.T) {
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingLog}, Policy: seedPolicy, Explain: true, Rows: true, Workers: 2}
	var got []string
	_, err := Run(&sliceSource{events: secs("u1", 1, 3, 5, 8, 12, 13)}, cfg, func(b *Batch) error {
		for i := range b.Requests {
			got = append(got, string(b.State(i, 1)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"log [1]", "log [1 3]", "log [1 3 5]", "log [1 3 5]", "log [3 5 12]", "log [3 5 12]"}
	if diff := quickDiff(want, got); diff != "" {
		t.Errorf("sliding-log states (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Rows: true}
	boom := errors.New("boom")
	events := randomTrace(rand.New(rand.NewPCG(3, 4)), 5000, 50, false)

	// A failing source: its error comes back, after the rows before it.
	rows := 0
	_, err := Run(&sliceSource{events: events, err: boom}, cfg, func(b *Batch) error {
		rows += len(b.Requests)
		return nil
	})
	if !errors.Is(err, boom) || rows != len(events) {
		t.Errorf("source error: got %v after %d rows, want %v after %d", err, rows, boom, len(events))
	}

	// A failing consumer stops the run.
	calls := 0
	_, err = Run(&sliceSource{events: events}, cfg, func(b *Batch) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("emit error: got %v after %d calls, want %v after 1", err, calls, boom)
	}

	// Bad configuration is refused before any replay.
	bad := cfg
	bad.Policy.Limit = 0
	if _, err := Run(&sliceSource{events: events}, bad, nil); err == nil {
		t.Error("limit 0: no error")
	}
	if _, err := Run(&sliceSource{events: events}, Config{Policy: seedPolicy}, nil); err == nil {
		t.Error("no algorithms: no error")
	}
}

func TestEmptyTrace(t *testing.T) {
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Rows: true}
	rep, err := Run(&sliceSource{}, cfg, func(b *Batch) error {
		t.Errorf("emit called with %d rows", len(b.Requests))
		return nil
	})
	if err != nil || rep.Requests != 0 || rep.Algos[0].Burst.Count != 0 {
		t.Errorf("empty trace: %+v, %v", rep, err)
	}
}

func benchEvents(n, users int) []event {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]event, n)
	var now int64
	for i := range out {
		now += int64(rng.IntN(200)) * int64(time.Microsecond)
		out[i] = event{user: "u" + strconv.Itoa(rng.IntN(users)), time: now, cost: 1}
	}
	return out
}

// BenchmarkRun measures the engine alone (no parsing, no output): all five
// seed algorithms, the oracle and burst tracking, per request.
func BenchmarkRun(b *testing.B) {
	for _, users := range []int{1000, 100_000} {
		events := benchEvents(1_000_000, users)
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("users=%d/workers=%d", users, workers), func(b *testing.B) {
				cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Workers: workers}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Run(&sliceSource{events: events}, cfg, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/request")
			})
		}
	}
}

func TestDecisionsOnly(t *testing.T) {
	events := randomTrace(rand.New(rand.NewPCG(5, 6)), 4000, 20, true)
	full := Config{Algorithms: limiters.AllAlgorithms(), Policy: seedPolicy, Workers: 2}
	lean := full
	lean.DecisionsOnly = true
	wantDecisions, _, want := collect(t, events, full)
	gotDecisions, _, got := collect(t, events, lean)
	if diff := quickDiff(wantDecisions, gotDecisions); diff != "" {
		t.Fatalf("decisions differ with DecisionsOnly (-full +lean):\n%s", diff)
	}
	for a := range want.Algos {
		w, g := want.Algos[a], got.Algos[a]
		if g.Allowed != w.Allowed || g.Rejected != w.Rejected || !cmp.Equal(g.FirstRejection, w.FirstRejection) {
			t.Errorf("%v: lean counts %d/%d, full %d/%d", w.Algorithm, g.Allowed, g.Rejected, w.Allowed, w.Rejected)
		}
		if g.FalseAllows != 0 || g.FalseRejects != 0 || g.Burst.Count != 0 {
			t.Errorf("%v: lean report has oracle or burst figures: %+v", w.Algorithm, g)
		}
	}
	if diff := quickDiff(want.Agree, got.Agree); diff != "" {
		t.Errorf("agreement differs (-full +lean):\n%s", diff)
	}
}

// namedSource is a sliceSource with a name, as traces.Reader has.
type namedSource struct{ sliceSource }

func (namedSource) Name() string { return "trace.csv" }

func TestKeyFieldMissing(t *testing.T) {
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, KeyFields: []string{"user", "tenant"}}
	_, err := Run(&namedSource{sliceSource{events: secs("u1", 1)}}, cfg, nil)
	var pe *traces.ParseError
	if !errors.As(err, &pe) || pe.File != "trace.csv" || pe.Line != 2 || !strings.Contains(err.Error(), `"tenant"`) {
		t.Errorf("missing key field: got %v, want a ParseError for trace.csv:2 naming \"tenant\"", err)
	}
}

// TestBurstBackwards checks burst intervals on traces that go back in time,
// under each clock policy, against a direct computation: each allowed
// request counts at its own time, raised to the newest time already in its
// key's ring, which keeps each ring in time order.
func TestBurstBackwards(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, clock := range []limiters.Clock{limiters.ClockReject, limiters.ClockClamp} {
		for trial := range 4 {
			var events []event
			now := int64(0)
			for range 2000 {
				now += int64(rng.IntN(3000)-1000) * int64(time.Millisecond) // often backwards
				events = append(events, event{user: "u" + strconv.Itoa(rng.IntN(3+trial*5)), time: now, cost: 1 + int64(rng.IntN(2))})
			}
			p := seedPolicy
			p.Clock = clock
			cfg := Config{Algorithms: limiters.AllAlgorithms(), Policy: p, Workers: 1 + trial%2, Top: 6}
			_, _, rep := collect(t, events, cfg)
			want := reference(t, events, cfg)
			if diff := quickDiff(want.report, rep); diff != "" {
				t.Errorf("clock %v, trial %d: report (-reference +sim):\n%s", clock, trial, diff)
			}
		}
	}
}

// TestLongKeys replays keys long enough that a batch fills its text limit
// before its row limit, and checks that each request keeps its own user
// and key (collect compares them) and that the rows came in several
// batches.
func TestLongKeys(t *testing.T) {
	var events []event
	for i := range 60 {
		user := strings.Repeat(string(rune('a'+i%5)), 512<<10) + strconv.Itoa(i%7)
		events = append(events, event{user: user, time: int64(i) * int64(time.Second), cost: 1})
	}
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Rows: true}
	batches := 0
	if _, err := Run(&sliceSource{events: events}, cfg, func(*Batch) error { batches++; return nil }); err != nil {
		t.Fatal(err)
	}
	if batches < 2 {
		t.Errorf("%d MiB of keys came in %d batch", 60*512>>10, batches)
	}
	decisions, _, rep := collect(t, events, cfg)
	want := reference(t, events, Config{Algorithms: cfg.Algorithms, Policy: seedPolicy})
	if diff := quickDiff(want.decisions, decisions); diff != "" {
		t.Errorf("decisions (-keyed +sim):\n%s", diff)
	}
	if rep.Keys != 35 {
		t.Errorf("Keys = %d, want 35", rep.Keys)
	}
}
