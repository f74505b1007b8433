package headers_test

import (
	"fmt"
	"strings"
	"testing"
)

// This file holds a parser of Structured Field lists (RFC 8941, RFC 9651)
// for the tests: lists of items whose bare items are strings, tokens,
// integers or booleans, with parameters. It follows the RFC's parsing
// algorithms, and refuses what the fields here never need (inner lists,
// decimals, byte sequences, dates, display strings) rather than skip it.
// It is stricter than the RFC in one way: a parameter given twice is an
// error, where the RFC keeps the last.

// An sfToken is a Structured Field token, told apart from a string.
type sfToken string

// An sfItem is a bare item (a string, sfToken, int64 or bool) with its
// parameters in order.
type sfItem struct {
	value  any
	params []sfParam
}

type sfParam struct {
	key   string
	value any
}

// param returns the value of the parameter key and whether it is there.
func (it sfItem) param(key string) (any, bool) {
	for _, p := range it.params {
		if p.key == key {
			return p.value, true
		}
	}
	return nil, false
}

// parseSFList parses a whole field value as a list.
func parseSFList(s string) ([]sfItem, error) {
	p := &sfParser{s: s}
	p.skip(" ")
	var list []sfItem
	for p.i < len(p.s) {
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		list = append(list, it)
		p.skip(" \t")
		if p.i == len(p.s) {
			return list, nil
		}
		if p.s[p.i] != ',' {
			return nil, p.errorf("want ',' after a list member")
		}
		p.i++
		p.skip(" \t")
		if p.i == len(p.s) {
			return nil, p.errorf("trailing comma")
		}
	}
	return list, nil
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) errorf(format string, args ...any) error {
	return fmt.Errorf("sf: %s at offset %d of %q", fmt.Sprintf(format, args...), p.i, p.s)
}

func (p *sfParser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sfParser) item() (sfItem, error) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		return sfItem{}, p.errorf("inner lists are not supported")
	}
	v, err := p.bareItem()
	if err != nil {
		return sfItem{}, err
	}
	it := sfItem{value: v}
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		p.skip(" ")
		key, err := p.key()
		if err != nil {
			return sfItem{}, err
		}
		if _, dup := it.param(key); dup {
			return sfItem{}, p.errorf("parameter %q given twice", key)
		}
		var val any = true
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if val, err = p.bareItem(); err != nil {
				return sfItem{}, err
			}
		}
		it.params = append(it.params, sfParam{key, val})
	}
	return it, nil
}

func (p *sfParser) key() (string, error) {
	start := p.i
	if p.i == len(p.s) || !(isLcAlpha(p.s[p.i]) || p.s[p.i] == '*') {
		return "", p.errorf("want a key")
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(isLcAlpha(c) || isDigit(c) || strings.IndexByte("_-.*", c) >= 0) {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) bareItem() (any, error) {
	if p.i == len(p.s) {
		return nil, p.errorf("want an item")
	}
	switch c := p.s[p.i]; {
	case c == '-' || isDigit(c):
		return p.integer()
	case c == '"':
		return p.str()
	case c == '*' || isAlpha(c):
		return p.token(), nil
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return p.s[p.i-1] == '1', nil
		}
		return nil, p.errorf("bad boolean")
	}
	return nil, p.errorf("unsupported or bad item")
}

func (p *sfParser) integer() (int64, error) {
	sign := int64(1)
	if p.s[p.i] == '-' {
		sign = -1
		p.i++
	}
	start := p.i
	var n int64
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		if p.i-start == 15 {
			return 0, p.errorf("integer of more than 15 digits")
		}
		n = n*10 + int64(p.s[p.i]-'0')
		p.i++
	}
	if p.i == start {
		return 0, p.errorf("want a digit")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		return 0, p.errorf("decimals are not supported")
	}
	return sign * n, nil
}

func (p *sfParser) str() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				return "", p.errorf("bad escape")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", p.errorf("byte %#x in a string", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *sfParser) token() sfToken {
	start := p.i
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0) {
			break
		}
		p.i++
	}
	return sfToken(p.s[start:p.i])
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLcAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLcAlpha(c) || 'A' <= c && c <= 'Z' }

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
		list, err := parseSFList(tc.in)
		if err != nil {
			t.Errorf("parseSFList(%q): %v", tc.in, err)
			continue
		}
		if got := formatSF(list); got != tc.want {
			t.Errorf("parseSFList(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	bad := []string{
		`"a",`, `"a" "b"`, `"a";Q=1`, `"a";q=1;q=2`, `"a";q=1.5`, `"a";q=1000000000000000`,
		`"a\x"`, `"unterminated`, "\"tab\there\"", `(1 2)`, `:AAA=:`, `"a";q=`, `"a";=1`, `"a" ;q=1`,
		`"a";q=-`, `,"a"`, `"é"`, `1;q=@`,
	}
	for _, in := range bad {
		if list, err := parseSFList(in); err == nil {
			t.Errorf("parseSFList(%q) = %s, want an error", in, formatSF(list))
		}
	}
}

// formatSF writes a parsed list for comparison, strings quoted without
// escapes and tokens bare.
func formatSF(list []sfItem) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range list {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeBare(&b, it.value)
		for _, p := range it.params {
			b.WriteString(";" + p.key + "=")
			writeBare(&b, p.value)
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
