package report

import (
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// request is one request of a test trace.
type request struct {
	user     string
	at, cost int64
}

// events serves requests as a trace reader does: one reused Event.
type events struct {
	reqs []request
	next int
	ev   traces.Event
}

func (s *events) Next() (*traces.Event, error) {
	if s.next == len(s.reqs) {
		return nil, io.EOF
	}
	r := s.reqs[s.next]
	s.next++
	s.ev = traces.Event{User: []byte(r.user), Time: r.at, TimeText: traces.AppendDecimal(nil, r.at, time.Nanosecond), Cost: r.cost, Line: s.next + 1}
	return &s.ev, nil
}

// nsFrame draws times as nanoseconds: X is the time itself.
var nsFrame = &Frame{Trace: "t", Unit: time.Nanosecond, Interval: 10, Intent: limiters.Policy{Limit: 3, Window: 10}}

// replayStates replays reqs through lanes keeping user's requests.
func replayStates(t *testing.T, lanes []sim.Lane, user string, reqs []request) (*States, *sim.Report) {
	t.Helper()
	st, err := NewStates(lanes, []string{user})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Lanes: lanes, Policy: nsFrame.Intent, Unit: time.Nanosecond}
	st.Configure(&cfg)
	rep, err := sim.Run(st.Filter(&events{reqs: reqs}), cfg, st.Emit)
	if err != nil {
		t.Fatal(err)
	}
	return st, rep
}

// randomPolicy is a small policy every algorithm takes, in ns.
func randomPolicy(rng *rand.Rand) limiters.Policy {
	w := 2 + rng.Int64N(20)
	return limiters.Policy{Limit: 1 + rng.Int64N(5), Window: time.Duration(w), Capacity: 1 + rng.Int64N(5),
		Rate: limiters.Rate{N: 1, Per: time.Duration(1 + rng.Int64N(8))}, Buckets: 1, Tick: 1, Parts: 3}
}

// TestStatesLineIsTheState checks, for every algorithm on random traces,
// that each point of a state's line is the limiter's gauge at that time
// (before or after the request there), that the line runs forward, that
// between two points with no request between it is the gauge's straight
// line (or a step closer than the line's resolution), and that the marks
// are the replay's decisions at the number each left.
func TestStatesLineIsTheState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		p := randomPolicy(rng)
		var lanes []sim.Lane
		for _, a := range limiters.AllAlgorithms() {
			lanes = append(lanes, sim.Lane{Name: a.String(), Algorithm: a, Policy: p})
		}
		var reqs []request
		at := rng.Int64N(50)
		for range 60 {
			at += rng.Int64N(12)
			user := "u"
			if rng.IntN(3) == 0 {
				user = "other"
			}
			reqs = append(reqs, request{user: user, at: at, cost: 1 + rng.Int64N(2)})
		}
		st, rep := replayStates(t, lanes, "u", reqs)
		f := st.Figure(nsFrame, "u", nil)
		if f == nil {
			t.Fatal("no figure")
		}
		var mine []request
		for _, r := range reqs {
			if r.user == "u" {
				mine = append(mine, r)
			}
		}
		for l, lane := range lanes {
			pn := &f.Panels[l]
			checkStateLine(t, lane, mine, slices.Collect(pn.Lines[0].Series))
			// The marks: the replay's decisions, at the gauge after each.
			tb, _ := limiters.NewTable(lane.Algorithm, lane.Policy)
			var want [3][]Point
			for _, r := range mine {
				d := tb.Allow(0, r.at, r.cost)
				v, _ := tb.Gauge(0, r.at)
				o := outRejected
				switch {
				case d.Allowed && d.Delay > 0:
					o = outDelayed
				case d.Allowed:
					o = outAllowed
				}
				want[o] = append(want[o], Point{X: float64(r.at), Y: v})
			}
			got := map[string][]Point{}
			for _, m := range pn.Marks {
				got[m.Label] = slices.Collect(m.Series)
			}
			if !slices.Equal(got["allowed"], want[outAllowed]) || !slices.Equal(got["rejected"], want[outRejected]) || !slices.Equal(got["delayed"], want[outDelayed]) {
				t.Fatalf("%s %+v: marks %v, want allowed %v rejected %v delayed %v", lane.Name, p, got, want[outAllowed], want[outRejected], want[outDelayed])
			}
			if n := int64(len(want[outAllowed]) + len(want[outDelayed])); n != rep.Algos[l].Allowed {
				t.Fatalf("%s: %d allowed marks, the replay allowed %d", lane.Name, n, rep.Algos[l].Allowed)
			}
		}
	}
}

