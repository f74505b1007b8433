package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"fmt"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
)

// timelineColumns are the columns of compare --timeline: a row per
// interval and limiter.
var timelineColumns = []render.Column{
	{Name: "interval_start", Right: true},
	{Name: "limiter"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "false_allows", Right: true},
	{Name: "false_rejects", Right: true},
	{Name: "keys_active", Right: true},
}

// laneCounts are one limiter's counts in one interval.
type laneCounts struct {
	allowed, falseAllows, falseRejects int64
}

// timeline counts, per interval of length every (aligned by floor
// division) and per limiter, the requests, the allowed, the rejected and
// the false allows and rejects against the oracle, and the distinct keys
// active, and writes them as rows. It needs the trace in time order,
// interval by interval: it holds one interval at a time, so its memory
// does not grow with the trace. (The report and plot timeline, which need
// no keys, count in the replay's workers instead: sim.Config.Every.)
type timeline struct {
	every    int64
	sp       *policySpec
	rw       *render.RecordWriter
	cur      int64 // the open interval's index
	open     bool
	requests int64
	lanes    []laneCounts
	keys     map[string]struct{}
	// strips are, per limiter, the level of each interval's rejected
	// share (0 for none to 8 for all), for the table's strips.
	strips [][]int
	// intervals and rows count what was written.
	intervals int64
}

// newTimeline returns a timeline of intervals of every writing to rw.
func newTimeline(every time.Duration, sp *policySpec, rw *render.RecordWriter) *timeline {
	return &timeline{every: int64(every), sp: sp, rw: rw, lanes: make([]laneCounts, len(sp.Lanes)),
		keys: map[string]struct{}{}, strips: make([][]int, len(sp.Lanes))}
}

// add counts the requests of b.
func (tl *timeline) add(b *sim.Batch) error {
	for i := range b.Requests {
		r := &b.Requests[i]
		k := floorDiv(r.Time, tl.every)
		switch {
		case !tl.open:
			tl.cur, tl.open = k, true
		case k < tl.cur:
			return outOfOrder(r.Line)
		case k > tl.cur:
			if err := tl.flush(); err != nil {
				return err
			}
			tl.cur, tl.open = k, true
		}
		tl.requests++
		if _, ok := tl.keys[string(r.Key)]; !ok {
			tl.keys[string(r.Key)] = struct{}{}
		}
		oracle := b.Oracle[i]
		for l := range tl.lanes {
			c := &tl.lanes[l]
			switch allowed := b.Allowed(i, l); {
			case allowed:
				c.allowed++
				if !oracle {
					c.falseAllows++
				}
			case oracle:
				c.falseRejects++
			}
		}
	}
	return nil
}

// outOfOrder is the error of a timeline whose trace has the request of
// line in an interval before the one of the request before it.
func outOfOrder(line int) error {
	return fmt.Errorf("--timeline needs the trace in time order: line %d is in an interval before the one of the line before it (--sort sorts the trace)", line)
}

// flush writes the open interval's rows and starts afresh.
func (tl *timeline) flush() error {
	if !tl.open || tl.requests == 0 {
		return nil
	}
	start := tl.sp.InstantCell(tl.cur * tl.every)
	for l, lane := range tl.sp.Lanes {
		c := tl.lanes[l]
		e := tl.rw.Enc()
		b := tl.rw.Begin()
		for j, v := range []render.Cell{start, render.Str(lane.Name), render.Int(tl.requests), render.Int(c.allowed),
			render.Int(tl.requests - c.allowed), tl.sp.AgainstIntent(render.Int(c.falseAllows)), tl.sp.AgainstIntent(render.Int(c.falseRejects)),
			render.Int(int64(len(tl.keys)))} {
			if j > 0 {
				b = e.Next(b)
			}
			b = e.Cell(b, v)
		}
		if err := tl.rw.End(b); err != nil {
			return err
		}
		rejected := tl.requests - c.allowed
		level := 0
		if rejected > 0 { // rounded up: any rejection shows
			level = int((rejected*int64(len(stripLevels)-1) + tl.requests - 1) / tl.requests)
		}
		tl.strips[l] = append(tl.strips[l], level)
		tl.lanes[l] = laneCounts{}
	}
	tl.intervals++
	tl.requests = 0
	clear(tl.keys)
	return nil
}

// floorDiv is a/b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// stripWidth is the most characters a strip has; longer timelines put
// several intervals in a character, showing the worst of them.
const stripWidth = 64

// stripLevels draw a rejected share from none to all.
var stripLevels = []rune(" ▁▂▃▄▅▆▇█")

// stripLines draw, per limiter, the share of requests it rejected in each
// interval, a character an interval (or the worst of several).
func (tl *timeline) stripLines() []string {
	width := 0
	for _, l := range tl.sp.Lanes {
		width = max(width, len(l.Name))
	}
	var lines []string
	for l, lane := range tl.sp.Lanes {
		levels := tl.strips[l]
		per := max((len(levels)+stripWidth-1)/stripWidth, 1)
		var b strings.Builder
		for i := 0; i < len(levels); i += per {
			worst := 0
			for _, v := range levels[i:min(i+per, len(levels))] {
				worst = max(worst, v)
			}
			b.WriteRune(stripLevels[worst])
		}
		lines = append(lines, fmt.Sprintf("%-*s |%s|", width, lane.Name, b.String()))
	}
	return lines
}

// parseTimeline parses a timeline's interval, given at flag ("--timeline",
// "--every"): a positive duration in the unit.
func parseTimeline(s, flag string, unit time.Duration) (time.Duration, error) {
	return spec.Duration(spec.Setting{Value: s, At: spec.Source(flag)}, strings.TrimPrefix(flag, "--"), unit)
}

// runTimeline replays the trace of rp and writes compare --timeline.
func runTimeline(o *compareOptions, rp *replay, format render.Format, s streams) error {
	every, err := parseTimeline(o.Timeline, "--timeline", rp.spec.Unit)
	if err != nil {
		return err
	}
	rw := render.NewRecordWriter(s.out, format, timelineColumns)
	tl := newTimeline(every, rp.spec, rw)
	rep, err := rp.run(rp.config(true, false), s, tl.add)
	if err != nil {
		return err
	}
	if err := tl.flush(); err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	if !rw.Textual() {
		return rp.trace.finish()
	}
	w := render.NewTextWriter(s.out, format)
	compareHeader(w, rp, rep, false)
	w.Blank()
	w.Line(fmt.Sprintf("timeline: %s of %s, the share of requests each limiter rejected, from none to all (%s)",
		render.Plural(tl.intervals, "interval"), rp.spec.Duration(every), string(stripLevels[1:])))
	if per := (tl.intervals + stripWidth - 1) / stripWidth; per > 1 {
		w.Line(fmt.Sprintf("a character stands for %d intervals, and shows the worst of them", per))
	}
	w.Blank()
	for _, l := range tl.stripLines() {
		w.Line(l)
	}
	w.Blank()
	w.Rows(rw, nil)
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
