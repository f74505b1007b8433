package traces

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/traces/examples"
)

// TestJSONDuplicateAfterSameRecords checks that a duplicate field is
// found in a record after records of the same fields, whose names are
// taken by their order: in the first fields, after a nested object,
// and past the 32 fields after which a map finds them.
func TestJSONDuplicateAfterSameRecords(t *testing.T) {
	many := func(dupAt int) string {
		var b strings.Builder
		b.WriteString(`{"user":"u1","timestamp":5`)
		for i := range 40 {
			name := fmt.Sprintf("f%d", i)
			if i == dupAt {
				name = "f3"
			}
			fmt.Fprintf(&b, `,"%s":%d`, name, i)
		}
		b.WriteString("}")
		return b.String()
	}
	for _, tc := range []struct{ same, bad, want string }{
		{`{"user":"u1","timestamp":5,"a":1,"b":2}`, `{"user":"u1","timestamp":5,"a":1,"a":2}`, `:4:34: duplicate field "a"`},
		{`{"user":"u1","timestamp":5,"a":1,"b":2}`, `{"user":"u1","timestamp":5,"a":1,"b":2,"a":3}`, `:4:40: duplicate field "a"`},
		{`{"user":"u1","r":{"x":1,"y":2},"timestamp":5}`, `{"user":"u1","r":{"x":1,"x":2},"timestamp":5}`, `:4:25: duplicate field "r.x"`},
		{`{"user":"u1","r":{"x":1},"r.x":2,"timestamp":5}`, `{"user":"u1","r":{"x":1},"r.x":2,"timestamp":5}`, `:1:26: duplicate field "r.x"`},
		{`{"user":"u1","timestamp":5,"a":1}`, `{"user":"u1","timestamp":5,"user":"u2"}`, `:4:28: duplicate field "user"`},
		{many(-1), many(35), `duplicate field "f3"`},
		{many(-1), many(5), `duplicate field "f3"`},
	} {
		text := strings.Repeat(tc.same+"\n", 3) + tc.bad + "\n"
		_, err := readLines(t, "t.jsonl", text, Options{Format: JSONL})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s after 3 of %s: %v, want %s", tc.bad, tc.same, err, tc.want)
		}
	}
}

