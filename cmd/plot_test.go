package cmd

import (
	"bytes"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/report"
)

// plotReplay prepares a replay of trace under the default policy, as the
// plot commands do, with extra flags given as they would be on the
// command line.
func plotReplay(t *testing.T, trace string, algos []string) *replay {
	t.Helper()
	ro := &plotReplayOptions{}
	addPlotReplayFlags(pflag.NewFlagSet("plot", pflag.ContinueOnError), ro) // the defaults
	ro.Algos = algos
	ro.trace.Path = trace
	ro.policy.set = map[string]bool{}
	a, specs, err := ro.policy.Lanes(ro.Algos)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := prepare(&ro.trace, &ro.policy, a, specs, "", streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rp.trace.Close() })
	return rp
}

// panelNamed returns the panel whose title starts with name.
func panelNamed(t *testing.T, f *report.Figure, name string) *report.Panel {
	t.Helper()
	for i := range f.Panels {
		if strings.HasPrefix(f.Panels[i].Title, name+":") {
			return &f.Panels[i]
		}
	}
	t.Fatalf("no panel %s", name)
	return nil
}

// markPoints returns the points of marks, given or generated.
func markPoints(m report.Marks) []report.Point {
	if m.Points == nil && m.Series != nil {
		return slices.Collect(m.Series)
	}
	return m.Points
}

// linePoints returns the points of a line, given or generated.
func linePoints(l report.Line) []report.Point {
	if l.Points == nil && l.Series != nil {
		return slices.Collect(l.Series)
	}
	return l.Points
}

// marksOf returns the Y of the marks labelled label, in time order.
func marksOf(p *report.Panel, label string) []float64 {
	var ys []float64
	for _, m := range p.Marks {
		if m.Label == label {
			for _, pt := range markPoints(m) {
				ys = append(ys, pt.Y)
			}
		}
	}
	return ys
}

// approx compares plotted numbers, which are float64 quotients of exact
// ones.
var approx = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9 })

