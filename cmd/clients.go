package cmd

import (
	"github.com/ratesim/ratesim/internal/progress"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"strconv"
	"sync/atomic"

	"github.com/ratesim/ratesim/sim"
)

// clientHelp documents the client model in help texts.
var clientHelp = helpText("clients")

// runClients replays rp in a closed loop under lanes, each request
// carrying the attributes with, and calls emit for every attempt. On a
// terminal it shows the requests read and the attempts made as it goes:
// retries can make a replay far longer than its trace.
func runClients(rp *replay, src sim.Source, lanes []sim.Lane, with []string, c sim.Clients, s streams, emit func(*sim.Attempt) error) ([]sim.ClientStats, error) {
	if s.progress {
		attempts := new(atomic.Int64)
		m := rp.meter(s, src, progress.Counter{Noun: "attempts", N: attempts})
		defer m.Stop()
		src = m.Count(src)
		inner := emit
		emit = func(a *sim.Attempt) error {
			attempts.Add(1)
			return inner(a)
		}
	}
	return sim.RunClients(src, sim.Config{Lanes: lanes, KeyFields: rp.keys, With: with}, c, emit)
}

// runClientSummary replays rp in a closed loop and writes the summary.
func runClientSummary(rp *replay, c sim.Clients, format render.Format, s streams) error {
	stats, err := runClients(rp, rp.trace, rp.spec.Lanes, nil, c, s, func(*sim.Attempt) error { return nil })
	if err != nil {
		return err
	}
	rows := tables.ClientSummaryRows(rp.spec.Lanes, stats, c, rp.spec.Unit)
	t, err := render.WriteRecords(s.out, format, tables.ClientSummaryColumns, rows)
	if err != nil || t == nil {
		if err != nil {
			return err
		}
		return rp.trace.finish()
	}
	w := render.NewTextWriter(s.out, format)
	w.Lines(tables.ClientSummaryHeading(rp.trace.name, rp.spec, c, stats))
	w.Blank()
	w.Table(t)
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}

// runClientRows replays rp's one limiter in a closed loop and writes a row
// per attempt, in time order, with row's columns and tables.ClientColumns; with
// keepAllowed or keepRejected false, the allowed or refused attempts are
// left out.
func runClientRows(rp *replay, row *tables.RunRow, c sim.Clients, keepAllowed, keepRejected bool, format render.Format, s streams) error {
	rfc := rp.trace.RFC3339()
	cols, err := row.AllColumns(rfc, tables.ClientColumns...)
	if err != nil {
		return err
	}
	rw := render.NewRecordWriter(s.out, format, cols)
	var text []byte
	lanes := rp.spec.Lanes[:1]
	stats, err := runClients(rp, rp.trace, lanes, row.Attrs, c, s, func(a *sim.Attempt) error {
		if a.Decision.Allowed && !keepAllowed || !a.Decision.Allowed && !keepRejected {
			return nil
		}
		row.Req, row.D, row.Exact, row.Time = &a.Request, &a.Decision, &a.Exact, nil
		if a.Number > 0 {
			text = rp.spec.Times.Append(text[:0], a.Time)
			row.Time = text
		}
		e := rw.Enc()
		b := row.AppendHead(e, rw.Begin())
		b = strconv.AppendInt(e.Next(b), int64(a.Number), 10)
		b = strconv.AppendInt(e.Next(b), int64(a.Request.Line), 10)
		b = strconv.AppendBool(e.Next(b), a.GaveUp)
		return rw.End(row.AppendTail(e, b))
	})
	if err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	if rw.Textual() {
		w := render.NewTextWriter(s.out, format)
		w.Lines(tables.ClientRowsHeading(rp.trace.name, rp.spec, lanes[0], c, stats[0]))
		w.Blank()
		w.Rows(rw, nil)
		if w.Err() != nil {
			return w.Err()
		}
	}
	return rp.trace.finish()
}
