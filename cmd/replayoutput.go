package cmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/storereplay"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/sim"
)

// storeOutput renders what "ratesim replay" found: the rows (each request,
// or with --verify each decision that differs) as the replay hands them
// over, in trace order, and at the end the summary and the store's
// figures. It is the replay's storereplay.Sink.
type storeOutput struct {
	rp     *replay
	o      *replayOptions
	addr   redisstore.Address
	format outputFormat
	s      streams
	rw     *recordWriter // the rows; nil with --summary
	unit   time.Duration
	lanes  []sim.Lane

	keyed, queue bool
	differ       int64
	prefix       string                   // the run's
	before       []redisstore.ServerStats // the server's figures before the replay
}

func newStoreOutput(rp *replay, o *replayOptions, addr redisstore.Address, format outputFormat, s streams) *storeOutput {
	so := &storeOutput{
		rp: rp, o: o, addr: addr, format: format, s: s, unit: rp.spec.Unit, lanes: rp.spec.Lanes,
		keyed: len(o.trace.Key) > 0,
		queue: slices.ContainsFunc(rp.spec.Lanes, func(l sim.Lane) bool { return l.Algorithm.Delays() }),
	}
	if !o.Summary {
		so.rw = newRecordWriter(s.out, format, so.columns())
	}
	return so
}

// columns are the columns of the rows: run's for one limiter, compare's
// for several, and with --verify those of a decision that differs.
func (so *storeOutput) columns() []column {
	rfc := so.rp.trace.RFC3339()
	if so.o.Verify {
		cols := []column{{name: "line", right: true}, {name: "user"}, {name: "timestamp", right: !rfc}, {name: "cost", right: true}, {name: "limiter"}}
		for _, c := range []column{
			{name: "allowed"}, {name: "remaining", right: true}, {name: "retry_after", right: true, nullText: "never"},
			{name: "reset_after", right: true}, {name: "reason"}, {name: "delay", right: true},
		} {
			if c.name == "delay" && !so.queue {
				continue
			}
			mem := c
			mem.name = "memory_" + c.name
			cols = append(cols, c, mem)
		}
		return cols
	}
	if len(so.lanes) == 1 {
		row := runRow{queue: so.queue, keyed: so.keyed}
		return row.columns(rfc)
	}
	row := matrixRow{nlanes: len(so.lanes), keyed: so.keyed}
	return row.columns(so.lanes, rfc)
}