// TestPlotStateBoundary checks the points "plot state --user u1" draws
// for the boundary example: each request marked at the number its
// decision left, and the line between requests as the state evolves: the
// fixed window's count drops to 0 at the window's edge, the sliding
// counter's estimate decays from 3 at 10 to 2.7 at 11, where the request
// passes and leaves 3.7, buckets refill and drain at their rate.
func TestPlotStateBoundary(t *testing.T) {
	chdirLogged(t)
	rp := plotReplay(t, ex+"boundary.csv", nil)
	f, err := stateFigure(rp, "u1", streams{out: io.Discard, err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	const edge = 9.999999999                  // a nanosecond before 10
	xy := func(v ...float64) []report.Point { // x, y, x, y, ...
		var pts []report.Point
		for i := 0; i < len(v); i += 2 {
			pts = append(pts, report.Point{X: v[i], Y: v[i+1]})
		}
		return pts
	}
	for _, tc := range []struct {
		lane              string
		allowed, rejected []float64
		line              []report.Point
	}{
		{"fixed-window", []float64{1, 2, 3, 1, 2, 3}, nil,
			xy(7, 0, 7, 1, 8, 1, 8, 2, 9, 2, 9, 3, edge, 3, 10, 0, 10, 1, 11, 1, 11, 2, 12, 2, 12, 3)},
		{"sliding-log", []float64{1, 2, 3}, []float64{3, 3, 3},
			xy(7, 0, 7, 1, 8, 1, 8, 2, 9, 2, 9, 3, 10, 3, 11, 3, 12, 3)},
		{"sliding-counter", []float64{1, 2, 3, 3.7}, []float64{3, 3.4},
			xy(7, 0, 7, 1, 8, 1, 8, 2, 9, 2, 9, 3, edge, 3, 10, 3, 11, 2.7, 11, 3.7, 12, 3.4)},
		{"token-bucket", []float64{2, 1.3, 0.6, 0.2}, []float64{0.9, 0.5},
			xy(7, 3, 7, 2, 8, 2.3, 8, 1.3, 9, 1.6, 9, 0.6, 10, 0.9, 11, 1.2, 11, 0.2, 12, 0.5)},
		{"leaky-bucket", []float64{1, 1.7, 2.4, 2.8}, []float64{2.1, 2.5},
			xy(7, 0, 7, 1, 8, 0.7, 8, 1.7, 9, 1.4, 9, 2.4, 10, 2.1, 11, 1.8, 11, 2.8, 12, 2.5)},
	} {
		p := panelNamed(t, f, tc.lane)
		if len(p.Limits) != 1 || p.Limits[0].Y != 3 {
			t.Errorf("%s: limits %+v, want one at 3", tc.lane, p.Limits)
		}
		if got := marksOf(p, "allowed"); !cmp.Equal(got, tc.allowed, approx, cmpopts.EquateEmpty()) {
			t.Errorf("%s: allowed requests marked at %v, want %v", tc.lane, got, tc.allowed)
		}
		if got := marksOf(p, "rejected"); !cmp.Equal(got, tc.rejected, approx, cmpopts.EquateEmpty()) {
			t.Errorf("%s: rejected requests marked at %v, want %v", tc.lane, got, tc.rejected)
		}
		if got := linePoints(p.Lines[0]); !cmp.Equal(got, tc.line, approx) {
			t.Errorf("%s: line %v, want %v", tc.lane, got, tc.line)
		}
	}
	fw := panelNamed(t, f, "fixed-window")
	if want := []float64{10}; !cmp.Equal(fw.Edges, want) {
		t.Errorf("fixed-window edges %v, want %v", fw.Edges, want)
	}
	if len(fw.Spans) != 1 || fw.Spans[0].From != 7 || fw.Spans[0].To != 12 {
		t.Errorf("fixed-window worst burst %+v, want [7, 12]", fw.Spans)
	}
	if sl := panelNamed(t, f, "sliding-log"); sl.Edges != nil {
		t.Errorf("sliding-log edges %v: it counts in no aligned window", sl.Edges)
	}
	// And the command draws it.
	out := filepath.Join(t.TempDir(), "b.svg")
	if r := ratesim(t, "", "plot", "state", "--user", "u1", ex+"boundary.csv", "-o", out); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if data, err := os.ReadFile(out); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Fatalf("b.svg: %v, %.60q", err, data)
	}
}

// plotGoldenDir holds the pictures plotGoldenCases draw.
const plotGoldenDir = "testdata/golden/plot"

func plotGoldenCases() []goldenCase {
	return []goldenCase{
		{name: "state-boundary", args: []string{"plot", "state", "--user", "u1", "--algos", "all", ex + "boundary.csv"}},
		{name: "state-rfc3339", args: []string{"plot", "state", "--user", "u1", "--algos", "fixed-window,gcra", ex + "rfc3339.csv"}},
		{name: "timeline-bursty", args: []string{"plot", "timeline", "--every", "1m", ex + "bursty.csv"}},
		{name: "burst-multi-user", args: []string{"plot", "burst", ex + "multi-user.csv"}},
		{name: "sweep-bursty", args: []string{"plot", "sweep", "--capacity", "5..40:5", "--rate", "20/1m,30/1m", "--intent", "20/1m", "--pick", "false_reject_pct<=1,ratio<=2.5", ex + "bursty.csv"}},
	}
}

// drawSVG runs a plot command into an SVG file and returns its bytes.
func drawSVG(t *testing.T, args []string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "plot.svg")
	r := ratesim(t, "", append(args, "-o", out)...)
	if r.code != 0 {
		t.Fatalf("ratesim %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkFile compares got with the file at rel (from the repository
// root), or rewrites it with -update.
func checkFile(t *testing.T, rel string, got []byte) {
	t.Helper()
	path := inRepo(rel)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", rel, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
	}
}

// TestPlotGolden draws every kind to SVG twice: the bytes are the same
// each time, and as the golden file.
func TestPlotGolden(t *testing.T) {
	chdirLogged(t)
	for _, tc := range plotGoldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			first := drawSVG(t, tc.args)
			if second := drawSVG(t, tc.args); !bytes.Equal(first, second) {
				t.Fatal("two runs drew different bytes")
			}
			checkFile(t, plotGoldenDir+"/"+tc.name+".svg", first)
		})
	}
}

