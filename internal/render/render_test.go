package render

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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
		if got := IsJSONNumber([]byte(tc.in)); got != tc.want {
			t.Errorf("IsJSONNumber(%q) = %v, want %v", tc.in, got, tc.want)
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
		if got := Pct(tc.part, tc.whole); got != tc.pct {
			t.Errorf("Pct(%d, %d) = %s, want %s", tc.part, tc.whole, got, tc.pct)
		}
		if got := Ratio(tc.part, tc.whole); got != tc.ratio {
			t.Errorf("Ratio(%d, %d) = %s, want %s", tc.part, tc.whole, got, tc.ratio)
		} else if !IsJSONNumber([]byte(got)) {
			t.Errorf("Ratio(%d, %d) = %s, not a JSON number", tc.part, tc.whole, got)
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
		if got := Shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestDisplayText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"u1", "u1"},
		{"a b", "a b"},
		{"é ü 中 …", "é ü 中 …"},
		{"two\nlines", `two\nlines`},
		{"cr\rtab\t", `cr\rtab\t`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"rtl\u202eltr", `rtl\u202eltr`},
		{"nb\u00a0sp", `nb\u00a0sp`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{`back\slash`, `back\\slash`},
		{`\n`, `\\n`},
		{`say "hi"`, `say "hi"`},
		{"p|q", "p|q"},
		{" lead", `" lead"`},
		{"trail ", `"trail "`},
		{"   ", `"   "`},
		{" \n ", `" \n "`},
		{`"q"`, `"\"q\""`},
		{`"`, `"\""`},
	} {
		if got := DisplayText(tc.in); got != tc.want {
			t.Errorf("DisplayText(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestDisplayTextReadsBack checks that every displayed text is printable
// and can be read back to the text it shows, so no two texts look alike.
func TestDisplayTextReadsBack(t *testing.T) {
	parts := []string{"", "a", " ", `"`, `\`, "\n", "\t", "\x1b", "\x7f", "\u0085", "\u202e", "\xff", "é", "|", "\\n", "x y"}
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				s := a + b + c
				d := DisplayText(s)
				for i, r := range d {
					if r == utf8.RuneError || !unicode.IsPrint(r) {
						t.Errorf("DisplayText(%q) = %s: %U at %d", s, d, r, i)
					}
				}
				if strings.HasPrefix(d, " ") || strings.HasSuffix(d, " ") {
					t.Errorf("DisplayText(%q) = %s: a space at an end", s, d)
				}
				quoted := d
				if !strings.HasPrefix(d, `"`) {
					quoted = `"` + strings.ReplaceAll(d, `"`, `\"`) + `"`
				}
				if back, err := strconv.Unquote(quoted); err != nil || back != s {
					t.Errorf("DisplayText(%q) = %s reads back as %q, %v", s, d, back, err)
				}
			}
		}
	}
}

// TestFormatTable: the constants name the places of their formats, every
// entry has an encoding, and every format writes a row of each kind of
// cell with the null left out where it should be.
func TestFormatTable(t *testing.T) {
	for f, name := range map[Format]string{FormatTable: "table", FormatCSV: "csv", FormatJSON: "json", FormatJSONL: "jsonl", FormatMarkdown: "markdown"} {
		if got := f.String(); got != name {
			t.Errorf("Format(%d) is %q, want %q", f, got, name)
		}
	}
	cols := []Column{{Name: "a"}, {Name: "b", Right: true}, {Name: "c", OmitNull: true}}
	want := map[string]string{
		"csv":   "a,b,c\n\"x,y\",3,\n",
		"json":  "[\n{\"a\":\"x,y\",\"b\":3}\n]\n",
		"jsonl": "{\"a\":\"x,y\",\"b\":3}\n",
	}
	for _, info := range Formats() {
		if info.enc == nil {
			t.Fatalf("format %s has no encoding", info.Name)
		}
		var b strings.Builder
		tbl, err := WriteRecords(&b, info.Format, cols, [][]Cell{{Str("x,y"), Int(3), Null()}})
		if err != nil {
			t.Fatal(err)
		}
		if info.Machine {
			if tbl != nil || b.String() != want[info.Name] {
				t.Errorf("-o %s wrote %q, want %q", info.Name, b.String(), want[info.Name])
			}
			continue
		}
		if err := tbl.Render(&b, info.Format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "x,y") || !strings.Contains(b.String(), "-") {
			t.Errorf("-o %s drew %q: want the text and the null's dash", info.Name, b.String())
		}
	}
}

// TestCard: a card's texts wrap at 78 columns, lined up after their
// labels, and a field's Then follows its text at the same indent.
func TestCard(t *testing.T) {
	got := Card("gcra: generic cell rate algorithm", []Field{
		{Label: "how", Text: strings.Repeat("word ", 20)},
		{Label: "example", Text: "u1 at 0", Then: "$ ratesim run"},
	})
	want := "gcra: generic cell rate algorithm\n" +
		"  how:        word word word word word word word word word word word word word\n" +
		"              word word word word word word word\n" +
		"  example:    u1 at 0\n" +
		"              $ ratesim run\n"
	if got != want {
		t.Errorf("Card:\n%s\nwant:\n%s", got, want)
	}
}
