package tables

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/storereplay"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// StoreSettings are the settings of a replay against a store that its
// report states.
type StoreSettings struct {
	Addr              redisstore.Address
	Workers, Pipeline int
	Route, OnFailure  string // as given: key or spread; error, open or closed
	Naive             bool   // GET, decide, SET instead of the atomic scripts
	Verify            bool   // rows of the decisions that differ from memory
	Summary           bool   // the summary alone, no rows
}

// StoreReport renders what "ratesim replay" found: the rows (each request,
// or with --verify each decision that differs) as the replay hands them
// over, in trace order, and at the end the summary and the store's
// figures. It is the replay's storereplay.Sink.
type StoreReport struct {
	// Prefix is the run's prefix, and Before the servers' figures before
	// the replay: the summary states them and Verdict compares.
	Prefix string
	Before []redisstore.ServerStats
	// Warn says a warning on standard error, and Text is an error's
	// message for a person.
	Warn func(msg string)
	Text func(error) string

	p      *Policy
	trace  string // the trace's name
	o      StoreSettings
	format render.Format
	out    io.Writer            // the rows and a textual summary
	diag   io.Writer            // the summary of a machine format, a line per diagnostic
	rw     *render.RecordWriter // the rows; nil with --summary
	unit   time.Duration
	lanes  []sim.Lane

	keyed, queue bool
	differ       int64
}

// NewStoreReport starts the report of a replay of trace (its name) under
// policy p against a store: rows in format on out (unless o.Summary),
// with the key's column when keyed; diag takes the summary when out takes
// machine-readable rows.
func NewStoreReport(p *Policy, trace string, keyed bool, o StoreSettings, format render.Format, out, diag io.Writer) *StoreReport {
	so := &StoreReport{
		p: p, trace: trace, o: o, format: format, out: out, diag: diag, unit: p.Unit, lanes: p.Lanes,
		keyed: keyed,
		queue: slices.ContainsFunc(p.Lanes, func(l sim.Lane) bool { return l.Algorithm.Delays() }),
		Warn:  func(string) {},
		Text:  spec.Text,
	}
	if !o.Summary {
		so.rw = render.NewRecordWriter(out, format, so.columns())
	}
	return so
}

