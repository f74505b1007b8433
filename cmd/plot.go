package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/report"
)

var plotLong = helpText("plot")

const plotExample = `  ratesim plot state --user u1 traces/examples/boundary.csv -o boundary.svg
  ratesim plot timeline --every 1m --algos all trace.csv -o timeline.png
  ratesim plot burst --term trace.csv
  ratesim plot sweep --capacity 5..40:5 --rate 20/1m,30/1m --intent 20/1m --pick 'ratio<=2.5' trace.csv -o sweep.pdf`

// newPlotCmd is "ratesim plot KIND", one subcommand per kind.
func newPlotCmd() *cobra.Command {
	// The kinds of plot, in the order the help lists them.
	kinds := []*cobra.Command{newPlotStateCmd(), newPlotTimelineCmd(), newPlotBurstCmd(), newPlotSweepCmd()}
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name())
	}
	valid := strings.Join(names, ", ")
	c := &cobra.Command{
		Use:         "plot KIND [flags] TRACE -o FILE",
		Short:       "Draw a replay: a key's state, the timeline, bursts or a sweep (SVG, PNG, PDF, terminal)",
		Long:        plotLong,
		Example:     plotExample,
		Annotations: map[string]string{exitStatusKey: replayExitStatus},
		// A kind's flags given with an unknown kind: the kind is the
		// mistake to report.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("plot needs a kind (valid: %s)", valid)
			}
			return usageErrorf("unknown plot kind %q (valid: %s)", args[0], valid)
		},
		RunE: func(c *cobra.Command, args []string) error { return nil },
	}
	c.AddCommand(kinds...)
	return c
}

// registerPlotCompletions completes -o with the picture formats, before
// registerCompletions gives the other flags theirs.
func registerPlotCompletions(c *cobra.Command, exts ...string) {
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	})
	registerCompletions(c)
}

// plotReplayOptions are the flags of the plot kinds that replay through
// limiters as compare does.
type plotReplayOptions struct {
	trace    traceOptions
	policy   policyOptions
	Algos    []string
	Interval string
	out      report.Output
}

// addPlotReplayFlags adds the flags compare takes for its limiters.
func addPlotReplayFlags(fs *pflag.FlagSet, o *plotReplayOptions) {
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms, comma-separated, or all (default: the five classic algorithms)")
	fs.StringVar(&o.Interval, "interval", "", "burst interval (default: the window)")
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	o.out.AddFlags(fs)
}

// draw checks the flags, opens the trace as compare does, and draws the
// figure of its replay that figure makes where -o says.
func (o *plotReplayOptions) draw(c *cobra.Command, s streams, figure func(*replay) (*report.Figure, error)) error {
	if err := o.out.Check(commandName(c)); err != nil {
		return err
	}
	algos, specs, err := o.policy.Lanes(o.Algos)
	if err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	f, err := figure(rp)
	if err != nil {
		return err
	}
	if err := o.out.Write(f, s.out); err != nil {
		return err
	}
	return rp.trace.finish()
}

// frame is what the figures of rp share (report.NewFrame).
func (rp *replay) frame() *report.Frame { return report.NewFrame(rp.trace.name, rp.spec) }
