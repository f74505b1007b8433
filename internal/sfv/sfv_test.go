package sfv

import (
	"fmt"
	"strings"
	"testing"
)

// TestSFParser checks the test's own parser on values it must accept and
// values it must refuse.
func TestSFParser(t *testing.T) {
	good := []struct{ in, want string }{
		{`"default";q=100;w=60`, `["default";q=100;w=60]`},
		{`"burst";q=100;w=60,"daily";q=1000;w=86400`, `["burst";q=100;w=60 "daily";q=1000;w=86400]`},
		{` "a" ,	"b";r=0 `, `["a" "b";r=0]`},
		{`tok;x;y=?0;z=-5`, `[tok;x=true;y=false;z=-5]`},
		{`"q\"uo\\te"`, `["q"uo\te"]`},
		{`"x"; r=1`, `["x";r=1]`},
		{`a:b/c`, `[a:b/c]`},
		{`999999999999999`, `[999999999999999]`},
		{``, `[]`},
	}
	for _, tc := range good {
		list, err := ParseList(tc.in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", tc.in, err)
			continue
		}
		if got := formatSF(list); got != tc.want {
			t.Errorf("ParseList(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	bad := []string{
		`"a",`, `"a" "b"`, `"a";Q=1`, `"a";q=1;q=2`, `"a";q=1.5`, `"a";q=1000000000000000`,
		`"a\x"`, `"unterminated`, "\"tab\there\"", `(1 2)`, `:AAA=:`, `"a";q=`, `"a";=1`, `"a" ;q=1`,
		`"a";q=-`, `,"a"`, `"é"`, `1;q=@`,
	}
	for _, in := range bad {
		if list, err := ParseList(in); err == nil {
			t.Errorf("ParseList(%q) = %s, want an error", in, formatSF(list))
		}
	}
}

// formatSF writes a parsed list for comparison, strings quoted without
// escapes and tokens bare.
func formatSF(list []Item) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range list {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeBare(&b, it.Value)
		for _, p := range it.Params {
			b.WriteString(";" + p.Key + "=")
			writeBare(&b, p.Value)
		}
	}
	b.WriteByte(']')
	return b.String()
}

func writeBare(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(`"` + v + `"`)
	default:
		fmt.Fprint(b, v)
	}
}
