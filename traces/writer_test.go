package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// roundTrip reads data, writes its events as format f (times in the
// reader's unit, or RFC 3339 when the trace had those), and reads them
// back.
func roundTrip(t testing.TB, data []byte, name string, opts Options, f Format) []rec {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), name, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewWriter(&out, f, r.Unit())
	rfc := false
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if r.RFC3339() && !rfc {
			rfc = true
			w.SetTimeStyle(TimeRFC3339)
		}
		if err := w.Write(e); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, "out."+f.String(), out.String(), Options{Unit: opts.Unit})
	if err != nil {
		t.Fatalf("reading back %s:\n%s\nerror: %v", f, out.String(), err)
	}
	return got
}

// stripText drops what a round trip need not keep: the time text and the
// line numbers.
func stripText(rs []rec) []rec {
	out := make([]rec, len(rs))
	for i, r := range rs {
		r.Text, r.Line = "", 0
		out[i] = r
	}
	return out
}

func TestWriterRoundTrip(t *testing.T) {
	in := "user,timestamp,cost,endpoint,note\n" +
		"u1,7,1,/a,plain\n" +
		"\"u,2\",0.4,3,/b,\"with \"\"quotes\"\", commas\"\n" +
		"u3,-1.25,1,/c,\"two\nlines\"\n" +
		"\"ü 4\",9223372036.854775807,2,/d,\"tab\there \r cr\"\n" +
		"true,0.000000001,1,/e,\"\x01 \x7f \u0085 \u2028 \ufeff\"\n" +
		"- x,1e3,1,null,~\n" +
		"'q',5,1,,\n"
	want, err := readAll(t, "in.csv", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{CSV, YAML, JSONL} {
		got := roundTrip(t, []byte(in), "in.csv", Options{}, f)
		if d := cmp.Diff(stripText(want), stripText(got)); d != "" {
			t.Errorf("%v (-want +got):\n%s", f, d)
		}
	}
	// Milliseconds and RFC 3339.
	for _, tt := range []struct {
		in   string
		opts Options
	}{
		{"user,timestamp\nu1,7000.5\nu1,-3\n", Options{Unit: time.Millisecond}},
		{"user,timestamp\nu1,2024-01-01T00:00:07.5+01:00\nu1,1969-12-31T23:59:59Z\n", Options{}},
	} {
		want, err := readAll(t, "in.csv", tt.in, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []Format{CSV, YAML, JSONL} {
			got := roundTrip(t, []byte(tt.in), "in.csv", tt.opts, f)
			if d := cmp.Diff(stripText(want), stripText(got)); d != "" {
				t.Errorf("%q as %v (-want +got):\n%s", tt.in, f, d)
			}
		}
	}
}

func TestWriterOutput(t *testing.T) {
	var e Event
	e.User, e.Time, e.Cost = []byte("u1"), 1500*int64(time.Millisecond), 1
	e.TimeText = []byte("1.50")
	e.SetAttrs("endpoint", "/a,b")
	tests := []struct {
		f     Format
		style TimeStyle
		want  string
	}{
		{CSV, TimeDecimal, "user,timestamp,endpoint\nu1,1.5,\"/a,b\"\n"},
		{CSV, TimeAsWritten, "user,timestamp,endpoint\nu1,1.50,\"/a,b\"\n"},
		{CSV, TimeRFC3339, "user,timestamp,endpoint\nu1,1970-01-01T00:00:01.5Z,\"/a,b\"\n"},
		{JSONL, TimeDecimal, `{"user":"u1","timestamp":1.5,"endpoint":"/a,b"}` + "\n"},
		{JSONL, TimeAsWritten, `{"user":"u1","timestamp":"1.50","endpoint":"/a,b"}` + "\n"},
		{YAML, TimeDecimal, `- {user: "u1", timestamp: 1.5, "endpoint": "/a,b"}` + "\n"},
		{YAML, TimeRFC3339, `- {user: "u1", timestamp: "1970-01-01T00:00:01.5Z", "endpoint": "/a,b"}` + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		w := NewWriter(&b, tt.f, 0)
		w.SetTimeStyle(tt.style)
		if err := w.Write(&e); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if b.String() != tt.want {
			t.Errorf("%v style %d:\n got %q\nwant %q", tt.f, tt.style, b.String(), tt.want)
		}
	}
	// A header alone, from SetColumns.
	var b bytes.Buffer
	w := NewWriter(&b, CSV, time.Millisecond)
	if err := w.SetColumns(true, "endpoint"); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if b.String() != "user,timestamp,cost,endpoint\n" {
		t.Errorf("header only: %q", b.String())
	}
}

func TestWriterErrors(t *testing.T) {
	mk := func(user string, cost int64, kv ...string) *Event {
		e := &Event{User: []byte(user), Cost: cost}
		e.SetAttrs(kv...)
		return e
	}
	for _, tt := range []struct {
		f    Format
		evs  []*Event
		want string
	}{
		{CSV, []*Event{mk("", 1)}, "traces: event with an empty user"},
		{JSONL, []*Event{mk("u\xff", 1)}, `traces: invalid UTF-8 in user: "u\xff"`},
		{YAML, []*Event{mk("u", 0)}, "traces: event cost 0 is not positive"},
		{CSV, []*Event{mk("u", 1), mk("u", 2)}, "traces: cost 2 but the CSV header has no cost column"},
		{CSV, []*Event{mk("u", 1, "a", "1"), mk("u", 1, "b", "2")}, `traces: attribute "b" is not a column of the CSV header`},
		{CSV, []*Event{mk("u", 1, "User", "x")}, `traces: attribute "User" clashes with a reserved CSV column`},
		{CSV, []*Event{mk("u", 1, "", "x")}, "traces: an attribute with an empty name cannot be a CSV column"},
		{CSV, []*Event{mk("u", 1, " a", "x")}, `traces: attribute " a" has surrounding spaces and cannot be a CSV column`},
		{JSONL, []*Event{mk("u", 1, "a", "1", "a", "2")}, `traces: duplicate attribute "a"`},
		{JSONL, []*Event{mk("u", 1, "user", "1")}, `traces: attribute named "user"`},
		{JSONL, []*Event{mk("u", 1, "a", "\xff")}, `traces: invalid UTF-8 in attribute "a"`},
	} {
		w := NewWriter(&bytes.Buffer{}, tt.f, 0)
		var err error
		for _, e := range tt.evs {
			if err = w.Write(e); err != nil {
				break
			}
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %s", tt.f, err, tt.want)
		}
	}
	w := NewWriter(&bytes.Buffer{}, CSV, 0)
	w.Write(mk("u", 1))
	if err := w.SetColumns(false); err == nil {
		t.Errorf("SetColumns after Write: no error")
	}
	fw := NewWriter(failWriter{}, JSONL, 0)
	fw.Write(mk("u", 1))
	if err := fw.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Flush to a failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriterQuotesLeadingSpace: a CSV field that starts with a space or a
// tab is quoted, as the command line's CSV output does, since some readers
// trim an unquoted one; reading it back gives the exact bytes.
func TestWriterQuotesLeadingSpace(t *testing.T) {
	var e Event
	e.User, e.Time, e.Cost = []byte(" bob"), 2*int64(time.Second), 1
	e.SetAttrs("path", "\t/a")
	var b bytes.Buffer
	w := NewWriter(&b, CSV, 0)
	if err := w.Write(&e); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if want := "user,timestamp,path\n\" bob\",2,\"\t/a\"\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	r, err := NewReader(strings.NewReader(b.String()), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if path, _ := got.Attr("path"); string(got.User) != " bob" || string(path) != "\t/a" {
		t.Errorf("read back user %q path %q", got.User, path)
	}
}

// TestWriterJSONValid: JSON Lines output is valid JSON, with control
// characters and the line separators JavaScript would break on escaped.
func TestWriterJSONValid(t *testing.T) {
	var e Event
	e.User, e.Time, e.Cost = []byte("ab\u2028"), int64(time.Second), 1
	e.SetAttrs("path", "\x01/\"x\"")
	var b bytes.Buffer
	w := NewWriter(&b, JSONL, 0)
	if err := w.Write(&e); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if !json.Valid(b.Bytes()) {
		t.Fatalf("invalid JSON: %q", b.String())
	}
	if want := `{"user":"ab\u2028","timestamp":1,"path":"\u0001/\"x\""}` + "\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