// TestREADMEPicture keeps the README's picture, the boundary example's
// state, as the command draws it.
func TestREADMEPicture(t *testing.T) {
	chdirLogged(t)
	checkFile(t, "docs/boundary-state.svg", drawSVG(t, []string{"plot", "state", "--user", "u1", ex + "boundary.csv"}))
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("docs/boundary-state.svg")) {
		t.Error("README.md does not show docs/boundary-state.svg")
	}
}

// TestPlotPNG checks a PNG's size and that it is not blank.
func TestPlotPNG(t *testing.T) {
	chdirLogged(t)
	out := filepath.Join(t.TempDir(), "b.png")
	if r := ratesim(t, "", "plot", "state", "--user", "u1", ex+"boundary.csv", "-o", out); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 768 || b.Dy() < 400 {
		t.Errorf("size %dx%d, want 768 wide and at least 400 high", b.Dx(), b.Dy())
	}
	colours := map[[3]uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	if len(colours) < 5 {
		t.Errorf("%d colours: the picture is blank", len(colours))
	}
	// The palette's colours are there: the lines of the limiters.
	for _, i := range []int{report.LimiterColor(0), report.LimiterColor(1)} {
		c := report.Palette[i]
		if colours[[3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)}] == 0 {
			t.Errorf("no pixel of %s, limiter %d's colour", report.Hex(i), i)
		}
	}
}

// TestPlotBadInput: bad input fails with a usage error (2) or an I/O
// error (1), and leaves no file behind, not even a partial one.
func TestPlotBadInput(t *testing.T) {
	chdirLogged(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "b.svg")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plot", "pie", ex + "boundary.csv", "-o", out}, 2, `unknown plot kind "pie" (valid: state, timeline, burst, sweep)`},
		{[]string{"plot", "state", "--user", "nobody", ex + "boundary.csv", "-o", out}, 2, `no request of user "nobody" in traces/examples/boundary.csv (users seen include u1)`},
		{[]string{"plot", "state", "--user", "u1", ex + "boundary.csv", "-o", filepath.Join(dir, "no", "such", "dir", "b.svg")}, 1, "cannot write " + filepath.Join(dir, "no", "such", "dir", "b.svg") + ": no such file or directory"},
		{[]string{"plot", "state", "--user", "u1", ex + "boundary.csv", "-o", filepath.Join(dir, "b.gif")}, 2, `unsupported extension ".gif" (valid: .svg, .png, .pdf)`},
		{[]string{"plot", "state", ex + "boundary.csv", "-o", out}, 2, "plot state needs --user"},
		{[]string{"plot", "timeline", ex + "boundary.csv", "-o", out}, 2, "plot timeline needs --every"},
		{[]string{"plot", "burst", ex + "boundary.csv"}, 2, "plot burst needs -o FILE (.svg, .png or .pdf) or --term"},
	} {
		r := ratesim(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("ratesim %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.msg)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestPlotTerm draws in the terminal at the width COLUMNS gives, in
// braille and in ASCII.
func TestPlotTerm(t *testing.T) {
	chdirLogged(t)
	t.Setenv("COLUMNS", "60")
	for _, mode := range []string{"--term", "--ascii"} {
		r := ratesim(t, "", "plot", "state", "--user", "u1", "--algos", "fixed-window,sliding-log", mode, ex+"boundary.csv")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, r.code, r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if n := len([]rune(line)); n > 60 && !strings.HasPrefix(line, "policy:") && !strings.HasPrefix(line, "state of") && !strings.HasPrefix(line, "limiters:") && !strings.Contains(line, "allowed") {
				t.Errorf("%s: a line of %d columns: %q", mode, n, line)
			}
		}
		for _, want := range []string{"fixed-window: count in window", "sliding-log: cost in log", "o allowed", "x rejected"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: no %q in\n%s", mode, want, r.stdout)
			}
		}
		braille := strings.ContainsFunc(r.stdout, func(r rune) bool { return r >= 0x2800 && r <= 0x28ff })
		if braille != (mode == "--term") {
			t.Errorf("%s: braille %v", mode, braille)
		}
	}
}
