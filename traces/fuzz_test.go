package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ratesim/ratesim/traces/examples"
)

// The fuzz targets check, for any input, that a reader never panics, that
// each record gives an event or an error, that events are well formed, and
// that writing the events and reading them back gives the same events.
// Their seeds are the bundled examples and the bad inputs of the tests;
// testdata/fuzz holds the corpus found since.

func FuzzCSV(f *testing.F)   { fuzzReader(f, CSV, ".csv") }
func FuzzYAML(f *testing.F)  { fuzzReader(f, YAML, ".yaml") }
func FuzzJSONL(f *testing.F) { fuzzReader(f, JSONL, ".jsonl") }

var fuzzSeeds = map[Format][]string{
	CSV: {
		"user,timestamp\nu1,1\nu2\n",
		"user,timestamp,cost,endpoint\nu1,0.4,2,\"/a,\"\"b\"\"\"\nu2,1e3,,\"x\ny\"\n",
		"\xef\xbb\xbfuser,timestamp\r\nu1,7\r\n\"u2\r\n\",8\r\n",
		"user,timestamp\nu1,2024-01-01T00:00:07.5+01:00\nu1,5\n",
		"timestamp,user,cost\n-1.5,\xff,0\n9223372037,u,1\n",
		"user,timestamp\nu1,\"1\"x\n\"open,2\n",
		"user,timestamp\nu1,2016-12-31T23:59:60Z\nu1,2262-04-11T23:47:16.854775807Z\nu1,1677-09-21T00:12:43.145224191Z\n",
	},
	YAML: {
		"requests:\n- {user: u1, timestamp: 7}\n- user: u2\n  timestamp: 1.5\n  cost: 2\n  endpoint: /x\n",
		"- {user: u1, timestamp: 1}\n---\n- {user: u1, timestamp: 2}\n",
		"- &a {user: u1, timestamp: 1}\n- *a\n- {user: u1, user: u2, timestamp: 1}\n- {<<: *a}\n",
		"- {user: \"\\x85\\u2028\", timestamp: \"2024-01-01T00:00:00Z\", \"k\": ~}\n",
		"a: &a [1, 2]\nb: [*a, *a]\n",
	},
	JSONL: {
		`{"user":"u1","timestamp":7,"cost":2,"endpoint":"/a"}` + "\n" + `{"user":"u1","timestamp":` + "\n",
		`{"user":"\u00e9\n","timestamp":"1.5","o":{"a":[1,true,null]},"n":-0.5e-3}` + "\n\n",
		`{"user":"u\ud800","timestamp":1}` + "\n" + `{"user":7,"timestamp":"2024-01-01T00:00:00Z"}`,
		`{"user":"u1","timestamp":1,"user":"u2"}` + "\n" + `["u1",1]` + "\n" + `{"user":"u1","timestamp":1} x`,
	},
}

