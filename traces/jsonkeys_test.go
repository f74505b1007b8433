package traces

import (
	"fmt"
	"strings"
	"testing"
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
