package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/tables"

	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
)

// stackHelp documents stacked policies in help texts.
var stackHelp = helpText("stack")

// stackOf returns the stack of the --config file, nil when it has no
// policies: list. A stack replaces --algos and --limiter.
func (o *policyOptions) stackOf() ([]stackSpec, error) {
	if !o.hasFile() {
		if o.set["stack"] {
			return nil, usageErrorf("--stack needs a --config file with a policies: list")
		}
		return nil, nil
	}
	pf, err := o.policyFile()
	if err != nil {
		return nil, err
	}
	if len(pf.Policies) == 0 {
		if o.set["stack"] {
			return nil, usageErrorf("--stack needs a policies: list in %s", o.file.Path)
		}
		return nil, nil
	}
	if len(o.Limiters) > 0 {
		return nil, usageErrorf("%s stacks policies: --limiter does not join them", o.file.Path)
	}
	return pf.Policies, nil
}

// stackMode parses --stack, or the file's stack: when it is not given.
func (o *policyOptions) stackMode() (sim.StackMode, error) {
	return o.StackMode(o.set["stack"], o.file)
}

// prepareStack resolves a stack's policies and opens the trace.
func prepareStack(to *traceOptions, po *policyOptions, stack []stackSpec, s streams) (*replay, []sim.StackPolicy, error) {
	po.single = true
	specs := make([]limiterSpec, len(stack))
	for i, sp := range stack {
		specs[i] = sp.Limiter
	}
	rp, err := prepare(to, po, nil, specs, "", s)
	if err != nil {
		return nil, nil, err
	}
	policies, err := spec.StackPolicies(stack, rp.spec.Lanes, rp.keys)
	if err != nil {
		rp.trace.Close()
		return nil, nil, err
	}
	return rp, policies, nil
}

// replayStack replays rp through a stack of policies, each request
// carrying the attributes with, and calls emit for every request; on a
// terminal it shows progress.
func replayStack(rp *replay, policies []sim.StackPolicy, mode sim.StackMode, with []string, s streams, emit func(*sim.StackDecision) error) (*sim.StackReport, error) {
	var src sim.Source = rp.trace
	if s.progress {
		m := rp.meter(s, src)
		defer m.Stop()
		src = m.Count(src)
	}
	return sim.RunStack(src, sim.Config{KeyFields: rp.keys, With: with}, sim.Stack{Policies: policies, Mode: mode}, emit)
}

// runStackSummary replays a stack and writes a row per policy.
func runStackSummary(rp *replay, policies []sim.StackPolicy, mode sim.StackMode, format render.Format, s streams) error {
	rep, err := replayStack(rp, policies, mode, nil, s, func(*sim.StackDecision) error { return nil })
	if err != nil {
		return err
	}
	t, err := render.WriteRecords(s.out, format, tables.StackSummaryColumns, tables.StackSummaryRows(policies, rep, mode))
	if err != nil {
		return err
	}
	if t != nil {
		w := render.NewTextWriter(s.out, format)
		w.Lines(tables.StackHeading(rp.trace.name, rp.spec, policies, rep, mode))
		w.Blank()
		w.Table(t)
		if w.Err() != nil {
			return w.Err()
		}
	}
	return rp.trace.finish()
}

// runStackRows replays a stack and writes a row per request
// (tables.StackRow), then, in tables, the summary per policy. With
// keepAllowed or keepRejected false, the allowed or refused requests are
// left out.
func runStackRows(rp *replay, policies []sim.StackPolicy, mode sim.StackMode, style headers.Style, with []string, keepAllowed, keepRejected bool, format render.Format, s streams) error {
	row, err := tables.NewStackRow(policies, rp.spec.Unit, style, with)
	if err != nil {
		return err
	}
	cols, err := row.AllColumns(rp.trace.RFC3339(), tables.StackColumns...)
	if err != nil {
		return err
	}
	rw := render.NewRecordWriter(s.out, format, cols)
	rep, err := replayStack(rp, policies, mode, row.Attrs, s, func(d *sim.StackDecision) error {
		if d.Decision.Allowed && !keepAllowed || !d.Decision.Allowed && !keepRejected {
			return nil
		}
		return rw.End(row.AppendTo(rw.Enc(), rw.Begin(), d))
	})
	if err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	if rw.Textual() {
		w := render.NewTextWriter(s.out, format)
		w.Lines(tables.StackHeading(rp.trace.name, rp.spec, policies, rep, mode))
		w.Blank()
		w.Rows(rw, nil)
		t, _ := render.WriteRecords(nil, format, tables.StackSummaryColumns, tables.StackSummaryRows(policies, rep, mode))
		w.Blank()
		w.Table(t)
		if w.Err() != nil {
			return w.Err()
		}
	}
	return rp.trace.finish()
}
