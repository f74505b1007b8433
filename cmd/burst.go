package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"slices"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/sim"
)

var burstLong = helpText("burst")

const burstExample = `  ratesim burst traces/examples/boundary.csv
  ratesim burst --algos all --interval 5 -o json trace.csv
  ratesim burst --top 10 trace.csv`

// burstOptions are the options of "ratesim burst".
type burstOptions struct {
	trace    traceOptions
	policy   policyOptions
	Algos    []string
	Interval string
	Top      int
	Output   string
	Shard    string
}

func newBurstCmd() *cobra.Command {
	o := &burstOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "burst [--algos a,b|all] [--interval D] [--top N] [flags] TRACE|- [TRACE...]",
		Short:   "Find the worst burst each algorithm lets through",
		Long:    burstLong + policyHelp,
		Example: burstExample,
	}, &o.trace, &o.policy, &shardFlags{shard: &o.Shard, output: &o.Output, as: "json"}, func(c *cobra.Command, s streams) error {
		return runBurst(o, s)
	})
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms, comma-separated, or all (default: the five classic algorithms)")
	fs.StringVar(&o.Interval, "interval", "", "interval length: a number in the trace unit or a Go duration (default: the window)")
	fs.IntVar(&o.Top, "top", 0, "list the N worst intervals overall instead")
	addOutputFlag(fs, &o.Output)
	addShardFlag(fs, &o.Shard)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// runBurst replays o.trace and reports the worst interval per algorithm,
// or the worst overall with --top.
func runBurst(o *burstOptions, s streams) error {
	algos, specs, err := o.policy.Lanes(o.Algos)
	if err != nil {
		return err
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if o.Top < 0 {
		return usageErrorf("--top must not be negative, got %d", o.Top)
	}
	if err := checkKeys(o.trace.Key); err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	cfg := rp.config(false, false)
	cfg.Top = o.Top
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return err
	}
	sp := rp.spec
	var intervals []sim.Interval
	if o.Top > 0 {
		intervals = rep.Top
	} else {
		for _, st := range rep.Algos {
			intervals = append(intervals, st.Burst)
		}
	}
	rows := tables.BurstRows(intervals, sp)
	cols := tables.BurstColumns
	if len(o.trace.Key) > 0 {
		// The worst interval's key is the composite --key builds.
		cols = slices.Clone(cols)
		cols[slices.IndexFunc(cols, func(c render.Column) bool { return c.Name == "user" })].Name = "key"
	}
	t, err := render.WriteRecords(s.out, format, append(cols, sp.ExtraColumns()...), rows)
	if err != nil {
		return err
	}
	if t != nil {
		w := render.NewTextWriter(s.out, format)
		w.Lines(tables.BurstHeading(rp.trace.name, rep, sp, o.Top))
		w.Blank()
		w.Table(t)
		if w.Err() != nil {
			return w.Err()
		}
	}
	return rp.trace.finish()
}
