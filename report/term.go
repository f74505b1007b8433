package report

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Terminal drawing is written here by hand rather than taken from a
// terminal-chart library: it needs a grid of dots, Bresenham's lines and
// a few glyphs laid over them, some 200 lines, and it must draw the very
// Figure the files show (the same downsampled points), which a library
// with its own data model would make us convert and keep in step.

// TermOptions say how WriteTerm draws.
type TermOptions struct {
	// Width is the number of columns to fill; at least 40 are used.
	Width int
	// ASCII draws with plain ASCII characters instead of Unicode braille
	// (2×4 dots a character).
	ASCII bool
	// Rows is the height of a panel's plot area in lines; 0 means 10.
	Rows int
}

// termGlyphs are the characters of the mark shapes.
var termGlyphs = []byte{'o', '^', '#', 'x', '+', 'O', 'A', '@'}

// WriteTerm draws f in the terminal: each panel as a grid of characters
// with its Y range at the left, its X range below and a legend.
func WriteTerm(w io.Writer, f *Figure, o TermOptions) error {
	var b strings.Builder
	for _, t := range f.Title {
		b.WriteString(t + "\n")
	}
	exts, xlo, xhi := f.extents()
	for i := range f.Panels {
		b.WriteString("\n")
		termPanel(&b, f, &f.Panels[i], xlo, xhi, exts[i], o)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// grid is a panel's plot area: cells of characters, and, for braille,
// the dots set in each.
type grid struct {
	cols, rows int
	dx, dy     int // dots per cell across and down
	dots       []uint8
	chars      []rune // set characters, over the dots
}

func newGrid(cols, rows int, ascii bool) *grid {
	g := &grid{cols: cols, rows: rows, dx: 2, dy: 4}
	if ascii {
		g.dx, g.dy = 1, 1
	}
	g.dots = make([]uint8, cols*rows)
	g.chars = make([]rune, cols*rows)
	return g
}

// brailleBit is the bit of dot (x, y) of a braille cell.
var brailleBit = [4][2]uint8{{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}}

// set sets dot (x, y), y down from the top, when it is in the grid.
func (g *grid) set(x, y int) {
	if x < 0 || y < 0 || x >= g.cols*g.dx || y >= g.rows*g.dy {
		return
	}
	i := (y/g.dy)*g.cols + x/g.dx
	if g.dx == 1 {
		g.dots[i] = 1
		return
	}
	g.dots[i] |= brailleBit[y%4][x%2]
}

// line sets the dots from (x0, y0) to (x1, y1), Bresenham's way.
func (g *grid) line(x0, y0, x1, y1 int) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for n := 0; n < 1<<16; n++ {
		g.set(x0, y0)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// put places character r in the cell of dot (x, y).
func (g *grid) put(x, y int, r rune) {
	cx, cy := x/g.dx, y/g.dy
	if cx < 0 || cy < 0 || cx >= g.cols || cy >= g.rows {
		return
	}
	g.chars[cy*g.cols+cx] = r
}

// row renders row r of the grid; dot is the character of a set dot in
// ASCII, and edge the character of edge cells with no dot.
func (g *grid) row(r int, dot rune) string {
	var b strings.Builder
	for c := 0; c < g.cols; c++ {
		i := r*g.cols + c
		switch {
		case g.chars[i] != 0 && (g.chars[i] != ':' || g.dots[i] == 0):
			b.WriteRune(g.chars[i])
		case g.dots[i] == 0:
			b.WriteByte(' ')
		case g.dx == 1:
			b.WriteRune(dot)
		default:
			b.WriteRune(rune(0x2800 + int(g.dots[i])))
		}
	}
	return b.String()
}

// termPanel draws one panel, of extent e.
func termPanel(b *strings.Builder, f *Figure, pn *Panel, xlo, xhi float64, e extent, o TermOptions) {
	rows := o.Rows
	if rows <= 0 {
		rows = 10
	}
	ylo, yhi := e.ylo, e.yhi
	ylab := []string{termNum(yhi), termNum(ylo)}
	for _, l := range pn.Limits {
		ylab = append(ylab, termNum(l.Y))
	}
	labw := 0
	for _, s := range ylab {
		labw = max(labw, len(s))
	}
	cols := max(o.Width, 40) - labw - 2
	g := newGrid(cols, rows, o.ASCII)
	W, H := cols*g.dx, rows*g.dy
	px := func(x float64) int { return int(math.Round((x - xlo) / (xhi - xlo) * float64(W-1))) }
	py := func(y float64) int { return H - 1 - int(math.Round((y-ylo)/(yhi-ylo)*float64(H-1))) }

	b.WriteString(pn.Title + "\n")
	if len(pn.Edges) <= cols/2 {
		for _, x := range pn.Edges {
			if x < xlo || x > xhi {
				continue
			}
			for r := 0; r < rows; r++ {
				g.put(px(x), r*g.dy, ':')
			}
		}
	}
	for _, s := range pn.Spans {
		for x := px(math.Max(s.From, xlo)); x <= px(math.Min(s.To, xhi)); x += g.dx {
			g.put(x, H-1, '=')
		}
	}
	limitRow := map[int]string{}
	for _, l := range pn.Limits {
		y := py(l.Y)
		for x := 0; x < W; x += g.dx {
			if g.chars[(y/g.dy)*cols+x/g.dx] == 0 {
				g.put(x, y, '-')
			}
		}
		limitRow[y/g.dy] = termNum(l.Y)
	}
	var legend []string
	for i, l := range pn.Lines {
		pts := downsample(l.points(), xlo, xhi, W)
		for j := range pts {
			x, y := px(pts[j].X), py(pts[j].Y)
			if j == 0 {
				g.set(x, y)
				continue
			}
			x0, y0 := px(pts[j-1].X), py(pts[j-1].Y)
			if l.Step {
				g.line(x0, y0, x, y0)
				g.line(x, y0, x, y)
			} else {
				g.line(x0, y0, x, y)
			}
		}
		if len(pn.Lines) > 1 && len(pts) > 0 {
			key := rune('1' + i%9)
			last := pts[len(pts)-1]
			g.put(px(last.X), py(last.Y), key)
			legend = append(legend, string(key)+" "+l.Label)
		} else if l.Label != "" {
			legend = append(legend, "line: "+l.Label)
		}
	}
	for _, m := range pn.Marks {
		ch := rune(termGlyphs[int(m.Shape)%len(termGlyphs)])
		for _, p := range downsampleMarks(m.points(), xlo, xhi, W) {
			g.put(px(p.X), py(p.Y), ch)
		}
		if m.Label != "" {
			legend = append(legend, string(ch)+" "+m.Label)
		}
	}
	for _, l := range pn.Limits {
		if l.Label != "" {
			legend = append(legend, "- "+l.Label)
		}
	}
	if len(pn.Spans) > 0 && pn.Spans[0].Label != "" {
		legend = append(legend, "= "+pn.Spans[0].Label)
	}
	for r := 0; r < rows; r++ {
		lab := ""
		switch {
		case r == 0:
			lab = ylab[0]
		case r == rows-1:
			lab = ylab[1]
		default:
			lab = limitRow[r]
		}
		b.WriteString(strings.Repeat(" ", labw-len(lab)) + lab + " |" + g.row(r, '*') + "\n")
	}
	b.WriteString(strings.Repeat(" ", labw) + " +" + strings.Repeat("-", cols) + "\n")
	left, right := termX(f, xlo), termX(f, xhi)
	gap := max(cols-len(left)-len(right), 1)
	b.WriteString(strings.Repeat(" ", labw+2) + left + strings.Repeat(" ", gap) + right + "\n")
	if f.XLabel != "" {
		b.WriteString(strings.Repeat(" ", labw+2) + f.XLabel + "\n")
	}
	if len(legend) > 0 {
		b.WriteString(strings.Repeat(" ", labw+2) + strings.Join(legend, "   ") + "\n")
	}
}

// termNum is a number as an axis shows it: up to 4 significant digits.
func termNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// termX is an X value as the axis shows it: a clock time for RFC 3339
// traces.
func termX(f *Figure, x float64) string {
	if f.Clock {
		return time.Unix(int64(math.Floor(x)), 0).UTC().Format(time.RFC3339)
	}
	return termNum(x)
}
