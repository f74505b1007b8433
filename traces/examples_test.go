package traces

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ratesim/ratesim/traces/examples"
)

func readExample(t *testing.T, name string, opts Options) []rec {
	t.Helper()
	data, err := fs.ReadFile(examples.FS, name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), name, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return got
}

// key is what the simulator sees of an event.
type key struct {
	User string
	Time int64
	Cost int64
}

func keys(rs []rec, offset int64) []key {
	var out []key
	for _, r := range rs {
		out = append(out, key{r.User, r.Time - offset, r.Cost})
	}
	return out
}

func secs(user string, ts ...int64) []key {
	var out []key
	for _, s := range ts {
		out = append(out, key{user, s * int64(time.Second), 1})
	}
	return out
}

// TestExamplesSeed checks the bundled traces of the seed's walkthroughs.
func TestExamplesSeed(t *testing.T) {
	tests := map[string][]key{
		"fixed-window.csv":    append(secs("u1", 1, 2, 3, 4, 11), secs("u2", 4)...),
		"sliding-log.csv":     secs("u1", 1, 3, 5, 8, 12, 13),
		"sliding-counter.csv": secs("u1", 1, 3, 5, 8, 12, 13),
		"token-bucket.csv":    secs("u1", 0, 0, 0, 0, 5, 6),
		"leaky-bucket.csv":    secs("u1", 0, 0, 0, 0, 5, 6),
		"boundary.csv":        secs("u1", 7, 8, 9, 10, 11, 12),
	}
	for name, want := range tests {
		if d := cmp.Diff(want, keys(readExample(t, name, Options{}), 0)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

// TestExamplesSameTrace checks that the boundary trace gives the same
// events as CSV, YAML, JSON Lines, gzip, stdin, milliseconds and RFC 3339.
func TestExamplesSameTrace(t *testing.T) {
	want := secs("u1", 7, 8, 9, 10, 11, 12)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	csv, _ := fs.ReadFile(examples.FS, "boundary.csv")
	for _, tt := range []struct {
		name   string
		got    []rec
		offset int64
	}{
		{"boundary.csv", readExample(t, "boundary.csv", Options{}), 0},
		{"boundary.yaml", readExample(t, "boundary.yaml", Options{}), 0},
		{"boundary.jsonl", readExample(t, "boundary.jsonl", Options{}), 0},
		{"millis.csv", readExample(t, "millis.csv", Options{Unit: time.Millisecond}), 0},
		{"rfc3339.csv", readExample(t, "rfc3339.csv", Options{}), base},
		{"boundary.csv.gz", mustRead(t, "boundary.csv.gz", gzipBytes(t, csv)), 0},
		{"stdin", mustRead(t, "-", csv), 0},
	} {
		if d := cmp.Diff(want, keys(tt.got, tt.offset)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

func mustRead(t *testing.T, name string, data []byte) []rec {
	t.Helper()
	got, err := readAll(t, name, string(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestExamplesAll reads every bundled trace and checks it round-trips
// through every format.
func TestExamplesAll(t *testing.T) {
	entries, err := fs.ReadDir(examples.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 11 {
		t.Errorf("only %d bundled traces", len(entries))
	}
	for _, e := range entries {
		opts := Options{}
		if strings.HasPrefix(e.Name(), "millis") {
			opts.Unit = time.Millisecond
		}
		got := readExample(t, e.Name(), opts)
		if len(got) == 0 {
			t.Errorf("%s: no events", e.Name())
		}
		for _, f := range []Format{CSV, YAML, JSONL} {
			if f == CSV && attrsVary(got) {
				continue // a CSV header names one set of columns (the writer refuses others)
			}
			data, _ := fs.ReadFile(examples.FS, e.Name())
			back := roundTrip(t, data, e.Name(), opts, f)
			if d := cmp.Diff(stripText(got), stripText(back)); d != "" {
				t.Errorf("%s as %v (-want +got):\n%s", e.Name(), f, d)
			}
		}
	}
	multi := readExample(t, "multi-user.csv", Options{})
	users := map[string]bool{}
	costs := false
	for _, r := range multi {
		users[r.User] = true
		costs = costs || r.Cost > 1
		if len(r.Attrs) != 1 || !strings.HasPrefix(r.Attrs[0], "endpoint=/") {
			t.Errorf("multi-user.csv line %d: attrs %q", r.Line, r.Attrs)
		}
	}
	if len(users) < 3 || !costs {
		t.Errorf("multi-user.csv: %d users, costs %v", len(users), costs)
	}
}

// attrsVary reports whether the records have different attributes, as a
// log's lines may (a W3C log's #Fields: changing, extra fields on some).
func attrsVary(recs []rec) bool {
	names := func(r rec) string {
		var n []string
		for _, a := range r.Attrs {
			k, _, _ := strings.Cut(a, "=")
			n = append(n, k)
		}
		return strings.Join(n, ",")
	}
	for _, r := range recs {
		if names(r) != names(recs[0]) {
			return true
		}
	}
	return false
}
