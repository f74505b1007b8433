package cmd

import (
	"github.com/ratesim/ratesim/internal/tables"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/report"
)

func newPlotTimelineCmd() *cobra.Command {
	o := &plotReplayOptions{}
	var every string
	c := replayCmd(&cobra.Command{
		Use:     "timeline --every D [flags] TRACE -o FILE",
		Short:   "Per interval, requests and what each limiter allowed",
		Long:    helpText("plot-timeline") + policyHelp,
		Example: "  ratesim plot timeline --every 1m traces/examples/bursty.csv -o timeline.svg",
	}, &o.trace, &o.policy, nil, func(c *cobra.Command, s streams) error {
		if every == "" {
			return usageErrorf("plot timeline needs --every, the length of its intervals")
		}
		return o.draw(c, s, func(rp *replay) (*report.Figure, error) {
			return timelineFigure(rp, every, s)
		})
	})
	c.Flags().StringVar(&every, "every", "", "the length of the intervals: a number in the trace unit or a Go duration (1m)")
	addPlotReplayFlags(c.Flags(), o)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// timelineFigure replays rp's trace and draws its timeline.
func timelineFigure(rp *replay, everyText string, s streams) (*report.Figure, error) {
	every, err := parseTimeline(everyText, "--every", rp.spec.Unit)
	if err != nil {
		return nil, err
	}
	cfg := rp.config(false, false)
	cfg.Every = every
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return nil, err
	}
	if rep.IntervalsOutOfOrder > 0 {
		return nil, tables.OutOfOrder(rep.IntervalsOutOfOrder)
	}
	return report.TimelineFigure(rp.frame(), every, rep), nil
}

func newPlotBurstCmd() *cobra.Command {
	o := &plotReplayOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "burst [flags] TRACE -o FILE",
		Short:   "Per limiter, the most cost one key got through in any interval, over time",
		Long:    helpText("plot-burst") + policyHelp,
		Example: "  ratesim plot burst traces/examples/multi-user.csv -o burst.svg",
	}, &o.trace, &o.policy, nil, func(c *cobra.Command, s streams) error {
		return o.draw(c, s, func(rp *replay) (*report.Figure, error) {
			return burstFigure(rp, s)
		})
	})
	addPlotReplayFlags(c.Flags(), o)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// burstFigure replays rp's trace and draws, per limiter, the most cost
// one key had in the interval ending at each allowed request.
func burstFigure(rp *replay, s streams) (*report.Figure, error) {
	bs := report.NewBursts(rp.frame(), rp.spec.Lanes)
	cfg := rp.config(false, false)
	bs.Configure(&cfg)
	rep, err := rp.run(cfg, s, bs.Emit)
	if err != nil {
		return nil, err
	}
	return bs.Figure(rep), nil
}

func newPlotSweepCmd() *cobra.Command {
	o := &sweepOptions{}
	var out report.Output
	c := replayCmd(&cobra.Command{
		Use:     "sweep [--algos a,b] [--capacity 1..64] [--rate 1/1s,2/1s] [flags] TRACE -o FILE",
		Short:   "A sweep's false allows and false rejects against the swept parameter",
		Long:    helpText("plot-sweep"),
		Example: "  ratesim plot sweep --capacity 5..40:5 --rate 20/1m,30/1m --intent 20/1m --pick 'false_reject_pct<=1,ratio<=2.5' traces/examples/bursty.csv -o sweep.svg",
	}, &o.trace, nil, nil, func(c *cobra.Command, s streams) error {
		o.set = map[string]bool{}
		c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
		if o.ByKey != 0 {
			return usageErrorf("plot sweep draws no keys: --by-key is for the sweep command")
		}
		if err := out.Check(commandName(c)); err != nil {
			return err
		}
		g, algos, cons, err := o.check()
		if err != nil {
			return err
		}
		res, err := sweepReplay(o, g, algos, cons, s)
		if err != nil {
			return err
		}
		defer res.rp.trace.Close()
		if err := out.Write(res.Figure(o.Frontier), s.out); err != nil {
			return err
		}
		return res.rp.trace.finish()
	})
	addSweepFlags(c.Flags(), o)
	addTraceFlags(c.Flags(), &o.trace)
	out.AddFlags(c.Flags())
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}
