package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"

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
	compareHeader(w, rp, rep, false)
	w.Blank()
	if rp.spec.IntentNamed {
		w.Line(fmt.Sprintf("%s (false rejects are against the oracle, a sliding log of limit %d per %s)",
			tables.ByKeyTitle(rep, o.ByKey), rp.spec.Intent.Limit, rp.spec.Duration(rp.spec.Intent.Window)))
	} else {
		w.Line(fmt.Sprintf("%s (no intent given: --intent LIMIT/WINDOW counts false rejects)", tables.ByKeyTitle(rep, o.ByKey)))
	}
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
