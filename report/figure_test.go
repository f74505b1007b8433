package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestDownsampleKeepsExtremes: per column the lowest and highest points
// survive, so the drawn envelope is the one of every point.
func TestDownsampleKeepsExtremes(t *testing.T) {
	var pts []Point
	for i := range 100000 {
		pts = append(pts, Point{X: float64(i), Y: math.Sin(float64(i)/7) * float64(i%1000)})
	}
	pts[54321].Y = 1e6 // a spike
	const columns = 100
	out := Downsample(pts, 0, 99999, columns)
	if len(out) > 4*columns {
		t.Fatalf("%d points, want at most %d", len(out), 4*columns)
	}
	// Every column's extremes are among the points kept.
	type ext struct{ lo, hi float64 }
	want := map[int]*ext{}
	col := func(x float64) int { return min(int(x/99999*columns), columns-1) }
	for _, p := range pts {
		c := col(p.X)
		if e := want[c]; e == nil {
			want[c] = &ext{p.Y, p.Y}
		} else {
			e.lo, e.hi = min(e.lo, p.Y), max(e.hi, p.Y)
		}
	}
	got := map[int]*ext{}
	for i, p := range out {
		if i > 0 && p.X < out[i-1].X {
			t.Fatalf("point %d out of order", i)
		}
		c := col(p.X)
		if e := got[c]; e == nil {
			got[c] = &ext{p.Y, p.Y}
		} else {
			e.lo, e.hi = min(e.lo, p.Y), max(e.hi, p.Y)
		}
	}
	for c, w := range want {
		if g := got[c]; g == nil || *g != *w {
			t.Errorf("column %d: extremes %+v, want %+v", c, g, w)
		}
	}
	marks := DownsampleMarks(pts, 0, 99999, columns)
	found := false
	for _, p := range marks {
		found = found || p.Y == 1e6
	}
	if !found || len(marks) > 2*columns {
		t.Errorf("marks: spike kept %v, %d marks", found, len(marks))
	}
}

// TestWriteDeterministic draws a figure twice in every format: the same
// bytes each time.
func TestWriteDeterministic(t *testing.T) {
	f := &Figure{Title: []string{"test"}, XLabel: "time (s)", Panels: []Panel{{
		Title:  "p",
		Lines:  []Line{{Label: "a", Color: LimiterColor(0), Points: []Point{{0, 1}, {1, 2}, {2, 0}}}},
		Marks:  []Marks{{Label: "m", Color: Allowed, Points: []Point{{1, 2}}}},
		Limits: []Limit{{Label: "limit 2", Y: 2}},
		Edges:  []float64{1},
		Spans:  []Span{{From: 0.5, To: 1.5}},
	}}}
	for _, format := range Formats {
		var a, b bytes.Buffer
		if err := Write(&a, f, format); err != nil {
			t.Fatal(err)
		}
		if err := Write(&b, f, format); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || a.Len() == 0 {
			t.Errorf("%s: two drawings differ (%d and %d bytes)", format, a.Len(), b.Len())
		}
		// A PDF states when it was made: not the time of drawing, or the
		// bytes would change from one second to the next.
		if format == "pdf" && (!bytes.Contains(a.Bytes(), []byte("/CreationDate (D:19700101000000)")) || !bytes.Contains(a.Bytes(), []byte("/ModDate (D:19700101000000)"))) {
			i := bytes.Index(a.Bytes(), []byte("/CreationDate"))
			t.Errorf("pdf: dated %q, want the fixed date", a.Bytes()[i:min(i+80, a.Len())])
		}
	}
	var term strings.Builder
	if err := WriteTerm(&term, f, TermOptions{Width: 50, ASCII: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "o m") {
		t.Errorf("terminal drawing without its legend:\n%s", term.String())
	}
}

// TestDownsampleSeries: a series generated again for each use draws the
// very points its slice would, short or long, as lines and as marks.
func TestDownsampleSeries(t *testing.T) {
	for _, n := range []int{0, 1, 7, 40, 41, 81, 5000} {
		var pts []Point
		for i := range n {
			pts = append(pts, Point{X: float64(i / 3), Y: math.Sin(float64(i)) * float64(i%17)})
		}
		const columns = 10
		lo, hi := 0.0, float64(max(n/3, 1))
		line := Line{Series: slices.Values(pts)}
		if got, want := downsample(line.points(), lo, hi, columns), Downsample(pts, lo, hi, columns); !slices.Equal(got, want) {
			t.Errorf("%d points: line %v, want %v", n, got, want)
		}
		marks := Marks{Series: slices.Values(pts)}
		if got, want := downsampleMarks(marks.points(), lo, hi, columns), DownsampleMarks(pts, lo, hi, columns); !slices.Equal(got, want) {
			t.Errorf("%d points: marks %v, want %v", n, got, want)
		}
		withPoints := &Panel{Lines: []Line{{Points: pts}}, Marks: []Marks{{Points: pts}}}
		withSeries := &Panel{Lines: []Line{line}, Marks: []Marks{marks}}
		if got, want := withSeries.extent(), withPoints.extent(); got != want {
			t.Errorf("%d points: extent %+v, want %+v", n, got, want)
		}
	}
}
