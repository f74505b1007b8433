package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/report"
)

// writeReport runs ratesim report on trace with args into a temporary
// file and returns its path.
func writeReport(t *testing.T, trace string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	r := ratesim(t, "", append(append([]string{"report"}, args...), trace, "-o", out)...)
	if r.code != 0 {
		t.Fatalf("ratesim report: exit %d: %s", r.code, r.stderr)
	}
	return out
}

// externalRef finds what would make a page reach outside itself: a URL
// with a scheme or a protocol-relative one in src, href or action, an
// @import, a url(...) that is not a fragment or data.
var externalRef = regexp.MustCompile(`(?i)https?://|(src|href|action|xlink:href)\s*=\s*["']?\s*//|@import|url\(\s*["']?\s*[^"'#)\s]`)

// externalRefs lists the references of html to anything outside it.
func externalRefs(html []byte) []string {
	var out []string
	for _, m := range externalRef.FindAllIndex(html, -1) {
		from, to := max(m[0]-30, 0), min(m[1]+30, len(html))
		out = append(out, string(html[from:to]))
	}
	return out
}

// TestReportSelfContained: the report names nothing outside itself, and
// the same input gives the same bytes.
func TestReportSelfContained(t *testing.T) {
	chdirLogged(t)
	first := writeReport(t, ex+"bursty.csv", "--algos", "all")
	second := writeReport(t, ex+"bursty.csv", "--algos", "all")
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Error("two reports of the same input differ")
	}
	if refs := externalRefs(a); len(refs) > 0 {
		t.Errorf("the report references the outside: %q", refs)
	}
	for _, want := range []string{`<table class="sortable summary">`, `<table class="sortable agreement">`, `<table class="sortable bursts">`,
		`<table class="sortable keys">`, `<figure class="chart"`, "prefers-color-scheme: dark", "@media print"} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("no %q in the report", want)
		}
	}
	// The check finds what it is meant to.
	for _, bad := range []string{`<img src="https://example.com/a.png">`, `<script src="//cdn.example/x.js"></script>`,
		`<style>@import "x.css";</style>`, `<div style="background: url(x.png)">`} {
		if refs := externalRefs(append(bytes.Clone(a), bad...)); len(refs) == 0 {
			t.Errorf("externalRefs misses %s", bad)
		}
	}
}

