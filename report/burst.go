package report

import (
	"fmt"
	"slices"

	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/sim"
)

// Bursts follows a replay's allowed requests to draw, per limiter, the
// most cost one key had in the burst interval ending at each of them.
// It keeps, per key and limiter, the allowed requests of the last
// interval, and per column of time the largest value: memory follows the
// live keys and the columns, not the trace.
type Bursts struct {
	fr     *Frame
	lanes  []sim.Lane
	delays bool // a lane delays what it admits: bursts are counted at release
	bins   binMax
	keys   map[string][]keyWindow
}

// NewBursts returns a Bursts for a replay through lanes.
func NewBursts(fr *Frame, lanes []sim.Lane) *Bursts {
	iv := int64(fr.Interval)
	return &Bursts{fr: fr, lanes: lanes, bins: binMax{width: max(iv/8, 1), lanes: len(lanes)},
		keys: map[string][]keyWindow{}, delays: delaying(lanes)}
}

// Configure asks cfg for what Emit reads: every request, and the
// decisions in full when a lane delays what it admits.
func (bs *Bursts) Configure(cfg *sim.Config) {
	cfg.Rows = true
	cfg.Detail = cfg.Detail || bs.delays
}

// Emit takes a batch of the replay; it is sim.Run's emit callback.
func (bs *Bursts) Emit(b *sim.Batch) error {
	iv := int64(bs.fr.Interval)
	for i := range b.Requests {
		r := &b.Requests[i]
		ws := bs.keys[string(r.Key)]
		if ws == nil {
			ws = make([]keyWindow, len(bs.lanes))
			bs.keys[string(r.Key)] = ws
		}
		for l := range bs.lanes {
			if !b.Allowed(i, l) {
				continue
			}
			t := r.Time
			if bs.delays {
				t += int64(b.Decision(i, l).Delay)
			}
			w := &ws[l]
			if k := len(w.times); k > 0 && t < w.times[k-1] {
				t = w.times[k-1] // counted at the key's latest
			}
			drop := 0
			for drop < len(w.times) && w.times[drop] < t-iv {
				w.sum -= w.costs[drop]
				drop++
			}
			w.times, w.costs = append(w.times[drop:], t), append(w.costs[drop:], r.Cost)
			w.sum += r.Cost
			bs.bins.add(t, l, w.sum)
		}
	}
	return nil
}

// Figure draws what Emit saw; rep is the replay's report, whose worst
// interval per limiter is marked.
func (bs *Bursts) Figure(rep *sim.Report) *Figure {
	fr := bs.fr
	pn := Panel{
		Title:  fmt.Sprintf("the most cost one key got through in any %s, per column of time (dashed: the intended limit)", fr.duration(fr.Interval)),
		YLabel: "cost in interval", YFrom0: true,
		Limits: []Limit{{Label: fmt.Sprintf("limit %d", fr.Intent.Limit), Y: float64(fr.Intent.Limit), Color: Black}},
	}
	for l, lane := range bs.lanes {
		line := Line{Label: lane.Name, Color: LimiterColor(l)}
		for i, row := range bs.bins.vals {
			if row[l] >= 0 {
				line.Points = append(line.Points, Point{X: fr.X((bs.bins.first + int64(i)) * bs.bins.width), Y: float64(row[l])})
			}
		}
		pn.Lines = append(pn.Lines, line)
		if w := rep.Algos[l].Burst; w.Count > 0 {
			pn.Marks = append(pn.Marks, Marks{Label: fmt.Sprintf("%s worst: %d (%s)", lane.Name, w.Count, w.Key),
				Color: LimiterColor(l), Shape: LimiterShape(l), Points: []Point{{X: fr.X(w.To), Y: float64(w.Count)}}})
		}
	}
	return &Figure{
		Title:  fr.title(fmt.Sprintf("bursts (%s, %s)", plural(rep.Requests, "request"), plural(int64(rep.Keys), "key"))),
		Clock:  fr.Clock,
		XLabel: fr.XLabel,
		Panels: []Panel{pn},
	}
}

// maxBurstBins is the most columns a burst figure keeps; past it,
// neighbouring columns merge, keeping the higher value, so the maxima
// are exact.
const maxBurstBins = 2048

// binMax keeps, per limiter, the largest value seen in each bin of time,
// in at most maxBurstBins bins: when there would be more, the bins double
// in width, two merged into one by their maximum.
type binMax struct {
	width int64
	first int64     // the index of the first bin
	vals  [][]int64 // per bin, per lane: the largest value, or -1
	lanes int
}

func (b *binMax) add(t int64, lane int, v int64) {
	k := intmath.FloorDiv(t, b.width)
	if b.vals == nil {
		b.first = k
	}
	for k-b.first >= maxBurstBins {
		b.coarsen()
		k = intmath.FloorDiv(t, b.width)
	}
	k = max(k, b.first) // a trace out of time order: counted at its start
	for int64(len(b.vals)) <= k-b.first {
		row := make([]int64, b.lanes)
		for i := range row {
			row[i] = -1
		}
		b.vals = append(b.vals, row)
	}
	row := b.vals[k-b.first]
	row[lane] = max(row[lane], v)
}

// coarsen doubles the bins' width.
func (b *binMax) coarsen() {
	first := intmath.FloorDiv(b.first, 2)
	var vals [][]int64
	for i, row := range b.vals {
		j := intmath.FloorDiv(b.first+int64(i), 2) - first
		if int(j) >= len(vals) {
			vals = append(vals, slices.Clone(row))
			continue
		}
		for l, v := range row {
			vals[j][l] = max(vals[j][l], v)
		}
	}
	b.width *= 2
	b.first, b.vals = first, vals
}

// keyWindow is one key's allowed requests under one limiter within the
// burst interval, and their cost.
type keyWindow struct {
	times, costs []int64
	sum          int64
}

// delaying reports whether a lane of lanes delays what it admits.
func delaying(lanes []sim.Lane) bool {
	return slices.ContainsFunc(lanes, func(l sim.Lane) bool { return l.Algorithm.Delays() })
}
