package cmd

import (
	"errors"
	"os"
	"sync"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"

	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/gateway"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/traces"
)

var sweepLong = helpText("sweep", "max-candidates", strconv.Itoa(maxCandidates))

const sweepExample = `  ratesim sweep --capacity 1..20 --rate 1/1s,2/1s --intent 10/10s trace.csv
  ratesim sweep --algos token-bucket,gcra --capacity 5..50:5 --pick 'false_reject_pct<=1,ratio<=1.2' trace.csv
  ratesim sweep --algos fixed-window,sliding-counter --limit 50..150:10 --window 1m --intent 100/1m -o json trace.csv`

// maxCandidates is the most candidates one sweep runs.
const maxCandidates = sweep.MaxCandidates

// sweepOptions are the options of "ratesim sweep".
type sweepOptions struct {
	// Flags are the sweep's grid, intent and pick.
	sweep.Flags
	trace traceOptions
	ByKey int
	// Export and ExportFile write the best candidate as a gateway's config.
	Export, ExportFile string
	Output             string
	Shard              string
	// gateway is --policy-from: the deployed config, replayed beside the
	// grid as its last row (sweepDeployed).
	gateway gateway.Flags
	set     map[string]bool
	// inherit, when not nil, is the intent of the replay the sweep is
	// part of (a report's), which it takes unless its own flags say
	// otherwise.
	inherit *spec.Inherited
}

func newSweepCmd() *cobra.Command {
	o := &sweepOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "sweep [--algos a,b] [--capacity 1..64] [--rate 1/1s,2/1s] [flags] TRACE|- [TRACE...]",
		Short:   "Replay a trace through a grid of parameters in one pass, and pick the best",
		Long:    sweepLong,
		Example: sweepExample,
	}, &o.trace, nil, &shardFlags{shard: &o.Shard, output: &o.Output, as: "json"}, func(c *cobra.Command, s streams) error {
		o.set = map[string]bool{}
		c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
		return runSweep(o, s)
	})
	addSweepFlags(c.Flags(), o)
	o.gateway.AddFlags(c.Flags())
	c.Flags().Lookup("policy-from").Usage = "a gateway's config of one policy, the limit deployed today, replayed beside the grid as its last row"
	addOutputFlag(c.Flags(), &o.Output)
	addShardFlag(c.Flags(), &o.Shard)
	addTraceFlags(c.Flags(), &o.trace)
	addLabelFlags(c.Flags(), &o.trace)
	registerCompletions(c)
	return c
}

// addSweepFlags adds the flags that describe a sweep's grid, intent and
// pick (sweep.Flags), and what to do with the best candidate.
func addSweepFlags(fs *pflag.FlagSet, o *sweepOptions) {
	o.Flags.AddFlags(fs, takenName)
	fs.StringVar(&o.Export, "export", "", "with --pick, write the best candidate as a gateway's config: "+gateway.Targets.String()+" (see 'ratesim export')")
	fs.StringVar(&o.ExportFile, "export-file", "", "with --export, the file to write the config to (default: below the table)")
	fs.IntVar(&o.ByKey, "by-key", 0, "with --pick, the N keys the best candidate rejected most, from a second pass over the trace")
}

// takenName reports whether sweep's trace or output flags have name,
// which a parameter's flag then cannot take (sweep.FlagName).
func takenName(name string) bool { return takenFlags().Lookup(name) != nil }

// takenFlags is sweep's trace and output flags, whose names a parameter
// cannot take. It is built once and only read: every command's
// construction asks it of every sweep parameter.
var takenFlags = sync.OnceValue(func() *pflag.FlagSet {
	taken := pflag.NewFlagSet("", pflag.ContinueOnError)
	addTraceFlags(taken, &traceOptions{})
	addOutputFlag(taken, new(string))
	return taken
})

// sweepResult is what a sweep's replay found.
type sweepResult struct {
	report.SweepRun
	rp *replay // its trace is open until the caller closes it
	po *policyOptions
}

// check checks the flags of a sweep that do not depend on the
// output.
func (o *sweepOptions) check() (*sweep.Grid, []sweep.Algo, sweep.Constraints, error) {
	return o.Check(o.set, o.trace.labelled())
}

