package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the file formats Write draws, by extension.
var Formats = []string{"svg", "png", "pdf"}

// pdfDate is the creation and modification date of every PDF drawn. The
// PDF writer gonum/plot draws through (fpdf) writes the time of drawing
// unless told one, and then the same figure would not give the same bytes
// from one second to the next. fixPDFDates tells it, once, before the
// first PDF.
var (
	pdfDate     = time.Unix(0, 0).UTC()
	fixPDFDates sync.Once
)

// Width and panel height of a drawn figure.
const (
	figureWidth  = 8 * vg.Inch
	panelHeight  = 2.4 * vg.Inch
	titleLineGap = 14 // points per title line
	// drawColumns is how many columns lines are downsampled to unless the
	// figure says: more than the pixels across the widest format.
	drawColumns = 1000
)

// Write draws f in format ("svg", "png" or "pdf") to w. The same figure
// gives the same bytes.
func Write(w io.Writer, f *Figure, format string) error {
	height := panelHeight*vg.Length(max(len(f.Panels), 1)) + vg.Length(titleLineGap*(len(f.Title)+1))
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(figureWidth, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figureWidth, height), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))}
	case "pdf":
		fixPDFDates.Do(func() {
			fpdf.SetDefaultCreationDate(pdfDate)
			fpdf.SetDefaultModificationDate(pdfDate)
		})
		pc := vgpdf.New(figureWidth, height)
		pc.EmbedFonts(true)
		c = pc
	default:
		return fmt.Errorf("report: unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
	}
	if err := drawFigure(draw.New(c), f); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// drawFigure draws f's title and panels on dc.
func drawFigure(dc draw.Canvas, f *Figure) error {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	fnt := font.From(plot.DefaultFont, 11)
	style := draw.TextStyle{Color: color.Black, Font: fnt, XAlign: draw.XLeft, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	y := dc.Max.Y - 6
	for _, line := range f.Title {
		dc.FillText(style, vg.Point{X: dc.Min.X + 8, Y: y}, line)
		y -= titleLineGap
	}
	body := dc
	body.Max.Y = y - 4
	body.Max.X -= legendWidth
	if len(f.Panels) == 0 {
		return nil
	}
	exts, xlo, xhi := f.extents()
	columns := f.Columns
	if columns <= 0 {
		columns = drawColumns
	}
	samples := f.sample(xlo, xhi, columns)
	plots := make([][]*plot.Plot, len(f.Panels))
	legends := make([]plot.Legend, len(f.Panels))
	for i := range f.Panels {
		p, leg, err := panelPlot(f, &f.Panels[i], xlo, xhi, exts[i], samples[i])
		if err != nil {
			return err
		}
		plots[i], legends[i] = []*plot.Plot{p}, leg
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(4), PadX: vg.Points(4), PadBottom: vg.Points(4)}
	canvases := plot.Align(plots, tiles, body)
	for i := range plots {
		c := canvases[i][0]
		plots[i][0].Draw(c)
		// The legend beside the panel, where it hides no data.
		lc := c
		lc.Min.X, lc.Max.X = body.Max.X+6, dc.Max.X-4
		lc.Max.Y -= 16
		legends[i].Draw(lc)
	}
	return nil
}

// legendWidth is the room at the right of the panels for their legends.
const legendWidth = 180

// panelPlot builds the gonum plot of one panel, of extent e and
// downsampled to d, over [xlo, xhi].
func panelPlot(f *Figure, pn *Panel, xlo, xhi float64, e extent, d sampled) (*plot.Plot, plot.Legend, error) {
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = 8
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(14)
	p := plot.New()
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font.Size = 10
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = pn.YLabel
	p.X.Label.TextStyle.Font.Size = 9
	p.Y.Label.TextStyle.Font.Size = 9
	p.X.Tick.Label.Font.Size = 8
	p.Y.Tick.Label.Font.Size = 8
	if f.Clock {
		layout := "15:04:05"
		if xhi-xlo > 86400 {
			layout = "01-02 15:04"
		}
		p.X.Tick.Marker = plot.TimeTicks{Format: layout, Time: func(t float64) time.Time {
			return time.Unix(int64(math.Floor(t)), 0).UTC()
		}}
	}
	for _, s := range pn.Spans {
		p.Add(&spanPlotter{from: s.From, to: s.To})
	}
	if len(pn.Edges) > 0 {
		p.Add(&edgePlotter{xs: pn.Edges})
	}
	for _, l := range pn.Limits {
		ln, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: l.Y}, {X: xhi, Y: l.Y}})
		if err != nil {
			return nil, leg, err
		}
		ln.Color = Palette[l.Color%len(Palette)]
		ln.Width = vg.Points(1)
		ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ln)
		if l.Label != "" {
			leg.Add(l.Label, ln)
		}
	}
	for j, l := range pn.Lines {
		pts := d.lines[j]
		if len(pts) == 0 {
			continue
		}
		ln, err := plotter.NewLine(xys(pts))
		if err != nil {
			return nil, leg, err
		}
		ln.Color = Palette[l.Color%len(Palette)]
		ln.Width = vg.Points(1.2)
		if l.Dashed {
			ln.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		if l.Step {
			ln.StepStyle = plotter.PostStep
		}
		p.Add(ln)
		if l.Label != "" {
			leg.Add(l.Label, ln)
		}
	}
	for j, m := range pn.Marks {
		pts := d.marks[j]
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys(pts))
		if err != nil {
			return nil, leg, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: Palette[m.Color%len(Palette)], Radius: vg.Points(2.5), Shape: glyph(m.Shape)}
		p.Add(sc)
		if m.Label != "" {
			leg.Add(m.Label, sc)
		}
	}
	p.X.Min, p.X.Max = xlo, xhi
	ylo, yhi := e.ylo, e.yhi
	pad := (yhi - ylo) * 0.08
	p.Y.Min, p.Y.Max = ylo, yhi+pad
	if !pn.YFrom0 {
		p.Y.Min = ylo - pad
	}
	return p, leg, nil
}

