package cmd

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ratesim/ratesim/internal/tables"
)

func TestCostSum(t *testing.T) {
	for _, tc := range []struct {
		costs []int64
		want  string
	}{
		{nil, "0"},
		{[]int64{1, 2, 3}, "6"},
		{[]int64{math.MaxInt64, math.MaxInt64, 5, 1}, "18446744073709551620"},
		{[]int64{math.MaxInt64, 1, -1}, "9223372036854775807"},
		{[]int64{math.MinInt64, math.MinInt64}, "-18446744073709551616"},
		{[]int64{math.MinInt64, math.MaxInt64}, "-1"},
	} {
		var s tables.CostSum
		for _, c := range tc.costs {
			s.Add(c)
		}
		if got := s.String(); got != tc.want {
			t.Errorf("sum of %d = %s, want %s", tc.costs, got, tc.want)
		}
	}
}

// TestRunFooterHugeCost checks that the footer's total cost is exact when
// it passes int64.
func TestRunFooterHugeCost(t *testing.T) {
	trace := "user,timestamp,cost\nu1,1,9223372036854775807\nu1,2,9223372036854775807\nu1,3,5\nu1,4,1\n"
	for _, format := range []string{"table", "markdown"} {
		r := ratesim(t, trace, "run", "--algo", "token-bucket", "-o", format, "-")
		if r.code != 0 {
			t.Fatalf("-o %s: exit status %d\n%s", format, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		footer := lines[len(lines)-1]
		if format == "table" {
			footer = lines[len(lines)-2]
		}
		if !strings.Contains(footer, "| 18446744073709551620 |") {
			t.Errorf("-o %s: footer %q does not show the total cost 18446744073709551620", format, footer)
		}
	}
}

// TestRunCostNeverPasses checks the retry_after of a request whose cost
// exceeds the capacity: no retry passes, so there is no time to show.
func TestRunCostNeverPasses(t *testing.T) {
	trace := "user,timestamp,cost\nu1,1,5\nu1,2,1\n"
	for _, algo := range []string{"fixed-window", "sliding-log", "sliding-counter", "token-bucket", "leaky-bucket", "gcra", "leaky-queue"} {
		run := func(format string) string {
			t.Helper()
			r := ratesim(t, trace, "run", "--algo", algo, "--explain", "-o", format, "-")
			if r.code != 0 {
				t.Fatalf("%s -o %s: exit status %d\n%s", algo, format, r.code, r.stderr)
			}
			return r.stdout
		}
		rows, err := csv.NewReader(strings.NewReader(run("csv"))).ReadAll()
		if err != nil {
			t.Fatalf("%s -o csv: %v", algo, err)
		}
		col := slices.Index(rows[0], "retry_after")
		if got := rows[1][col]; got != "" {
			t.Errorf("%s -o csv: retry_after %q, want empty", algo, got)
		}
		if got := rows[2][col]; got != "0" {
			t.Errorf("%s -o csv: retry_after of an allowed request %q, want 0", algo, got)
		}
		var objs []map[string]any
		if err := json.Unmarshal([]byte(run("json")), &objs); err != nil {
			t.Fatalf("%s -o json: %v", algo, err)
		}
		if v, ok := objs[0]["retry_after"]; !ok || v != nil {
			t.Errorf("%s -o json: retry_after %v (present %v), want null", algo, v, ok)
		}
		line, _, _ := strings.Cut(run("jsonl"), "\n")
		if !strings.Contains(line, `"retry_after":null,`) {
			t.Errorf("%s -o jsonl: %s, want retry_after null", algo, line)
		}
		for _, format := range []string{"table", "markdown"} {
			out := run(format)
			i := strings.Index(out, "cost exceeds capacity")
			if i < 0 {
				t.Fatalf("%s -o %s: no rejected row:\n%s", algo, format, out)
			}
			row := out[strings.LastIndex(out[:i], "\n")+1 : i]
			if cells := strings.Fields(row); !slices.Contains(cells, "never") {
				t.Errorf("%s -o %s: row %q has no retry_after never", algo, format, row)
			}
		}
	}
}

// TestRunOnlyFooter checks that with --only the footer still counts the
// whole trace and says how many rows the table shows.
func TestRunOnlyFooter(t *testing.T) {
	for _, tc := range []struct {
		only, want string
	}{
		{"rejected", "| total | 6 requests, 3 rejected shown | 6 | 3 allowed | | | | 3 rejected |"},
		{"allowed", "| total | 6 requests, 3 allowed shown | 6 | 3 allowed | | | | 3 rejected |"},
	} {
		for _, format := range []string{"table", "markdown"} {
			r := ratesim(t, "", "run", "--algo", "sliding-log", "--only", tc.only, "-o", format, ex+"boundary.csv")
			if r.code != 0 {
				t.Fatalf("--only %s -o %s: exit status %d\n%s", tc.only, format, r.code, r.stderr)
			}
			var footer string
			for _, line := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(line, "| total ") {
					footer = strings.Join(strings.Fields(line), " ")
				}
			}
			if footer != tc.want {
				t.Errorf("--only %s -o %s: footer %q, want %q\n%s", tc.only, format, footer, tc.want, r.stdout)
			}
			if rows := strings.Count(r.stdout, "| u1 "); rows != 3 {
				t.Errorf("--only %s -o %s: %d rows, want 3", tc.only, format, rows)
			}
		}
	}
}

// TestTableEscapesText runs a trace of control characters and other
// confusing text through the table and markdown outputs: nothing may reach
// the output raw, each text must read as displayText shows it, and every
// markdown row must have as many cells as the header. CSV and JSON keep
// the exact bytes.
func TestTableEscapesText(t *testing.T) {
	users := []string{"a\nb", "\x1b[31mred", " lead", `back\slash`, `"q"`, "trail "}
	wantUsers := []string{`a\nb`, `\x1b[31mred`, `" lead"`, `back\\slash`, `"\"q\""`, `"trail "`}
	wantKeys := []string{`x\ny`, `p|q`, `tab\there`, `del\x7f`, `" sp"`, `\u0085c1\u202e`}
	args := []string{"run", "--algo", "fixed-window", "--key", "endpoint", "-"}
	for _, format := range []string{"table", "markdown"} {
		r := ratesim(t, controlTrace, append([]string{"-o", format}, args...)...)
		if r.code != 0 {
			t.Fatalf("-o %s: exit status %d\n%s", format, r.code, r.stderr)
		}
		for i, c := range r.stdout {
			if c != '\n' && (c == utf8.RuneError || !unicode.IsPrint(c)) {
				t.Errorf("-o %s: raw %U at byte %d:\n%s", format, c, i, r.stdout)
			}
		}
		var rows [][]string
		var border string
		for _, line := range strings.Split(r.stdout, "\n") {
			switch {
			case strings.HasPrefix(line, "+-"):
				border = line
			case strings.HasPrefix(line, "| ") && format == "table":
				rows = append(rows, asciiCells(line, border))
			case strings.HasPrefix(line, "| "):
				rows = append(rows, markdownCells(line))
			}
		}
		if len(rows) != 2+len(users) {
			t.Fatalf("-o %s: %d table rows, want %d:\n%s", format, len(rows), 2+len(users), r.stdout)
		}
		for i, row := range rows {
			if len(row) != len(rows[0]) {
				t.Errorf("-o %s: row %d has %d cells, the header %d: %q", format, i, len(row), len(rows[0]), row)
			}
		}
		user, key := slices.Index(rows[0], "user"), slices.Index(rows[0], "key")
		for i := range users {
			row := rows[1+i]
			if len(row) != len(rows[0]) {
				continue
			}
			if row[user] != wantUsers[i] || row[key] != wantKeys[i] {
				t.Errorf("-o %s: user %s, key %s; want %s, %s", format, row[user], row[key], wantUsers[i], wantKeys[i])
			}
		}
	}

	r := ratesim(t, controlTrace, append([]string{"-o", "csv"}, args...)...)
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("-o csv: %v\n%s", err, r.stdout)
	}
	var objs []struct{ User string }
	r = ratesim(t, controlTrace, append([]string{"-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(r.stdout), &objs); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	for i, u := range users {
		if rows[1+i][0] != u || objs[i].User != u {
			t.Errorf("user %q: -o csv gives %q, -o json %q", u, rows[1+i][0], objs[i].User)
		}
	}
}

// asciiCells splits a line of an ASCII table into its cells, trimmed, at
// the columns where the border above it has a '+': the cells may hold
// pipes. Every rune of the line must take one column.
func asciiCells(line, border string) []string {
	var cells []string
	runes := []rune(line)
	from := 1
	for i := 1; i < len(border) && i < len(runes); i++ {
		if border[i] == '+' {
			cells = append(cells, strings.TrimSpace(string(runes[from:i])))
			from = i + 1
		}
	}
	return cells
}

// markdownCells splits a markdown table line at its unescaped pipes and
// undoes the markdown escapes, giving the cells a markdown viewer shows.
func markdownCells(line string) []string {
	var cells []string
	var cell strings.Builder
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			i++
			cell.WriteByte(line[i])
		case c == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	return cells
}

// controlTrace has trace fields that a terminal or a markdown table would
// take for something else.
const controlTrace = "user,timestamp,endpoint\n" +
	"\"a\nb\",1,\"x\ny\"\n" +
	"\x1b[31mred,2,p|q\n" +
	"\" lead\",3,tab\there\n" +
	"back\\slash,4,del\x7f\n" +
	"\"\"\"q\"\"\",5,\" sp\"\n" +
	"\"trail \",6,\u0085c1\u202e\n"