// columns are the columns of the rows: run's for one limiter, compare's
// for several, and with --verify those of a decision that differs.
func (so *StoreReport) columns() []render.Column {
	rfc := so.p.RFC3339
	if so.o.Verify {
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
	if len(so.lanes) == 1 {
		row := RunRow{Queue: so.queue, Keyed: so.keyed}
		return row.Columns(rfc)
	}
	row := MatrixRow{Lanes: len(so.lanes), Keyed: so.keyed}
	return row.Columns(so.lanes, rfc)
}

// Request writes one decided request's row, or with --verify the rows
// of its decisions that differ from the in-memory replay's.
func (so *StoreReport) Request(q *storereplay.Request) error {
	if q.Memory != nil {
		for l := range q.Store {
			if q.Store[l] == q.Memory[l] {
				continue
			}
			so.differ++
			if so.rw != nil {
				if err := so.rw.End(so.appendDiff(q, l, &q.Store[l], &q.Memory[l])); err != nil {
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
	b = e.Bytes(b, q.User)
	b = e.Time(e.Next(b), q.Time)
	if len(q.Store) == 1 {
		d := &q.Store[0]
		b = strconv.AppendInt(e.Next(b), q.Cost, 10)
		b = so.appendDecision(e, b, d)
		if so.queue {
			b = AppendDuration(e.Next(b), int64(d.Delay), so.unit)
		}
	} else {
		for l := range q.Store {
			b = strconv.AppendBool(e.Next(b), q.Store[l].Allowed)
		}
	}
	if so.keyed {
		b = e.Bytes(e.Next(b), q.Key)
	}
	return rw.End(b)
}

// appendDecision appends a decision's allowed, remaining, retry_after,
// reset_after and reason, each after next.
func (so *StoreReport) appendDecision(e *render.Encoder, b []byte, d *limiters.Decision) []byte {
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	if d.Reason == limiters.ReasonCost {
		b = e.Null(e.Next(b))
	} else {
		b = AppendDuration(e.Next(b), int64(d.RetryAfter), so.unit)
	}
	b = AppendDuration(e.Next(b), int64(d.ResetAfter), so.unit)
	return e.Text(e.Next(b), string(d.Reason))
}

// appendDiff appends the row of lane l's decision on q that differs: the
// store's d and the in-memory replay's m, field beside field.
func (so *StoreReport) appendDiff(q *storereplay.Request, l int, d, m *limiters.Decision) []byte {
	rw := so.rw
	e := rw.Enc()
	b := rw.Begin()
	b = strconv.AppendInt(b, int64(q.Line), 10)
	b = e.Bytes(e.Next(b), q.User)
	b = e.Time(e.Next(b), q.Time)
	b = strconv.AppendInt(e.Next(b), q.Cost, 10)
	b = e.Text(e.Next(b), so.lanes[l].Name)
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	b = strconv.AppendBool(e.Next(b), m.Allowed)
	b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	b = strconv.AppendInt(e.Next(b), m.Remaining, 10)
	for _, x := range []*limiters.Decision{d, m} {
		if x.Reason == limiters.ReasonCost {
			b = e.Null(e.Next(b))
		} else {
			b = AppendDuration(e.Next(b), int64(x.RetryAfter), so.unit)
		}
	}
	b = AppendDuration(e.Next(b), int64(d.ResetAfter), so.unit)
	b = AppendDuration(e.Next(b), int64(m.ResetAfter), so.unit)
	b = e.Text(e.Next(b), string(d.Reason))
	b = e.Text(e.Next(b), string(m.Reason))
	if so.queue {
		b = AppendDuration(e.Next(b), int64(d.Delay), so.unit)
		b = AppendDuration(e.Next(b), int64(m.Delay), so.unit)
	}
	return b
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
	{Name: "prefix", MachineOnly: true},
	{Name: "evicted_keys", MachineOnly: true},
	{Name: "flushes", MachineOnly: true},
	{Name: "complete", MachineOnly: true},
}

// perSecond is n per elapsed, in whole units.
func perSecond(n int64, elapsed time.Duration) int64 {
	if elapsed <= 0 {
		return 0
	}
	return int64(float64(n) / elapsed.Seconds())
}

// lost returns the keys evicted and the flushes between two readings of
// the servers' figures.
func lost(before, after []redisstore.ServerStats) (evicted, flushes int64) {
	for _, a := range after {
		for _, b := range before {
			if a.Addr == b.Addr {
				evicted += max(0, a.EvictedKeys-b.EvictedKeys)
				flushes += max(0, a.Flushes-b.Flushes)
			}
		}
	}
	return evicted, flushes
}

// boundText states a lane's bound: "at most 3 per aligned 10s window",
// "at most 3 in any 10s", "at most 3 + 0.3 per s x elapsed".
func (so *StoreReport) boundText(b *storereplay.Bound) string {
	sp := so.p
	switch b.Kind {
	case storereplay.BoundSpans:
		if b.Spans == 1 {
			return fmt.Sprintf("at most %d per aligned %s window", b.Limit, sp.Duration(b.Span))
		}
		return fmt.Sprintf("at most %d in any %d aligned %s sub-windows", b.Limit, b.Spans, sp.Duration(b.Span))
	case storereplay.BoundRolling:
		return fmt.Sprintf("at most %d in any %s", b.Limit, sp.Duration(b.Window))
	}
	return fmt.Sprintf("at most %d + %s per %s x elapsed", b.Capacity, b.Rate.Format(sp.Unit), traces.UnitName(sp.Unit))
}

// summaryRows are the rows of the summary, one per lane.
func (so *StoreReport) summaryRows(res *storereplay.Result, complete bool, before []redisstore.ServerStats) [][]render.Cell {
	sp := so.p
	o := so.o
	us := func(d time.Duration) render.Cell { return render.Int(int64(d / time.Microsecond)) }
	evicted, flushes := lost(before, res.After)
	var rows [][]render.Cell
	for l, lane := range so.lanes {
		lr := &res.Lanes[l]
		b := &lr.Bound
		differ := render.Null()
		if o.Verify {
			differ = render.Int(lr.Differ)
		}
		worstUser, worstAt := render.Null(), render.Null()
		if b.Violations > 0 {
			worstUser, worstAt = render.Str(b.WorstKey), render.Time(b.WorstAt)
		}
		limit, window, capacity, rate := sp.LaneCells(lane)
		rows = append(rows, append([]render.Cell{
			render.Str(lane.Name),
			render.Int(res.Requests),
			render.Int(lr.Allowed),
			render.Int(res.Requests - lr.Allowed),
			render.PctCell(lr.Allowed, res.Requests),
			render.Int(lr.MemoryAllowed),
			render.Int(lr.Allowed - lr.MemoryAllowed),
			differ,
			render.Int(lr.ClockBackwards),
			render.Str(so.boundText(b)),
			render.Bool(b.Holds()),
			render.Int(b.Violations),
			render.Int(b.MaxExcess),
			worstUser, worstAt,
			render.Str(so.o.Addr.String()),
			render.Int(int64(o.Workers)),
			render.Str(o.Route),
			render.Int(int64(o.Pipeline)),
			render.Bool(o.Naive),
			render.Str(o.OnFailure),
			render.Int(lr.FailureDecisions),
			render.Int(res.Calls),
			render.Int(res.RoundTrips),
			render.Num(strconv.FormatFloat(res.Elapsed.Seconds(), 'f', 3, 64)),
			render.Int(perSecond(res.Requests, res.Elapsed)),
			us(res.Latency.Quantile(0.5)), us(res.Latency.Quantile(0.9)), us(res.Latency.Quantile(0.99)), us(res.Latency.Max()),
			limit, window, capacity, rate,
			render.Str(spec.ClockName(lane.Policy.Clock)),
			render.Str(traces.UnitName(sp.Unit)),
			render.Str(so.Prefix),
			render.Int(evicted),
			render.Int(flushes),
			render.Bool(complete),
		}, sp.ExtraCells(lane)...))
	}
	return rows
}

// Finish ends the rows and writes the summary: on standard output in a
// table or with --summary, else as a report on standard error, the data
// on standard output being the rows alone. A replay that stopped early
// gets the summary of the requests it decided.
func (so *StoreReport) Finish(res *storereplay.Result, stopped *storereplay.StoppedError) error {
	o, sp := so.o, so.p
	if res == nil {
		return nil
	}
	if so.rw != nil && !so.rw.Textual() {
		if err := so.rw.Close(); err != nil {
			return err
		}
	}
	cols := append(slices.Clone(replaySummaryColumns), sp.ExtraColumns()...)
	rows := so.summaryRows(res, stopped == nil, so.Before)
	textual := !so.format.Machine()
	if o.Summary && !textual {
		_, err := render.WriteRecords(so.out, so.format, cols, rows)
		return err
	}
	var w *render.TextWriter
	if textual {
		w = render.NewTextWriter(so.out, so.format)
	} else {
		w = render.NewTextWriter(so.diag, render.FormatTable)
	}
	head := fmt.Sprintf("replay on %s: %s", so.trace, render.Plural(res.Requests, "request"))
	switch {
	case stopped != nil:
		head += " decided before the replay stopped"
	case res.Memory != nil:
		head += ", " + render.Plural(int64(res.Memory.Keys), "key")
	}
	w.Line(head)
	way := "atomic (a Lua script per limiter)"
	if o.Naive {
		way = "naive (GET, decide, SET: races)"
	}
	w.Line(fmt.Sprintf("store: %s, %s, %s, route %s, %d requests per round trip, on failure %s", so.o.Addr, way, render.Plural(int64(o.Workers), "worker"), o.Route, o.Pipeline, o.OnFailure))
	if textual {
		w.Line("policy: " + sp.Describe(false))
		for _, l := range sp.LaneLines() {
			w.Line(l)
		}
		if res.Memory != nil {
			if line := BackwardsLine(res.Memory); line != "" {
				w.Line(line)
			}
		}
		if so.rw != nil {
			w.Blank()
			if o.Verify {
				w.Line(fmt.Sprintf("%s of %d differ from the in-memory replay", render.Plural(so.differ, "decision"), res.Requests*int64(len(so.lanes))))
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
		w.Line("bound is what the limiter may allow for one key, checked on every key at the times the store judged: violations count the allowed requests that broke it")
		w.Blank()
		w.Table(t)
		w.Blank()
	}
	for l, lane := range so.lanes {
		w.Line(so.laneVerdict(&res.Lanes[l], lane))
	}
	if !textual && o.Verify {
		w.Line(fmt.Sprintf("%s of %d differ from the in-memory replay", render.Plural(so.differ, "decision"), res.Requests*int64(len(so.lanes))))
	}
	if n := failureDecisions(res); n > 0 {
		w.Line(fmt.Sprintf("--on-failure %s decided %s the store could not", o.OnFailure, render.Plural(n, "decision")))
	}
	per := render.Plural(int64(o.Pipeline), "request")
	if o.Naive {
		per = "one request and limiter: a GET and a SET"
	}
	w.Line(fmt.Sprintf("store calls: %d (%s each), %d round trips, %s, %d requests/s",
		res.Calls, per, res.RoundTrips, res.Elapsed.Round(time.Millisecond), perSecond(res.Requests, res.Elapsed)))
	w.Line(fmt.Sprintf("latency of a request (the round trip of its call): p50 %s, p90 %s, p99 %s, max %s",
		roundLatency(res.Latency.Quantile(0.5)), roundLatency(res.Latency.Quantile(0.9)), roundLatency(res.Latency.Quantile(0.99)), roundLatency(res.Latency.Max())))
	return w.Err()
}

func failureDecisions(res *storereplay.Result) int64 {
	var n int64
	for _, l := range res.Lanes {
		n += l.FailureDecisions
	}
	return n
}

// laneVerdict says in a line whether the lane kept its bound, and how its
// allowed count compares with the in-memory replay's.
func (so *StoreReport) laneVerdict(lr *storereplay.LaneResult, lane sim.Lane) string {
	b := &lr.Bound
	mem := lr.MemoryAllowed
	extra := lr.Allowed - mem
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
	if b.Violations > 0 {
		verdict = fmt.Sprintf("BROKEN by %s, by up to %d (key %s at %s)", render.Plural(b.Violations, "allowed request"), b.MaxExcess, b.WorstKey, b.WorstAt)
	}
	return fmt.Sprintf("%s: allowed %d, %s; bound %s for one key: %s", lane.Name, lr.Allowed, than, so.boundText(b), verdict)
}

// Stopped says why a replay stopped early (what failed, or that it was
// interrupted) and what was and was not written.
func (so *StoreReport) Stopped(e *storereplay.StoppedError) string {
	what := "the store failed: " + so.Text(e.Err)
	if e.Interrupted {
		what = "interrupted"
	}
	done := "decided and written in trace order"
	if so.o.Summary {
		where := "on standard output"
		if !so.format.Machine() {
			where = "above"
		}
		done = "decided in trace order and counted in the summary " + where + " (no row is written with --summary)"
	}
	msg := fmt.Sprintf("%s; %s %s", what, render.Plural(e.Written, "request"), done)
	if e.Line > 0 {
		msg += fmt.Sprintf(", stopped at %s:%d (request %d)", e.File, e.Line, e.Written+1)
	}
	return msg
}

// Verdict returns the error a complete replay ends with: state lost under
// --verify, the atomic store past a bound, or decisions that differ under
// --verify --route key; nil when all is well. Lost state is warned about
// in any case.
func (so *StoreReport) Verdict(res *storereplay.Result) error {
	o, before := so.o, so.Before
	var problems []string
	if res.StatErr != nil {
		so.Warn(fmt.Sprintf("could not read the server's INFO after the replay (%s): evictions and flushes during it go unseen", so.Text(res.StatErr)))
	}
	evicted, flushes := lost(before, res.After)
	if evicted > 0 {
		so.Warn(fmt.Sprintf("the server evicted %s during the replay: limiters' states may have been lost, and their keys decided as fresh", render.Plural(evicted, "key")))
		problems = append(problems, render.Plural(evicted, "key")+" evicted")
	}
	if flushes > 0 {
		so.Warn(fmt.Sprintf("FLUSHALL or FLUSHDB ran %s during the replay: limiters' states were lost, and their keys decided as fresh", render.Plural(flushes, "time")))
		problems = append(problems, "flushed "+render.Plural(flushes, "time"))
	}
	if len(problems) > 0 && o.Verify {
		return fmt.Errorf("the limiters' state was lost during the replay (%s): its decisions are not the store's own", strings.Join(problems, ", "))
	}
	if !o.Naive {
		var broken []string
		for l, lr := range res.Lanes {
			if lr.Bound.Violations > 0 {
				broken = append(broken, so.lanes[l].Name)
			}
		}
		if len(broken) > 0 {
			cause := "a bug, or state lost behind the store's back"
			if len(problems) > 0 {
				cause = strings.Join(problems, ", ")
			}
			return fmt.Errorf("the atomic store broke the bound of %s (%s)", strings.Join(broken, ", "), cause)
		}
	}
	if o.Verify && o.Route == "key" && so.differ > 0 && failureDecisions(res) == 0 {
		return fmt.Errorf("%s of the store differ from the in-memory replay under --route key", render.Plural(so.differ, "decision"))
	}
	return nil
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
