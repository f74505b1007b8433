package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// storeOutput writes what "ratesim replay" found: the rows (each request,
// or with --verify each decision that differs) as they are decided, in
// trace order, and at the end the summary and the store's figures.
type storeOutput struct {
	r      *storeRun
	format render.Format
	s      streams
	rw     *render.RecordWriter // the rows; nil with --summary
	unit   time.Duration
	check  *invariantChecker

	keyed, queue bool

	requests  int64
	allowed   []int64 // per lane
	clockBack []int64 // per lane: refused because the key's time went back
	differ    int64
	laneDiff  []int64
}

func newStoreOutput(r *storeRun, format render.Format, s streams) *storeOutput {
	so := &storeOutput{
		r: r, format: format, s: s, unit: r.rp.spec.Unit,
		check:     newInvariantChecker(r.lanes),
		keyed:     len(r.o.trace.Key) > 0,
		queue:     slices.ContainsFunc(r.lanes, func(l sim.Lane) bool { return l.Algorithm.Delays() }),
		allowed:   make([]int64, r.nlanes),
		clockBack: make([]int64, r.nlanes),
		laneDiff:  make([]int64, r.nlanes),
	}
	if !r.o.Summary {
		so.rw = render.NewRecordWriter(s.out, format, so.columns())
	}
	return so
}

// columns are the columns of the rows: run's for one limiter, compare's
// for several, and with --verify those of a decision that differs.
func (so *storeOutput) columns() []render.Column {
	rfc := so.r.rp.trace.RFC3339()
	if so.r.o.Verify {
		cols := []render.Column{{Name: "line", Right: true}, {Name: "user"}, {Name: "timestamp", Right: !rfc}, {Name: "cost", Right: true}, {Name: "limiter"}}
		for _, c := range []render.Column{
			{Name: "allowed"}, {Name: "remaining", Right: true}, {Name: "retry_after", Right: true, NullText: "never"},
			{Name: "reset_after", Right: true}, {Name: "reason"}, {Name: "delay", Right: true},
		} {
			if c.Name == "delay" && !so.queue {
				continue
			}
			mem := c
			mem.Name = "memory_" + c.Name
			cols = append(cols, c, mem)
		}
		return cols
	}
	if so.r.nlanes == 1 {
		row := tables.RunRow{Queue: so.queue, Keyed: so.keyed}
		return row.Columns(rfc)
	}
	row := tables.MatrixRow{Lanes: so.r.nlanes, Keyed: so.keyed}
	cols := row.Columns(so.r.lanes, rfc)
	return cols
}

