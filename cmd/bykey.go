package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"fmt"

	"github.com/ratesim/ratesim/sim"
)

// byKeyColumns are the columns of compare --by-key: a row per limiter and
// key, the keys it rejected most first.
var byKeyColumns = []render.Column{
	{Name: "limiter"},
	{Name: "key"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "false_rejects", Right: true},
	{Name: "first_rejection", Right: true, NullText: "-"},
}

// byKeyRows are, per limiter in lane order, the rows of the keys it
// rejected most, as rep lists them (sim.Config.MostRejected).
func byKeyRows(rep *sim.Report, sp *policySpec) [][]render.Cell {
	var rows [][]render.Cell
	for _, st := range rep.Algos {
		for _, k := range st.MostRejected {
			rows = append(rows, []render.Cell{render.Str(st.Name), render.Str(k.Key), render.Int(k.Requests),
				render.Int(k.Requests - k.Rejected), render.Int(k.Rejected), sp.againstIntent(render.Int(k.FalseRejects)), render.Time(k.FirstRejection)})
		}
	}
	return rows
}

// replayByKey replays the trace of rp and returns, per limiter, the rows
// of its n most rejected keys.
func replayByKey(rp *replay, n int, s streams) (*sim.Report, [][]render.Cell, error) {
	cfg := rp.config(false, false)
	cfg.MostRejected = n
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return nil, nil, err
	}
	return rep, byKeyRows(rep, rp.spec), nil
}

// runByKey replays the trace of rp and writes compare --by-key.
func runByKey(o *compareOptions, rp *replay, format render.Format, s streams) error {
	rep, rows, err := replayByKey(rp, o.ByKey, s)
	if err != nil {
		return err
	}
	t, err := render.WriteRecords(s.out, format, byKeyColumns, rows)
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
			byKeyTitle(rep, o.ByKey), rp.spec.Intent.Limit, rp.spec.duration(rp.spec.Intent.Window)))
	} else {
		w.Line(fmt.Sprintf("%s (no intent given: --intent LIMIT/WINDOW counts false rejects)", byKeyTitle(rep, o.ByKey)))
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

// byKeyTitle says which keys the rows of rep list, n asked per limiter:
// the n each rejected most, or every key each rejected when none
// rejected as many as n.
func byKeyTitle(rep *sim.Report, n int) string {
	for _, st := range rep.Algos {
		if len(st.MostRejected) >= n {
			return fmt.Sprintf("the %d keys each limiter rejected most", n)
		}
	}
	return fmt.Sprintf("every key each limiter rejected, the most rejected first: fewer than the %d asked", n)
}
