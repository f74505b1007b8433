package tables

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/sim"
)

// TimelineColumns are the columns of compare --timeline: a row per
// interval and limiter.
var TimelineColumns = []render.Column{
	{Name: "interval_start", Right: true},
	{Name: "limiter"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "false_allows", Right: true},
	{Name: "false_rejects", Right: true},
	{Name: "keys_active", Right: true},
}

// TimelineRows are the rows of TimelineColumns of the intervals ivs
// (sim.Report.Intervals): per interval, a row per lane.
func TimelineRows(ivs []sim.IntervalCounts, sp *Policy) [][]render.Cell {
	var rows [][]render.Cell
	for _, iv := range ivs {
		start := sp.InstantCell(iv.Start)
		for l, lane := range sp.Lanes {
			c := iv.Lanes[l]
			rows = append(rows, []render.Cell{start, render.Str(lane.Name), render.Int(iv.Requests), render.Int(c.Allowed),
				render.Int(iv.Requests - c.Allowed), sp.AgainstIntent(render.Int(c.FalseAllows)), sp.AgainstIntent(render.Int(c.FalseRejects)),
				render.Int(iv.Keys)})
		}
	}
	return rows
}

// OutOfOrder is the error of a timeline whose trace has the request of
// line in an interval before the one of the request before it.
func OutOfOrder(line int) error {
	return fmt.Errorf("--timeline needs the trace in time order: line %d is in an interval before the one of the line before it (--sort sorts the trace)", line)
}

// stripWidth is the most characters a strip has; longer timelines put
// several intervals in a character, showing the worst of them.
const stripWidth = 64

// StripLevels draw a rejected share from none to all.
var StripLevels = []rune(" ▁▂▃▄▅▆▇█")

// TimelineStrips are the lines that introduce a timeline's table of
// intervals of every: what the strips show, then per limiter the share of requests it rejected in
// each interval, a character an interval (or the worst of several).
func TimelineStrips(ivs []sim.IntervalCounts, every time.Duration, sp *Policy) []string {
	width := 0
	for _, l := range sp.Lanes {
		width = max(width, len(l.Name))
	}
	lines := []string{fmt.Sprintf("timeline: %s of %s, the share of requests each limiter rejected, from none to all (%s)",
		render.Plural(int64(len(ivs)), "interval"), sp.Duration(every), string(StripLevels[1:]))}
	per := max((len(ivs)+stripWidth-1)/stripWidth, 1)
	if per > 1 {
		lines = append(lines, fmt.Sprintf("a character stands for %d intervals, and shows the worst of them", per))
	}
	lines = append(lines, "")
	for l, lane := range sp.Lanes {
		var b strings.Builder
		for i := 0; i < len(ivs); i += per {
			worst := 0
			for _, iv := range ivs[i:min(i+per, len(ivs))] {
				worst = max(worst, stripLevel(iv.Requests, iv.Requests-iv.Lanes[l].Allowed))
			}
			b.WriteRune(StripLevels[worst])
		}
		lines = append(lines, fmt.Sprintf("%-*s |%s|", width, lane.Name, b.String()))
	}
	return lines
}

// stripLevel is the level of a rejected share: 0 for none to 8 for all,
// rounded up, so that any rejection shows.
func stripLevel(requests, rejected int64) int {
	if rejected <= 0 || requests <= 0 {
		return 0
	}
	return int((rejected*int64(len(StripLevels)-1) + requests - 1) / requests)
}
