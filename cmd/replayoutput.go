package cmd

import (
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
	format outputFormat
	s      streams
	rw     *recordWriter // the rows; nil with --summary
	unit   time.Duration
	check  *invariantChecker

	keyed, queue bool

	requests  int64
	allowed   []int64 // per lane
	clockBack []int64 // per lane: refused because the key's time went back
	differ    int64
	laneDiff  []int64
}

func newStoreOutput(r *storeRun, format outputFormat, s streams) *storeOutput {
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
		so.rw = newRecordWriter(s.out, format, so.columns())
	}
	return so
}

// columns are the columns of the rows: run's for one limiter, compare's
// for several, and with --verify those of a decision that differs.
func (so *storeOutput) columns() []column {
	rfc := so.r.rp.trace.RFC3339()
	if so.r.o.Verify {
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
	if so.r.nlanes == 1 {
		row := runRow{queue: so.queue, keyed: so.keyed}
		return row.columns(rfc)
	}
	row := matrixRow{nlanes: so.r.nlanes, keyed: so.keyed}
	cols := row.columns(so.r.lanes, rfc)
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
				if err := so.rw.end(so.appendDiff(win, q, l, &dec[l], &mem[l])); err != nil {
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
	b = e.str(b, win.str(q.user))
	b = e.time(e.next(b), timeText)
	if so.r.nlanes == 1 {
		d := &dec[0]
		b = strconv.AppendInt(e.next(b), q.cost, 10)
		b = so.appendDecision(e, b, d)
		if so.queue {
			b = appendDuration(e.next(b), int64(d.Delay), so.unit)
		}
	} else {
		for l := range dec {
			b = strconv.AppendBool(e.next(b), dec[l].Allowed)
		}
	}
	if so.keyed {
		b = e.str(e.next(b), key)
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
func (so *storeOutput) appendDiff(win *window, q *windowReq, l int, d, m *limiters.Decision) []byte {
	rw := so.rw
	e := &rw.enc
	b := rw.begin()
	b = strconv.AppendInt(b, int64(q.line), 10)
	b = e.str(e.next(b), win.str(q.user))
	b = e.time(e.next(b), win.str(q.time))
	b = strconv.AppendInt(e.next(b), q.cost, 10)
	b = e.text(e.next(b), so.r.lanes[l].Name)
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

// flush writes out the rows so far, when the replay stops early: the
// rest of CSV or JSON, or the table of the rows kept.
func (so *storeOutput) flush() {
	if so.rw == nil {
		return
	}
	if so.rw.textual() {
		w := &textWriter{w: so.s.out, format: so.format}
		w.table(so.rw.table(nil))
		if so.rw.hidden > 0 {
			w.blank()
			w.line(fmt.Sprintf("%s more not shown; -o csv lists every row", plural(so.rw.hidden, "row")))
		}
	} else {
		_ = so.rw.close()
	}
	so.rw = nil
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
func (so *storeOutput) summaryRows(rep *sim.Report, f *storeFigures) [][]cell {
	sp := so.r.rp.spec
	o := so.r.o
	us := func(d time.Duration) cell { return intCell(int64(d / time.Microsecond)) }
	var rows [][]cell
	for l, lane := range so.r.lanes {
		li := &so.check.lanes[l]
		differ := nullCell()
		if o.Verify {
			differ = intCell(so.laneDiff[l])
		}
		memAllowed := rep.Algos[l].Allowed
		worstUser, worstAt := nullCell(), nullCell()
		if li.violations > 0 {
			worstUser, worstAt = strCell(li.worstKey), timeCell(string(li.worstAt))
		}
		limit, window, capacity, rate := sp.laneCells(lane)
		rows = append(rows, append([]cell{
			strCell(lane.Name),
			intCell(so.requests),
			intCell(so.allowed[l]),
			intCell(so.requests - so.allowed[l]),
			pctCell(so.allowed[l], so.requests),
			intCell(memAllowed),
			intCell(so.allowed[l] - memAllowed),
			differ,
			intCell(so.clockBack[l]),
			strCell(li.rule(sp)),
			boolCell(li.violations == 0),
			intCell(li.violations),
			intCell(li.maxExcess),
			worstUser, worstAt,
			strCell(so.r.addr.String()),
			intCell(int64(o.Workers)),
			strCell(o.Route),
			intCell(int64(o.Pipeline)),
			boolCell(o.Naive),
			strCell(o.OnFailure),
			intCell(so.r.failureDecisions()),
			intCell(f.calls),
			intCell(f.trips),
			numCell(strconv.FormatFloat(f.elapsed.Seconds(), 'f', 3, 64)),
			intCell(perSecond(so.requests, f.elapsed)),
			us(f.lat.quantile(0.5)), us(f.lat.quantile(0.9)), us(f.lat.quantile(0.99)), us(f.lat.max),
			limit, window, capacity, rate,
			strCell(clockName(lane.Policy.Clock)),
			strCell(unitName(sp.Unit)),
		}, sp.extraCells(lane)...))
	}
	return rows
}

// finish ends the rows and writes the summary: on standard output in a
// table or with --summary, else as a report on standard error, the data
// on standard output being the rows alone.
func (so *storeOutput) finish(rep *sim.Report) error {
	r, o, sp := so.r, so.r.o, so.r.rp.spec
	if so.rw != nil && !so.rw.textual() {
		if err := so.rw.close(); err != nil {
			return err
		}
	}
	f := so.figures()
	cols := append(slices.Clone(replaySummaryColumns), sp.extraColumns()...)
	rows := so.summaryRows(rep, f)
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
	w.line(fmt.Sprintf("replay on %s: %s, %s", r.rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
	way := "atomic (a Lua script per limiter)"
	if o.Naive {
		way = "naive (GET, decide, SET: races)"
	}
	w.line(fmt.Sprintf("store: %s, %s, %s, route %s, %d requests per round trip, on failure %s", r.addr, way, plural(int64(o.Workers), "worker"), o.Route, o.Pipeline, o.OnFailure))
	if textual {
		w.line("policy: " + sp.describe(false))
		for _, l := range sp.laneLines() {
			w.line(l)
		}
		if line := backwardsLine(rep); line != "" {
			w.line(line)
		}
		if so.rw != nil {
			w.blank()
			if o.Verify {
				w.line(fmt.Sprintf("%s of %d differ from the in-memory replay", plural(so.differ, "decision"), rep.Requests*int64(r.nlanes)))
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
		w.line("bound is what the limiter may allow for one key, checked on every key: violations count the allowed requests that broke it")
		w.blank()
		w.table(t)
		w.blank()
	}
	for l, lane := range r.lanes {
		w.line(so.laneVerdict(l, lane, rep))
	}
	if !textual && o.Verify {
		w.line(fmt.Sprintf("%s of %d differ from the in-memory replay", plural(so.differ, "decision"), rep.Requests*int64(r.nlanes)))
	}
	if n := r.failureDecisions(); n > 0 {
		w.line(fmt.Sprintf("--on-failure %s decided %s the store could not", o.OnFailure, plural(n, "request")))
	}
	per := plural(int64(o.Pipeline), "request")
	if o.Naive {
		per = "one request and limiter: a GET and a SET"
	}
	w.line(fmt.Sprintf("store calls: %d (%s each), %d round trips, %s, %d requests/s",
		f.calls, per, f.trips, f.elapsed.Round(time.Millisecond), perSecond(so.requests, f.elapsed)))
	w.line(fmt.Sprintf("latency of a store call: p50 %s, p90 %s, p99 %s, max %s",
		roundLatency(f.lat.quantile(0.5)), roundLatency(f.lat.quantile(0.9)), roundLatency(f.lat.quantile(0.99)), roundLatency(f.lat.max)))
	return w.err
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
		than = fmt.Sprintf("%d more than in memory (%d, +%s%%)", extra, mem, pct(extra, mem))
	case extra < 0:
		than = fmt.Sprintf("%d fewer than in memory (%d)", -extra, mem)
	default:
		than = "as many as in memory"
	}
	verdict := "holds"
	if li.violations > 0 {
		verdict = fmt.Sprintf("BROKEN by %s, by up to %d (key %s at %s)", plural(li.violations, "allowed request"), li.maxExcess, li.worstKey, li.worstAt)
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