// sweepReplay replays the trace through the sweep's candidates and scores
// them. The caller closes res.rp.trace.
func sweepReplay(o *sweepOptions, g *sweep.Grid, algos []sweep.Algo, cons sweep.Constraints, s streams) (*sweepResult, error) {
	intent, err := spec.SweepIntent(o.inherit, spec.SweepFlags{Intent: o.Intent, Given: o.set,
		Limit: o.Value("limit"), Window: o.Value("window"), Limits: g.Values("limit"), Windows: g.Values("window")})
	if err != nil {
		return nil, err
	}
	po := &policyOptions{Flags: spec.Flags{Clock: o.Clock, Limit: intent.Limit, Window: intent.Window, Config: intent.Config},
		single: true, set: intent.Set, at: intent.At, inherit: intent.Inherit, file: intent.File}
	cands, err := g.Candidates(algos)
	if err != nil {
		return nil, err
	}
	if o.gateway.From != "" {
		c, err := sweepDeployed(o, len(cands), s)
		if err != nil {
			return nil, err
		}
		cands = append(cands, c)
	}
	specs := sweep.Limiters(cands)
	// The p99 of the waits needs only the longest of them (sim's
	// WaitsTail), unless it falls among the others: then the trace is
	// read again, keeping every wait. A shard's partial keeps them all.
	tail := s.part == nil && rereadable(&o.trace)
	replay := func(s streams, first bool) (*replay, *sim.Report, error) {
		rp, err := prepare(&o.trace, po, nil, specs, "", s)
		if err != nil {
			return nil, nil, err
		}
		rp.given = o.set // for the warnings about flags with no effect
		if o.inherit != nil && o.inherit.Interval > 0 {
			rp.spec.Interval = o.inherit.Interval
		}
		for _, name := range g.Unused(algos) {
			if first {
				warnf(s.err, "--%s has no effect: no swept algorithm or preset takes it", name)
			}
		}
		cfg := rp.config(false, false)
		cfg.Rejections, cfg.WaitsTail = true, tail
		rep, err := rp.run(cfg, s, nil)
		if err != nil {
			rp.trace.Close()
			return nil, nil, err
		}
		return rp, rep, nil
	}
	rp, rep, err := replay(s, true)
	if err != nil {
		return nil, err
	}
	if !rep.WaitsKnown(99, 100) {
		rp.trace.Close()
		tail = false
		if rp, rep, err = replay(s.again("second read: every refusal's wait"), false); err != nil {
			return nil, err
		}
	}
	sp := rp.spec
	picked := sweep.ScoreAll(cands, sp.Lanes, rep.Algos, sp.Intent, sp.Unit, cons)
	return &sweepResult{rp: rp, po: po, SweepRun: report.SweepRun{Trace: rp.trace.name, Report: rep, Policy: sp, Grid: g, Algos: algos,
		Candidates: cands, Picked: picked, Constraints: cons, Intent: &rep.Algos[len(cands)], IntentFrom: intent.From}}, nil
}