// xys converts points for gonum.
func xys(pts []Point) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i] = plotter.XY{X: p.X, Y: p.Y}
	}
	return out
}

// glyph is gonum's glyph for a shape.
func glyph(s Shape) draw.GlyphDrawer {
	switch s {
	case Triangle:
		return draw.TriangleGlyph{}
	case Square:
		return draw.SquareGlyph{}
	case Cross:
		return draw.CrossGlyph{}
	case Plus:
		return draw.PlusGlyph{}
	case Ring:
		return draw.RingGlyph{}
	case Pyramid:
		return draw.PyramidGlyph{}
	case Box:
		return draw.BoxGlyph{}
	}
	return draw.CircleGlyph{}
}

// edgePlotter draws window edges: thin grey lines across the data area.
type edgePlotter struct{ xs []float64 }

// Plot implements plot.Plotter.
func (e *edgePlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	style := draw.LineStyle{Color: color.Gray{Y: 0xc0}, Width: vg.Points(0.5)}
	for _, x := range e.xs {
		if x < plt.X.Min || x > plt.X.Max {
			continue
		}
		X := trX(x)
		c.StrokeLine2(style, X, c.Min.Y, X, c.Max.Y)
	}
}

// spanPlotter shades an X interval across the data area.
type spanPlotter struct{ from, to float64 }

// Plot implements plot.Plotter.
func (s *spanPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	x0 := trX(math.Max(s.from, plt.X.Min))
	x1 := trX(math.Min(s.to, plt.X.Max))
	if x1-x0 < vg.Points(1.5) { // an instant still shows
		mid := (x0 + x1) / 2
		x0, x1 = mid-vg.Points(0.75), mid+vg.Points(0.75)
	}
	c.FillPolygon(color.NRGBA{0xcc, 0x79, 0xa7, 0x40}, []vg.Point{
		{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
	})
}