// jsonShapeLines are records whose names a reader may have taken by
// their order from the record before: the same names reordered, escaped
// (\u0061 for a), at another depth or under another name, dotted,
// longer by a byte, non-ASCII, and malformed.
var jsonShapeLines = []string{
	`{"user":"u1","timestamp":5,"a":1,"r":{"x":"1","y":[2]}}`,
	`{"timestamp":5,"user":"u1","r":{"y":[2],"x":"1"},"a":1}`,
	`{"user":"u1","timestamp":5,"\u0061":1,"r":{"\u0078":"1","y":[2]}}`,
	`{"user":"u1","timestamp":5,"a":1,"r.x":"1","r":{"y":[2]}}`,
	`{"user":"u1","timestamp":5,"a":1,"r":{"x":"1","r":{"x":2}}}`,
	`{"user":"u1","timestamp":5,"a":1,"s":{"x":"1","y":[2]}}`,
	`{"user":"u1","timestamp":5,"a":1,"rr":{"x":"1","y":[2]}}`,
	`{"user":"u1","timestamp":5,"ab":1,"r":{"xy":"1","y":[2]}}`,
	`{"user":"u1","timestamp":5,"é":1,"r":{"x\"":"1","y":[2]}}`,
	`{"user":"u1","timestamp":5,"a":1,"r":{"x":"1","x":[2]}}`,
	`{"user":"u1","timestamp":5,"a":1,"r":{"x":"1","y":[2]}`,
	`{"user":"u1","timestamp":5,"a`,
	`{"user":"u1","timestamp":5,"a":"caf\u00e9 \"q\" \\ tab\tx"}`,
	`{"user":"u1","timestamp":5,"a":"12345678\"","b":"1234567"}`,
	// Keys whose texts before them (quotes, comma and colon included)
	// are 8 to 17 bytes long and differ late in them.
	`{"user":"u1","timestamp":5,"abcd":1}`,
	`{"user":"u1","timestamp":5,"abce":1}`,
	`{"user":"u1","timestamp":5,"abcdefghij":1}`,
	`{"user":"u1","timestamp":5,"abcdefghik":1}`,
	`{"user":"u1","timestamp":5,"abcdefghijkl":1,"z":2}`,
	`{"user":"u1","timestamp":5,"abcdefghijkm":1,"z":2}`,
	`{"user":"u1","timestamp":5,"abcdefghijklm":1}`,
	`{"user":"u1","timestamp":5,"abcdefghijkln":1}`,
	`{"user":"u1","timestamp":5,"abcdefghijkl":1}`,
	`{"user":"u1","timestamp":5,"abcdefghijkm":1}`,
	`{"user":"u1","timestamp":5,"abcdefghijk":{"q":1}}`,
	`{"user":"u1","timestamp":5,"abcdefghijk":["q":1}}`,
	`{"user":"u1","timestamp":5,"abcdefghijkl":{"q":1}}`,
	`{"user":"u1","timestamp":5,"abcdefghijkl":["q":1}}`,
	// Arrays, some of one plain string.
	`{"user":"u1","timestamp":5,"h":["Mozilla/5.0 (X11; Linux x86_64)"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":[""],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a","b"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a" ],"z":1}`,
	`{"user":"u1","timestamp":5,"h":[ "a"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a\"b"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["é"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a	b"],"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a"},"z":1}`,
	`{"user":"u1","timestamp":5,"h":["a"`,
	`{"user":"u1","timestamp":5,"h":[1],"z":1}`,
	`{"user":"u1","timestamp":5,"h":[],"z":1}`,
	`{"user":"u1","timestamp":5,"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"h":["x"]}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}`,
	`{"user":"u1","timestamp":5,"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"h":["x"]}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}`,
	`{"user":"u1","timestamp":5,"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"h":[7]}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}`,
}

// TestJSONRecordAloneOrAfterOthers checks that a JSON record reads the
// same (its event, or its error) whatever records came before it: alone,
// a record's field names are all scanned and looked up; after others,
// most are taken by their order. Caddy's and Traefik's logs and their
// bundled examples are read so too.
func TestJSONRecordAloneOrAfterOthers(t *testing.T) {
	sets := []struct {
		opts  Options
		lines []string
	}{
		{Options{Format: JSONL}, jsonShapeLines},
		{Options{Format: Caddy}, exampleLinesOf(t, "caddy.log")},
		{Options{Format: Traefik}, exampleLinesOf(t, "traefik-json.log")},
	}
	for _, tc := range logLines {
		if tc.line[0] == '{' || tc.line[0] == ' ' {
			sets = append(sets, struct {
				opts  Options
				lines []string
			}{tc.opts, []string{tc.line}})
		}
	}
	for _, set := range sets {
		var all []string
		for _, s := range sets {
			if s.opts.Format == set.opts.Format {
				all = append(all, s.lines...)
			}
		}
		for _, line := range set.lines {
			alone, errAlone := readLines(t, "t.log", line+"\n", set.opts)
			for _, before := range all {
				// Twice, so that the names are the last records'.
				text := before + "\n" + before + "\n" + line + "\n"
				evs, err := readLines(t, "t.log", text, set.opts)
				var other string
				if len(evs) == 3 {
					other = evs[2]
				}
				if len(evs) < 2 {
					continue // the record before fails
				}
				switch {
				case (errAlone == nil) != (err == nil):
					t.Errorf("%s after %s: %v, alone %v", line, before, err, errAlone)
				case errAlone != nil && strings.Replace(err.Error(), ":3:", ":1:", 1) != errAlone.Error():
					t.Errorf("%s after %s: %v, alone %v", line, before, err, errAlone)
				case errAlone == nil && other != alone[0]:
					t.Errorf("%s after %s:\n%s\nalone:\n%s", line, before, other, alone[0])
				}
			}
		}
	}
}

// exampleLinesOf returns the lines of a bundled example.
func exampleLinesOf(t *testing.T, name string) []string {
	data, err := examples.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}
