package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"github.com/ratesim/ratesim/sim"
)

// replayByKey replays the trace of rp and returns, per limiter, the rows
// of its n most rejected keys.
func replayByKey(rp *replay, n int, s streams) (*sim.Report, [][]render.Cell, error) {
	cfg := rp.config(false, false)
	cfg.MostRejected = n
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return nil, nil, err
	}
	return rep, tables.ByKeyRows(rep, rp.spec), nil
}

// runByKey replays the trace of rp and writes compare --by-key.
func runByKey(o *compareOptions, rp *replay, format render.Format, s streams) error {
	rep, rows, err := replayByKey(rp, o.ByKey, s)
	if err != nil {
		return err
	}
	t, err := render.WriteRecords(s.out, format, tables.ByKeyColumns, rows)
	if err != nil {
		return err
	}
	if t == nil {
		return rp.trace.finish()
	}
	w := render.NewTextWriter(s.out, format)
	w.Lines(tables.CompareHeading(rp.trace.name, rep, rp.spec, false))
	w.Blank()
	w.Line(tables.ByKeyHeading(rep, o.ByKey, rp.spec))
	w.Blank()
	if len(rows) == 0 {
		w.Line("no limiter rejected a request")
	} else {
		w.Table(t)
	}
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
