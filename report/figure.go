// Package report draws ratesim's pictures: figures of a replay as SVG, PNG
// or PDF (through gonum/plot), in a terminal, and the self-contained HTML
// report.
//
// A Figure is data only: panels of lines, marks, limits, edges and shaded
// spans over the trace's time (or a swept parameter). The same Figure is
// drawn by every back end, so a picture in a file, in the terminal and in
// the report show the same points.
package report

import (
	"fmt"
	"image/color"
	"iter"
	"math"
	"slices"
	"sync"
)

// A Figure is one picture: panels stacked vertically that share what
// their X axis means.
type Figure struct {
	// Title states the trace, the policy and the limiters, a line each.
	Title []string
	// Clock says the X values are Unix seconds, shown as UTC clock times
	// (the trace's times are RFC 3339).
	Clock bool
	// XLabel names the X axis of every panel.
	XLabel string
	Panels []Panel
	// Columns is how many columns lines and marks are downsampled to when
	// drawn to a file; 0 means 1000, more than the pixels across a page.
	Columns int
}

// A Panel is one chart of a Figure.
type Panel struct {
	Title  string
	YLabel string
	Lines  []Line
	Marks  []Marks
	Limits []Limit
	// Edges are X values drawn as thin vertical lines: window edges.
	Edges []float64
	// Spans are X intervals shaded: the worst burst.
	Spans []Span
	// YFrom0 starts the Y axis at zero.
	YFrom0 bool
}

// A Line is a series drawn as a line in one colour.
type Line struct {
	Label  string
	Color  int // an index into Palette
	Dashed bool
	// Step draws the value as held until the next point.
	Step   bool
	Points []Point
	// Series, when Points is nil, yields the points instead, the same
	// ones each time it is called: a long line is then generated again
	// for each use and downsampled as it goes, never held whole.
	Series iter.Seq[Point]
}

// Marks are points drawn as glyphs: requests, false rejects, a frontier.
type Marks struct {
	Label  string
	Color  int
	Shape  Shape
	Points []Point
	// Series is as a Line's.
	Series iter.Seq[Point]
}

// points are the line's points.
func (l *Line) points() iter.Seq[Point] { return seriesOf(l.Points, l.Series) }

// points are the marks' points.
func (m *Marks) points() iter.Seq[Point] { return seriesOf(m.Points, m.Series) }

func seriesOf(pts []Point, series iter.Seq[Point]) iter.Seq[Point] {
	if pts == nil && series != nil {
		return series
	}
	return slices.Values(pts)
}

// A Limit is a horizontal line: a limit or a capacity, a constraint.
type Limit struct {
	Label string
	Y     float64
	Color int
}

// A Span is an X interval.
type Span struct {
	Label    string
	From, To float64
}

// A Point is one datum.
type Point struct{ X, Y float64 }

// Shape is the glyph of Marks.
type Shape int

// The shapes, in the order limiters take them.
const (
	Circle Shape = iota
	Triangle
	Square
	Cross
	Plus
	Ring
	Pyramid
	Box
)

// Palette is the Okabe–Ito palette: eight colours told apart by readers
// with any common colour-vision deficiency. Index 0, black, is for
// limits and totals; limiters take the others in order (LimiterColor).
var Palette = []color.NRGBA{
	{0x00, 0x00, 0x00, 0xff}, // black
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xf0, 0xe4, 0x42, 0xff}, // yellow
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
}

// Colours of a request's outcome in a state panel: they keep their
// meaning in every panel, whatever the limiter's own colour.
const (
	Black      = 0
	Allowed    = 3 // bluish green
	Rejected   = 6 // vermillion
	Delayed    = 2 // sky blue
	Constraint = 7 // reddish purple
)

// LimiterColor is the colour of the limiter at index i of a replay, the
// same in every kind of figure: the palette without black, in order,
// then again.
func LimiterColor(i int) int { return 1 + i%(len(Palette)-1) }

