package cmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

var compareLong = `Replay a trace through several algorithms at once and show their decisions
side by side: one row per request, one column per algorithm (true when it
allowed the request). In a table, rows where the algorithms disagree are
marked with * in the diff column, and the matrix is followed by a summary per
algorithm and a pairwise agreement matrix.

The summary counts requests, allowed, rejected, the most cost allowed for one
key in any closed interval of --interval (default: the window) and its ratio
to the limit, the false allows and false rejects against the oracle (a
sliding log with the same limit and window: the exact rolling policy) and the
time of the first rejection.

` + wrapText("Default algorithms: the five classic algorithms ("+strings.Join(algoNames(limiters.ClassicAlgorithms()), ", ")+
	"); --algos all adds "+joinList(algoNames(slices.DeleteFunc(limiters.AllAlgorithms(), func(a limiters.Algorithm) bool {
	return slices.Contains(limiters.ClassicAlgorithms(), a)
})), "and")+".", "", 78)

const compareExample = `  ratesim compare traces/examples/boundary.csv
  ratesim compare --algos fixed-window,sliding-log --diff trace.csv
  ratesim compare --summary -o json trace.csv`

// compareOptions are the options of "ratesim compare".
type compareOptions struct {
	trace    traceOptions
	policy   policyOptions
	Algos    []string
	Summary  bool
	Diff     bool
	Interval string
	Output   string
	// Timeline is the length of the intervals of --timeline; "" for none.
	Timeline string
	// ByKey is how many keys --by-key lists per limiter; 0 for none.
	ByKey   int
	clients clientOptions
	// With names the extra columns of the requests: file, line, or
	// attributes.
	With []string
}

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	c := &cobra.Command{
		Use:               "compare [--algos a,b|all] [flags] TRACE|- [TRACE...]",
		Short:             "Replay a trace through several algorithms, side by side",
		Long:              compareLong + policyHelp + clientHelp + stackHelp,
		Example:           compareExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.policy.markSet(c.Flags())
			return runCompare(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to compare, comma-separated, or all (default: the five classic algorithms)")
	fs.BoolVar(&o.Summary, "summary", false, "print only the summary per algorithm and the agreement table")
	fs.BoolVar(&o.Diff, "diff", false, "print only the requests the algorithms decide differently")
	fs.StringVar(&o.Interval, "interval", "", "burst interval for max_in_interval (default: the window)")
	fs.IntVar(&o.ByKey, "by-key", 0, "print, per limiter, the N keys it rejected most, with their requests, rejections, false rejects and first rejection, instead of the requests")
	fs.StringVar(&o.Timeline, "timeline", "", "print, per interval of this length, each limiter's requests, allowed, rejected, false allows and rejects, and the keys active, instead of the requests")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	addClientFlags(fs, &o.clients)
	addLabelFlags(fs, &o.trace)
	fs.StringSliceVar(&o.With, "with", nil, "extra columns of the requests, comma-separated: file and line (where the request is in the traces) or any field of the trace")
	registerCompletions(c)
	return c
}

// runCompare replays o.trace through several algorithms and writes the
// decision matrix, the summaries and the agreement matrix.
func runCompare(o *compareOptions, s streams) error {
	algos, specs, err := o.policy.lanesGiven(o.Algos)
	if err != nil {
		return err
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if o.Summary && o.Diff {
		return usageErrorf("--summary and --diff exclude each other")
	}
	if o.Timeline != "" && (o.Summary || o.Diff) {
		return usageErrorf("--timeline excludes --summary and --diff")
	}
	switch {
	case o.ByKey < 0 || o.ByKey == 0 && o.policy.set["by-key"]:
		return usageErrorf("--by-key must be positive, got %d", o.ByKey)
	case o.ByKey > 0 && (o.Summary || o.Diff || o.Timeline != ""):
		return usageErrorf("--by-key excludes --summary, --diff and --timeline")
	}
	clients, err := o.clients.parse(o.policy.set)
	if err != nil {
		return err
	}
	stack, err := o.policy.stackOf()
	if err != nil {
		return err
	}
	if stack != nil {
		switch {
		case !o.Summary || o.Timeline != "" || o.ByKey > 0 || clients.Model != sim.ClientsNone:
			return usageErrorf("%s stacks policies: compare gives their --summary (run lists the requests)", o.policy.Config)
		case o.Algos != nil:
			return usageErrorf("%s stacks policies: --algos does not join them", o.policy.Config)
		}
		mode, err := o.policy.stackMode()
		if err != nil {
			return err
		}
		rp, policies, err := prepareStack(&o.trace, &o.policy, stack, s)
		if err != nil {
			return err
		}
		defer rp.trace.Close()
		return runStackSummary(rp, policies, mode, format, s)
	}
	if clients.Model != sim.ClientsNone && (!o.Summary || o.Timeline != "" || o.ByKey > 0) {
		return usageErrorf("--clients needs --summary: each limiter sees its own retries, so the requests are not one list to set side by side")
	}
	if err := checkKeys(o.trace.Key); err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	if clients.Model != sim.ClientsNone {
		return runClientSummary(rp, clients, format, s)
	}

	if o.Timeline != "" {
		return runTimeline(o, rp, format, s)
	}
	if o.ByKey > 0 {
		return runByKey(o, rp, format, s)
	}
	var rw *recordWriter
	var disagree int64
	var emit func(*sim.Batch) error
	row := matrixRow{nlanes: len(rp.spec.Lanes), keyed: len(o.trace.Key) > 0, marked: format == outTable || format == outMarkdown}
	withCols, err := row.withColumns(o.With, o.Summary)
	if err != nil {
		return err
	}
	if !o.Summary {
		rw = newRecordWriter(s.out, format, append(row.columns(rp.spec.Lanes, rp.trace.RFC3339()), withCols...))
		emit = func(b *sim.Batch) error {
			return writeMatrix(rw, &row, b, o.Diff, &disagree)
		}
	}
	cfg := rp.config(!o.Summary, false)
	cfg.With = row.attrs
	rep, err := rp.run(cfg, s, emit)
	if err != nil {
		return err
	}
	if rw != nil {
		if err := rw.close(); err != nil {
			return err
		}
	}

	if format != outTable && format != outMarkdown {
		if o.Summary {
			if _, err := writeRecords(s.out, format, withLabelColumns(append(slices.Clone(summaryColumns), rp.spec.extraColumns()...), rep), summaryRows(rep, rp.spec)); err != nil {
				return err
			}
		}
		return rp.trace.finish()
	}

	w := &textWriter{w: s.out, format: format}
	w.compareHeader(rp, rep, true)
	if rw != nil {
		w.blank()
		if o.Diff {
			w.line(fmt.Sprintf("%s of %d decided differently", plural(disagree, "request"), rep.Requests))
		}
		if len(rw.cells) > 0 || !o.Diff {
			if o.Diff {
				w.blank()
			}
			w.table(rw.table(nil))
		}
		if rw.hidden > 0 {
			w.blank()
			w.line(fmt.Sprintf("%s more not shown; -o csv lists every row", plural(rw.hidden, "row")))
		}
	}
	if !o.Diff {
		t, _ := writeRecords(nil, format, withLabelColumns(append(slices.Clone(summaryColumns), rp.spec.extraColumns()...), rep), summaryRows(rep, rp.spec))
		w.blank()
		w.line(fmt.Sprintf("summary: max_in_interval is the most cost one key got through in any %s;", rp.spec.duration(rp.spec.Interval)))
		w.line(rp.spec.againstLine())
		if note := queueNote(rp.spec.Algos()); note != "" {
			w.line(note)
		}
		w.blank()
		w.table(t)
		if len(rp.spec.Lanes) > 1 && rep.Agree != nil {
			w.blank()
			w.line("agreement: % of requests decided alike")
			w.blank()
			w.table(agreementTable(rep))
		}
	}
	if w.err != nil {
		return w.err
	}
	return rp.trace.finish()
}

// matrixRow is one request of the decision matrix, and which of the
// optional columns it has.
type matrixRow struct {
	batch  *sim.Batch
	i      int  // the request's index in batch
	differ bool // the algorithms decided it differently

	nlanes int
	keyed  bool     // the key column
	marked bool     // the diff column, which only tables have
	with   []string // the --with columns: file, line, or attributes
	attrs  []string // those of with the engine carries (sim.Config.With)
}

// withColumns checks --with and returns its columns.
func (r *matrixRow) withColumns(with []string, summary bool) ([]column, error) {
	if len(with) > 0 && summary {
		return nil, usageErrorf("--with adds columns to the requests: --summary lists none")
	}
	var cols []column
	for _, w := range with {
		switch {
		case w == "":
			return nil, usageErrorf("--with has an empty name")
		case slices.Contains(r.with, w):
			return nil, usageErrorf("--with names %s twice", w)
		}
		r.with = append(r.with, w)
		cols = append(cols, column{name: w, right: w == "line"})
		if w != "line" {
			r.attrs = append(r.attrs, w)
		}
	}
	return cols, nil
}

// columns are the columns of the decision matrix, in the order appendTo
// writes them: user, timestamp, then one per lane, the key with --key and
// the diff marker in tables.
func (r *matrixRow) columns(lanes []sim.Lane, rfc3339 bool) []column {
	cols := []column{{name: "user"}, {name: "timestamp", right: !rfc3339}}
	for _, l := range lanes {
		cols = append(cols, column{name: l.Name})
	}
	if r.keyed {
		cols = append(cols, column{name: "key"})
	}
	if r.marked {
		cols = append(cols, column{name: "diff"})
	}
	return cols
}

// appendTo appends the values of r's columns through e.
func (r *matrixRow) appendTo(e *encoder, b []byte) []byte {
	req := &r.batch.Requests[r.i]
	b = e.str(b, req.User)
	b = e.time(e.next(b), req.TimeText)
	for a := range r.nlanes {
		b = strconv.AppendBool(e.next(b), r.batch.Allowed(r.i, a))
	}
	if r.keyed {
		b = e.str(e.next(b), req.Key)
	}
	if r.marked {
		b = e.next(b)
		if r.differ {
			b = append(b, '*')
		}
	}
	j := 0
	for _, w := range r.with {
		if w == "line" {
			b = strconv.AppendInt(e.next(b), int64(req.Line), 10)
			continue
		}
		b = e.str(e.next(b), r.batch.With(r.i, j))
		j++
	}
	return b
}

// writeMatrix writes one batch of the decision matrix, counting the
// requests the lanes decide differently; with onlyDiff it writes only
// those.
func writeMatrix(rw *recordWriter, row *matrixRow, b *sim.Batch, onlyDiff bool, disagree *int64) error {
	row.batch = b
	for i := range b.Requests {
		first := b.Allowed(i, 0)
		differ := false
		for a := 1; a < row.nlanes; a++ {
			if b.Allowed(i, a) != first {
				differ = true
				break
			}
		}
		if differ {
			*disagree++
		} else if onlyDiff {
			continue
		}
		row.i, row.differ = i, differ
		if err := rw.end(row.appendTo(&rw.enc, rw.begin())); err != nil {
			return err
		}
	}
	return nil
}

// summaryColumns are the columns of compare --summary; the table shows the
// counts and leaves the parameters to the policy line above it.
var summaryColumns = []column{
	{name: "algo"},
	{name: "requests", right: true},
	{name: "allowed", right: true},
	{name: "rejected", right: true},
	{name: "allow_pct", right: true, title: "allow %", suffix: "%"},
	{name: "max_in_interval", right: true},
	{name: "ratio", right: true},
	{name: "false_allows", right: true},
	{name: "false_rejects", right: true},
	{name: "first_rejection", right: true},
	{name: "first_rejection_user", machineOnly: true},
	{name: "burst_user", machineOnly: true},
	{name: "burst_from", machineOnly: true},
	{name: "burst_to", machineOnly: true},
	{name: "limit", machineOnly: true},
	{name: "window", machineOnly: true},
	{name: "interval", machineOnly: true},
	{name: "capacity", omitNull: true, machineOnly: true},
	{name: "rate", omitNull: true, machineOnly: true},
	{name: "clock", machineOnly: true},
	{name: "unit", machineOnly: true},
	{name: "clock_backwards", machineOnly: true},
	{name: "intent_limit", machineOnly: true},
	{name: "intent_window", machineOnly: true},
}

// summaryRows builds one summary row per algorithm.
func summaryRows(rep *sim.Report, sp *policySpec) [][]cell {
	var rows [][]cell
	for _, st := range rep.Algos {
		first, firstUser := nullCell(), nullCell()
		if fr := st.FirstRejection; fr != nil {
			first, firstUser = timeCell(fr.TimeText), strCell(fr.Key)
		}
		bUser, bFrom, bTo := burstCells(st.Burst, sp)
		lane := sim.Lane{Name: st.Name, Algorithm: st.Algorithm, Policy: st.Policy}
		limit, window, capacity, rate := sp.laneCells(lane)
		intentLimit, intentWindow := sp.intentCells()
		rows = append(rows, append([]cell{
			strCell(st.Name),
			intCell(st.Requests),
			intCell(st.Allowed),
			intCell(st.Rejected),
			pctCell(st.Allowed, st.Requests),
			intCell(st.Burst.Count),
			sp.ratioCell(st.Burst.Count),
			sp.againstIntent(intCell(st.FalseAllows)),
			sp.againstIntent(intCell(st.FalseRejects)),
			first,
			firstUser,
			bUser, bFrom, bTo,
			limit,
			window,
			decCell(sp.Interval, sp.Unit),
			capacity,
			rate,
			strCell(clockName(st.Policy.Clock)),
			strCell(unitName(sp.Unit)),
			intCell(rep.ClockBackwards),
			intentLimit,
			intentWindow,
		}, append(sp.extraCells(lane), labelCells(&st)...)...))
	}
	return rows
}

// burstCells are the user, from and to of a worst interval; null when
// nothing was allowed.
func burstCells(iv sim.Interval, sp *policySpec) (user, from, to cell) {
	if iv.Count == 0 {
		return nullCell(), nullCell(), nullCell()
	}
	return strCell(iv.Key), instantCell(iv.From, sp), instantCell(iv.To, sp)
}

// instantCell renders a time of the trace as the trace writes its times
// (traces.TimeWriter): the one rule for times in every output.
func instantCell(ns int64, sp *policySpec) cell {
	text := sp.times.Format(ns)
	if sp.times.Numeric() {
		return numCell(text)
	}
	return strCell(text)
}

func clockName(c limiters.Clock) string {
	if c == limiters.ClockClamp {
		return "clamp"
	}
	return "reject"
}

// agreementTable is the pairwise agreement matrix.
func agreementTable(rep *sim.Report) *table {
	t := &table{header: []string{"agree %"}, right: []bool{false}}
	for _, st := range rep.Algos {
		t.header = append(t.header, st.Name)
		t.right = append(t.right, true)
	}
	for a, st := range rep.Algos {
		row := []string{st.Name}
		for b := range rep.Algos {
			if rep.Requests == 0 {
				row = append(row, "-")
				continue
			}
			text := "-"
			if rep.Requests > 0 {
				text = pct(rep.Agree[a][b], rep.Requests)
			}
			row = append(row, text)
		}
		t.rows = append(t.rows, row)
	}
	return t
}