// Request writes one decided request's row, or with --verify the rows
// of its decisions that differ from the in-memory replay's.
func (so *storeOutput) Request(q *storereplay.Request) error {
	if q.Memory != nil {
		for l := range q.Store {
			if q.Store[l] == q.Memory[l] {
				continue
			}
			so.differ++
			if so.rw != nil {
				if err := so.rw.end(so.appendDiff(q, l, &q.Store[l], &q.Memory[l])); err != nil {
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
	e := &rw.enc
	b := rw.begin()
	b = e.str(b, q.User)
	b = e.time(e.next(b), q.Time)
	if len(q.Store) == 1 {
		d := &q.Store[0]
		b = strconv.AppendInt(e.next(b), q.Cost, 10)
		b = so.appendDecision(e, b, d)
		if so.queue {
			b = appendDuration(e.next(b), int64(d.Delay), so.unit)
		}
	} else {
		for l := range q.Store {
			b = strconv.AppendBool(e.next(b), q.Store[l].Allowed)
		}
	}
	if so.keyed {
		b = e.str(e.next(b), q.Key)
	}
	return rw.end(b)
}

// appendDecision appends a decision's allowed, remaining, retry_after,
// reset_after and reason, each after next.
func (so *storeOutput) appendDecision(e *encoder, b []byte, d *limiters.Decision) []byte {
	b = strconv.AppendBool(e.next(b), d.Allowed)
	b = strconv.AppendInt(e.next(b), d.Remaining, 10)
	if d.Reason == limiters.ReasonCost {
		b = e.null(e.next(b))
	} else {
		b = appendDuration(e.next(b), int64(d.RetryAfter), so.unit)
	}
	b = appendDuration(e.next(b), int64(d.ResetAfter), so.unit)
	return e.text(e.next(b), string(d.Reason))
}

// appendDiff appends the row of lane l's decision on q that differs: the
// store's d and the in-memory replay's m, field beside field.
func (so *storeOutput) appendDiff(q *storereplay.Request, l int, d, m *limiters.Decision) []byte {
	rw := so.rw
	e := &rw.enc
	b := rw.begin()
	b = strconv.AppendInt(b, int64(q.Line), 10)
	b = e.str(e.next(b), q.User)
	b = e.time(e.next(b), q.Time)
	b = strconv.AppendInt(e.next(b), q.Cost, 10)
	b = e.text(e.next(b), so.lanes[l].Name)
	b = strconv.AppendBool(e.next(b), d.Allowed)
	b = strconv.AppendBool(e.next(b), m.Allowed)
	b = strconv.AppendInt(e.next(b), d.Remaining, 10)
	b = strconv.AppendInt(e.next(b), m.Remaining, 10)
	for _, x := range []*limiters.Decision{d, m} {
		if x.Reason == limiters.ReasonCost {
			b = e.null(e.next(b))
		} else {
			b = appendDuration(e.next(b), int64(x.RetryAfter), so.unit)
		}
	}
	b = appendDuration(e.next(b), int64(d.ResetAfter), so.unit)
	b = appendDuration(e.next(b), int64(m.ResetAfter), so.unit)
	b = e.text(e.next(b), string(d.Reason))
	b = e.text(e.next(b), string(m.Reason))
	if so.queue {
		b = appendDuration(e.next(b), int64(d.Delay), so.unit)
		b = appendDuration(e.next(b), int64(m.Delay), so.unit)
	}
	return b
}

// replaySummaryColumns are the columns of replay --summary: compare's
// names where they mean the same, then the bounds' check, then the store's
// figures, which are the same in every row.
var replaySummaryColumns = []column{
	{name: "algo"},
	{name: "requests", right: true},
	{name: "allowed", right: true},
	{name: "rejected", right: true},
	{name: "allow_pct", right: true, title: "allow %", suffix: "%"},
	{name: "memory_allowed", right: true, title: "in memory"},
	{name: "extra_allowed", right: true, title: "extra"},
	{name: "differ", right: true, omitNull: true},
	{name: "clock_backwards", right: true, title: "clock back"},
	{name: "bound"},
	{name: "holds"},
	{name: "violations", right: true},
	{name: "max_excess", right: true},
	{name: "worst_user", machineOnly: true},
	{name: "worst_at", machineOnly: true},
	{name: "store", machineOnly: true},
	{name: "workers", machineOnly: true},
	{name: "route", machineOnly: true},
	{name: "pipeline", machineOnly: true},
	{name: "naive", machineOnly: true},
	{name: "on_failure", machineOnly: true},
	{name: "failure_decisions", machineOnly: true},
	{name: "store_calls", machineOnly: true},
	{name: "round_trips", machineOnly: true},
	{name: "elapsed_s", machineOnly: true},
	{name: "requests_per_s", machineOnly: true},
	{name: "latency_p50_us", machineOnly: true},
	{name: "latency_p90_us", machineOnly: true},
	{name: "latency_p99_us", machineOnly: true},
	{name: "latency_max_us", machineOnly: true},
	{name: "limit", machineOnly: true},
	{name: "window", machineOnly: true},
	{name: "capacity", omitNull: true, machineOnly: true},
	{name: "rate", omitNull: true, machineOnly: true},
	{name: "clock", machineOnly: true},
	{name: "unit", machineOnly: true},
	{name: "prefix", machineOnly: true},
	{name: "evicted_keys", machineOnly: true},
	{name: "flushes", machineOnly: true},
	{name: "complete", machineOnly: true},
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
func (so *storeOutput) boundText(b *storereplay.Bound) string {
	sp := so.rp.spec
	switch b.Kind {
	case storereplay.BoundSpans:
		if b.Spans == 1 {
			return fmt.Sprintf("at most %d per aligned %s window", b.Limit, sp.duration(b.Span))
		}
		return fmt.Sprintf("at most %d in any %d aligned %s sub-windows", b.Limit, b.Spans, sp.duration(b.Span))
	case storereplay.BoundRolling:
		return fmt.Sprintf("at most %d in any %s", b.Limit, sp.duration(b.Window))
	}
	return fmt.Sprintf("at most %d + %s per %s x elapsed", b.Capacity, b.Rate.Format(sp.Unit), unitName(sp.Unit))
}

// summaryRows are the rows of the summary, one per lane.
func (so *storeOutput) summaryRows(res *storereplay.Result, complete bool, before []redisstore.ServerStats) [][]cell {
	sp := so.rp.spec
	o := so.o
	us := func(d time.Duration) cell { return intCell(int64(d / time.Microsecond)) }
	evicted, flushes := lost(before, res.After)
	var rows [][]cell
	for l, lane := range so.lanes {
		lr := &res.Lanes[l]
		b := &lr.Bound
		differ := nullCell()
		if o.Verify {
			differ = intCell(lr.Differ)
		}
		worstUser, worstAt := nullCell(), nullCell()
		if b.Violations > 0 {
			worstUser, worstAt = strCell(b.WorstKey), timeCell(b.WorstAt)
		}
		limit, window, capacity, rate := sp.laneCells(lane)
		rows = append(rows, append([]cell{
			strCell(lane.Name),
			intCell(res.Requests),
			intCell(lr.Allowed),
			intCell(res.Requests - lr.Allowed),
			numCell(pct(lr.Allowed, res.Requests)),
			intCell(lr.MemoryAllowed),
			intCell(lr.Allowed - lr.MemoryAllowed),
			differ,
			intCell(lr.ClockBackwards),
			strCell(so.boundText(b)),
			boolCell(b.Holds()),
			intCell(b.Violations),
			intCell(b.MaxExcess),
			worstUser, worstAt,
			strCell(so.addr.String()),
			intCell(int64(o.Workers)),
			strCell(o.Route),
			intCell(int64(o.Pipeline)),
			boolCell(o.Naive),
			strCell(o.OnFailure),
			intCell(lr.FailureDecisions),
			intCell(res.Calls),
			intCell(res.RoundTrips),
			numCell(strconv.FormatFloat(res.Elapsed.Seconds(), 'f', 3, 64)),
			intCell(perSecond(res.Requests, res.Elapsed)),
			us(res.Latency.Quantile(0.5)), us(res.Latency.Quantile(0.9)), us(res.Latency.Quantile(0.99)), us(res.Latency.Max()),
			limit, window, capacity, rate,
			strCell(clockName(lane.Policy.Clock)),
			strCell(unitName(sp.Unit)),
			strCell(so.prefix),
			intCell(evicted),
			intCell(flushes),
			boolCell(complete),
		}, sp.extraCells(lane)...))
	}
	return rows
}

// finish ends the rows and writes the summary: on standard output in a
// table or with --summary, else as a report on standard error, the data
// on standard output being the rows alone. A replay that stopped early
// gets the summary of the requests it decided.
func (so *storeOutput) finish(res *storereplay.Result, stopped *storereplay.StoppedError) error {
	o, sp := so.o, so.rp.spec
	if res == nil {
		return nil
	}
	if so.rw != nil && !so.rw.textual() {
		if err := so.rw.close(); err != nil {
			return err
		}
	}
	cols := append(slices.Clone(replaySummaryColumns), sp.extraColumns()...)
	rows := so.summaryRows(res, stopped == nil, so.before)
	textual := so.format == outTable || so.format == outMarkdown
	if o.Summary && !textual {
		_, err := writeRecords(so.s.out, so.format, cols, rows)
		return err
	}
	var w *textWriter
	if textual {
		w = &textWriter{w: so.s.out, format: so.format}
	} else {
		w = &textWriter{w: prefixWriter{so.s.err}, format: outTable}
	}
	head := fmt.Sprintf("replay on %s: %s", so.rp.trace.name, plural(res.Requests, "request"))
	switch {
	case stopped != nil:
		head += " decided before the replay stopped"
	case res.Memory != nil:
		head += ", " + plural(int64(res.Memory.Keys), "key")
	}
	w.line(head)
	way := "atomic (a Lua script per limiter)"
	if o.Naive {
		way = "naive (GET, decide, SET: races)"
	}
	w.line(fmt.Sprintf("store: %s, %s, %s, route %s, %d requests per round trip, on failure %s", so.addr, way, plural(int64(o.Workers), "worker"), o.Route, o.Pipeline, o.OnFailure))
	if textual {
		w.line("policy: " + sp.describe(false))
		for _, l := range sp.laneLines() {
			w.line(l)
		}
		if res.Memory != nil {
			if line := backwardsLine(res.Memory); line != "" {
				w.line(line)
			}
		}
		if so.rw != nil {
			w.blank()
			if o.Verify {
				w.line(fmt.Sprintf("%s of %d differ from the in-memory replay", plural(so.differ, "decision"), res.Requests*int64(len(so.lanes))))
			}
			if len(so.rw.cells) > 0 || !o.Verify {
				if o.Verify {
					w.blank()
				}
				w.table(so.rw.table(nil))
			}
			if so.rw.hidden > 0 {
				w.blank()
				w.line(fmt.Sprintf("%s more not shown; -o csv lists every row", plural(so.rw.hidden, "row")))
			}
		}
		t, _ := writeRecords(nil, so.format, cols, rows)
		w.blank()
		w.line("summary: in memory is what the in-memory replay allowed, extra the store's allowed minus it;")
		w.line("bound is what the limiter may allow for one key, checked on every key at the times the store judged: violations count the allowed requests that broke it")
		w.blank()
		w.table(t)
		w.blank()
	}
	for l, lane := range so.lanes {
		w.line(so.laneVerdict(&res.Lanes[l], lane))
	}
	if !textual && o.Verify {
		w.line(fmt.Sprintf("%s of %d differ from the in-memory replay", plural(so.differ, "decision"), res.Requests*int64(len(so.lanes))))
	}
	if n := failureDecisions(res); n > 0 {
		w.line(fmt.Sprintf("--on-failure %s decided %s the store could not", o.OnFailure, plural(n, "decision")))
	}
	per := plural(int64(o.Pipeline), "request")
	if o.Naive {
		per = "one request and limiter: a GET and a SET"
	}
	w.line(fmt.Sprintf("store calls: %d (%s each), %d round trips, %s, %d requests/s",
		res.Calls, per, res.RoundTrips, res.Elapsed.Round(time.Millisecond), perSecond(res.Requests, res.Elapsed)))
	w.line(fmt.Sprintf("latency of a request (the round trip of its call): p50 %s, p90 %s, p99 %s, max %s",
		roundLatency(res.Latency.Quantile(0.5)), roundLatency(res.Latency.Quantile(0.9)), roundLatency(res.Latency.Quantile(0.99)), roundLatency(res.Latency.Max())))
	return w.err
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
func (so *storeOutput) laneVerdict(lr *storereplay.LaneResult, lane sim.Lane) string {
	b := &lr.Bound
	mem := lr.MemoryAllowed
	extra := lr.Allowed - mem
	var than string
	switch {
	case extra > 0:
		than = fmt.Sprintf("%d more than in memory (%d, +%s%%)", extra, mem, pct(extra, mem))
	case extra < 0:
		than = fmt.Sprintf("%d fewer than in memory (%d)", -extra, mem)
	default:
		than = "as many as in memory"
	}
	verdict := "holds"
	if b.Violations > 0 {
		verdict = fmt.Sprintf("BROKEN by %s, by up to %d (key %s at %s)", plural(b.Violations, "allowed request"), b.MaxExcess, b.WorstKey, b.WorstAt)
	}
	return fmt.Sprintf("%s: allowed %d, %s; bound %s for one key: %s", lane.Name, lr.Allowed, than, so.boundText(b), verdict)
}

// stoppedError is the error of a replay that stopped early: what failed,
// and what was and was not written.
func (so *storeOutput) stoppedError(e *storereplay.StoppedError) error {
	what := "the store failed: " + ErrorText(e.Err)
	if e.Interrupted {
		what = "interrupted"
	}
	done := "decided and written in trace order"
	if so.o.Summary {
		where := "on standard output"
		if so.format == outTable || so.format == outMarkdown {
			where = "above"
		}
		done = "decided in trace order and counted in the summary " + where + " (no row is written with --summary)"
	}
	msg := fmt.Sprintf("%s; %s %s", what, plural(e.Written, "request"), done)
	if e.Line > 0 {
		msg += fmt.Sprintf(", stopped at %s:%d (request %d)", e.File, e.Line, e.Written+1)
	}
	if e.Interrupted {
		return &interruptedError{msg: msg, err: e.Err}
	}
	return fmt.Errorf("%s", msg)
}

// interruptedError is a replay stopped by an interrupt: it unwraps to the
// context's error, which the root maps to its exit status.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }

// verdict returns the error a complete replay ends with: state lost under
// --verify, the atomic store past a bound, or decisions that differ under
// --verify --route key; nil when all is well. Lost state is warned about
// in any case.
func (so *storeOutput) verdict(res *storereplay.Result) error {
	o, before := so.o, so.before
	var problems []string
	if res.StatErr != nil {
		warnf(so.s.err, "could not read the server's INFO after the replay (%s): evictions and flushes during it go unseen", ErrorText(res.StatErr))
	}
	evicted, flushes := lost(before, res.After)
	if evicted > 0 {
		warnf(so.s.err, "the server evicted %s during the replay: limiters' states may have been lost, and their keys decided as fresh", plural(evicted, "key"))
		problems = append(problems, plural(evicted, "key")+" evicted")
	}
	if flushes > 0 {
		warnf(so.s.err, "FLUSHALL or FLUSHDB ran %s during the replay: limiters' states were lost, and their keys decided as fresh", plural(flushes, "time"))
		problems = append(problems, "flushed "+plural(flushes, "time"))
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
		return fmt.Errorf("%s of the store differ from the in-memory replay under --route key", plural(so.differ, "decision"))
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
