// Package sfv parses Structured Field lists (RFC 8941, RFC 9651) for
// tests: lists of items whose bare items are strings, tokens,
// integers or booleans, with parameters. It follows the RFC's parsing
// algorithms, and refuses what the fields here never need (inner lists,
// decimals, byte sequences, dates, display strings) rather than skip it.
// It is stricter than the RFC in one way: a parameter given twice is an
// error, where the RFC keeps the last.
package sfv

import (
	"fmt"
	"strings"
)

// A Token is a Structured Field token, told apart from a string.
type Token string

// An Item is a bare item (a string, Token, int64 or bool) with its
// parameters in order.
type Item struct {
	Value  any
	Params []Param
}

// A Param is one parameter of an item.
type Param struct {
	Key   string
	Value any
}

// Get returns the value of the parameter key and whether it is there.
func (it Item) Get(key string) (any, bool) {
	for _, p := range it.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return nil, false
}

// ParseList parses a whole field value as a list.
func ParseList(s string) ([]Item, error) {
	p := &parser{s: s}
	p.skip(" ")
	var list []Item
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

type parser struct {
	s string
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("sf: %s at offset %d of %q", fmt.Sprintf(format, args...), p.i, p.s)
}

func (p *parser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) item() (Item, error) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		return Item{}, p.errorf("inner lists are not supported")
	}
	v, err := p.bareItem()
	if err != nil {
		return Item{}, err
	}
	it := Item{Value: v}
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		p.skip(" ")
		key, err := p.key()
		if err != nil {
			return Item{}, err
		}
		if _, dup := it.Get(key); dup {
			return Item{}, p.errorf("parameter %q given twice", key)
		}
		var val any = true
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if val, err = p.bareItem(); err != nil {
				return Item{}, err
			}
		}
		it.Params = append(it.Params, Param{key, val})
	}
	return it, nil
}

func (p *parser) key() (string, error) {
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

func (p *parser) bareItem() (any, error) {
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

func (p *parser) integer() (int64, error) {
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

func (p *parser) str() (string, error) {
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

func (p *parser) token() Token {
	start := p.i
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0) {
			break
		}
		p.i++
	}
	return Token(p.s[start:p.i])
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLcAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLcAlpha(c) || 'A' <= c && c <= 'Z' }