// request takes one request decided by the store (dec, a decision per
// lane) and, with --verify, by the in-memory replay (mem): it counts and
// checks it, and writes its row.
func (so *storeOutput) request(win *window, q *windowReq, dec, mem []limiters.Decision) error {
	so.requests++
	key, timeText := win.str(q.key), win.str(q.time)
	for l := range dec {
		if dec[l].Allowed {
			so.allowed[l]++
		} else if dec[l].Reason == limiters.ReasonClock {
			so.clockBack[l]++
		}
	}
	so.check.add(key, timeText, q.now, q.cost, dec)
	if mem != nil {
		for l := range dec {
			if dec[l] == mem[l] {
				continue
			}
			so.differ++
			so.laneDiff[l]++
			if so.rw != nil {
				if err := so.rw.End(so.appendDiff(win, q, l, &dec[l], &mem[l])); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if so.rw == nil {
		return nil
	}
	rw := so.rw
	e := rw.Enc()
	b := rw.Begin()
	b = e.Bytes(b, win.str(q.user))
	b = e.Time(e.Next(b), timeText)
	if so.r.nlanes == 1 {
		d := &dec[0]
		b = strconv.AppendInt(e.Next(b), q.cost, 10)
		b = so.appendDecision(e, b, d)
		if so.queue {
			b = tables.AppendDuration(e.Next(b), int64(d.Delay), so.unit)
		}
	} else {
		for l := range dec {
			b = strconv.AppendBool(e.Next(b), dec[l].Allowed)
		}
	}
	if so.keyed {
		b = e.Bytes(e.Next(b), key)
	}
	return rw.End(b)
}

// appendDecision appends a decision's allowed, remaining, retry_after,
// reset_after and reason, each after next.
func (so *storeOutput) appendDecision(e *render.Encoder, b []byte, d *limiters.Decision) []byte {
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	if d.Reason == limiters.ReasonCost {
		b = e.Null(e.Next(b))
	} else {
		b = tables.AppendDuration(e.Next(b), int64(d.RetryAfter), so.unit)
	}
	b = tables.AppendDuration(e.Next(b), int64(d.ResetAfter), so.unit)
	return e.Text(e.Next(b), string(d.Reason))
}

// appendDiff appends the row of lane l's decision on q that differs: the
// store's d and the in-memory replay's m, field beside field.
func (so *storeOutput) appendDiff(win *window, q *windowReq, l int, d, m *limiters.Decision) []byte {
	rw := so.rw
	e := rw.Enc()
	b := rw.Begin()
	b = strconv.AppendInt(b, int64(q.line), 10)
	b = e.Bytes(e.Next(b), win.str(q.user))
	b = e.Time(e.Next(b), win.str(q.time))
	b = strconv.AppendInt(e.Next(b), q.cost, 10)
	b = e.Text(e.Next(b), so.r.lanes[l].Name)
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	b = strconv.AppendBool(e.Next(b), m.Allowed)
	b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	b = strconv.AppendInt(e.Next(b), m.Remaining, 10)
	for _, x := range []*limiters.Decision{d, m} {
		if x.Reason == limiters.ReasonCost {
			b = e.Null(e.Next(b))
		} else {
			b = tables.AppendDuration(e.Next(b), int64(x.RetryAfter), so.unit)
		}
	}
	b = tables.AppendDuration(e.Next(b), int64(d.ResetAfter), so.unit)
	b = tables.AppendDuration(e.Next(b), int64(m.ResetAfter), so.unit)
	b = e.Text(e.Next(b), string(d.Reason))
	b = e.Text(e.Next(b), string(m.Reason))
	if so.queue {
		b = tables.AppendDuration(e.Next(b), int64(d.Delay), so.unit)
		b = tables.AppendDuration(e.Next(b), int64(m.Delay), so.unit)
	}
	return b
}

// flush writes out the rows so far, when the replay stops early: the
// rest of CSV or JSON, or the table of the rows kept.
func (so *storeOutput) flush() {
	if so.rw == nil {
		return
	}
	if so.rw.Textual() {
		w := render.NewTextWriter(so.s.out, so.format)
		w.Table(so.rw.Table(nil))
		if so.rw.Hidden() > 0 {
			w.Blank()
			w.Line(fmt.Sprintf("%s more not shown; -o csv lists every row", render.Plural(so.rw.Hidden(), "row")))
		}
	} else {
		_ = so.rw.Close()
	}
	so.rw = nil
}

// replaySummaryColumns are the columns of replay --summary: compare's
// names where they mean the same, then the bounds' check, then the store's
// figures, which are the same in every row.
var replaySummaryColumns = []render.Column{
	{Name: "algo"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "allow_pct", Right: true, Title: "allow %", Suffix: "%"},
	{Name: "memory_allowed", Right: true, Title: "in memory"},
	{Name: "extra_allowed", Right: true, Title: "extra"},
	{Name: "differ", Right: true, OmitNull: true},
	{Name: "clock_backwards", Right: true, Title: "clock back"},
	{Name: "bound"},
	{Name: "holds"},
	{Name: "violations", Right: true},
	{Name: "max_excess", Right: true},
	{Name: "worst_user", MachineOnly: true},
	{Name: "worst_at", MachineOnly: true},
	{Name: "store", MachineOnly: true},
	{Name: "workers", MachineOnly: true},
	{Name: "route", MachineOnly: true},
	{Name: "pipeline", MachineOnly: true},
	{Name: "naive", MachineOnly: true},
	{Name: "on_failure", MachineOnly: true},
	{Name: "failure_decisions", MachineOnly: true},
	{Name: "store_calls", MachineOnly: true},
	{Name: "round_trips", MachineOnly: true},
	{Name: "elapsed_s", MachineOnly: true},
	{Name: "requests_per_s", MachineOnly: true},
	{Name: "latency_p50_us", MachineOnly: true},
	{Name: "latency_p90_us", MachineOnly: true},
	{Name: "latency_p99_us", MachineOnly: true},
	{Name: "latency_max_us", MachineOnly: true},
	{Name: "limit", MachineOnly: true},
	{Name: "window", MachineOnly: true},
	{Name: "capacity", OmitNull: true, MachineOnly: true},
	{Name: "rate", OmitNull: true, MachineOnly: true},
	{Name: "clock", MachineOnly: true},
	{Name: "unit", MachineOnly: true},
}

// storeFigures are the store's figures over the replay.
type storeFigures struct {
	calls, trips int64
	elapsed      time.Duration
	lat          latencies
}

func (so *storeOutput) figures() *storeFigures {
	f := &storeFigures{}
	if !so.r.finished.IsZero() {
		f.elapsed = so.r.finished.Sub(so.r.started)
	}
	for _, w := range so.r.workers {
		f.calls += w.calls
		f.trips += w.trips.n.Load()
		f.lat.merge(&w.lat)
	}
	return f
}

// perSecond is n per elapsed, in whole units.
func perSecond(n int64, elapsed time.Duration) int64 {
	if elapsed <= 0 {
		return 0
	}
	return int64(float64(n) / elapsed.Seconds())
}

// summaryRows are the rows of the summary, one per lane.
func (so *storeOutput) summaryRows(rep *sim.Report, f *storeFigures) [][]render.Cell {
	sp := so.r.rp.spec
	o := so.r.o
	us := func(d time.Duration) render.Cell { return render.Int(int64(d / time.Microsecond)) }
	var rows [][]render.Cell
	for l, lane := range so.r.lanes {
		li := &so.check.lanes[l]
		differ := render.Null()
		if o.Verify {
			differ = render.Int(so.laneDiff[l])
		}
		memAllowed := rep.Algos[l].Allowed
		worstUser, worstAt := render.Null(), render.Null()
		if li.violations > 0 {
			worstUser, worstAt = render.Str(li.worstKey), render.Time(string(li.worstAt))
		}
		limit, window, capacity, rate := sp.LaneCells(lane)
		rows = append(rows, append([]render.Cell{
			render.Str(lane.Name),
			render.Int(so.requests),
			render.Int(so.allowed[l]),
			render.Int(so.requests - so.allowed[l]),
			render.PctCell(so.allowed[l], so.requests),
			render.Int(memAllowed),
			render.Int(so.allowed[l] - memAllowed),
			differ,
			render.Int(so.clockBack[l]),
			render.Str(li.rule(sp)),
			render.Bool(li.violations == 0),
			render.Int(li.violations),
			render.Int(li.maxExcess),
			worstUser, worstAt,
			render.Str(so.r.addr.String()),
			render.Int(int64(o.Workers)),
			render.Str(o.Route),
			render.Int(int64(o.Pipeline)),
			render.Bool(o.Naive),
			render.Str(o.OnFailure),
			render.Int(so.r.failureDecisions()),
			render.Int(f.calls),
			render.Int(f.trips),
			render.Num(strconv.FormatFloat(f.elapsed.Seconds(), 'f', 3, 64)),
			render.Int(perSecond(so.requests, f.elapsed)),
			us(f.lat.quantile(0.5)), us(f.lat.quantile(0.9)), us(f.lat.quantile(0.99)), us(f.lat.max),
			limit, window, capacity, rate,
			render.Str(spec.ClockName(lane.Policy.Clock)),
			render.Str(unitName(sp.Unit)),
		}, sp.ExtraCells(lane)...))
	}
	return rows
}

// finish ends the rows and writes the summary: on standard output in a
// table or with --summary, else as a report on standard error, the data
// on standard output being the rows alone.
func (so *storeOutput) finish(rep *sim.Report) error {
	r, o, sp := so.r, so.r.o, so.r.rp.spec
	if so.rw != nil && !so.rw.Textual() {
		if err := so.rw.Close(); err != nil {
			return err
		}
	}
	f := so.figures()
	cols := append(slices.Clone(replaySummaryColumns), sp.ExtraColumns()...)
	rows := so.summaryRows(rep, f)
	textual := so.format == render.FormatTable || so.format == render.FormatMarkdown
	if o.Summary && !textual {
		_, err := render.WriteRecords(so.s.out, so.format, cols, rows)
		return err
	}
	var w *render.TextWriter
	if textual {
		w = render.NewTextWriter(so.s.out, so.format)
	} else {
		w = render.NewTextWriter(prefixWriter{so.s.err}, render.FormatTable)
	}
	w.Line(fmt.Sprintf("replay on %s: %s, %s", r.rp.trace.name, render.Plural(rep.Requests, "request"), render.Plural(int64(rep.Keys), "key")))
	way := "atomic (a Lua script per limiter)"
	if o.Naive {
		way = "naive (GET, decide, SET: races)"
	}
	w.Line(fmt.Sprintf("store: %s, %s, %s, route %s, %d requests per round trip, on failure %s", r.addr, way, render.Plural(int64(o.Workers), "worker"), o.Route, o.Pipeline, o.OnFailure))
	if textual {
		w.Line("policy: " + sp.Describe(false))
		for _, l := range sp.LaneLines() {
			w.Line(l)
		}
		if line := tables.BackwardsLine(rep); line != "" {
			w.Line(line)
		}
		if so.rw != nil {
			w.Blank()
			if o.Verify {
				w.Line(fmt.Sprintf("%s of %d differ from the in-memory replay", render.Plural(so.differ, "decision"), rep.Requests*int64(r.nlanes)))
			}
			if so.rw.Kept() > 0 || !o.Verify {
				if o.Verify {
					w.Blank()
				}
				w.Table(so.rw.Table(nil))
			}
			if so.rw.Hidden() > 0 {
				w.Blank()
				w.Line(fmt.Sprintf("%s more not shown; -o csv lists every row", render.Plural(so.rw.Hidden(), "row")))
			}
		}
		t, _ := render.WriteRecords(nil, so.format, cols, rows)
		w.Blank()
		w.Line("summary: in memory is what the in-memory replay allowed, extra the store's allowed minus it;")
		w.Line("bound is what the limiter may allow for one key, checked on every key: violations count the allowed requests that broke it")
		w.Blank()
		w.Table(t)
		w.Blank()
	}
	for l, lane := range r.lanes {
		w.Line(so.laneVerdict(l, lane, rep))
	}
	if !textual && o.Verify {
		w.Line(fmt.Sprintf("%s of %d differ from the in-memory replay", render.Plural(so.differ, "decision"), rep.Requests*int64(r.nlanes)))
	}
	if n := r.failureDecisions(); n > 0 {
		w.Line(fmt.Sprintf("--on-failure %s decided %s the store could not", o.OnFailure, render.Plural(n, "request")))
	}
	per := render.Plural(int64(o.Pipeline), "request")
	if o.Naive {
		per = "one request and limiter: a GET and a SET"
	}
	w.Line(fmt.Sprintf("store calls: %d (%s each), %d round trips, %s, %d requests/s",
		f.calls, per, f.trips, f.elapsed.Round(time.Millisecond), perSecond(so.requests, f.elapsed)))
	w.Line(fmt.Sprintf("latency of a store call: p50 %s, p90 %s, p99 %s, max %s",
		roundLatency(f.lat.quantile(0.5)), roundLatency(f.lat.quantile(0.9)), roundLatency(f.lat.quantile(0.99)), roundLatency(f.lat.max)))
	return w.Err()
}

// laneVerdict says in a line whether lane l kept its bound, and how its
// allowed count compares with the in-memory replay's.
func (so *storeOutput) laneVerdict(l int, lane sim.Lane, rep *sim.Report) string {
	li := &so.check.lanes[l]
	mem := rep.Algos[l].Allowed
	extra := so.allowed[l] - mem
	var than string
	switch {
	case extra > 0:
		than = fmt.Sprintf("%d more than in memory (%d, +%s%%)", extra, mem, render.Pct(extra, mem))
	case extra < 0:
		than = fmt.Sprintf("%d fewer than in memory (%d)", -extra, mem)
	default:
		than = "as many as in memory"
	}
	verdict := "holds"
	if li.violations > 0 {
		verdict = fmt.Sprintf("BROKEN by %s, by up to %d (key %s at %s)", render.Plural(li.violations, "allowed request"), li.maxExcess, li.worstKey, li.worstAt)
	}
	return fmt.Sprintf("%s: allowed %d, %s; bound %s for one key: %s", lane.Name, so.allowed[l], than, li.rule(so.r.rp.spec), verdict)
}

// roundLatency shows a latency to three significant digits or so.
func roundLatency(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// prefixWriter writes each line after "ratesim: ", as diagnostics are.
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	if len(b) == 0 || b[0] == '\n' {
		return len(b), nil // no blank lines among diagnostics
	}
	if _, err := io.WriteString(p.w, "ratesim: "); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
