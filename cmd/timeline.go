package cmd

import (
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/tables"
)

// parseTimeline parses a timeline's interval, given at flag ("--timeline",
// "--every"): a positive duration in the unit.
func parseTimeline(s, flag string, unit time.Duration) (time.Duration, error) {
	return spec.Duration(spec.Setting{Value: s, At: spec.Source(flag)}, strings.TrimPrefix(flag, "--"), unit)
}

// runTimeline replays the trace of rp, counting per interval in the
// engine (sim.Config.Every), and writes compare --timeline.
func runTimeline(o *compareOptions, rp *replay, format render.Format, s streams) error {
	every, err := parseTimeline(o.Timeline, "--timeline", rp.spec.Unit)
	if err != nil {
		return err
	}
	cfg := rp.config(false, false)
	cfg.Every = every
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return err
	}
	if rep.IntervalsOutOfOrder > 0 {
		return tables.OutOfOrder(rep.IntervalsOutOfOrder)
	}
	t, err := render.WriteRecords(s.out, format, tables.TimelineColumns, tables.TimelineRows(rep.Intervals, rp.spec))
	if err != nil || t == nil {
		if err != nil {
			return err
		}
		return rp.trace.finish()
	}
	w := render.NewTextWriter(s.out, format)
	w.Lines(tables.CompareHeading(rp.trace.name, rep, rp.spec, false))
	w.Blank()
	for _, l := range tables.TimelineStrips(rep.Intervals, every, rp.spec) {
		w.Line(l)
	}
	w.Blank()
	w.Table(t)
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
