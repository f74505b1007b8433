package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// readCSV parses CSV output into its header and rows.
func readCSV(t *testing.T, out string) ([]string, [][]string) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("reading CSV output: %v\n%s", err, out)
	}
	if len(rows) == 0 {
		t.Fatalf("no CSV header in output")
	}
	return rows[0], rows[1:]
}

// columnOf returns the values of the named column.
func columnOf(t *testing.T, header []string, rows [][]string, name string) []string {
	t.Helper()
	i := slices.Index(header, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, header)
	}
	var col []string
	for _, r := range rows {
		col = append(col, r[i])
	}
	return col
}

// mustRun runs ratesim and fails the test unless it succeeds.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := ratesim(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("ratesim %s: exit status %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// generated writes a generated trace to a temporary file.
func generated(t *testing.T, pattern string) string {
	t.Helper()
	out := mustRun(t, "", "gen", "--pattern", pattern, "--users", "12", "--requests", "600", "--seed", "42")
	path := filepath.Join(t.TempDir(), pattern+".csv")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// invariantTraces are the bundled examples plus generated traces.
func invariantTraces(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(ex + "*.csv")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled examples: %v", err)
	}
	for _, p := range []string{"steady", "bursty", "boundary", "ramp"} {
		paths = append(paths, generated(t, p))
	}
	return paths
}

// traceArgs are the flags a bundled example needs (its unit).
func traceArgs(path string) []string {
	if strings.Contains(path, "millis") {
		return []string{"--unit", "ms", "--window", "10s"}
	}
	if strings.Contains(path, "rfc3339") {
		return []string{"--window", "10s"}
	}
	return nil
}

// TestCompareEqualsRun checks that compare's column for each algorithm is
// what run --algo decides, on every trace and under two policies.
func TestCompareEqualsRun(t *testing.T) {
	policies := [][]string{
		nil,
		{"--limit", "5", "--window", "7", "--capacity", "4", "--rate", "1/3"},
	}
	for _, path := range invariantTraces(t) {
		for _, pol := range policies {
			args := append(traceArgs(path), pol...)
			t.Run(filepath.Base(path)+strings.Join(pol, ""), func(t *testing.T) {
				t.Parallel()
				cmpArgs := append(append([]string{"compare", "--algos", "all", "-o", "csv"}, args...), path)
				header, rows := readCSV(t, mustRun(t, "", cmpArgs...))
				for _, algo := range header[2:] {
					runArgs := append(append([]string{"run", "--algo", algo, "-o", "csv"}, args...), path)
					rh, rr := readCSV(t, mustRun(t, "", runArgs...))
					for _, col := range [][2]string{{"allowed", algo}, {"timestamp", "timestamp"}, {"user", "user"}} {
						want, got := columnOf(t, rh, rr, col[0]), columnOf(t, header, rows, col[1])
						if !slices.Equal(want, got) {
							t.Errorf("%s: run --algo %s (-) and compare %s (+) differ:\n%s", algo, col[0], col[1], cmp.Diff(want, got))
						}
					}
				}
			})
		}
	}
}

// TestCSVEqualsJSON checks that run's CSV and JSON outputs, read back, hold
// the same rows, and that JSON Lines holds the same objects as JSON.
func TestCSVEqualsJSON(t *testing.T) {
	for _, path := range invariantTraces(t) {
		for _, algo := range []string{"fixed-window", "sliding-log", "sliding-counter", "token-bucket", "leaky-bucket", "gcra", "leaky-queue"} {
			t.Run(filepath.Base(path)+"/"+algo, func(t *testing.T) {
				t.Parallel()
				csvEqualsJSON(t, path, algo)
			})
		}
	}
}

