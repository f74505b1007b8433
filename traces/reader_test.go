package traces

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rec is an event copied out of a Reader, for comparisons.
type rec struct {
	User  string
	Time  int64
	Text  string
	Cost  int64
	Line  int
	Attrs []string // name=value
}

func copyEvent(e *Event) rec {
	r := rec{User: string(e.User), Time: e.Time, Text: string(e.TimeText), Cost: e.Cost, Line: e.Line}
	for i := range e.NumAttrs() {
		n, v := e.AttrAt(i)
		r.Attrs = append(r.Attrs, n+"="+string(v))
	}
	return r
}

// readAll reads every event of input, returning them and the error that
// ended the read (nil at io.EOF).
func readAll(t testing.TB, name, input string, opts Options) ([]rec, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(input), name, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return drain(r)
}

func drain(r *Reader) ([]rec, error) {
	var out []rec
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, copyEvent(e))
	}
}

func TestReadFormats(t *testing.T) {
	want := []rec{
		{User: "u1", Time: 7e9, Text: "7", Cost: 1, Line: 2, Attrs: []string{"endpoint=/a"}},
		{User: "u2", Time: 4e8, Text: "0.4", Cost: 3, Line: 3, Attrs: []string{"endpoint=/b"}},
		{User: "u1", Time: 13e8, Text: "1.3", Cost: 1, Line: 4, Attrs: []string{"endpoint=/a"}},
	}
	inputs := map[string]string{
		"t.csv": "user,timestamp,cost,endpoint\nu1,7,1,/a\nu2,0.4,3,/b\nu1,1.3,,/a\n",
		"t.jsonl": `# placeholder
`,
		"t.yaml": "requests:\n- {user: u1, timestamp: 7, endpoint: /a}\n- {user: u2, timestamp: 0.4, cost: 3, endpoint: /b}\n- {user: u1, timestamp: 1.3, endpoint: /a}\n",
	}
	inputs["t.jsonl"] = "\n" + `{"user":"u1","timestamp":7,"endpoint":"/a"}` + "\n" +
		`{"user": "u2", "timestamp": 0.4, "cost": 3, "endpoint": "/b"}` + "\n" +
		`{"timestamp":"1.3","user":"u1","endpoint":"/a"}` + "\n"
	for name, in := range inputs {
		got, err := readAll(t, name, in, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := want
		if name == "t.jsonl" {
			w = []rec{want[0], want[1], want[2]}
			w[0].Line, w[1].Line, w[2].Line = 2, 3, 4
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, d)
		}
	}
}

