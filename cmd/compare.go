package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

var compareLong = helpText("compare", "DEFAULTS", render.WrapText("Default algorithms: the five classic algorithms ("+strings.Join(algoNames(limiters.ClassicAlgorithms()), ", ")+
	"); --algos all adds "+render.JoinList(algoNames(slices.DeleteFunc(limiters.AllAlgorithms(), func(a limiters.Algorithm) bool {
	return slices.Contains(limiters.ClassicAlgorithms(), a)
})), "and")+".", "", 78))

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
	clients sim.ClientFlags
	Shard   string
	// With names the extra columns of the requests: file, line, or
	// attributes.
	With []string
}

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "compare [--algos a,b|all] [flags] TRACE|- [TRACE...]",
		Short:   "Replay a trace through several algorithms, side by side",
		Long:    compareLong + policyHelp + clientHelp + stackHelp,
		Example: compareExample,
	}, &o.trace, &o.policy, &shardFlags{shard: &o.Shard, output: &o.Output, as: "json"}, func(c *cobra.Command, s streams) error {
		return runCompare(o, s)
	})
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to compare, comma-separated, or all (default: the five classic algorithms)")
	fs.BoolVar(&o.Summary, "summary", false, "print only the summary per algorithm and the agreement table")
	fs.BoolVar(&o.Diff, "diff", false, "print only the requests the algorithms decide differently")
	fs.StringVar(&o.Interval, "interval", "", "burst interval for max_in_interval (default: the window)")
	fs.IntVar(&o.ByKey, "by-key", 0, "print, per limiter, the N keys it rejected most, with their requests, rejections, false rejects and first rejection, instead of the requests")
	fs.StringVar(&o.Timeline, "timeline", "", "print, per interval of this length, each limiter's requests, allowed, rejected, false allows and rejects, and the keys active, instead of the requests")
	addOutputFlag(fs, &o.Output)
	addShardFlag(fs, &o.Shard)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	o.clients.AddFlags(fs)
	addLabelFlags(fs, &o.trace)
	fs.StringSliceVar(&o.With, "with", nil, "extra columns of the requests, comma-separated: file and line (where the request is in the traces) or any field of the trace")
	registerCompletions(c)
	return c
}

// runCompare replays o.trace through several algorithms and writes the
// decision matrix, the summaries and the agreement matrix.
func runCompare(o *compareOptions, s streams) error {
	algos, specs, err := o.policy.Lanes(o.Algos)
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
	switch {
	case len(o.With) > 0 && o.Summary:
		return usageErrorf("--with adds columns to the requests: --summary lists none")
	case len(o.With) > 0 && (o.Timeline != "" || o.ByKey > 0):
		return usageErrorf("--with adds columns to the requests: --timeline and --by-key list none")
	}
	if o.trace.labelled() && (o.Timeline != "" || o.ByKey > 0) {
		return usageErrorf("--legit, --abusive and --labels count who each limiter stopped in the summary: --timeline and --by-key do not show it")
	}
	clients, err := o.clients.Clients(o.policy.set)
	if err != nil {
		return err
	}
	stack, err := o.policy.stackOf()
	if err != nil {
		return err
	}
	if o.trace.labelled() && (stack != nil || clients.Model != sim.ClientsNone) {
		return usageErrorf("--legit, --abusive and --labels count who each limiter stopped on the trace's requests: a stack's and --clients' summaries do not count them")
	}
	if stack != nil {
		if err := refuseStackShard(s, stack, o.trace.Key); err != nil {
			return err
		}
		switch {
		case !o.Summary || o.Timeline != "" || o.ByKey > 0 || clients.Model != sim.ClientsNone:
			return usageErrorf("%s stacks policies: compare gives their --summary (run lists the requests)", o.policy.file.Path)
		case o.Algos != nil:
			return usageErrorf("%s stacks policies: --algos does not join them", o.policy.file.Path)
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
	if clients.Model != sim.ClientsNone {
		if err := refuseShard(s, "--clients replays each limiter's retries in a loop of its own"); err != nil {
			return err
		}
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
	var rw *render.RecordWriter
	var disagree int64
	var emit func(*sim.Batch) error
	row := tables.MatrixRow{Lanes: len(rp.spec.Lanes), Keyed: len(o.trace.Key) > 0, Marked: !format.Machine()}
	withCols, err := row.WithColumns(o.With)
	if err != nil {
		return err
	}
	if !o.Summary {
		rw = render.NewRecordWriter(s.out, format, append(row.Columns(rp.spec.Lanes, rp.trace.RFC3339()), withCols...))
		emit = func(b *sim.Batch) error {
			return tables.WriteMatrix(rw, &row, b, o.Diff, &disagree)
		}
	}
	cfg := rp.config(!o.Summary, false)
	cfg.With = row.Attrs
	rep, err := rp.run(cfg, s, emit)
	if err != nil {
		return err
	}
	if rw != nil {
		if err := rw.Close(); err != nil {
			return err
		}
	}

	if format.Machine() {
		if o.Summary {
			if _, err := render.WriteRecords(s.out, format, tables.WithLabelColumns(append(slices.Clone(tables.SummaryColumns), rp.spec.ExtraColumns()...), rep), tables.SummaryRows(rep, rp.spec)); err != nil {
				return err
			}
		}
		return rp.trace.finish()
	}

	w := render.NewTextWriter(s.out, format)
	w.Lines(tables.CompareHeading(rp.trace.name, rep, rp.spec, true))
	if rw != nil {
		w.Blank()
		if o.Diff {
			w.Line(fmt.Sprintf("%s of %d decided differently", render.Plural(disagree, "request"), rep.Requests))
		}
		if rw.Kept() > 0 || !o.Diff {
			if o.Diff {
				w.Blank()
			}
			w.Table(rw.Table(nil))
		}
		if rw.Hidden() > 0 {
			w.Blank()
			w.Line(fmt.Sprintf("%s more not shown; -o csv lists every row", render.Plural(rw.Hidden(), "row")))
		}
	}
	if !o.Diff {
		t, _ := render.WriteRecords(nil, format, tables.WithLabelColumns(append(slices.Clone(tables.SummaryColumns), rp.spec.ExtraColumns()...), rep), tables.SummaryRows(rep, rp.spec))
		w.Blank()
		w.Lines(tables.SummaryHeading(rp.spec))
		w.Blank()
		w.Table(t)
		if len(rp.spec.Lanes) > 1 && rep.Agree != nil {
			w.Blank()
			w.Line("agreement: % of requests decided alike")
			w.Blank()
			w.Table(tables.AgreementTable(rep))
		}
	}
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