// checkStateLine checks the line drawn for lane over reqs (in time order).
func checkStateLine(t *testing.T, lane sim.Lane, reqs []request, line []Point) {
	t.Helper()
	tb, _ := limiters.NewTable(lane.Algorithm, lane.Policy)
	res := (reqs[len(reqs)-1].at - reqs[0].at) / lineColumns
	i := 0 // the next request
	for k, pt := range line {
		if k > 0 && pt.X < line[k-1].X {
			t.Fatalf("%s: the line goes back from %v to %v", lane.Name, line[k-1], pt)
		}
		ns := int64(pt.X)
		// Take the requests before this point.
		for i < len(reqs) && reqs[i].at < ns {
			tb.Allow(0, reqs[i].at, reqs[i].cost)
			i++
		}
		// From the point before, with no request between, the gauge's
		// straight line, or a step within the resolution.
		if prev := int64(line[max(k-1, 0)].X); k > 0 && prev < ns && (i == 0 || reqs[i-1].at <= prev) {
			if _, until := tb.Gauge(0, prev); until <= ns && ns-prev > max(res, 1) {
				t.Fatalf("%s: the line runs straight from %v to %v past the gauge's bend at %d", lane.Name, line[k-1], pt, until)
			}
		}
		v, _ := tb.Gauge(0, ns)
		if i < len(reqs) && reqs[i].at == ns {
			// At a request: the number it was judged by, or (after the
			// requests at this time) one they left.
			c, _ := limiters.NewTable(lane.Algorithm, lane.Policy)
			for _, r := range reqs[:i] {
				c.Allow(0, r.at, r.cost)
			}
			ok := v == pt.Y
			for j := i; j < len(reqs) && reqs[j].at == ns && !ok; j++ {
				c.Allow(0, reqs[j].at, reqs[j].cost)
				after, _ := c.Gauge(0, ns)
				ok = after == pt.Y
			}
			if !ok {
				t.Fatalf("%s: point %v at a request is neither the gauge before (%v) nor after it", lane.Name, pt, v)
			}
		} else if v != pt.Y {
			t.Fatalf("%s: point %v, the gauge there is %v", lane.Name, pt, v)
		}
	}
}

// TestStatesLineBounded: a tick queue drains in a step every tick; its
// line keeps at most a few points per column of its resolution, however
// many ticks, and still reaches the exact numbers at the requests.
func TestStatesLineBounded(t *testing.T) {
	p := limiters.Policy{Capacity: 1000, Rate: limiters.Rate{N: 1, Per: time.Microsecond}, Tick: time.Nanosecond, Parts: 1000, Delay: 1000}
	lanes := []sim.Lane{{Name: "q", Algorithm: limiters.TickQueue, Policy: p}}
	var reqs []request
	for range 1000 {
		reqs = append(reqs, request{user: "u", at: 0, cost: 1})
	}
	reqs = append(reqs, request{user: "u", at: int64(2 * time.Millisecond), cost: 1})
	st, _ := replayStates(t, lanes, "u", reqs)
	line := slices.Collect(st.Figure(nsFrame, "u", nil).Panels[0].Lines[0].Series)
	if len(line) > 3*lineColumns {
		t.Errorf("%d points for a drain of a million ticks, want at most %d", len(line), 3*lineColumns)
	}
	top := slices.MaxFunc(line, func(a, b Point) int { return int(a.Y - b.Y) })
	if last := line[len(line)-1]; top.Y != 1000 || last.Y != 1 {
		t.Errorf("the line reaches %v and ends at %v, want the full queue of 1000 after the burst and 1 after the last request", top, last)
	}
	for k := 1; k < len(line); k++ {
		if line[k-1].X > 0 && line[k].X < 2e6 && line[k].Y > line[k-1].Y {
			t.Fatalf("the queue rises while draining: %v then %v", line[k-1], line[k])
		}
	}
}