func csvEqualsJSON(t *testing.T, path, algo string) {
	args := append(append([]string{"run", "--algo", algo, "--explain"}, traceArgs(path)...), path)
	header, rows := readCSV(t, mustRun(t, "", append(args, "-o", "csv")...))

	var objs []map[string]any
	dec := json.NewDecoder(strings.NewReader(mustRun(t, "", append(args, "-o", "json")...)))
	dec.UseNumber()
	if err := dec.Decode(&objs); err != nil {
		t.Fatalf("%s %s: reading JSON: %v", algo, path, err)
	}
	if len(objs) != len(rows) {
		t.Fatalf("%s %s: %d CSV rows, %d JSON objects", algo, path, len(rows), len(objs))
	}
	for i, o := range objs {
		for j, name := range header {
			v, ok := o[name]
			if !ok {
				t.Fatalf("%s %s row %d: no JSON key %q", algo, path, i, name)
			}
			var got string
			switch v := v.(type) {
			case string:
				got = v
			case json.Number:
				got = v.String()
			case bool:
				got = map[bool]string{true: "true", false: "false"}[v]
			default:
				t.Fatalf("%s %s row %d: %s has type %T", algo, path, i, name, v)
			}
			if got != rows[i][j] {
				t.Errorf("%s %s row %d: %s is %q in CSV, %q in JSON", algo, path, i, name, rows[i][j], got)
			}
		}
		if _, isBool := o["allowed"].(bool); !isBool {
			t.Errorf("%s %s row %d: allowed is not a JSON boolean", algo, path, i)
		}
	}

	var lines bytes.Buffer
	for _, o := range objs {
		b, _ := json.Marshal(o)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	var fromJSONL bytes.Buffer
	for _, line := range strings.Split(strings.TrimSuffix(mustRun(t, "", append(args, "-o", "jsonl")...), "\n"), "\n") {
		var o map[string]any
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&o); err != nil {
			t.Fatalf("%s %s: JSON Lines: %v", algo, path, err)
		}
		b, _ := json.Marshal(o)
		fromJSONL.Write(b)
		fromJSONL.WriteByte('\n')
	}
	if lines.String() != fromJSONL.String() {
		t.Errorf("%s %s: JSON and JSON Lines differ", algo, path)
	}
}

// TestTableShowsHead checks that a table over many rows shows the first
// ones and says how many more -o csv gives.
func TestTableShowsHead(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,timestamp\n")
	for i := 0; i < render.MaxTableRows+250; i++ {
		b.WriteString("u1,")
		b.WriteString(formatInt(int64(i)))
		b.WriteString("\n")
	}
	out := mustRun(t, b.String(), "run", "--algo", "sliding-log", "-")
	if !strings.Contains(out, "250 rows more not shown; -o csv lists every row") {
		t.Errorf("no note of the rows not shown:\n%s", out[len(out)-400:])
	}
	if n := strings.Count(out, "\n| u1 "); n != render.MaxTableRows {
		t.Errorf("table shows %d rows, want %d", n, render.MaxTableRows)
	}
	csvOut := mustRun(t, b.String(), "run", "--algo", "sliding-log", "-o", "csv", "-")
	if n := strings.Count(csvOut, "\n"); n != render.MaxTableRows+251 {
		t.Errorf("CSV has %d lines, want %d", n, render.MaxTableRows+251)
	}
}

// TestLongStateShortened checks that tables shorten long state texts with
// an ellipsis while CSV keeps them whole.
func TestLongStateShortened(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,timestamp\n")
	for i := 0; i < 40; i++ {
		b.WriteString("u1,1700000000." + formatInt(int64(100000001+i*1000)) + "\n")
	}
	args := []string{"run", "--algo", "sliding-log", "--limit", "100", "--explain"}
	header, rows := readCSV(t, mustRun(t, b.String(), append(args, "-o", "csv", "-")...))
	states := columnOf(t, header, rows, "state")
	last := states[len(states)-1]
	if utf8.RuneCountInString(last) <= render.MaxStateWidth {
		t.Fatalf("state %q is too short to test shortening", last)
	}
	out := mustRun(t, b.String(), append(args, "-")...)
	short := render.Shorten(last, render.MaxStateWidth)
	if !strings.HasSuffix(short, "…") || !strings.Contains(out, short) {
		t.Errorf("table does not show %q:\n%s", short, out)
	}
	if strings.Contains(out, last) {
		t.Errorf("table shows the whole state %q", last)
	}
}
