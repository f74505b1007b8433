package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"
)

const reportLong = `Write one self-contained HTML file about a replay: the trace and the
policy, the summary and agreement tables of compare, the worst bursts, the
keys each limiter rejected most, the timeline, and for each limiter the
state of the key with its worst burst.

The file references nothing outside it (no URL, font, script or
stylesheet): it works offline and from file://, and its charts are inline
SVG. It reads well on a phone and in print, in light and dark; its tables
sort by a click on a column's header (the page needs no JavaScript
otherwise). The same input and flags give the same bytes, and long traces
are downsampled exactly, so the file stays small.

--sweep adds a sweep of the trace (see "ratesim sweep"): its flags in one
argument, --sweep '--capacity 5..40:5 --rate 20/1m,30/1m --intent 20/1m
--pick false_reject_pct<=1,ratio<=2.5', read a second time from the
trace; the report then shows the candidates, or those that meet --pick,
best first, or why none does, and the sweep's chart.

The timeline needs the trace in time order (or --sort); when it is not,
the report says so in place of the timeline. The state plots read the
trace a second time, so they are left out when it is standard input.`

// reportOptions are the options of "ratesim report".
type reportOptions struct {
	trace    traceOptions
	policy   policyOptions
	Algos    []string
	Interval string
	Every    string
	Top      int
	Output   string
	// Sweep holds the flags of a sweep to add, "" for none.
	Sweep string
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	c := &cobra.Command{
		Use:               "report [flags] TRACE -o FILE.html",
		Short:             "Write a self-contained HTML report of a replay",
		Long:              reportLong + policyHelp,
		Example:           "  ratesim report traces/examples/bursty.csv -o report.html\n  ratesim report --algos all --every 5m trace.csv -o report.html",
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.policy.markSet(c.Flags())
			return runReport(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms, comma-separated, or all (default: the five classic algorithms)")
	fs.StringVar(&o.Interval, "interval", "", "burst interval (default: the window)")
	fs.StringVar(&o.Every, "every", "", "the timeline's intervals: a number in the trace unit or a Go duration (default: the window)")
	fs.IntVar(&o.Top, "top", 5, "how many keys per limiter, and worst intervals, to list")
	fs.StringVarP(&o.Output, "output", "o", "", "the HTML file to write")
	fs.StringVar(&o.Sweep, "sweep", "", "add a sweep: the flags of ratesim sweep in one argument, such as '--capacity 5..40:5 --pick false_reject_pct<=1'")
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerPlotCompletions(c, "html")
	return c
}

// htmlTable turns a rendered table into the report's.
func htmlTable(t *table, class, caption string) report.Table {
	return report.Table{Caption: caption, Header: t.header, Right: t.right, Rows: t.rows, Class: class}
}

func runReport(o *reportOptions, s streams) error {
	if o.Output == "" {
		return usageErrorf("report needs -o FILE.html")
	}
	if ext := strings.ToLower(filepath.Ext(o.Output)); ext != ".html" && ext != ".htm" {
		return usageErrorf("-o %s: unsupported extension %q (valid: .html)", o.Output, filepath.Ext(o.Output))
	}
	if o.Top <= 0 {
		return usageErrorf("--top must be positive, got %d", o.Top)
	}
	algos, specs, err := o.policy.lanesGiven(o.Algos)
	if err != nil {
		return err
	}
	sw, err := o.sweepOptions()
	if err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	sp := rp.spec
	every := sp.Oracle.Window
	if o.Every != "" {
		if every, err = parseTimeline(o.Every, sp.Unit); err != nil {
			return err
		}
	}

	// One pass: the summary, the bursts, the keys and the timeline.
	n := len(sp.Lanes)
	cfg := rp.config(false, false)
	cfg.Top, cfg.MostRejected, cfg.Every = o.Top, o.Top, every
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return err
	}
	if err := rp.trace.finish(); err != nil {
		return err
	}

	doc := &report.Document{Title: "ratesim report: " + rp.trace.name}
	doc.Lines = append(doc.Lines, fmt.Sprintf("%s: %s, %s", rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
	doc.Lines = append(doc.Lines, "policy: "+sp.describe(true))
	doc.Lines = append(doc.Lines, sp.laneLines()...)
	if line := backwardsLine(rep); line != "" {
		doc.Lines = append(doc.Lines, line)
	}

	summary, _ := writeRecords(nil, outTable, append(slices.Clone(summaryColumns), sp.extraColumns()...), summaryRows(rep, sp))
	sec := report.Section{Heading: "Summary", Text: []string{
		fmt.Sprintf("max_in_interval is the most cost one key got through in any %s; false allows and rejects are against the oracle, a sliding log of limit %d per %s.",
			sp.duration(sp.interval()), sp.Oracle.Limit, sp.duration(sp.Oracle.Window))}}
	sec.Tables = append(sec.Tables, htmlTable(summary, "summary", "per limiter"))
	if n > 1 && rep.Agree != nil {
		sec.Tables = append(sec.Tables, htmlTable(agreementTable(rep), "agreement", "agreement: % of requests decided alike"))
	}
	doc.Sections = append(doc.Sections, sec)

	burstTable := func(ivs []sim.Interval) *table {
		var rows [][]cell
		for _, iv := range ivs {
			user, from, to := burstCells(iv, sp)
			rows = append(rows, []cell{strCell(iv.Name), intCell(sp.Oracle.Limit), decCell(sp.interval(), sp.Unit),
				intCell(iv.Count), numCell(ratio(iv.Count, sp.Oracle.Limit)), user, from, to})
		}
		t, _ := writeRecords(nil, outTable, burstColumns[:8], rows)
		return t
	}
	var worst []sim.Interval
	for _, st := range rep.Algos {
		worst = append(worst, st.Burst)
	}
	doc.Sections = append(doc.Sections, report.Section{Heading: "Worst bursts",
		Text: []string{fmt.Sprintf("The most cost one key got through in any closed interval of %s, from the first to the last allowed request in it: per limiter, then the %d worst over every limiter and key (at most one per limiter and key).", sp.duration(sp.interval()), o.Top)},
		Tables: []report.Table{htmlTable(burstTable(worst), "bursts", "per limiter"),
			htmlTable(burstTable(rep.Top), "top-bursts", fmt.Sprintf("the %d worst", o.Top))}})

	keys, _ := writeRecords(nil, outTable, byKeyColumns, byKeyRows(rep))
	keySec := report.Section{Heading: "Top keys", Text: []string{fmt.Sprintf("The %d keys each limiter rejected most.", o.Top)}}
	if len(keys.rows) == 0 {
		keySec.Text = append(keySec.Text, "No limiter rejected a request.")
	} else {
		keySec.Tables = []report.Table{htmlTable(keys, "keys", "")}
	}
	doc.Sections = append(doc.Sections, keySec)

	tlSec := report.Section{Heading: "Timeline"}
	if rep.IntervalsOutOfOrder > 0 {
		tlSec.Text = []string{"No timeline: " + ErrorText(outOfOrder(rep.IntervalsOutOfOrder)) + "."}
	} else {
		tlSec.Figures = []*report.Figure{timelineFromReport(rp, every, rep)}
	}
	doc.Sections = append(doc.Sections, tlSec)

	stateSec, err := reportStates(o, rp, algos, specs, rep, s)
	if err != nil {
		return err
	}
	doc.Sections = append(doc.Sections, stateSec)
	if sw != nil {
		sweepSec, err := reportSweep(sw, s)
		if err != nil {
			return err
		}
		doc.Sections = append(doc.Sections, sweepSec)
	}
	return writeFileAtomic(o.Output, func(w io.Writer) error { return report.WriteHTML(w, doc) })
}

// sweepOptions parses --sweep into the options of a sweep of the same
// trace; nil without --sweep.
func (o *reportOptions) sweepOptions() (*sweepOptions, error) {
	if o.Sweep == "" {
		return nil, nil
	}
	if o.trace.Path == "-" || slices.Contains(o.trace.More, "-") {
		return nil, usageErrorf("--sweep reads the trace a second time: it needs trace files, not standard input")
	}
	so := &sweepOptions{values: map[string]*string{}, trace: o.trace, set: map[string]bool{}}
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addSweepFlags(fs, so)
	if err := fs.Parse(strings.Fields(o.Sweep)); err != nil {
		return nil, usageErrorf("--sweep %q: %s", o.Sweep, ErrorText(err))
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("--sweep %q: %q is not a flag (the trace is the report's)", o.Sweep, fs.Arg(0))
	}
	if so.ByKey != 0 || so.Frontier {
		return nil, usageErrorf("--sweep %q: the report's sweep takes neither --by-key nor --frontier (it marks the frontier)", o.Sweep)
	}
	fs.Visit(func(f *pflag.Flag) { so.set[f.Name] = true })
	if _, _, _, err := so.check(); err != nil {
		return nil, err
	}
	return so, nil
}

// reportSweep replays the trace through a sweep's candidates and returns
// the report's section about it.
func reportSweep(so *sweepOptions, s streams) (report.Section, error) {
	sec := report.Section{Heading: "Sweep"}
	g, algos, cons, err := so.check()
	if err != nil {
		return sec, err
	}
	res, err := sweepReplay(so, g, algos, cons, streams{in: s.in, out: s.out, err: io.Discard})
	if err != nil {
		return sec, err
	}
	defer res.rp.trace.Close()
	sp := res.rp.spec
	sec.Text = []string{
		fmt.Sprintf("%s%s.", plural(int64(len(res.cands)), "candidate"), g.describe(algos)),
		fmt.Sprintf("Each scored against the intent, a sliding log of limit %d per %s: false allows and rejects, and max_in_interval over %s; the frontier (no other candidate has at most as many false allows and false rejects, and fewer of one) is marked *.",
			sp.Oracle.Limit, sp.duration(sp.Oracle.Window), sp.duration(sp.interval())),
	}
	rows := res.cands
	caption := "every candidate"
	if cons != nil {
		if len(res.picked) == 0 {
			sec.Text = append(sec.Text, unreachable(res.cands, cons, res.intent, sp)...)
		} else {
			rows = res.picked
			caption = fmt.Sprintf("the %d of %d that meet %s, best first, the best marked *", len(res.picked), len(res.cands), cons.text())
		}
	}
	cols := sweepColumns(sp, res.cands, cons != nil)
	if cons == nil || len(res.picked) > 0 {
		t, _ := writeRecords(nil, outTable, cols, sweepRows(rows, sp, cols, true))
		sec.Tables = []report.Table{htmlTable(t, "sweep", caption)}
	}
	sec.Figures = []*report.Figure{sweepFigure(res, false)}
	return sec, nil
}

// reportStates draws, for each limiter, the state of the key of its worst
// burst, from a second pass over the trace that keeps only those keys.
func reportStates(o *reportOptions, rp *replay, algos []limiters.Algorithm, specs []limiterSpec, rep *sim.Report, s streams) (report.Section, error) {
	sec := report.Section{Heading: "The worst key's state, per limiter"}
	switch {
	case len(rp.keys) > 0:
		sec.Text = []string{"Not drawn with --key: the state plots are of users."}
		return sec, nil
	case o.trace.Path == "-" || slices.Contains(o.trace.More, "-"):
		sec.Text = []string{"Not drawn: the trace was standard input, which cannot be read twice."}
		return sec, nil
	case slices.ContainsFunc(rp.spec.Lanes, func(l sim.Lane) bool { return l.Algorithm.KeysInteract() }):
		sec.Text = []string{"Not drawn: a limiter's decisions for one user depend on the other users' requests (nginx's zone), and the states are drawn from a pass over the drawn users' requests alone."}
		return sec, nil
	}
	var users []string
	for _, st := range rep.Algos {
		if st.Burst.Count > 0 && !slices.Contains(users, st.Burst.Key) {
			users = append(users, st.Burst.Key)
		}
	}
	if len(users) == 0 {
		sec.Text = []string{"No limiter allowed a request."}
		return sec, nil
	}
	again, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, streams{in: s.in, out: s.out, err: io.Discard})
	if err != nil {
		return sec, err
	}
	defer again.trace.Close()
	again.spec = rp.spec
	// The first read checked every record: this one reads only the users'.
	again.trace.skipOtherUsers(users)
	states, _, _, err := keyStates(again, users, streams{in: s.in, out: s.out, err: io.Discard})
	if err != nil {
		return sec, err
	}
	sp := rp.spec
	sec.Text = []string{"For each limiter, the key of its worst burst: its state over time, each request marked, the worst interval shaded."}
	for _, user := range users {
		var panels []report.Panel
		var names []string
		for l, lane := range sp.Lanes {
			if st := rep.Algos[l]; st.Burst.Count > 0 && st.Burst.Key == user && states[user] != nil {
				panels = append(panels, statePanel(lane, l, states[user], st.Burst, sp))
				names = append(names, lane.Name)
			}
		}
		sec.Figures = append(sec.Figures, &report.Figure{
			Title:  []string{fmt.Sprintf("state of %s, the worst key of %s", user, strings.Join(names, ", "))},
			Clock:  sp.rfc3339,
			XLabel: xLabel(rp),
			Panels: panels,
		})
	}
	return sec, nil
}