// TestStatesOutOfOrder: a request earlier than the one before it is drawn
// where the line has reached, so the line runs forward, and its mark at
// its own time.
func TestStatesOutOfOrder(t *testing.T) {
	p := limiters.Policy{Limit: 3, Window: 10, Capacity: 3, Rate: limiters.Rate{N: 3, Per: 10}}
	lanes := []sim.Lane{{Name: "fw", Algorithm: limiters.FixedWindow, Policy: p}, {Name: "tb", Algorithm: limiters.TokenBucket, Policy: p}}
	st, _ := replayStates(t, lanes, "u", []request{{user: "u", at: 5, cost: 1}, {user: "u", at: 12, cost: 1}, {user: "u", at: 8, cost: 1}})
	f := st.Figure(nsFrame, "u", nil)
	for _, pn := range f.Panels {
		line := slices.Collect(pn.Lines[0].Series)
		for k := 1; k < len(line); k++ {
			if line[k].X < line[k-1].X {
				t.Errorf("%s: the line goes back from %v to %v", pn.Title, line[k-1], line[k])
			}
		}
		var xs []float64
		for _, m := range pn.Marks {
			for p := range m.Series {
				xs = append(xs, p.X)
			}
		}
		slices.Sort(xs)
		if !slices.Equal(xs, []float64{5, 8, 12}) {
			t.Errorf("%s: marks at %v, want 5, 8, 12", pn.Title, xs)
		}
	}
}

// TestStatesFigureShowsEverySide: the panel names the gauge, draws its
// limit and the window edges of an aligned algorithm, and none of a
// sliding log.
func TestStatesFigureShowsEverySide(t *testing.T) {
	p := limiters.Policy{Limit: 3, Window: 10, Capacity: 3, Rate: limiters.Rate{N: 3, Per: 10}}
	lanes := []sim.Lane{{Name: "fixed-window", Algorithm: limiters.FixedWindow, Policy: p}, {Name: "log", Algorithm: limiters.SlidingLog, Policy: p}}
	st, rep := replayStates(t, lanes, "u", []request{{user: "u", at: 7, cost: 1}, {user: "u", at: 25, cost: 1}})
	f := st.Figure(nsFrame, "u", []sim.Interval{rep.Algos[0].Burst, rep.Algos[1].Burst})
	fw, log := f.Panels[0], f.Panels[1]
	if fw.Title != "fixed-window: count in window" || log.Title != "log (sliding-log): cost in log" {
		t.Errorf("titles %q, %q", fw.Title, log.Title)
	}
	if len(fw.Limits) != 1 || fw.Limits[0].Y != 3 || fw.Limits[0].Label != "limit 3" {
		t.Errorf("limits %+v", fw.Limits)
	}
	if !slices.Equal(fw.Edges, []float64{10, 20}) || log.Edges != nil {
		t.Errorf("edges %v and %v, want 10, 20 and none", fw.Edges, log.Edges)
	}
	if len(fw.Spans) != 1 {
		t.Errorf("spans %+v, want the worst burst", fw.Spans)
	}
	if st.Figure(nsFrame, "nobody", nil) != nil || st.Has("nobody") || !st.Has("u") {
		t.Error("a figure of a user with no request")
	}
	if math.IsNaN(fw.Limits[0].Y) {
		t.Error("NaN limit")
	}
}
