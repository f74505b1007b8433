package cmd

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestIsJSONNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"0", true}, {"7", true}, {"-1", true}, {"10.5", true}, {"1e9", true}, {"1.5E-3", true},
		{"", false}, {"007", false}, {"+7", false}, {"1.", false}, {".5", false}, {"1e", false},
		{"2024-01-01T00:00:07Z", false}, {"NaN", false}, {"-", false},
	} {
		if got := isJSONNumber([]byte(tc.in)); got != tc.want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", tc.in, got, tc.want)
		}
		var v any
		if valid := json.Unmarshal([]byte(tc.in), &v) == nil; valid != tc.want {
			t.Errorf("%q: encoding/json says valid=%v", tc.in, valid)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "u1", `a"b\c`, "tab\there", "nl\nx", "\x01\x1f", "é ü 中", "bad\xffutf8", "\u2028\u2029"} {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Errorf("appendJSONString(%q) = %s: %v", s, appendJSONString(nil, s), err)
			continue
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got != want {
			t.Errorf("appendJSONString(%q) decodes to %q", s, got)
		}
		if b := appendJSONBytes(nil, []byte(s)); string(b) != string(appendJSONString(nil, s)) {
			t.Errorf("appendJSONBytes(%q) = %s, appendJSONString gives %s", s, b, appendJSONString(nil, s))
		}
	}
}

func TestAppendCSV(t *testing.T) {
	fields := []string{"", "u1", "a,b", `say "hi"`, "two\nlines", " lead", "window [10,20) count 1", "cr\r"}
	var line []byte
	for i, f := range fields {
		if i > 0 {
			line = append(line, ',')
		}
		line = appendCSV(line, f)
		if b := appendCSVBytes(nil, []byte(f)); string(b) != string(appendCSV(nil, f)) {
			t.Errorf("appendCSVBytes(%q) = %s, appendCSV gives %s", f, b, appendCSV(nil, f))
		}
	}
	r := csv.NewReader(strings.NewReader(string(line) + "\n"))
	got, err := r.Read()
	if err != nil {
		t.Fatalf("reading %q: %v", line, err)
	}
	for i := range fields {
		if got[i] != fields[i] {
			t.Errorf("field %d: wrote %q, read back %q", i, fields[i], got[i])
		}
	}
}

func TestPctRatio(t *testing.T) {
	for _, tc := range []struct {
		part, whole int64
		pct, ratio  string
	}{
		{0, 0, "0.0", "0.00"},
		{2, 3, "66.7", "0.67"},
		{6, 3, "200.0", "2.00"},
		{4, 3, "133.3", "1.33"},
		{1, 8, "12.5", "0.13"},
		{5, 3, "166.7", "1.67"},
		{1, 200, "0.5", "0.01"},
		{7, 0, "0.0", "0.00"},
		// Past the range of num*1000 in int64.
		{math.MaxInt64, 1, "922337203685477580700.0", "9223372036854775807.00"},
		{math.MaxInt64, math.MaxInt64, "100.0", "1.00"},
		{math.MaxInt64 - 1, math.MaxInt64, "100.0", "1.00"},
		{math.MaxInt64 / 3, math.MaxInt64, "33.3", "0.33"},
		{1, math.MaxInt64, "0.0", "0.00"},
		{math.MaxInt64, 3, "307445734561825860233.3", "3074457345618258602.33"},
		{math.MaxInt64, 2, "461168601842738790350.0", "4611686018427387903.50"},
	} {
		if got := pct(tc.part, tc.whole); got != tc.pct {
			t.Errorf("pct(%d, %d) = %s, want %s", tc.part, tc.whole, got, tc.pct)
		}
		if got := ratio(tc.part, tc.whole); got != tc.ratio {
			t.Errorf("ratio(%d, %d) = %s, want %s", tc.part, tc.whole, got, tc.ratio)
		} else if !isJSONNumber([]byte(got)) {
			t.Errorf("ratio(%d, %d) = %s, not a JSON number", tc.part, tc.whole, got)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"log [1 2 3]", 60, "log [1 2 3]"},
		{"abcdef", 4, "abc…"},
		{"ééééé", 3, "éé…"},
	} {
		if got := shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

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
		var s costSum
		for _, c := range tc.costs {
			s.add(c)
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