// LimiterShape is the glyph of the limiter at index i, so that limiters
// stay apart in greyscale too.
func LimiterShape(i int) Shape { return Shape(i % 8) }

// Hex is colour i of the palette as #rrggbb.
func Hex(i int) string {
	c := Palette[i%len(Palette)]
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

// Downsample returns the points of a line as drawn in columns equal
// slices of [xmin, xmax]: per column, its first, lowest, highest and last
// point, in order. Every extreme survives, so the drawn envelope is
// exactly the one of all the points. Points must be in X order; a line
// of at most 4 points a column is returned as it is.
func Downsample(pts []Point, xmin, xmax float64, columns int) []Point {
	if columns <= 0 || len(pts) <= 4*columns || !(xmax > xmin) {
		return pts
	}
	return downsample(slices.Values(pts), xmin, xmax, columns)
}

// downsample is Downsample of a series, read once and never held: past
// the first 4*columns points it keeps only the column being filled.
func downsample(pts iter.Seq[Point], xmin, xmax float64, columns int) []Point {
	var held []Point
	var d *downsampler
	for p := range pts {
		if d != nil {
			d.add(p)
			continue
		}
		held = append(held, p)
		if columns <= 0 || len(held) <= 4*columns || !(xmax > xmin) {
			continue
		}
		d = &downsampler{cols: columnsOf(xmin, xmax, columns)}
		for _, q := range held {
			d.add(q)
		}
		held = nil
	}
	if d == nil {
		return held
	}
	return d.points()
}

// columnsOf returns the column of an X in columns equal slices of
// [xmin, xmax], those outside it in the first or last.
func columnsOf(xmin, xmax float64, columns int) func(x float64) int {
	return func(x float64) int {
		c := int(math.Floor((x - xmin) / (xmax - xmin) * float64(columns)))
		return min(max(c, 0), columns-1)
	}
}

// downsampler takes a line's points in order and keeps, per run of points
// in one column, the first, the (first) lowest, the (first) highest and
// the last.
type downsampler struct {
	cols                func(x float64) int
	n                   int // points taken
	col                 int // the column of the run being taken
	first, lo, hi, last indexed
	out                 []Point
}

// indexed is a point and its index in the line.
type indexed struct {
	i int
	p Point
}

func (d *downsampler) add(p Point) {
	c, e := d.cols(p.X), indexed{d.n, p}
	d.n++
	if e.i == 0 || c != d.col {
		if e.i > 0 {
			d.flush()
		}
		d.col, d.first, d.lo, d.hi, d.last = c, e, e, e, e
		return
	}
	if p.Y < d.lo.p.Y {
		d.lo = e
	}
	if p.Y > d.hi.p.Y {
		d.hi = e
	}
	d.last = e
}

// flush keeps the run's points, each once, in order.
func (d *downsampler) flush() {
	keep := [4]indexed{d.first, d.lo, d.hi, d.last}
	slices.SortFunc(keep[:], func(a, b indexed) int { return a.i - b.i })
	for k, e := range keep {
		if k == 0 || e.i != keep[k-1].i {
			d.out = append(d.out, e.p)
		}
	}
}

// points returns the points kept.
func (d *downsampler) points() []Point {
	if d.n > 0 {
		d.flush()
	}
	return d.out
}

// DownsampleMarks returns the marks as drawn in columns equal slices of
// [xmin, xmax]: per column, its lowest and highest. Marks at one spot
// cover each other, so nothing visible is lost.
func DownsampleMarks(pts []Point, xmin, xmax float64, columns int) []Point {
	if columns <= 0 || len(pts) <= 2*columns || !(xmax > xmin) {
		return pts
	}
	return downsampleMarks(slices.Values(pts), xmin, xmax, columns)
}

// downsampleMarks is DownsampleMarks of a series, read once and never
// held: past the first 2*columns marks it keeps two a column.
func downsampleMarks(pts iter.Seq[Point], xmin, xmax float64, columns int) []Point {
	type extremes struct {
		lo, hi Point
		seen   bool
	}
	var held []Point
	var cols []extremes
	col := columnsOf(xmin, xmax, columns)
	add := func(p Point) {
		e := &cols[col(p.X)]
		if !e.seen {
			*e = extremes{p, p, true}
			return
		}
		if p.Y < e.lo.Y {
			e.lo = p
		}
		if p.Y > e.hi.Y {
			e.hi = p
		}
	}
	for p := range pts {
		if cols != nil {
			add(p)
			continue
		}
		held = append(held, p)
		if columns <= 0 || len(held) <= 2*columns || !(xmax > xmin) {
			continue
		}
		cols = make([]extremes, columns)
		for _, q := range held {
			add(q)
		}
		held = nil
	}
	if cols == nil {
		return held
	}
	var out []Point
	for _, e := range cols {
		if !e.seen {
			continue
		}
		out = append(out, e.lo)
		if e.hi != e.lo {
			out = append(out, e.hi)
		}
	}
	return out
}

// extent is where a panel's data lies: X over its lines and marks
// (spans and edges are drawn where they fall in it), Y over its lines,
// marks and limits.
type extent struct{ xlo, xhi, ylo, yhi float64 }

// extent reads every point of the panel once.
func (p *Panel) extent() extent {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := xlo, xhi
	see := func(pt Point) {
		xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
		ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
	}
	for _, l := range p.Lines {
		for pt := range l.points() {
			see(pt)
		}
	}
	for _, m := range p.Marks {
		for pt := range m.points() {
			see(pt)
		}
	}
	for _, l := range p.Limits {
		ylo, yhi = math.Min(ylo, l.Y), math.Max(yhi, l.Y)
	}
	if p.YFrom0 {
		ylo, yhi = math.Min(ylo, 0), math.Max(yhi, 0)
	}
	e := extent{xlo, xhi, ylo, yhi}
	switch {
	case xlo > xhi:
		e.xlo, e.xhi = 0, 1
	case xlo == xhi:
		e.xlo, e.xhi = xlo-0.5, xhi+0.5
	}
	switch {
	case ylo > yhi:
		e.ylo, e.yhi = 0, 1
	case ylo == yhi:
		e.ylo, e.yhi = ylo-1, yhi+1
	}
	return e
}

// extents returns the extent of each panel, and the X extent over every
// panel, which they share.
func (f *Figure) extents() (panels []extent, xlo, xhi float64) {
	panels = make([]extent, len(f.Panels))
	eachPanel(len(f.Panels), func(i int) { panels[i] = f.Panels[i].extent() })
	xlo, xhi = math.Inf(1), math.Inf(-1)
	for _, e := range panels {
		xlo, xhi = math.Min(xlo, e.xlo), math.Max(xhi, e.xhi)
	}
	if xlo > xhi {
		return panels, 0, 1
	}
	return panels, xlo, xhi
}

// sampled are a panel's lines and marks as drawn, downsampled.
type sampled struct{ lines, marks [][]Point }

// sample downsamples each panel's lines and marks to columns over
// [xlo, xhi].
func (f *Figure) sample(xlo, xhi float64, columns int) []sampled {
	out := make([]sampled, len(f.Panels))
	eachPanel(len(f.Panels), func(i int) {
		p := &f.Panels[i]
		for _, l := range p.Lines {
			out[i].lines = append(out[i].lines, downsample(l.points(), xlo, xhi, columns))
		}
		for _, m := range p.Marks {
			out[i].marks = append(out[i].marks, downsampleMarks(m.points(), xlo, xhi, columns))
		}
	})
	return out
}

// eachPanel calls do(i) for the n panels of a figure, side by side: a
// long series is generated and downsampled each time it is drawn, and
// the panels' series take turns on every core instead of one.
func eachPanel(n int, do func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { do(i) })
	}
	wg.Wait()
}

// FormatNumber writes a value as labels show it: whole numbers as they
// are, others with up to 4 significant digits.
func FormatNumber(v float64) string { return termNum(v) }
