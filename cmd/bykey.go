package cmd

import (
	"cmp"
	"fmt"
	"slices"

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

// keyCounts are one key's counts: its requests, and per limiter its
// rejections.
type keyCounts struct {
	requests int64
	lanes    []keyLane
}

// keyLane is one key's counts under one limiter.
type keyLane struct {
	rejected, falseRejects int64
	first                  string // the time of the first rejection, as written
	rejectedOnce           bool
}

// byKey counts every key's rejections per limiter, exactly: its memory
// grows with the keys, not with the trace.
type byKey struct {
	lanes int
	keys  map[string]*keyCounts
}

func newByKey(lanes int) *byKey { return &byKey{lanes: lanes, keys: map[string]*keyCounts{}} }

// add counts the requests of b.
func (bk *byKey) add(b *sim.Batch) error {
	for i := range b.Requests {
		r := &b.Requests[i]
		kc := bk.keys[string(r.Key)]
		if kc == nil {
			kc = &keyCounts{lanes: make([]keyLane, bk.lanes)}
			bk.keys[string(r.Key)] = kc
		}
		kc.requests++
		for l := range kc.lanes {
			if b.Allowed(i, l) {
				continue
			}
			c := &kc.lanes[l]
			c.rejected++
			if b.Oracle[i] {
				c.falseRejects++
			}
			if !c.rejectedOnce {
				c.first, c.rejectedOnce = string(r.TimeText), true
			}
		}
	}
	return nil
}

// rows returns, per limiter in lane order, its n keys with the most
// rejections (ties: fewer requests, then the key), leaving out keys it
// never rejected.
func (bk *byKey) rows(sp *policySpec, n int) [][]cell {
	type entry struct {
		key string
		kc  *keyCounts
	}
	all := make([]entry, 0, len(bk.keys))
	for k, kc := range bk.keys {
		all = append(all, entry{k, kc})
	}
	var rows [][]cell
	for l, lane := range sp.Lanes {
		var top []entry
		for _, e := range all {
			if e.kc.lanes[l].rejected > 0 {
				top = append(top, e)
			}
		}
		slices.SortFunc(top, func(a, b entry) int {
			if c := cmp.Compare(b.kc.lanes[l].rejected, a.kc.lanes[l].rejected); c != 0 {
				return c
			}
			if c := cmp.Compare(a.kc.requests, b.kc.requests); c != 0 {
				return c
			}
			return cmp.Compare(a.key, b.key)
		})
		for _, e := range top[:min(n, len(top))] {
			c := e.kc.lanes[l]
			rows = append(rows, []cell{strCell(lane.Name), strCell(e.key), intCell(e.kc.requests),
				intCell(e.kc.requests - c.rejected), intCell(c.rejected), intCell(c.falseRejects), timeCell(c.first)})
		}
	}
	return rows
}

// byKeyRows replays the trace of rp and returns, per limiter, the rows of
// its n most rejected keys.
func byKeyRows(rp *replay, n int, s streams) (*sim.Report, [][]cell, error) {
	bk := newByKey(len(rp.spec.Lanes))
	rep, err := rp.run(rp.config(true, false), s, bk.add)
	if err != nil {
		return nil, nil, err
	}
	return rep, bk.rows(rp.spec, n), nil
}

// runByKey replays the trace of rp and writes compare --by-key.
func runByKey(o *compareOptions, rp *replay, format outputFormat, s streams) error {
	rep, rows, err := byKeyRows(rp, o.ByKey, s)
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
	w.line(fmt.Sprintf("compare on %s: %s, %s", rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
	w.line("policy: " + rp.spec.describe(false))
	for _, l := range rp.spec.laneLines() {
		w.line(l)
	}
	if line := backwardsLine(rep); line != "" {
		w.line(line)
	}
	w.blank()
	w.line(fmt.Sprintf("the %d keys each limiter rejected most (false rejects are against the oracle, a sliding log of limit %d per %s)",
		o.ByKey, rp.spec.Oracle.Limit, rp.spec.duration(rp.spec.Oracle.Window)))
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