func fuzzReader(f *testing.F, format Format, ext string) {
	entries, _ := fs.ReadDir(examples.FS, ".")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			data, _ := fs.ReadFile(examples.FS, e.Name())
			f.Add(data, uint8(0))
		}
	}
	for i, s := range fuzzSeeds[format] {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, unitSel uint8) {
		unit := []time.Duration{time.Second, time.Millisecond, time.Microsecond, time.Nanosecond}[unitSel%4]
		opts := Options{Format: format, Unit: unit, MaxYAMLBytes: 1 << 20}
		strict, strictErr := fuzzRead(t, data, opts)
		if format == CSV {
			// The fast path for plain records reads exactly what the
			// general one does: every field, line and error.
			slow, slowErr := fuzzReadSlow(t, data, opts)
			if fmt.Sprint(slowErr) != fmt.Sprint(strictErr) || !cmp.Equal(slow, strict, cmp.AllowUnexported(Event{}, attr{}, fuzzResult{})) {
				t.Fatalf("fast path differs:\n%v\n%+v\ngeneral path:\n%v\n%+v", strictErr, strict, slowErr, slow)
			}
		}

		var skips []error
		opts.Lenient = true
		opts.OnSkip = func(err error) { skips = append(skips, err) }
		lenient, lenientErr := fuzzRead(t, data, opts)
		for _, err := range append(skips, strictErr, lenientErr) {
			checkError(t, err)
		}
		// Strict reading stops at the first bad record; lenient reading
		// gives the same events up to there, then skips it.
		if len(strict.events) > len(lenient.events) {
			t.Fatalf("strict read %d events, lenient %d", len(strict.events), len(lenient.events))
		}
		for i := range strict.events {
			if !sameEvent(&strict.events[i], &lenient.events[i]) {
				t.Fatalf("event %d: strict %+v, lenient %+v", i, strict.events[i], lenient.events[i])
			}
		}
		var pe *ParseError
		if errors.As(strictErr, &pe) && !pe.fatal {
			if len(skips) == 0 || skips[0].Error() != strictErr.Error() {
				t.Fatalf("strict error %v, lenient skips %v", strictErr, skips)
			}
		}
		if format == JSONL && lenientErr == nil {
			// One event or one error per non-blank line.
			lines := 0
			for l := range bytes.SplitSeq(bytes.TrimPrefix(data, utf8BOM), []byte("\n")) {
				if len(bytes.Trim(l, " \t\r")) > 0 { // JSON's white space
					lines++
				}
			}
			if got := len(lenient.events) + len(skips); got != lines {
				t.Fatalf("%d non-blank lines gave %d events and %d errors", lines, len(lenient.events), len(skips))
			}
		}
		for i := range lenient.events {
			checkEvent(t, &lenient.events[i], lenient.rfc3339, unit)
		}
		if len(lenient.events) == 0 {
			return
		}
		// Write, read back, compare.
		var out bytes.Buffer
		w := NewWriter(&out, format, unit)
		if lenient.rfc3339 {
			w.SetTimeStyle(TimeRFC3339)
		}
		for i := range lenient.events {
			if err := w.Write(&lenient.events[i]); err != nil {
				t.Fatalf("Write(%+v): %v", lenient.events[i], err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		back, err := fuzzRead(t, out.Bytes(), Options{Format: format, Unit: unit})
		if err != nil {
			t.Fatalf("reading back:\n%s\nerror: %v", out.Bytes(), err)
		}
		if len(back.events) != len(lenient.events) {
			t.Fatalf("wrote %d events, read back %d:\n%s", len(lenient.events), len(back.events), out.Bytes())
		}
		for i := range back.events {
			if !sameEvent(&lenient.events[i], &back.events[i]) {
				t.Fatalf("event %d: wrote %+v, read back %+v\n%s", i, lenient.events[i], back.events[i], out.Bytes())
			}
		}
	})
}

type fuzzResult struct {
	events  []Event
	rfc3339 bool
}

// fuzzRead reads all events, deep copies, and the error that ended the
// read (nil at io.EOF).
func fuzzRead(t *testing.T, data []byte, opts Options) (fuzzResult, error) {
	return fuzzReadWith(t, data, opts, false)
}

// fuzzReadSlow is fuzzRead with the CSV fast path off.
func fuzzReadSlow(t *testing.T, data []byte, opts Options) (fuzzResult, error) {
	return fuzzReadWith(t, data, opts, true)
}

func fuzzReadWith(t *testing.T, data []byte, opts Options, noFast bool) (fuzzResult, error) {
	var res fuzzResult
	r, err := NewReader(bytes.NewReader(data), "fuzz", opts)
	if err != nil {
		return res, err
	}
	if r.csv != nil {
		r.csv.noFast = noFast
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			res.rfc3339 = r.RFC3339()
			return res, nil
		}
		if err != nil {
			res.rfc3339 = r.RFC3339()
			return res, err
		}
		res.events = append(res.events, cloneEvent(e))
	}
}

func cloneEvent(e *Event) Event {
	c := Event{
		User:     bytes.Clone(e.User),
		Time:     e.Time,
		TimeText: bytes.Clone(e.TimeText),
		Cost:     e.Cost,
		Line:     e.Line,
		costText: bytes.Clone(e.costText),
	}
	for i := range e.attrs {
		c.attrs = append(c.attrs, attr{e.attrs[i].name, bytes.Clone(e.attrs[i].value)})
	}
	return c
}

// sameEvent reports whether a and b are the same request: user, time,
// cost and attributes (names, values and order).
func sameEvent(a, b *Event) bool {
	if !bytes.Equal(a.User, b.User) || a.Time != b.Time || a.Cost != b.Cost || len(a.attrs) != len(b.attrs) {
		return false
	}
	for i := range a.attrs {
		if a.attrs[i].name != b.attrs[i].name || !bytes.Equal(a.attrs[i].value, b.attrs[i].value) {
			return false
		}
	}
	return true
}

func checkEvent(t *testing.T, e *Event, rfc bool, unit time.Duration) {
	t.Helper()
	if len(e.User) == 0 || !utf8.Valid(e.User) {
		t.Fatalf("line %d: bad user %q", e.Line, e.User)
	}
	if e.Cost < 1 {
		t.Fatalf("line %d: cost %d", e.Line, e.Cost)
	}
	if e.Line < 1 {
		t.Fatalf("line %d", e.Line)
	}
	var ns int64
	var ne numErr
	if rfc {
		ns, ne, _ = parseRFC3339(e.TimeText, time.UTC, false)
	} else {
		ns, ne = parseDecimal(e.TimeText, int64(unit), false)
	}
	if ne != numOK || ns != e.Time {
		t.Fatalf("line %d: time text %q is %d (%d), event has %d", e.Line, e.TimeText, ns, ne, e.Time)
	}
	for i := range e.attrs {
		if !utf8.Valid(e.attrs[i].value) || !utf8.Valid([]byte(e.attrs[i].name)) {
			t.Fatalf("line %d: attribute %q=%q not UTF-8", e.Line, e.attrs[i].name, e.attrs[i].value)
		}
	}
}

// checkError checks that a read error is a *ParseError naming the file, or
// an error prefixed "traces:".
func checkError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if !strings.HasPrefix(err.Error(), "traces: fuzz") {
		t.Fatalf("error without file name: %v", err)
	}
	var pe *ParseError
	if errors.As(err, &pe) && (pe.File != "fuzz" || pe.Line < 0 || pe.Column < 0 || pe.Msg == "") {
		t.Fatalf("bad ParseError %#v", pe)
	}
}