// rereadable reports whether the traces of o can be opened again: files,
// or what a spool keeps (see traceOptions.readTwice).
func rereadable(o *traceOptions) bool {
	if o.spool != nil || o.fsys != nil {
		return true
	}
	for _, p := range append([]string{o.Path}, o.More...) {
		if fi, err := os.Stat(p); p == "-" || err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

func runSweep(o *sweepOptions, s streams) error {
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if _, err := sweep.ParseAlgos(o.Algos); err != nil {
		return err
	}
	switch {
	case o.ByKey < 0 || o.ByKey == 0 && o.set["by-key"]:
		return usageErrorf("--by-key must be positive, got %d", o.ByKey)
	case o.ByKey > 0 && (s.part != nil || s.merge != nil):
		return refuseShard(s, "--by-key lists the keys of the best candidate, which only the merge of every shard knows; merge the sweep, then run compare --by-key N --limiter BEST --shard I/N")
	case o.ByKey > 0 && o.Pick == "":
		return usageErrorf("--by-key lists the best candidate's keys: it needs --pick")
	case o.Export != "" && gateway.Targets.Index(o.Export) < 0:
		return usageErrorf("--export %q: want one of %s", o.Export, gateway.Targets)
	case o.Export != "" && o.Pick == "":
		return usageErrorf("--export writes the best candidate: it needs --pick")
	case o.Export != "" && format.Machine() && o.ExportFile == "":
		return usageErrorf("--export with -o %s needs --export-file, to keep the config out of the records", o.Output)
	case o.ExportFile != "" && o.Export == "":
		return usageErrorf("--export-file needs --export")
	case o.ByKey > 0 && format.Machine():
		return usageErrorf("--by-key in sweep adds a table to the report; for CSV or JSON, run compare --by-key N with the best candidate's --limiter")
	}
	g, algos, cons, err := o.check()
	if err != nil {
		return err
	}
	if o.ByKey > 0 {
		defer o.trace.readTwice()() // the best candidate's keys are a second read
	}
	res, err := sweepReplay(o, g, algos, cons, s)
	if err != nil {
		return err
	}
	rp, po, rep, cands, picked, intent := res.rp, res.po, res.Report, res.Candidates, res.Picked, res.Intent
	defer rp.trace.Close()
	sp := rp.spec

	rows := cands
	if o.Frontier {
		rows = slices.DeleteFunc(slices.Clone(rows), func(c *sweep.Candidate) bool { return !c.Front })
	}
	cols := tables.WithLabelColumns(tables.SweepColumns(cands, cons != nil), rep)
	machine := format.Machine()
	if machine {
		if _, err := render.WriteRecords(s.out, format, cols, tables.SweepRows(rows, sp, cols, false)); err != nil {
			return err
		}
		finished := rp.trace.finish()
		var skipped *traces.SkippedError
		if finished != nil && !errors.As(finished, &skipped) {
			return finished
		}
		if o.Export != "" && len(picked) > 0 {
			if err := sweepExport(o.Export, o.ExportFile, picked[0].Limiter, sp.Unit, s.out, s.err); err != nil {
				return err
			}
		}
		return finished
	}

	w := render.NewTextWriter(s.out, format)
	grid, deployed := len(cands), ""
	if o.gateway.From != "" {
		grid--
		deployed = tables.DeployedLine(cands[grid], o.gateway.From)
	}
	w.Lines(tables.SweepHeading(rp.trace.name, rep, sp, grid, g.Describe(algos), deployed))
	w.Blank()
	if cons != nil {
		if len(picked) == 0 {
			w.Lines(tables.Unreachable(cands, cons, intent, sp))
		} else {
			w.Line(tables.PickedLine(picked, cands, cons))
			w.Blank()
			rows = picked
			if o.Frontier {
				rows = slices.DeleteFunc(slices.Clone(rows), func(c *sweep.Candidate) bool { return !c.Front })
			}
		}
	}
	if cons == nil || len(picked) > 0 {
		t, _ := render.WriteRecords(nil, format, cols, tables.SweepRows(rows, sp, cols, true))
		w.Table(t)
	}
	if w.Err() != nil {
		return w.Err()
	}
	// Rows a lenient read skipped end the command with its own status, but
	// only after the export and the by-key table the skips do not change.
	finished := rp.trace.finish()
	var skipped *traces.SkippedError
	if finished != nil && !errors.As(finished, &skipped) {
		return finished
	}
	if o.Export != "" && len(picked) > 0 {
		if err := sweepExport(o.Export, o.ExportFile, picked[0].Limiter, sp.Unit, s.out, s.err); err != nil {
			return err
		}
	}
	if o.ByKey > 0 && len(picked) > 0 {
		if err := sweepByKey(o, po, picked[0], s); err != nil && !errors.As(err, &skipped) {
			return err
		}
	}
	return finished
}

// sweepByKey replays the trace again through the best candidate alone and
// writes its most rejected keys.
func sweepByKey(o *sweepOptions, po *policyOptions, best *sweep.Candidate, s streams) error {
	rp, err := prepare(&o.trace, po, nil, []limiterSpec{best.Limiter}, "", s.again("second read: the best candidate's keys"))
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	format, _ := parseOutput(o.Output)
	_, rows, err := replayByKey(rp, o.ByKey, s)
	if err != nil {
		return err
	}
	t, _ := render.WriteRecords(nil, format, tables.ByKeyColumns, rows)
	w := render.NewTextWriter(s.out, format)
	w.Blank()
	w.Line(fmt.Sprintf("the %d keys the best candidate, %s, rejected most:", o.ByKey, best.Limiter.Name))
	w.Blank()
	if len(rows) == 0 {
		w.Line("it rejected no request")
	} else {
		w.Table(t)
	}
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