// TestBadInput checks that every kind of bad input is an error naming the
// file, the right line and, where known, the column.
func TestBadInput(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+1)
	tests := []struct {
		name, in string
		opts     Options
		want     string
	}{
		// CSV
		{"trace.csv", "user,timestamp\nu1,1\nu1,2\nu2\n", Options{}, "traces: trace.csv:4: expected 2 fields, got 1"},
		{"trace.csv", "user,timestamp\nu1,1,9\n", Options{}, "traces: trace.csv:2: expected 2 fields, got 3"},
		{"trace.csv", "user,timestamp\nu1,1\nu1,abc\n", Options{}, `traces: trace.csv:3:4: invalid timestamp "abc" (want a number of s or an RFC 3339 time)`},
		{"trace.csv", "user,timestamp\nu1,abc\n", Options{Unit: time.Millisecond}, `traces: trace.csv:2:4: invalid timestamp "abc" (want a number of ms or an RFC 3339 time)`},
		{"trace.csv", "user,timestamp\nu1,1\nu1,9223372037\n", Options{}, `traces: trace.csv:3:4: timestamp "9223372037" out of range (int64 nanoseconds)`},
		{"trace.csv", "user,timestamp\nu1,99999999999999999999999\n", Options{}, `traces: trace.csv:2:4: timestamp "99999999999999999999999" out of range (int64 nanoseconds)`},
		{"trace.csv", "user,timestamp\nu1,1.0000000001\n", Options{}, `traces: trace.csv:2:4: timestamp "1.0000000001" is finer than a nanosecond (--time-round rounds it)`},
		{"trace.csv", "user,timestamp\nu1,\n", Options{}, "traces: trace.csv:2:4: empty timestamp"},
		{"trace.csv", "user,timestamp\nu1,1\n,2\n", Options{}, "traces: trace.csv:3:1: empty user"},
		{"trace.csv", "timestamp,user\n1,\n", Options{}, "traces: trace.csv:2:3: empty user"},
		{"trace.csv", "user,timestamp,cost\nu1,1,0\n", Options{}, `traces: trace.csv:2:6: invalid cost "0" (want a positive integer)`},
		{"trace.csv", "user,timestamp,cost\nu1,1,-2\n", Options{}, `traces: trace.csv:2:6: invalid cost "-2" (want a positive integer)`},
		{"trace.csv", "user,timestamp,cost\nu1,1,1.5\n", Options{}, `traces: trace.csv:2:6: invalid cost "1.5" (want a positive integer)`},
		{"trace.csv", "user,timestamp,cost\nu1,1,99999999999999999999\n", Options{}, `traces: trace.csv:2:6: cost "99999999999999999999" out of range`},
		{"trace.csv", "user,timestamp\nu1,1\n\"u2,2\nu3,3\n", Options{}, "traces: trace.csv:3:1: unterminated quote"},
		{"trace.csv", "user,timestamp\nu1,\"1\"x\n", Options{}, `traces: trace.csv:2:7: unexpected "x" after a closing quote`},
		{"trace.csv", "user,timestamp\nu\"1,1\n", Options{}, `traces: trace.csv:2:2: bare " in an unquoted field`},
		{"trace.csv", "user,timestamp\nu1,1\n" + long + "\n", Options{}, "traces: trace.csv:3: line longer than 1 MiB"},
		{"trace.csv", "user,timestamp\nu\xff1,1\n", Options{}, `traces: trace.csv:2:1: invalid UTF-8 in user: "u\xff1"`},
		{"trace.csv", "user,timestamp,t\xffg\nu1,1,x\n", Options{}, `traces: trace.csv:1:16: invalid UTF-8 in header column 3`},
		{"trace.csv", "user,timestamp,tag\nu1,1,\xfe\n", Options{}, `traces: trace.csv:2:6: invalid UTF-8 in column "tag": "\xfe"`},
		{"trace.csv", "user,time\nu1,1\n", Options{}, `traces: trace.csv:1: header has no "timestamp" column (the first line must name the columns, e.g. user,timestamp; it has "user,time")`},
		{"trace.csv", "u1,7\nu1,8\n", Options{}, `traces: trace.csv:1: header has no "user" or "timestamp" column (the first line must name the columns, e.g. user,timestamp; it has "u1,7")`},
		{"trace.csv", "user,timestamp,User\nu1,1,u2\n", Options{}, `traces: trace.csv:1:16: duplicate column "User" in the header`},
		{"trace.csv", "user,timestamp,tag,tag\nu1,1,a,b\n", Options{}, `traces: trace.csv:1:20: duplicate column "tag" in the header`},
		{"trace.csv", "user,timestamp,\nu1,1,a\n", Options{}, `traces: trace.csv:1:16: empty name for column 3 in the header`},
		{"trace.csv", "user,timestamp\nu1,2024-01-01T00:00:00Z\nu1,5\n", Options{}, `traces: trace.csv:3:4: timestamp "5" is a number but earlier timestamps are RFC 3339 times`},
		{"trace.csv", "user,timestamp\nu1,5\nu1,2024-01-01T00:00:00Z\n", Options{}, `traces: trace.csv:3:4: timestamp "2024-01-01T00:00:00Z" is an RFC 3339 time but earlier timestamps are numbers`},
		{"trace.csv", "user,timestamp\nu1,2024-02-30T00:00:00Z\n", Options{}, `traces: trace.csv:2:4: invalid RFC 3339 timestamp "2024-02-30T00:00:00Z"`},
		{"trace.csv", "user,timestamp\nu1,2300-01-01T00:00:00Z\n", Options{}, `traces: trace.csv:2:4: timestamp "2300-01-01T00:00:00Z" out of range (1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)`},
		{"-", "user,timestamp\nu1,x\n", Options{}, `traces: stdin:2:4: invalid timestamp "x" (want a number of s or an RFC 3339 time)`},
		// A quoted field spanning lines: errors after it count its lines.
		{"trace.csv", "user,timestamp,note\nu1,1,\"a\nb\"\nu1,x,c\n", Options{}, `traces: trace.csv:4:4: invalid timestamp "x" (want a number of s or an RFC 3339 time)`},

		// JSON Lines
		{"t.jsonl", `{"user":"u1","timestamp":1}` + "\n" + `{"user":"u1","timestamp":` + "\n", Options{}, "traces: t.jsonl:2:26: truncated JSON object (the line ends inside it)"},
		{"t.jsonl", `{"user":"u1","timestamp":1` + "\n", Options{}, "traces: t.jsonl:1:27: truncated JSON object (the line ends inside it)"},
		{"t.jsonl", `{"user":"u1","timestamp":1}` + "\n" + `{"user":"u1"`, Options{}, "traces: t.jsonl:2:13: truncated JSON object (the line ends inside it)"},
		{"t.jsonl", `{"user":"u1","timestamp":"abc"}`, Options{}, `traces: t.jsonl:1:26: invalid timestamp "abc" (want a number of s or an RFC 3339 time)`},
		{"t.jsonl", `{"user":"u1","timestamp":1e400}`, Options{}, `traces: t.jsonl:1:26: timestamp "1e400" out of range (int64 nanoseconds)`},
		{"t.jsonl", `{"user":"","timestamp":1}`, Options{}, "traces: t.jsonl:1:9: empty user"},
		{"t.jsonl", `{"user":null,"timestamp":1}`, Options{}, "traces: t.jsonl:1:9: empty user"},
		{"t.jsonl", `{"user":true,"timestamp":1}`, Options{}, `traces: t.jsonl:1:9: "user" must be a string or a number`},
		{"t.jsonl", `{"timestamp":1}`, Options{}, `traces: t.jsonl:1: missing "user" (fields: "timestamp")`},
		{"t.jsonl", `{"user":"u1"}`, Options{}, `traces: t.jsonl:1: missing "timestamp" (fields: "user")`},
		{"t.jsonl", `{"user":"u1","timestamp":1,"cost":0}`, Options{}, `traces: t.jsonl:1:35: invalid cost "0" (want a positive integer)`},
		{"t.jsonl", `{"user":"u1","timestamp":1,"cost":2.5}`, Options{}, `traces: t.jsonl:1:35: invalid cost "2.5" (want a positive integer)`},
		{"t.jsonl", `{"user":"u1","timestamp":1,"cost":-1}`, Options{}, `traces: t.jsonl:1:35: invalid cost "-1" (want a positive integer)`},
		{"t.jsonl", `{"user":"u1","timestamp":1,"user":"u2"}`, Options{}, `traces: t.jsonl:1:28: duplicate field "user"`},
		{"t.jsonl", `{"user":"u1","timestamp":1,"a":1,"a":2}`, Options{}, `traces: t.jsonl:1:34: duplicate field "a"`},
		{"t.jsonl", "{\"user\":\"u1\",\"timestamp\":1,\"k\xff\":1}", Options{}, "traces: t.jsonl:1:28: invalid UTF-8 in a field name"},
		{"t.jsonl", "{\"user\":\"u\xff\",\"timestamp\":1}", Options{}, "traces: t.jsonl:1:9: invalid UTF-8 in a string"},
		{"t.jsonl", `{"user":"u1","timestamp":1} x`, Options{}, "traces: t.jsonl:1:29: unexpected text after the JSON object"},
		{"t.jsonl", `["u1",1]`, Options{}, "traces: t.jsonl:1:1: expected a JSON object"},
		{"t.jsonl", `{"user":"u\ud800","timestamp":1}`, Options{}, `traces: t.jsonl:1:11: invalid \u escape: unpaired surrogate`},
		{"t.jsonl", `{"user":"u1","timestamp":01}`, Options{}, `traces: t.jsonl:1:27: expected , or } after a field`},
		{"t.jsonl", `{"user":"u1","timestamp":1}` + "\n" + `{"user":"` + long + `","timestamp":1}` + "\n", Options{}, "traces: t.jsonl:2: line longer than 1 MiB"},
		{"t.jsonl", `{"user":"u1","timestamp":1,"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, Options{}, "traces: t.jsonl:1:96: JSON value nested too deeply"},

		// YAML
		{"t.yaml", "- {user: u1, timestamp: 1}\n- user: u1\n  user: u2\n  timestamp: 2\n", Options{}, `traces: t.yaml:3:3: duplicate key "user" (first at line 2)`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n---\n- {user: u1, timestamp: 2}\n", Options{}, "traces: t.yaml:2:1: a second YAML document (a trace is a single document)"},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: u1, timestamp: 1.5x}\n", Options{}, `traces: t.yaml:2:25: invalid timestamp "1.5x" (want a number of s or an RFC 3339 time)`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: u1, timestamp: 2, cost: 0}\n", Options{}, `traces: t.yaml:2:34: invalid cost "0" (want a positive integer)`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: '', timestamp: 2}\n", Options{}, `traces: t.yaml:2:10: empty user`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: ~, timestamp: 2}\n", Options{}, `traces: t.yaml:2:10: empty user`},
		{"t.yaml", "- {user: u1}\n", Options{}, `traces: t.yaml:1:3: missing "timestamp" (fields: "user")`},
		{"t.yaml", "- {user: u1, timestamp: [1]}\n", Options{}, `traces: t.yaml:1:25: timestamp: expected a scalar, got a sequence`},
		{"t.yaml", "- {user: u1, timestamp: 1, tags: [a]}\n", Options{}, `traces: t.yaml:1:34: field "tags": expected a scalar or a map, got a sequence`},
		{"t.yaml", "- [u1, 1]\n", Options{}, `traces: t.yaml:1:3: expected a map with user and timestamp, got a sequence`},
		{"t.yaml", "requests:\n- {user: u1, timestamp: 1}\nextra: 1\n", Options{}, `traces: t.yaml:3:1: unknown top-level key "extra" (want requests)`},
		{"t.yaml", "requests: 5\n", Options{}, `traces: t.yaml:1:11: requests: expected a sequence of requests, got the scalar "5"`},
		{"t.yaml", "just text\n", Options{}, `traces: t.yaml:1:1: expected a sequence of requests or a map with requests:, got the scalar "just text"`},
		{"t.yaml", "- {user: u1, timestamp: 1\n- {user: u2}\n", Options{}, `traces: t.yaml:1: did not find expected ',' or '}'`},
		{"t.yaml", "- &d {user: u1, timestamp: 1}\n- {<<: *d, timestamp: 2}\n", Options{}, `traces: t.yaml:2:4: merge keys (<<) are not supported`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: u1, timestamp: 2}\n", Options{MaxYAMLBytes: 40}, "traces: t.yaml: YAML trace larger than 40 bytes; YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream"},
		{"t.yaml", "- {user: u1, timestamp: 99999999999}\n", Options{}, `traces: t.yaml:1:25: timestamp "99999999999" out of range (int64 nanoseconds)`},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {\"us\xffer\": u1, timestamp: 1}\n", Options{}, "traces: t.yaml:2:7: invalid leading UTF-8 octet"},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: \"a\x01\", timestamp: 1}\n", Options{}, "traces: t.yaml:2:12: control characters are not allowed"},
		{"t.yaml", "- {user: u1, timestamp: 1}\n- {user: u1, timestamp: *t}\n", Options{}, "traces: t.yaml:2:25: unknown anchor 't' referenced"},
		{"t.yaml", "- &a {user: u1, timestamp: 1, x: *a}\n", Options{}, "traces: t.yaml:1:34: alias *a is inside the node it refers to"},
		{"t.yaml", "requests: &r [{user: u1, timestamp: 1, x: *r}]\n", Options{}, "traces: t.yaml:1:43: alias *r is inside the node it refers to"},
	}
	for _, tt := range tests {
		name := tt.want
		if len(name) > 70 {
			name = name[:70]
		}
		t.Run(name, func(t *testing.T) {
			_, err := readAll(t, tt.name, tt.in, tt.opts)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
		})
	}
}

func TestYAMLAliasBomb(t *testing.T) {
	// The classic "billion laughs", as a trace and as requests.
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [")
		for j := range 9 {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	bomb := b.String()
	// Keys a..i are not "requests": make them attributes of one request
	// instead, so that the aliases are where values are expected.
	inRequest := "- {user: u1, timestamp: 1, " + strings.ReplaceAll(strings.TrimSuffix(bomb, "\n"), "\n", ", ") + "}\n"
	seq := "- &a {user: u1, timestamp: 1}\n" + "- &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
		"- &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n- &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
		"- &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n- &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
		"- &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n- &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n" +
		strings.Repeat("- *h\n", 1000)
	for _, in := range []struct{ name, text, want string }{
		{"top", bomb, `traces: bomb.yaml:1:1: unknown top-level key "a" (want requests)`},
		{"attributes", inRequest, `traces: bomb.yaml:1:296: YAML trace larger than 16 MiB once its aliases are expanded (each alias counts as the size of what it repeats); YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream`},
		{"sequence", seq, `traces: bomb.yaml:8:7: YAML trace larger than 16 MiB once its aliases are expanded (each alias counts as the size of what it repeats); YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream`},
	} {
		// Milliseconds in fact; the bound leaves room for -race on a busy
		// machine.
		done := make(chan error, 1)
		go func() {
			_, err := readAll(t, "bomb.yaml", in.text, Options{})
			// Lenient: every bad request is skipped, quickly.
			if r, lerr := NewReader(strings.NewReader(in.text), "bomb.yaml", Options{Lenient: true}); lerr == nil {
				drain(r)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != in.want {
				t.Errorf("%s: error %v, want %s", in.name, err, in.want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: still reading after 2s", in.name)
		}
	}
}

// TestYAMLAliasesCountAgainstTheCap: a small file whose aliases repeat a
// big scalar is as big as its expansion, and refused before any request
// is read; a few aliases within the cap read as their anchors.
func TestYAMLAliasesCountAgainstTheCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("- {user: u0, timestamp: 0, pad: &big " + strings.Repeat("x", 1<<20) + "}\n")
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "- {user: u%d, timestamp: %d, pad: *big}\n", i%10, i)
	}
	hostile := b.String()
	if n := len(hostile); n < 1<<20 || n > 2<<20 {
		t.Fatalf("the hostile trace is %d bytes", n)
	}
	want := `traces: pad.yaml:16:34: YAML trace larger than 16 MiB once its aliases are expanded (each alias counts as the size of what it repeats); YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream`
	// Refused by NewReader: before a first event, so before any output
	// or sort run could be written.
	for _, lenient := range []bool{false, true} {
		_, err := NewReader(strings.NewReader(hostile), "pad.yaml", Options{Lenient: lenient})
		var pe *ParseError
		if err == nil || err.Error() != want || !errors.As(err, &pe) {
			t.Errorf("lenient %v: error %v, want %s", lenient, err, want)
		}
	}

	// Within the cap, aliases read as what they repeat, wherever a
	// request or a value is expected.
	in := "- &r {user: u1, timestamp: 1, tag: &t abc}\n- *r\n- {user: u2, timestamp: 2, tag: *t}\n"
	got, err := readAll(t, "ok.yaml", in, Options{})
	if err != nil || len(got) != 3 || got[1].User != "u1" || len(got[2].Attrs) != 1 || got[2].Attrs[0] != "tag=abc" {
		t.Errorf("aliases within the cap: %+v, %v", got, err)
	}
	// The expanded size is what counts: these 100 aliases of a 100-byte
	// scalar fit in 10 KiB as text, not once expanded.
	in = "- {user: u0, timestamp: 0, pad: &p " + strings.Repeat("y", 100) + "}\n" + strings.Repeat("- {user: u1, timestamp: 1, pad: *p}\n", 100)
	if _, err := readAll(t, "p.yaml", in, Options{MaxYAMLBytes: 10 << 10}); err == nil || !strings.Contains(err.Error(), "larger than 10 KiB once its aliases are expanded") {
		t.Errorf("100 aliases of 100 bytes under a 10 KiB cap: %v", err)
	}
	if got, err := readAll(t, "p.yaml", in, Options{MaxYAMLBytes: 20 << 10}); err != nil || len(got) != 101 {
		t.Errorf("the same under a 20 KiB cap: %d events, %v", len(got), err)
	}
}

func TestLenient(t *testing.T) {
	in := "user,timestamp,cost\nu1,1,1\nu2\nu3,x,1\nu4,4,0\n,5,1\nu6,6,2\n\"u7,7,1\n"
	var skipped []string
	opts := Options{Lenient: true, OnSkip: func(err error) { skipped = append(skipped, err.Error()) }}
	r, err := NewReader(strings.NewReader(in), "l.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(r)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []rec{
		{User: "u1", Time: 1e9, Text: "1", Cost: 1, Line: 2},
		{User: "u6", Time: 6e9, Text: "6", Cost: 2, Line: 7},
	}
	if d := cmp.Diff(wantEvents, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	wantSkipped := []string{
		"traces: l.csv:3: expected 3 fields, got 1",
		`traces: l.csv:4:4: invalid timestamp "x" (want a number of s or an RFC 3339 time)`,
		`traces: l.csv:5:6: invalid cost "0" (want a positive integer)`,
		"traces: l.csv:6:1: empty user",
		"traces: l.csv:8:1: unterminated quote",
	}
	if d := cmp.Diff(wantSkipped, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	if r.Skipped() != len(wantSkipped) {
		t.Errorf("Skipped() = %d, want %d", r.Skipped(), len(wantSkipped))
	}

	// A bad header ends even a lenient read.
	_, err = readAll(t, "h.csv", "name,time\na,1\n", opts)
	if err == nil || !strings.Contains(err.Error(), "h.csv:1: header has no") {
		t.Errorf("lenient bad header: %v", err)
	}

	// JSON Lines and YAML skip records too.
	skipped = nil
	got, err = readAll(t, "l.jsonl", `{"user":"a","timestamp":1}`+"\n"+`{"user":"b",`+"\n"+`{"user":"c","timestamp":3}`+"\n", opts)
	if err != nil || len(got) != 2 || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "traces: l.jsonl:2:") {
		t.Errorf("lenient JSONL: %v, %v, %q", got, err, skipped)
	}
	skipped = nil
	got, err = readAll(t, "l.yaml", "- {user: a, timestamp: 1}\n- {user: b, user: c, timestamp: 2}\n- {user: c, timestamp: 3}\n", opts)
	if err != nil || len(got) != 2 || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "traces: l.yaml:2:") {
		t.Errorf("lenient YAML: %v, %v, %q", got, err, skipped)
	}
	// Lines over the limit are skipped whole.
	skipped = nil
	long := strings.Repeat("y", MaxLineBytes+10)
	got, err = readAll(t, "long.csv", "user,timestamp\nu1,1\nu2,"+long+"\nu3,3\n", opts)
	if err != nil || len(got) != 2 || got[1].User != "u3" || got[1].Line != 4 || len(skipped) != 1 {
		t.Errorf("lenient long line: %v, %v, %q", got, err, skipped)
	}
}

func TestEmptyTraces(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"e.csv", ""},
		{"e.csv", "user,timestamp\n"},
		{"e.csv", "user,timestamp"},
		{"e.csv", "\xef\xbb\xbfuser,timestamp\r\n"},
		{"e.csv", "\n\nuser,timestamp\n\n"},
		{"e.jsonl", ""},
		{"e.jsonl", "\n  \n"},
		{"e.yaml", ""},
		{"e.yaml", "# nothing\n"},
		{"e.yaml", "[]\n"},
		{"e.yaml", "requests: []\n"},
		{"e.yaml", "requests:\n"},
		{"-", ""},
	} {
		got, err := readAll(t, tt.name, tt.in, Options{})
		if err != nil || len(got) != 0 {
			t.Errorf("%s %q: %v, %v; want no events, no error", tt.name, tt.in, got, err)
		}
	}
}

func TestBOMAndCRLF(t *testing.T) {
	want := []rec{
		{User: "u1", Time: 7e9, Text: "7", Cost: 1, Line: 2, Attrs: []string{"note=a"}},
		{User: "u2", Time: 8e9, Text: "8", Cost: 1, Line: 3, Attrs: []string{"note=b,c"}},
		{User: "u3", Time: 9e9, Text: "9", Cost: 1, Line: 4, Attrs: []string{"note=x\r\ny"}},
	}
	in := "\xef\xbb\xbfuser,timestamp,note\r\nu1,7,a\r\nu2,8,\"b,c\"\r\nu3,9,\"x\r\ny\"\r\n"
	got, err := readAll(t, "crlf.csv", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CSV (-want +got):\n%s", d)
	}
	got, err = readAll(t, "crlf.jsonl", "\xef\xbb\xbf{\"user\":\"u1\",\"timestamp\":7}\r\n{\"user\":\"u2\",\"timestamp\":8}\r\n", Options{})
	if err != nil || len(got) != 2 || got[1].Time != 8e9 {
		t.Errorf("JSONL: %v, %v", got, err)
	}
	got, err = readAll(t, "crlf.yaml", "\xef\xbb\xbf- {user: u1, timestamp: 7}\r\n- {user: u2, timestamp: 8}\r\n", Options{})
	if err != nil || len(got) != 2 || got[1].Time != 8e9 {
		t.Errorf("YAML: %v, %v", got, err)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFormatDetection(t *testing.T) {
	csv := "user,timestamp\nu1,7\n"
	jsonl := `{"user":"u1","timestamp":7}` + "\n"
	yaml := "- {user: u1, timestamp: 7}\n"
	yamlMap := "# comment\nrequests:\n  - user: u1\n    timestamp: 7\n"
	tests := []struct {
		name string
		in   string
		opts Options
		want Format
	}{
		{"-", csv, Options{}, CSV},
		{"-", jsonl, Options{}, JSONL},
		{"-", yaml, Options{}, YAML},
		{"-", yamlMap, Options{}, YAML},
		{"-", "[{user: u1, timestamp: 7}]", Options{}, YAML},
		{"-", "---\n" + yaml, Options{}, YAML},
		{"-", "\xef\xbb\xbf" + jsonl, Options{}, JSONL},
		{"-", "\n\n" + jsonl, Options{}, JSONL},
		{"trace", yaml, Options{}, YAML},
		{"trace.csv.gz", string(gzipBytes(t, []byte(csv))), Options{}, CSV},
		{"trace.gz", string(gzipBytes(t, []byte(jsonl))), Options{}, JSONL},
		{"-", string(gzipBytes(t, []byte(yaml))), Options{}, YAML},
		{"trace.txt", jsonl, Options{Format: JSONL}, JSONL},
	}
	for _, tt := range tests {
		r, err := NewReader(strings.NewReader(tt.in), tt.name, tt.opts)
		if err != nil {
			t.Errorf("%s %q: %v", tt.name, tt.in, err)
			continue
		}
		if r.Format() != tt.want {
			t.Errorf("%s %q: format %v, want %v", tt.name, tt.in, r.Format(), tt.want)
		}
		got, err := drain(r)
		if err != nil || len(got) != 1 || got[0].User != "u1" || got[0].Time != 7e9 {
			t.Errorf("%s %q: %v, %v", tt.name, tt.in, got, err)
		}
	}
	// A given format overrides the extension.
	_, err := readAll(t, "x.csv", jsonl, Options{Format: CSV})
	if err == nil {
		t.Errorf("JSON Lines read as CSV: no error")
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv.gz")
	if err := os.WriteFile(path, gzipBytes(t, []byte("user,timestamp\nu1,7\nu1,x\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(r)
	if len(got) != 1 || err == nil || err.Error() != "traces: "+path+`:3:4: invalid timestamp "x" (want a number of s or an RFC 3339 time)` {
		t.Errorf("got %v, %v", got, err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := r.Next(); err == nil {
		t.Errorf("Next after Close: no error")
	}

	r, err = Open("-", strings.NewReader(`{"user":"u1","timestamp":"2024-01-01T00:00:07Z"}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "stdin" || r.Format() != JSONL {
		t.Errorf("stdin: name %q format %v", r.Name(), r.Format())
	}
	e, err := r.Next()
	if err != nil || e.Time != 1704067207e9 || !r.RFC3339() {
		t.Errorf("stdin RFC 3339: %v, %v, RFC3339 %v", e, err, r.RFC3339())
	}

	if _, err := Open(filepath.Join(dir, "missing.csv"), nil, Options{}); err == nil || !strings.HasPrefix(err.Error(), "traces: open ") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open("-", nil, Options{}); err == nil {
		t.Errorf("stdin nil: no error")
	}
	if _, err := NewReader(strings.NewReader(""), "x", Options{Unit: -1}); err == nil {
		t.Errorf("negative unit: no error")
	}
	bad := gzipBytes(t, []byte("user,timestamp\nu1,1\n"))
	if _, err := drain2(NewReader(bytes.NewReader(bad[:len(bad)-6]), "cut.csv.gz", Options{})); err == nil ||
		!strings.HasPrefix(err.Error(), "traces: cut.csv.gz: ") {
		t.Errorf("truncated gzip: %v", err)
	}
}

func drain2(r *Reader, err error) ([]rec, error) {
	if err != nil {
		return nil, err
	}
	return drain(r)
}

func TestAttrs(t *testing.T) {
	r, err := NewReader(strings.NewReader("user,timestamp,cost,endpoint,tenant\nu1,7,2,/a,acme\n"), "a.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"user", "u1", true}, {"timestamp", "7", true}, {"cost", "2", true},
		{"endpoint", "/a", true}, {"tenant", "acme", true}, {"missing", "", false},
	} {
		v, ok := e.Attr(tt.name)
		if string(v) != tt.want || ok != tt.ok {
			t.Errorf("Attr(%q) = %q, %v", tt.name, v, ok)
		}
	}
	if e.NumAttrs() != 2 {
		t.Errorf("NumAttrs = %d", e.NumAttrs())
	}
	if n, v := e.AttrAt(1); n != "tenant" || string(v) != "acme" {
		t.Errorf("AttrAt(1) = %q, %q", n, v)
	}
	if n, v := e.AttrAt(5); n != "" || v != nil {
		t.Errorf("AttrAt(5) = %q, %q", n, v)
	}
	// JSON values other than strings keep their JSON text.
	got, err := readAll(t, "a.jsonl", `{"user":7,"timestamp":1,"n":1.50,"b":true,"z":null,"o":{"k":[1,"\u00e9"]},"s":"a\"b\u00e9\n"}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"n=1.50", "b=true", "z=null", `o={"k":[1,"\u00e9"]}`, `o.k=[1,"\u00e9"]`, "s=a\"bé\n"}
	if got[0].User != "7" || !cmp.Equal(got[0].Attrs, want) {
		t.Errorf("JSON attrs: %q %q", got[0].User, got[0].Attrs)
	}
}

// TestNoAllocs checks that reading a record allocates nothing once the
// reader is warm, in every format.
func TestNoAllocs(t *testing.T) {
	inputs := map[string]func(i int) string{
		"csv": func(i int) string { return "u" + itoa(i%7) + "," + itoa(i) + ".5,2,/x\n" },
		"csvq": func(i int) string {
			return "\"u" + itoa(i%7) + "\"," + itoa(i) + ".5,2,\"/x,\ny\"\n"
		},
		"jsonl": func(i int) string {
			return `{"user":"u` + itoa(i%7) + `","timestamp":` + itoa(i) + `.5,"cost":2,"e":"/\nx"}` + "\n"
		},
		"yaml": func(i int) string {
			return `- {user: u` + itoa(i%7) + `, timestamp: ` + itoa(i) + `.5, cost: 2, e: /x}` + "\n"
		},
	}
	for format, row := range inputs {
		var b strings.Builder
		name := "t." + format
		if strings.HasPrefix(format, "csv") {
			b.WriteString("user,timestamp,cost,endpoint\n")
			name = "t.csv"
		}
		for i := range 3000 {
			b.WriteString(row(i))
		}
		r, err := NewReader(strings.NewReader(b.String()), name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			r.Next()
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per record", format, allocs)
		}
	}
}

func itoa(i int) string { return string(strconv.AppendUint(nil, uint64(i), 10)) }

// TestManyFields checks duplicate detection in records with many fields,
// which use a map instead of a scan.
func TestManyFields(t *testing.T) {
	var j, y strings.Builder
	j.WriteString(`{"user":"u1","timestamp":1`)
	y.WriteString("- user: u1\n  timestamp: 1\n")
	for i := range 40 {
		j.WriteString(`,"a` + itoa(i) + `":` + itoa(i))
		y.WriteString("  a" + itoa(i) + ": " + itoa(i) + "\n")
	}
	okJSON, okYAML := j.String()+"}", y.String()
	for _, tt := range []struct{ name, in, want string }{
		{"m.jsonl", okJSON, ""},
		{"m.yaml", okYAML, ""},
		{"m.jsonl", j.String() + `,"a7":1}`, `traces: m.jsonl:1:`},
		{"m.yaml", okYAML + "  a7: 1\n", `traces: m.yaml:43:3: duplicate key "a7" (first at line 10)`},
	} {
		got, err := readAll(t, tt.name, tt.in, Options{})
		if tt.want == "" {
			if err != nil || len(got) != 1 || len(got[0].Attrs) != 40 {
				t.Errorf("%s: %v, %v", tt.name, got, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !strings.Contains(err.Error(), `duplicate`) {
			t.Errorf("%s: error %v, want %s...", tt.name, err, tt.want)
		}
	}
	// Writers check for duplicates the same way.
	var e Event
	e.User, e.Cost = []byte("u"), 1
	for i := range 20 {
		e.AddAttr("a"+itoa(i), []byte("v"))
	}
	if err := NewWriter(io.Discard, JSONL, 0).Write(&e); err != nil {
		t.Errorf("20 attributes: %v", err)
	}
	e.AddAttr("a3", []byte("w"))
	if err := NewWriter(io.Discard, JSONL, 0).Write(&e); err == nil || err.Error() != `traces: duplicate attribute "a3"` {
		t.Errorf("duplicate among 21 attributes: %v", err)
	}
	e.ResetAttrs()
	if e.NumAttrs() != 0 {
		t.Errorf("ResetAttrs left %d attributes", e.NumAttrs())
	}
}

func TestNames(t *testing.T) {
	if s := Format(99).String(); s != "Format(99)" {
		t.Errorf("Format(99).String() = %q", s)
	}
	if s := UnitName(time.Minute); s != "1m0s" {
		t.Errorf("UnitName(time.Minute) = %q", s)
	}
	if s := UnitName(0); s != "s" {
		t.Errorf("UnitName(0) = %q", s)
	}
	for n, want := range map[int64]string{16 << 20: "16 MiB", 3 << 10: "3 KiB", 1000: "1000 bytes"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// endless is an io.Reader of fill bytes that never ends until stop is
// closed; it then gives tail and ends. It stands for /dev/zero or a pipe
// that keeps writing.
type endless struct {
	fill byte
	tail string
	stop chan struct{}
}

func newEndless(fill byte, tail string) *endless {
	return &endless{fill: fill, tail: tail, stop: make(chan struct{})}
}

func (e *endless) Read(p []byte) (int, error) {
	select {
	case <-e.stop:
		if e.tail == "" {
			return 0, io.EOF
		}
		n := copy(p, e.tail)
		e.tail = e.tail[n:]
		return n, nil
	default:
	}
	for i := range p {
		p[i] = e.fill
	}
	return len(p), nil
}

// readDeadline is how long a read of an endless input may take before a
// test counts it as hanging: a few milliseconds in fact; the bound leaves
// room for -race on a busy machine.
const readDeadline = 10 * time.Second

// TestEndlessLine checks that a line that never ends is an error as soon
// as it passes MaxLineBytes, in every format, rather than a read that
// waits for the line's end.
func TestEndlessLine(t *testing.T) {
	tests := []struct {
		name string
		head string // before the endless bytes
		fill byte
		opts Options
		want string
	}{
		{"/dev/zero", "", 0, Options{}, "traces: /dev/zero:1: line longer than 1 MiB"},
		// A header that is too long ends even a lenient read.
		{"/dev/zero", "", 0, Options{Lenient: true}, "traces: /dev/zero:1: line longer than 1 MiB"},
		{"-", "user,timestamp\n", 0, Options{}, "traces: stdin:2: line longer than 1 MiB"},
		{"trace.csv", "user,timestamp\nu1,1\n", 'x', Options{}, "traces: trace.csv:3: line longer than 1 MiB"},
		{"trace.csv", "user,timestamp\nu1,1\nu2,\"", 'x', Options{}, "traces: trace.csv:3: line longer than 1 MiB"},
		// Inside a quoted field the record's end cannot be found again.
		{"trace.csv", "user,timestamp,note\nu1,1,\"a\n", 'x', Options{Lenient: true}, "traces: trace.csv:3: line longer than 1 MiB"},
		{"t.jsonl", `{"user":"u1","timestamp":1}` + "\n", 'x', Options{}, "traces: t.jsonl:2: line longer than 1 MiB"},
		{"t.jsonl", "", ' ', Options{}, "traces: t.jsonl:1: line longer than 1 MiB"},
		{"t.yaml", "- {user: u1, timestamp: 1}\n", ' ', Options{}, "traces: t.yaml: YAML trace larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.want[len("traces: "):], func(t *testing.T) {
			in := newEndless(tt.fill, "")
			done := make(chan error, 1)
			go func() {
				r, err := NewReader(io.MultiReader(strings.NewReader(tt.head), in), tt.name, tt.opts)
				if err == nil {
					_, err = drain(r)
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("error %v, want %s", err, tt.want)
				}
			case <-time.After(readDeadline):
				close(in.stop) // let the reader end
				t.Fatalf("still reading after %v", readDeadline)
			}
		})
	}
}

// TestLenientEndlessLine checks that in lenient mode a line over
// MaxLineBytes is reported as skipped as soon as it is known to be too
// long, and that reading goes on after its end.
func TestLenientEndlessLine(t *testing.T) {
	for _, tt := range []struct{ name, head, tail string }{
		{"l.csv", "user,timestamp\nu1,1\n", "\nu3,3\n"},
		{"l.jsonl", "\n" + `{"user":"u1","timestamp":1}` + "\n", "\n" + `{"user":"u3","timestamp":3}` + "\n"},
	} {
		in := newEndless('x', tt.tail)
		skips := make(chan error, 10)
		r, err := NewReader(io.MultiReader(strings.NewReader(tt.head), in), tt.name,
			Options{Lenient: true, OnSkip: func(err error) { skips <- err }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var got []rec
		var readErr error
		go func() {
			defer close(done)
			got, readErr = drain(r)
		}()
		select {
		case err := <-skips:
			if want := "traces: " + tt.name + ":3: line longer than 1 MiB"; err.Error() != want {
				t.Errorf("%s: skipped %v, want %s", tt.name, err, want)
			}
		case <-time.After(readDeadline):
			close(in.stop)
			<-done
			t.Fatalf("%s: no skip reported after %v", tt.name, readDeadline)
		}
		close(in.stop) // the line ends, and the input after it
		<-done
		want := []rec{
			{User: "u1", Time: 1e9, Text: "1", Cost: 1, Line: 2},
			{User: "u3", Time: 3e9, Text: "3", Cost: 1, Line: 4},
		}
		if d := cmp.Diff(want, got); readErr != nil || d != "" {
			t.Errorf("%s: error %v, events (-want +got):\n%s", tt.name, readErr, d)
		}
		if r.Skipped() != 1 || len(skips) != 0 {
			t.Errorf("%s: Skipped() = %d, %d more reports", tt.name, r.Skipped(), len(skips))
		}
	}
}

// TestLongLines checks lines at and over MaxLineBytes, and that lenient
// reading skips lines several buffers long without holding them.
func TestLongLines(t *testing.T) {
	atMax := strings.Repeat("u", MaxLineBytes-2) + ",5"
	overMax := strings.Repeat("u", MaxLineBytes-1) + ",5"
	huge := strings.Repeat("y", 3*MaxLineBytes+5)
	got, err := readAll(t, "max.csv", "user,timestamp\n"+atMax+"\n", Options{})
	if err != nil || len(got) != 1 || len(got[0].User) != MaxLineBytes-2 {
		t.Errorf("line of MaxLineBytes: %d events, %v", len(got), err)
	}
	_, err = readAll(t, "max.csv", "user,timestamp\n"+overMax+"\n", Options{})
	if want := "traces: max.csv:2: line longer than 1 MiB"; err == nil || err.Error() != want {
		t.Errorf("line of MaxLineBytes+1: %v, want %s", err, want)
	}

	var skipped []string
	opts := Options{Lenient: true, OnSkip: func(err error) { skipped = append(skipped, err.Error()) }}
	for _, tt := range []struct{ name, in string }{
		{"long.csv", "user,timestamp\nu1,1\nu2," + huge + "\nu3,3\n" + huge + "\n" + overMax + "\nu6,6\n" + huge},
		{"long.jsonl", "\n" + `{"user":"u1","timestamp":1}` + "\n" + `{"user":"u2","timestamp":"` + huge + `"}` + "\n" +
			`{"user":"u3","timestamp":3}` + "\n" + huge + "\n" + huge + "\n" + `{"user":"u6","timestamp":6}` + "\n" + huge},
	} {
		skipped = nil
		r, err := NewReader(strings.NewReader(tt.in), tt.name, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := drain(r)
		var users []string
		var lines []int
		for _, e := range got {
			users, lines = append(users, e.User), append(lines, e.Line)
		}
		if err != nil || !cmp.Equal(users, []string{"u1", "u3", "u6"}) || !cmp.Equal(lines, []int{2, 4, 7}) {
			t.Errorf("%s: users %q on lines %v, error %v", tt.name, users, lines, err)
		}
		var want []string
		for _, line := range []string{"3", "5", "6", "8"} {
			want = append(want, "traces: "+tt.name+":"+line+": line longer than 1 MiB")
		}
		if d := cmp.Diff(want, skipped); d != "" {
			t.Errorf("%s: skipped (-want +got):\n%s", tt.name, d)
		}
		if r.csv != nil && len(r.csv.lr.buf) > MaxLineBytes+1 {
			t.Errorf("%s: line buffer grew to %d bytes", tt.name, len(r.csv.lr.buf))
		}
	}
}

// TestRFC3339Range checks that RFC 3339 times are accepted exactly within
// the range of int64 nanoseconds, and that the error for one outside it
// gives that range.
func TestRFC3339Range(t *testing.T) {
	if got := string(appendRFC3339(nil, math.MinInt64)); got != "1677-09-21T00:12:43.145224192Z" {
		t.Errorf("earliest time %s", got)
	}
	if got := string(appendRFC3339(nil, math.MaxInt64)); got != "2262-04-11T23:47:16.854775807Z" {
		t.Errorf("latest time %s", got)
	}
	for _, tt := range []struct {
		in   string
		want int64 // when ok
		ok   bool
	}{
		{"2262-04-11T23:47:16.854775807Z", math.MaxInt64, true},
		{"2262-04-12T00:47:16.854775807+01:00", math.MaxInt64, true},
		{"2262-04-11T23:47:16.854775808Z", 0, false},
		{"2262-04-12T00:47:16.854775808+01:00", 0, false},
		{"2262-04-11T23:47:17Z", 0, false},
		{"2262-04-12T00:00:00Z", 0, false},
		{"1677-09-21T00:12:43.145224192Z", math.MinInt64, true},
		{"1677-09-20T23:12:43.145224192-01:00", math.MinInt64, true},
		{"1677-09-21T00:12:43.145224191Z", 0, false},
		{"1677-09-20T23:12:43.145224191-01:00", 0, false},
		{"1677-09-21T00:12:43Z", 0, false},
		{"1677-09-21T00:00:00Z", 0, false},
		{"1677-09-21T12:00:00Z", -9223329600e9, true},
	} {
		for _, format := range []string{"csv", "jsonl"} {
			var in string
			if format == "csv" {
				in = "user,timestamp\nu1," + tt.in + "\n"
			} else {
				in = "\n" + `{"user":"u1","timestamp":"` + tt.in + `"}` + "\n"
			}
			got, err := readAll(t, "r."+format, in, Options{})
			if tt.ok {
				if err != nil || len(got) != 1 || got[0].Time != tt.want {
					t.Errorf("%s in %s: %v, %v; want time %d", tt.in, format, got, err, tt.want)
				}
				continue
			}
			col := map[string]string{"csv": "4", "jsonl": "26"}[format]
			want := "traces: r." + format + ":2:" + col + ": timestamp " + strconv.Quote(tt.in)
			if len(tt.in) > maxQuoted {
				want = "traces: r." + format + ":2:" + col + ": timestamp " + quote([]byte(tt.in))
			}
			want += " out of range (1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)"
			if err == nil || err.Error() != want {
				t.Errorf("%s in %s: error\n got %v\nwant %s", tt.in, format, err, want)
			}
		}
	}
}

// TestLeapSecond checks that a leap second is reported as such, naming the
// line, and that a second of 60 anywhere else stays invalid.
func TestLeapSecond(t *testing.T) {
	const unsupported = "is a leap second; leap seconds are not supported"
	for _, tt := range []struct{ name, in, want string }{
		{"leap.csv", "user,timestamp\nu1,2016-12-31T23:59:59Z\nu1,2016-12-31T23:59:60Z\n",
			`traces: leap.csv:3:4: timestamp "2016-12-31T23:59:60Z" ` + unsupported},
		{"leap.csv", "user,timestamp\nu1,2015-06-30T23:59:60.5Z\n",
			`traces: leap.csv:2:4: timestamp "2015-06-30T23:59:60.5Z" ` + unsupported},
		{"leap.csv", "user,timestamp\nu1,2017-01-01T05:29:60+05:30\n",
			`traces: leap.csv:2:4: timestamp "2017-01-01T05:29:60+05:30" ` + unsupported},
		{"leap.csv", "user,timestamp\nu1,2016-12-31T18:59:60-05:00\n",
			`traces: leap.csv:2:4: timestamp "2016-12-31T18:59:60-05:00" ` + unsupported},
		{"leap.jsonl", `{"user":"u1","timestamp":"2016-12-31T23:59:60Z"}`,
			`traces: leap.jsonl:1:26: timestamp "2016-12-31T23:59:60Z" ` + unsupported},
		{"leap.yaml", "- {user: u1, timestamp: 2016-12-31T23:59:60Z}\n",
			`traces: leap.yaml:1:25: timestamp "2016-12-31T23:59:60Z" ` + unsupported},
		// Not the last minute of a month in UTC: no leap second, invalid.
		{"leap.csv", "user,timestamp\nu1,2024-01-01T00:00:60Z\n",
			`traces: leap.csv:2:4: invalid RFC 3339 timestamp "2024-01-01T00:00:60Z"`},
		{"leap.csv", "user,timestamp\nu1,2016-12-31T23:59:60+01:00\n",
			`traces: leap.csv:2:4: invalid RFC 3339 timestamp "2016-12-31T23:59:60+01:00"`},
		{"leap.csv", "user,timestamp\nu1,2016-12-31T23:59:61Z\n",
			`traces: leap.csv:2:4: invalid RFC 3339 timestamp "2016-12-31T23:59:61Z"`},
		{"leap.csv", "user,timestamp\nu1,2016-12-31T23:59:60Zx\n",
			`traces: leap.csv:2:4: invalid RFC 3339 timestamp "2016-12-31T23:59:60Zx"`},
	} {
		_, err := readAll(t, tt.name, tt.in, Options{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: error\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
	// Lenient reading skips it and goes on.
	var skipped []string
	got, err := readAll(t, "leap.csv", "user,timestamp\nu1,2016-12-31T23:59:59Z\nu1,2016-12-31T23:59:60Z\nu1,2017-01-01T00:00:00Z\n",
		Options{Lenient: true, OnSkip: func(err error) { skipped = append(skipped, err.Error()) }})
	if err != nil || len(got) != 2 || got[1].Time != 1483228800e9 || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "traces: leap.csv:3:4: ") {
		t.Errorf("lenient: %v, %v, skipped %q", got, err, skipped)
	}
}

// TestYAMLSizeCap checks the error for a YAML trace over the size cap: it
// states the cap and points to the formats that are read as a stream.
func TestYAMLSizeCap(t *testing.T) {
	const advice = "; YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream"
	in := "- {user: u1, timestamp: 1}\n- {user: u1, timestamp: 2}\n"
	for _, tt := range []struct {
		max  int64
		want string
	}{
		{40, "traces: t.yaml: YAML trace larger than 40 bytes" + advice},
		{int64(len(in)) - 1, "traces: t.yaml: YAML trace larger than 53 bytes" + advice},
		{2 << 10, ""},
	} {
		for _, name := range []string{"t.yaml", "t.yaml.gz"} {
			data := in
			if name == "t.yaml.gz" {
				data = string(gzipBytes(t, []byte(in)))
			}
			got, err := readAll(t, "t.yaml", data, Options{MaxYAMLBytes: tt.max})
			if tt.want == "" {
				if err != nil || len(got) != 2 {
					t.Errorf("%s under the cap %d: %v, %v", name, tt.max, got, err)
				}
				continue
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("%s over the cap %d: error\n got %v\nwant %s", name, tt.max, err, tt.want)
			}
		}
	}
	// The default cap, on an input that would never end.
	endlessYAML := newEndless(' ', "")
	defer close(endlessYAML.stop)
	_, err := NewReader(io.MultiReader(strings.NewReader(in), endlessYAML), "big.yaml", Options{})
	if want := "traces: big.yaml: YAML trace larger than 16 MiB" + advice; err == nil || err.Error() != want {
		t.Errorf("default cap: error\n got %v\nwant %s", err, want)
	}
}

// TestSkipOtherUsers: a read that passes over other users' plain records
// gives the users' events as a whole read does, lines and all, whatever
// the user's column, quotes and line ends around them.
func TestSkipOtherUsers(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,user,path\n")
	for i := range 3000 {
		user := fmt.Sprintf("u%d", i%13)
		switch i % 97 {
		case 5:
			user = `"u1"` // quoted: read the general way
		case 6:
			user = "u1,x" // too many fields: read the general way
		}
		end := "\n"
		if i%7 == 0 {
			end = "\r\n"
		}
		fmt.Fprintf(&b, "%d,%s,/p%d%s", i, user, i%3, end)
	}
	in := b.String()
	users := []string{"u1", "u12"}
	all, errAll := readAll(t, "t.csv", in, Options{Lenient: true})
	var want []rec
	for _, e := range all {
		if slices.Contains(users, e.User) {
			want = append(want, e)
		}
	}
	r, err := NewReader(strings.NewReader(in), "t.csv", Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != nil { // the first record, which sets how times read
		t.Fatal(err)
	}
	r.SkipOtherUsers(users)
	got, errGot := drain(r)
	got = slices.DeleteFunc(got, func(e rec) bool { return !slices.Contains(users, e.User) })
	if errAll != nil || errGot != nil {
		t.Fatalf("errors %v, %v", errAll, errGot)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-whole read +skipping):\n%s", diff)
	}
}

// TestTruncatedGzip: a gzip-compressed trace cut short reports the early
// end of the compressed stream, naming the file, after the events read
// whole before it; never a parse error in a line cut in the middle, nor a
// line cut short read as a good one ("u1,12" as "u1,1").
func TestTruncatedGzip(t *testing.T) {
	var text = map[string]string{"csv": "user,timestamp\n", "jsonl": "", "yaml": ""}
	for i := range 400 {
		text["csv"] += fmt.Sprintf("u%d,%d\n", i%7, 1000+i)
		text["jsonl"] += fmt.Sprintf(`{"user":"u%d","timestamp":%d}`+"\n", i%7, 1000+i)
		text["yaml"] += fmt.Sprintf("- {user: u%d, timestamp: %d}\n", i%7, 1000+i)
	}
	for ext, in := range text {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(in))
		zw.Close()
		name := "trace." + ext + ".gz"
		full, err := readAll(t, name, z.String(), Options{})
		if err != nil || len(full) != 400 {
			t.Fatalf("%s whole: %d events, %v", name, len(full), err)
		}
		for _, cut := range []int{11, z.Len() / 3, z.Len() / 2, z.Len() - 9, z.Len() - 1} {
			for _, lenient := range []bool{false, true} {
				var got []rec
				r, err := NewReader(strings.NewReader(z.String()[:cut]), name, Options{Lenient: lenient, OnSkip: func(err error) {
					t.Errorf("%s cut at %d: skipped %v", name, cut, err)
				}})
				if err == nil {
					got, err = drain(r)
				}
				var pe *ParseError
				if !errors.Is(err, ErrTruncatedGzip) || errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "traces: "+name+": unexpected EOF in the gzip-compressed stream") {
					t.Errorf("%s cut at %d of %d (lenient %v): %v", name, cut, z.Len(), lenient, err)
				}
				if len(got) > len(full) || !slices.EqualFunc(got, full[:len(got)], func(a, b rec) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
					t.Errorf("%s cut at %d: the events read are not the trace's first %d", name, cut, len(got))
				}
			}
		}
	}
}