// TestReportBadInput: a report needs an .html file, and leaves none
// behind when it fails.
func TestReportBadInput(t *testing.T) {
	chdirLogged(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report", ex + "boundary.csv"}, 2, "report needs -o FILE.html"},
		{[]string{"report", ex + "boundary.csv", "-o", filepath.Join(dir, "r.pdf")}, 2, `unsupported extension ".pdf" (valid: .html, .htm)`},
		{[]string{"report", ex + "boundary.csv", "-o", filepath.Join(dir, "no", "r.html")}, 1, "cannot write " + filepath.Join(dir, "no", "r.html")},
		{[]string{"report", "no-such-trace.csv", "-o", filepath.Join(dir, "r.html")}, 1, "no-such-trace.csv"},
		{[]string{"report", ex + "boundary.csv", "--sweep", "--capacity 5..1", "-o", filepath.Join(dir, "r.html")}, 2, `--capacity "5..1": range "5..1" is empty`},
		{[]string{"report", ex + "boundary.csv", "--sweep", "--capacty 5", "-o", filepath.Join(dir, "r.html")}, 2, `--sweep "--capacty 5": unknown flag: --capacty`},
		{[]string{"report", ex + "boundary.csv", "--sweep", "--pick ratio=1", "-o", filepath.Join(dir, "r.html")}, 2, `compares with = or !=`},
	} {
		r := ratesim(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("ratesim %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.msg)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestReportSweep: with --sweep the report has the sweep's section: the
// candidates that meet --pick, best first (the boundary trace's one, as
// sweep.txtar works out), and its chart; or, when none meets it, why.
func TestReportSweep(t *testing.T) {
	chdirLogged(t)
	html := func(sweep string) string {
		data, err := os.ReadFile(writeReport(t, ex+"boundary.csv", "--sweep", sweep))
		if err != nil {
			t.Fatal(err)
		}
		_, after, ok := strings.Cut(string(data), ">Sweep</h2>")
		if !ok {
			t.Fatalf("--sweep %q: no Sweep section", sweep)
		}
		return after
	}
	got := html("--capacity 1..5 --rate 1/1s,1/2s --pick false_reject_pct<=0,ratio<=1.5")
	for _, want := range []string{"10 candidates: token-bucket capacity 1,2,...,5 (5 values) × rate 1/1s,1/2s.", "the 1 of 10 that meet false_reject_pct&lt;=0 and ratio&lt;=1.5", "<svg"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Sweep section lacks %q", want)
		}
	}
	if n := strings.Count(got, "<td>token-bucket</td>"); n != 1 {
		t.Errorf("the Sweep section lists %d candidates, want the one that meets the pick", n)
	}
	got = html("--capacity 1..2 --rate 1/2s --pick false_reject_pct<=0,ratio<=1")
	if !strings.Contains(got, "no candidate of 2 meets false_reject_pct&lt;=0 and ratio&lt;=1.") {
		t.Errorf("the Sweep section does not say that no candidate meets the pick")
	}
}

// chromePath finds the browser the browser tests drive: $RATESIM_CHROME,
// else a Chromium on PATH. Without one the tests skip, except under CI
// (CI=true), where they must run.
func chromePath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RATESIM_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell", "headless-shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium for the browser test under CI: install chromium or set RATESIM_CHROME")
	}
	t.Skip("no Chromium found (set RATESIM_CHROME or install chromium); skipping the browser test")
	return ""
}

// browserCheck is what the report looked like in the browser.
type browserCheck struct {
	problems    []string // console errors, exceptions, network requests
	summaryRows int
	charts      [][2]float64 // each chart's width and height
	screenshot  []byte
}

// openInBrowser loads the HTML file at path in headless Chromium and
// checks it as a reader would see it.
func openInBrowser(t *testing.T, chrome, path string) *browserCheck {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // tests may run as root in a container
		chromedp.DisableGPU,
		chromedp.WindowSize(1200, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	var mu sync.Mutex
	res := &browserCheck{}
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		res.problems = append(res.problems, fmt.Sprintf(format, args...))
	}
	// The first call starts the browser, on a context without a deadline
	// (a deadline there would end the browser).
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("starting %s: %v", chrome, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				problem("network request: %s", u)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				problem("console %s", e.Type)
			}
		case *runtime.EventExceptionThrown:
			problem("exception: %s", e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problem("console error: %s", e.Entry.Text)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTime()
	if _, err := chromedp.Call(tctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	var err error
	if res.summaryRows, err = chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll("table.summary tbody tr").length`)); err != nil {
		t.Fatal(err)
	}
	charts, err := chromedp.Run(tctx, chromedp.Evaluate[[][]float64](`Array.from(document.querySelectorAll("figure.chart svg")).map(function (e) { var r = e.getBoundingClientRect(); return [r.width, r.height]; })`))
	if err != nil {
		t.Fatal(err)
	}
	if res.screenshot, err = chromedp.Run(tctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		res.charts = append(res.charts, [2]float64{c[0], c[1]})
	}
	// Events may trail the last action a moment.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	res.problems = append([]string(nil), res.problems...)
	return res
}

// TestReportInBrowser opens the report in headless Chromium: it loads
// without a console error or a network request, its summary has a row
// per limiter, every chart has a size, and its screenshot is not blank.
func TestReportInBrowser(t *testing.T) {
	chrome := chromePath(t)
	chdirLogged(t)
	path := writeReport(t, ex+"bursty.csv", "--algos", "all", "--every", "1m")
	got := openInBrowser(t, chrome, path)
	if len(got.problems) > 0 {
		t.Errorf("problems loading the report: %q", got.problems)
	}
	if want := len(limiters.AllAlgorithms()); got.summaryRows != want { // --algos all
		t.Errorf("summary has %d rows, want %d, one per limiter", got.summaryRows, want)
	}
	if len(got.charts) < 2 {
		t.Errorf("%d charts, want the timeline and a state plot at least", len(got.charts))
	}
	for i, c := range got.charts {
		if c[0] <= 0 || c[1] <= 0 {
			t.Errorf("chart %d is %v×%v", i, c[0], c[1])
		}
	}
	img, err := png.Decode(bytes.NewReader(got.screenshot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if len(colours) < 10 {
		t.Errorf("the screenshot has %d colours: blank", len(colours))
	}
}

// TestReportInBrowserSeesExternalURL: a report that references an
// external URL fails the browser check.
func TestReportInBrowserSeesExternalURL(t *testing.T) {
	chrome := chromePath(t)
	chdirLogged(t)
	path := writeReport(t, ex+"boundary.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("</body>"), []byte(`<img src="http://127.0.0.1:9/pixel.png" alt="">`+"\n</body>"), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got := openInBrowser(t, chrome, path)
	found := false
	for _, p := range got.problems {
		found = found || strings.Contains(p, "network request: http://127.0.0.1:9/pixel.png")
	}
	if !found {
		t.Errorf("the browser check missed the external image; problems: %q", got.problems)
	}
}

// sortLog is an access log whose keys (IPs) were first rejected on days
// whose numbers run against the calendar (10 Oct, 31 Oct, 1 Nov, 9 Nov,
// 10 Nov), and 10.0.0.10 more often than the others: sorted as floats,
// the first_rejection, key and requests columns come out in a wrong
// order.
func sortLog() string {
	var b strings.Builder
	for _, k := range []struct {
		ip, day string
		n       int
	}{{"203.0.113.9", "10/Oct/2024", 5}, {"10.0.0.10", "31/Oct/2024", 12}, {"9.0.0.1", "01/Nov/2024", 5}, {"10.0.0.2", "09/Nov/2024", 5}, {"2001:db8::1", "10/Nov/2024", 5}} {
		for i := range k.n {
			fmt.Fprintf(&b, "%s - - [%s:10:00:%02d +0100] \"GET / HTTP/1.1\" 200 10 \"-\" \"test\"\n", k.ip, k.day, i)
		}
	}
	return b.String()
}

// sortColumn clicks the header of column col of the table of class cls
// and returns the column's cells as they then stand.
func sortColumn(t *testing.T, ctx context.Context, cls, col string) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`(function () {
  var t = document.querySelector("table.%s"), ths = Array.from(t.tHead.rows[0].cells);
  var i = ths.findIndex(function (h) { return h.textContent === %q; });
  if (i < 0) { return ["no column %s"]; }
  ths[i].click();
  return Array.from(t.tBodies[0].rows).map(function (r) { return r.cells[i].textContent; });
})()`, cls, col, col)))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestReportSortsInBrowser clicks the report's column headers in headless
// Chromium: times sort chronologically (CLF, RFC 3339), numbers
// numerically, IPs by address, and a second click reverses.
func TestReportSortsInBrowser(t *testing.T) {
	chrome := chromePath(t)
	chdirLogged(t)
	trace := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(trace, []byte(sortLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeReport(t, trace, "--algos", "sliding-log", "--top", "10")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	clf := func(s string) time.Time {
		tm, err := time.Parse("02/Jan/2006:15:04:05 -0700", s)
		if err != nil {
			t.Fatalf("first_rejection %q: %v", s, err)
		}
		return tm
	}
	times := sortColumn(t, ctx, "keys", "first_rejection")
	if len(times) != 5 {
		t.Fatalf("first_rejection column %q, want 5 keys", times)
	}
	if !slices.IsSortedFunc(times, func(a, b string) int { return clf(a).Compare(clf(b)) }) || !strings.HasPrefix(times[0], "10/Oct/2024") {
		t.Errorf("first_rejection sorted as %q, want chronological", times)
	}
	reversed := slices.Clone(times)
	slices.Reverse(reversed)
	if again := sortColumn(t, ctx, "keys", "first_rejection"); !slices.Equal(again, reversed) {
		t.Errorf("a second click gives %q, want %q reversed", again, times)
	}
	if keys := sortColumn(t, ctx, "keys", "key"); !slices.Equal(keys, []string{"9.0.0.1", "10.0.0.2", "10.0.0.10", "203.0.113.9", "2001:db8::1"}) {
		t.Errorf("keys sorted as %q, want by address", keys)
	}
	if n := sortColumn(t, ctx, "keys", "requests"); !slices.Equal(n, []string{"5", "5", "5", "5", "12"}) {
		t.Errorf("requests sorted as %q, want by number", n)
	}
	from := sortColumn(t, ctx, "top-bursts", "from")
	if !slices.IsSortedFunc(from, func(a, b string) int { return strings.Compare(report.SortKey(a), report.SortKey(b)) }) || len(from) != 5 {
		t.Errorf("top bursts' from sorted as %q, want chronological", from)
	}
	for _, s := range from {
		if report.SortKey(s)[0] != '3' {
			t.Errorf("top bursts' from %q is not read as a time", s)
		}
	}
}

// htmlTableRows returns the header and rows of the report's table of
// class cls, as text.
func htmlTableRows(t *testing.T, html, cls string) (header []string, rows [][]string) {
	t.Helper()
	i := strings.Index(html, `<table class="sortable `+cls+`">`)
	if i < 0 {
		t.Fatalf("no %s table", cls)
	}
	tbl := html[i : i+strings.Index(html[i:], "</table>")]
	cell := regexp.MustCompile(`<t[hd][^>]*>(.*?)</t[hd]>`)
	for j, row := range regexp.MustCompile(`<tr>(.*?)</tr>`).FindAllStringSubmatch(tbl, -1) {
		var cells []string
		for _, c := range cell.FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, c[1])
		}
		if j == 0 {
			header = cells
		} else {
			rows = append(rows, cells)
		}
	}
	return header, rows
}

// TestReportSweepInheritsIntent: the report's sweep scores its candidates
// against the report's own intent, as "ratesim sweep --intent" with that
// intent does, and says where it came from; the sweep's own --intent, or
// a single --limit or --window, overrides it, and --config and --clock
// carry over.
func TestReportSweepInheritsIntent(t *testing.T) {
	chdirLogged(t)
	sweepSection := func(args ...string) string {
		data, err := os.ReadFile(writeReport(t, ex+"bursty.csv", args...))
		if err != nil {
			t.Fatal(err)
		}
		_, after, ok := strings.Cut(string(data), ">Sweep</h2>")
		if !ok {
			t.Fatalf("%q: no Sweep section", args)
		}
		return after
	}
	got := sweepSection("--limit", "20", "--window", "1m", "--sweep", "--capacity 5..40:5 --rate 20/1m,30/1m --pick false_reject_pct<=1")
	for _, want := range []string{"a sliding log of limit 20 per 60s, clock reject (limit from the report&#39;s --limit, window from the report&#39;s --window, clock the report&#39;s default)",
		"intent: limit 20 per 60s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Sweep section lacks %q", want)
		}
	}
	// The same candidates meet the pick, with the same false allows and
	// rejects, as in the sweep command told the intent.
	header, rows := htmlTableRows(t, got, "sweep")
	col := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("no column %q in %q", name, header)
		}
		return i
	}
	var inReport []string
	for _, r := range rows {
		inReport = append(inReport, strings.Join([]string{r[col("capacity")], r[col("rate")], r[col("false allows")], r[col("false rejects")]}, " "))
	}
	r := ratesim(t, "", "sweep", "--capacity", "5..40:5", "--rate", "20/1m,30/1m", "--intent", "20/1m", "--pick", "false_reject_pct<=1", "-o", "json", ex+"bursty.csv")
	if r.code != 0 {
		t.Fatalf("sweep: exit %d: %s", r.code, r.stderr)
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	var bySweep []string
	for _, c := range raw {
		if c["meets"] == true {
			bySweep = append(bySweep, fmt.Sprintf("%v %v %v %v", c["capacity"], c["rate"], c["false_allows"], c["false_rejects"]))
		}
	}
	slices.Sort(inReport)
	slices.Sort(bySweep)
	if len(inReport) == 0 || !slices.Equal(inReport, bySweep) {
		t.Errorf("the report's sweep picked (capacity rate false_allows false_rejects)\n%q\nthe sweep command with --intent 20/1m\n%q", inReport, bySweep)
	}

	// The sweep's own flags win.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "20", "--window", "1m", "--sweep", "--capacity 5..10:5 --intent 10/30s"},
			"a sliding log of limit 10 per 30s, clock reject (limit and window from --intent, clock the report&#39;s default)"},
		{[]string{"--limit", "20", "--window", "1m", "--clock", "clamp", "--sweep", "--capacity 5..10:5 --limit 7"},
			"a sliding log of limit 7 per 60s, clock clamp (limit from --limit, window from the report&#39;s --window, clock from the report&#39;s --clock)"},
		{[]string{"--limit", "20", "--sweep", "--capacity 5..10:5 --window 30s --clock clamp"},
			"a sliding log of limit 20 per 30s, clock clamp (limit from the report&#39;s --limit, window from --window, clock from --clock)"},
		{[]string{"--sweep", "--capacity 5..10:5"},
			"a sliding log of limit 3 per 10s, clock reject (limit the report&#39;s default, window the report&#39;s default, clock the report&#39;s default)"},
	} {
		if got := sweepSection(tc.args...); !strings.Contains(got, tc.want) {
			t.Errorf("report %q: the Sweep section lacks %q", tc.args, tc.want)
		}
	}
	// And a config file's intent.
	cfg := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(cfg, []byte("limit: 15\nwindow: 2m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "a sliding log of limit 15 per 120s, clock reject (limit from the report&#39;s " + cfg + ":1, window from the report&#39;s " + cfg + ":2, clock the report&#39;s default)"
	if got := sweepSection("--config", cfg, "--sweep", "--capacity 5..10:5"); !strings.Contains(got, want) {
		t.Errorf("report --config: the Sweep section lacks %q", want)
	}
}
