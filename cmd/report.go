package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"
)

var reportLong = helpText("report")

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
	Shard string
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "report [flags] TRACE -o FILE.html",
		Short:   "Write a self-contained HTML report of a replay",
		Long:    reportLong + policyHelp,
		Example: "  ratesim report traces/examples/bursty.csv -o report.html\n  ratesim report --algos all --every 5m trace.csv -o report.html",
	}, &o.trace, &o.policy, &shardFlags{shard: &o.Shard, output: &o.Output, as: "shard.html"}, func(c *cobra.Command, s streams) error {
		return runReport(o, s)
	})
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms, comma-separated, or all (default: the five classic algorithms)")
	fs.StringVar(&o.Interval, "interval", "", "burst interval (default: the window)")
	fs.StringVar(&o.Every, "every", "", "the timeline's intervals: a number in the trace unit or a Go duration (default: the window)")
	fs.IntVar(&o.Top, "top", 5, "how many keys per limiter, and worst intervals, to list")
	fs.StringVarP(&o.Output, "output", "o", "", "the HTML file to write")
	addShardFlag(fs, &o.Shard)
	fs.StringVar(&o.Sweep, "sweep", "", "add a sweep: the flags of ratesim sweep in one argument, such as '--capacity 5..40:5 --pick false_reject_pct<=1'")
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	addLabelFlags(fs, &o.trace)
	registerPlotCompletions(c, "html")
	return c
}

func runReport(o *reportOptions, s streams) error {
	if err := report.CheckHTMLFile(o.Output); err != nil {
		return err
	}
	if o.Top <= 0 {
		return usageErrorf("--top must be positive, got %d", o.Top)
	}
	algos, specs, err := o.policy.Lanes(o.Algos)
	if err != nil {
		return err
	}
	// The state plots and the sweep read the trace again.
	defer o.trace.readTwice()()
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
	every := sp.Intent.Window
	if o.Every != "" {
		if every, err = parseTimeline(o.Every, "--every", sp.Unit); err != nil {
			return err
		}
	}

	// One pass: the summary, the bursts, the keys and the timeline.
	cfg := rp.config(false, false)
	cfg.Top, cfg.MostRejected, cfg.Every = o.Top, o.Top, every
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return err
	}
	// Rows a lenient read skipped make the exit status partial once the
	// report is written, with what the read kept.
	skipped := rp.trace.finish()

	c := report.NewContents(rp.frame(), rep, sp, o.Top, every)
	if c.States, c.StatesNote, err = reportStates(o, rp, algos, specs, rep, s); err != nil {
		return err
	}
	if sw != nil {
		sw.inherit = spec.Inherit(sp.Spec, sp.Duration(sp.Intent.Window), o.policy.set, o.policy.Config, o.policy.file)
		sweepSec, err := reportSweep(sw, s)
		if err != nil {
			return err
		}
		c.Sweep = &sweepSec
	}
	if s.part != nil {
		return skipped // the partial is the output
	}
	if err := report.WriteFileAtomic(o.Output, func(w io.Writer) error { return report.WriteHTML(w, report.NewDocument(c)) }); err != nil {
		return err
	}
	return skipped
}

// sweepOptions parses --sweep into the options of a sweep of the same
// trace; nil without --sweep.
func (o *reportOptions) sweepOptions() (*sweepOptions, error) {
	if o.Sweep == "" {
		return nil, nil
	}
	so := &sweepOptions{trace: o.trace, set: map[string]bool{}}
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
	g, algos, cons, err := so.check()
	if err != nil {
		return report.Section{}, err
	}
	res, err := sweepReplay(so, g, algos, cons, s.again("the sweep"))
	if err != nil {
		return report.Section{}, err
	}
	defer res.rp.trace.Close()
	return res.Section(), nil
}

// reportStates keeps the requests of each limiter's worst key, from a
// second pass over the trace that reads only those keys' records; nil
// and the reason when the states are not drawn.
func reportStates(o *reportOptions, rp *replay, algos []limiters.Algorithm, specs []limiterSpec, rep *sim.Report, s streams) (*report.States, string, error) {
	switch {
	case len(rp.keys) > 0:
		return nil, "Not drawn with --key: the state plots are of users.", nil
	case report.Undrawable(rp.spec.Lanes) != "":
		return nil, "Not drawn: " + report.Undrawable(rp.spec.Lanes) + ".", nil
	}
	users := report.WorstUsers(rep)
	sharded := s.part != nil || s.merge != nil
	if len(users) == 0 && !sharded {
		return nil, "No limiter allowed a request.", nil
	}
	// A shard reads its own worst users' requests again even when it has
	// none, so that every shard's partial holds the same replays and the
	// merge, whose worst users are among the shards', finds them.
	again, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s.again("second read: the worst keys' states"))
	if err != nil {
		return nil, "", err
	}
	defer again.trace.Close()
	again.spec = rp.spec
	// The first read checked every record: this one reads only the users'.
	again.trace.SkipOtherUsers(users)
	states, _, err := keyStates(again, users, s.again("second read: the worst keys' states"))
	if err != nil {
		return nil, "", err
	}
	switch {
	case s.part != nil:
		// The rows went to the partial: the merge draws the states.
		return nil, "", nil
	case len(users) == 0:
		return nil, "No limiter allowed a request.", nil
	}
	for _, u := range users {
		if !states.Has(u) {
			return nil, "", fmt.Errorf("the second read of %s found no request of user %q, whose worst burst the first read found: the trace changed between the reads, or can be read only once", rp.trace.name, u)
		}
	}
	return states, "", nil
}
