package cmd

import (
	"fmt"

	"github.com/ratesim/ratesim/sim"
)

// byKeyColumns are the columns of compare --by-key: a row per limiter and
// key, the keys it rejected most first.
var byKeyColumns = []column{
	{name: "limiter"},
	{name: "key"},
	{name: "requests", right: true},
	{name: "allowed", right: true},
	{name: "rejected", right: true},
	{name: "false_rejects", right: true},
	{name: "first_rejection", right: true, nullText: "-"},
}

// byKeyRows are, per limiter in lane order, the rows of the keys it
// rejected most, as rep lists them (sim.Config.MostRejected).
func byKeyRows(rep *sim.Report, sp *policySpec) [][]cell {
	var rows [][]cell
	for _, st := range rep.Algos {
		for _, k := range st.MostRejected {
			rows = append(rows, []cell{strCell(st.Name), strCell(k.Key), intCell(k.Requests),
				intCell(k.Requests - k.Rejected), intCell(k.Rejected), sp.againstIntent(intCell(k.FalseRejects)), timeCell(k.FirstRejection)})
		}
	}
	return rows
}

// replayByKey replays the trace of rp and returns, per limiter, the rows
// of its n most rejected keys.
func replayByKey(rp *replay, n int, s streams) (*sim.Report, [][]cell, error) {
	cfg := rp.config(false, false)
	cfg.MostRejected = n
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return nil, nil, err
	}
	return rep, byKeyRows(rep, rp.spec), nil
}

// runByKey replays the trace of rp and writes compare --by-key.
func runByKey(o *compareOptions, rp *replay, format outputFormat, s streams) error {
	rep, rows, err := replayByKey(rp, o.ByKey, s)
	if err != nil {
		return err
	}
	t, err := writeRecords(s.out, format, byKeyColumns, rows)
	if err != nil {
		return err
	}
	if t == nil {
		return rp.trace.finish()
	}
	w := &textWriter{w: s.out, format: format}
	w.compareHeader(rp, rep, false)
	w.blank()
	if rp.spec.IntentNamed {
		w.line(fmt.Sprintf("%s (false rejects are against the oracle, a sliding log of limit %d per %s)",
			byKeyTitle(rep, o.ByKey), rp.spec.Intent.Limit, rp.spec.duration(rp.spec.Intent.Window)))
	} else {
		w.line(fmt.Sprintf("%s (no intent given: --intent LIMIT/WINDOW counts false rejects)", byKeyTitle(rep, o.ByKey)))
	}
	w.blank()
	if len(rows) == 0 {
		w.line("no limiter rejected a request")
	} else {
		w.table(t)
	}
	if w.err != nil {
		return w.err
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
