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
	"math"
	"slices"
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
}

// Marks are points drawn as glyphs: requests, false rejects, a frontier.
type Marks struct {
	Label  string
	Color  int
	Shape  Shape
	Points []Point
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
	out := make([]Point, 0, 4*columns)
	col := func(x float64) int {
		c := int(math.Floor((x - xmin) / (xmax - xmin) * float64(columns)))
		return min(max(c, 0), columns-1)
	}
	for i := 0; i < len(pts); {
		c := col(pts[i].X)
		j := i
		lo, hi := i, i
		for j < len(pts) && col(pts[j].X) == c {
			if pts[j].Y < pts[lo].Y {
				lo = j
			}
			if pts[j].Y > pts[hi].Y {
				hi = j
			}
			j++
		}
		keep := []int{i, lo, hi, j - 1}
		slices.Sort(keep)
		keep = slices.Compact(keep)
		for _, k := range keep {
			out = append(out, pts[k])
		}
		i = j
	}
	return out
}

// DownsampleMarks returns the marks as drawn in columns equal slices of
// [xmin, xmax]: per column, its lowest and highest. Marks at one spot
// cover each other, so nothing visible is lost.
func DownsampleMarks(pts []Point, xmin, xmax float64, columns int) []Point {
	if columns <= 0 || len(pts) <= 2*columns || !(xmax > xmin) {
		return pts
	}
	type extremes struct {
		lo, hi Point
		seen   bool
	}
	cols := make([]extremes, columns)
	for _, p := range pts {
		c := int(math.Floor((p.X - xmin) / (xmax - xmin) * float64(columns)))
		c = min(max(c, 0), columns-1)
		e := &cols[c]
		if !e.seen {
			*e = extremes{p, p, true}
			continue
		}
		if p.Y < e.lo.Y {
			e.lo = p
		}
		if p.Y > e.hi.Y {
			e.hi = p
		}
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

// xRange is the X extent of the panel's lines and marks; spans and
// edges are drawn where they fall in it.
func (p *Panel) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	see := func(x float64) {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			see(pt.X)
		}
	}
	for _, m := range p.Marks {
		for _, pt := range m.Points {
			see(pt.X)
		}
	}
	if lo > hi {
		return 0, 1
	}
	if lo == hi {
		return lo - 0.5, hi + 0.5
	}
	return lo, hi
}

// yRange is the Y extent of the panel's data and limits.
func (p *Panel) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	see := func(y float64) {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			see(pt.Y)
		}
	}
	for _, m := range p.Marks {
		for _, pt := range m.Points {
			see(pt.Y)
		}
	}
	for _, l := range p.Limits {
		see(l.Y)
	}
	if p.YFrom0 {
		see(0)
	}
	if lo > hi {
		return 0, 1
	}
	if lo == hi {
		return lo - 1, hi + 1
	}
	return lo, hi
}

// figureXRange is the X extent over every panel, which they share.
func (f *Figure) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range f.Panels {
		a, b := f.Panels[i].xRange()
		lo, hi = math.Min(lo, a), math.Max(hi, b)
	}
	if lo > hi {
		return 0, 1
	}
	return lo, hi
}

// FormatNumber writes a value as labels show it: whole numbers as they
// are, others with up to 4 significant digits.
func FormatNumber(v float64) string { return termNum(v) }
