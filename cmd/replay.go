package cmd

import (
	"github.com/ratesim/ratesim/internal/progress"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"
	"io"
	"time"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// replay is a trace opened and a policy resolved, ready for sim.Run.
type replay struct {
	trace    *trace
	spec     *policySpec
	keys     []string
	keepKeys bool
	given    map[string]bool // the flags given on the command line
	labeler  *traces.Labeler // --legit, --abusive or --labels; nil: none
}

// prepare checks every flag, then opens the trace. interval is the
// --interval flag's text ("" for the intent's window). Usage errors come
// before the trace is touched, except those that depend on whether its
// times are RFC 3339.
//
// algos nil means the five classic algorithms, unless limiters are given
// with --limiter (specs) or in the config file.
func prepare(to *traceOptions, po *policyOptions, algos []limiters.Algorithm, specs []limiterSpec, interval string, s streams) (*replay, error) {
	if po.hasFile() {
		// The config file may give the key and unit too; flags given on
		// the command line override it.
		pf, err := po.policyFile()
		if err != nil {
			return nil, err
		}
		po.warnGateway(s.err)
		if !po.single && len(pf.Policies) > 0 {
			if pf, err = po.stackAsLane(to, s.err); err != nil {
				return nil, err
			}
		}
		if pf.Key != nil && !po.set["key"] {
			to.Key = pf.Key
		}
		if pf.Unit != "" && !po.set["unit"] {
			to.Unit = pf.Unit
		}
	}
	if err := checkKeys(to.Key); err != nil {
		return nil, err
	}
	unit, err := traces.UnitFlag(to.Unit)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := to.LogOptions(); err != nil {
		return nil, err
	}
	labeler, err := to.labels.Labeler()
	if err != nil {
		return nil, err
	}
	plan, err := po.plan(algos, specs, intervalFlag(interval))
	if err != nil {
		return nil, err
	}
	// Durations of RFC 3339 traces are in seconds, whatever --unit says:
	// an error of --unit alone waits for the trace (spec.Plan.CheckUnit).
	unitErr, err := plan.CheckUnit(unit)
	if err != nil {
		return nil, err
	}
	t, err := openTrace(to, s)
	if err != nil {
		if unitErr != nil {
			return nil, unitErr // the flags' mistake comes first
		}
		return nil, err
	}
	if t.RFC3339() {
		unit = time.Second
	}
	bound, err := plan.Bind(unit)
	if err != nil {
		t.Close()
		return nil, err
	}
	sp := &policySpec{Spec: bound, RFC3339: t.RFC3339(), Times: t.TimeWriter()}
	return &replay{trace: t, spec: sp, keys: to.Key, keepKeys: to.KeepKeys, given: po.set, labeler: labeler}, nil
}

// intervalFlag is the --interval flag's text as a setting, "" when it is
// not given.
func intervalFlag(text string) spec.Setting {
	if text == "" {
		return spec.Setting{}
	}
	return spec.Setting{Value: text, At: "--interval"}
}

// config is the sim configuration of the replay. State texts write the
// times of an RFC 3339 trace as RFC 3339 times.
func (rp *replay) config(rows, explain bool) sim.Config {
	unit := rp.spec.Unit
	if rp.trace.RFC3339() {
		unit = limiters.UnitRFC3339
	}
	cfg := sim.Config{
		Lanes:     rp.spec.Lanes,
		Policy:    rp.spec.Intent,
		KeyFields: rp.keys,
		KeepKeys:  rp.keepKeys,
		Rows:      rows,
		Explain:   explain,
		Interval:  rp.spec.Interval,
		Unit:      unit,
	}
	labelConfig(&cfg, rp.labeler)
	return cfg
}

// run replays the trace, showing progress on a terminal.
func (rp *replay) run(cfg sim.Config, s streams, emit func(*sim.Batch) error) (*sim.Report, error) {
	return rp.runFrom(rp.trace, cfg, s, emit)
}

// runFrom replays src, the trace or a part of it, as run does.
func (rp *replay) runFrom(src sim.Source, cfg sim.Config, s streams, emit func(*sim.Batch) error) (*sim.Report, error) {
	rp.warnUnused(cfg, s.err)
	if s.merge != nil {
		rep, err := s.merge.Report(&cfg, emit)
		if err != nil {
			return nil, err
		}
		rp.warnAfter(rep, s)
		return rep, nil
	}
	if s.progress || s.meter != nil {
		m := rp.meter(s, src)
		defer m.Stop()
		src = m.Count(src)
	}
	if s.part != nil {
		// The shard's warnings would be about the shard alone: the merge
		// gives them for the whole.
		return partialReplay(s, rp, src, cfg)
	}
	if emit == nil {
		emit = func(*sim.Batch) error { return nil }
	}
	rep, err := sim.Run(src, cfg, emit)
	if err == nil {
		rp.warnResolution(s.err)
		rp.warnAfter(rep, s)
	}
	return rep, err
}

// warnAfter gives the warnings about a replay's trace that its report
// tells: that it holds no request, or that some go back in time.
func (rp *replay) warnAfter(rep *sim.Report, s streams) {
	if rep.Requests == 0 {
		warnf(s.err, "%s holds no request: every count is 0 and every share is empty", rp.trace.name)
	}
	rp.warnBackwards(rep, s.err)
}

// source returns the trace as an engine of its own reads it (the replay
// against a store), counted for the progress shown on a terminal; stop
// ends the display.
func (rp *replay) source(s streams) (src sim.Source, stop func()) {
	if !s.progress && s.meter == nil {
		return rp.trace, func() {}
	}
	m := rp.meter(s, rp.trace)
	return m.Count(rp.trace), m.Stop
}

// warnBackwards warns on w, when the replay found requests earlier than
// their key's latest, that the trace is not in time order.
func (rp *replay) warnBackwards(rep *sim.Report, w io.Writer) {
	if msg := tables.BackwardsWarning(rep, rp.trace.name, rp.spec.Intent.Clock == limiters.ClockClamp); msg != "" {
		fmt.Fprintf(w, "ratesim: warning: %s\n", msg)
	}
}

// warnUnused says on w, a line each, which flags given have no effect on
// the replay cfg describes: the policy's (spec.Spec.UnusedFlags),
// --sort-mem without --sort, and --unit on an RFC 3339 trace.
func (rp *replay) warnUnused(cfg sim.Config, w io.Writer) {
	for _, msg := range rp.spec.UnusedFlags(rp.given, cfg.DecisionsOnly) {
		warnf(w, "%s", msg)
	}
	if rp.given["sort-mem"] && !rp.trace.Sorted() {
		warnf(w, "--sort-mem has no effect: it bounds the memory of --sort, which is not given")
	}
	if rp.trace.RFC3339() && rp.given["unit"] {
		warnf(w, "--unit has no effect: the trace's times are RFC 3339, and its durations are in seconds")
	}
}

// warnf writes a warning line to w: the command goes on, and its exit
// status is not changed.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "ratesim: warning: %s\n", render.TerminalSafe(fmt.Sprintf(format, args...)))
}

// meter starts showing the progress of a replay of src on a terminal:
// the trace's bytes read of its total, and the requests.
func (rp *replay) meter(s streams, src sim.Source, counts ...progress.Counter) *progress.Meter {
	opts := progress.Options{Counts: counts}
	if n, ok := src.(interface{ Name() string }); ok {
		opts.Name = n.Name()
	}
	if rp.trace != nil {
		opts.Bytes = rp.trace.set.Progress
	}
	w := s.err
	if s.meter != nil {
		w = s.meter
	}
	m := progress.Start(w, opts)
	m.Stage(s.stage)
	return m
}
