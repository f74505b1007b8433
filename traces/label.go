package traces

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// A Label says who sent a request: a legitimate client, an abusive one,
// or neither is known.
type Label uint8

// The labels.
const (
	Unlabelled Label = iota
	Legit
	Abusive
)

// NumLabels is the number of labels.
const NumLabels = 3

// String returns "unlabelled", "legit" or "abusive".
func (l Label) String() string {
	switch l {
	case Legit:
		return "legit"
	case Abusive:
		return "abusive"
	}
	return "unlabelled"
}

// A Labeler labels requests: by an expression over their fields for the
// legitimate ones and one for the abusive ones (either alone labels the
// rest the other), or by a column that says legit or abusive.
type Labeler struct {
	legit, abusive *Match
	column         string
}

// NewLabeler returns the labeler of --legit, --abusive or --labels
// (column); every file an expression names (file:PATH) is read with
// readFile. All empty: nil, no labels.
func NewLabeler(legit, abusive, column string, readFile func(string) ([]byte, error)) (*Labeler, error) {
	if legit == "" && abusive == "" && column == "" {
		return nil, nil
	}
	if column != "" && (legit != "" || abusive != "") {
		return nil, &ValueError{"--labels reads the labels from a column: it excludes --legit and --abusive"}
	}
	l := &Labeler{column: column}
	var err error
	if legit != "" {
		if l.legit, err = ParseMatch(legit, readFile); err != nil {
			return nil, &ValueError{"--legit: " + err.(*ValueError).msg}
		}
	}
	if abusive != "" {
		if l.abusive, err = ParseMatch(abusive, readFile); err != nil {
			return nil, &ValueError{"--abusive: " + err.(*ValueError).msg}
		}
	}
	return l, nil
}

// Label returns the label of ev, whose limiter key is key. A field the
// expressions name that ev lacks is an error naming its line, and so is
// a request both expressions match.
func (l *Labeler) Label(ev *Event, key []byte) (Label, error) {
	if l.column != "" {
		v, ok := ev.Attr(l.column)
		if !ok {
			return 0, l.missing(ev, l.column)
		}
		switch strings.ToLower(string(bytes.TrimSpace(v))) {
		case "legit", "legitimate":
			return Legit, nil
		case "abusive", "abuse":
			return Abusive, nil
		}
		return Unlabelled, nil
	}
	var isLegit, isAbusive bool
	if l.legit != nil {
		ok, field, err := l.legit.Matches(ev, key)
		if err != nil {
			return 0, l.missing(ev, field)
		}
		isLegit = ok
	}
	if l.abusive != nil {
		ok, field, err := l.abusive.Matches(ev, key)
		if err != nil {
			return 0, l.missing(ev, field)
		}
		isAbusive = ok
	}
	switch {
	case l.abusive == nil:
		isAbusive = !isLegit
	case l.legit == nil:
		isLegit = !isAbusive
	}
	switch {
	case isLegit && isAbusive:
		return 0, &ParseError{File: ev.File, Line: ev.Line, Msg: fmt.Sprintf("the request matches both --legit %s and --abusive %s", quote([]byte(l.legit.text)), quote([]byte(l.abusive.text)))}
	case isLegit:
		return Legit, nil
	case isAbusive:
		return Abusive, nil
	}
	return Unlabelled, nil
}

func (l *Labeler) missing(ev *Event, field string) error {
	return &ParseError{File: ev.File, Line: ev.Line, Msg: fmt.Sprintf("no %q field to label the request by%s", field, ev.fieldList())}
}

// A Match is a condition on a request's fields:
//
//	FIELD=TEXT  FIELD!=TEXT            equal, or not
//	FIELD<N  FIELD<=N  FIELD>N  FIELD>=N  compared as exact decimals; a
//	                                   value that is no number (-) meets none
//	FIELD~REGEXP  FIELD!~REGEXP        an RE2 regular expression matches, or not
//	FIELD in file:PATH                 one of the file's lines (blank lines and
//	                                   # comments aside); an IP address also
//	                                   within a CIDR prefix of them
//	A and B, A or B, not A, (A)
//
// A TEXT, REGEXP or PATH with spaces is put in single or double quotes.
// FIELD is any field of the trace, or key: the limiter key.
type Match struct {
	text string
	root *node
}

// node is one operation of a Match.
type node struct {
	op          string // and, or, not, =, !=, <, <=, >, >=, ~, !~, in
	left, right *node
	field       string
	value       string
	num         int64 // the number compared with, in billionths
	re          *regexp.Regexp
	set         map[string]struct{}
	prefixes    []netip.Prefix
}

// ParseMatch parses a condition (see Match); the files it names are read
// with readFile.
func ParseMatch(text string, readFile func(string) ([]byte, error)) (*Match, error) {
	p := &matchParser{s: text, readFile: readFile}
	n, err := p.or()
	if err == nil && p.skip() < len(p.s) {
		err = p.errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return nil, err
	}
	return &Match{text: text, root: n}, nil
}

// String returns the condition as given.
func (m *Match) String() string { return m.text }

// Matches reports whether ev, whose limiter key is key, meets the
// condition; err is not nil when ev lacks a field it names (field).
func (m *Match) Matches(ev *Event, key []byte) (ok bool, field string, err error) {
	return m.root.eval(ev, key)
}

var errNoField = fmt.Errorf("no such field")

func (n *node) eval(ev *Event, key []byte) (bool, string, error) {
	switch n.op {
	case "and", "or":
		a, f, err := n.left.eval(ev, key)
		if err != nil {
			return false, f, err
		}
		if a == (n.op == "or") {
			return a, "", nil
		}
		return n.right.eval(ev, key)
	case "not":
		a, f, err := n.left.eval(ev, key)
		return !a, f, err
	}
	var v []byte
	if n.field == "key" && key != nil {
		v = key
	} else {
		var ok bool
		if v, ok = ev.Attr(n.field); !ok {
			return false, n.field, errNoField
		}
	}
	switch n.op {
	case "=":
		return string(v) == n.value, "", nil
	case "!=":
		return string(v) != n.value, "", nil
	case "~":
		return n.re.Match(v), "", nil
	case "!~":
		return !n.re.Match(v), "", nil
	case "in":
		if _, ok := n.set[string(v)]; ok {
			return true, "", nil
		}
		if len(n.prefixes) > 0 {
			if a, err := netip.ParseAddr(string(v)); err == nil {
				for _, p := range n.prefixes {
					if p.Contains(a.Unmap()) {
						return true, "", nil
					}
				}
			}
		}
		return false, "", nil
	}
	x, e := parseDecimal(bytes.TrimSpace(v), 1e9, false)
	if e != numOK {
		return false, "", nil // not a number: no comparison holds
	}
	switch n.op {
	case "<":
		return x < n.num, "", nil
	case "<=":
		return x <= n.num, "", nil
	case ">":
		return x > n.num, "", nil
	}
	return x >= n.num, "", nil
}

// matchParser parses a Match by recursive descent.
type matchParser struct {
	s        string
	i        int
	readFile func(string) ([]byte, error)
}

func (p *matchParser) errorf(format string, args ...any) error {
	return &ValueError{fmt.Sprintf("%q: ", p.s) + fmt.Sprintf(format, args...)}
}

// skip passes over spaces and returns the offset.
func (p *matchParser) skip() int {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	return p.i
}

// word reports whether the keyword w comes next, and takes it.
func (p *matchParser) word(w string) bool {
	p.skip()
	rest := p.s[p.i:]
	if len(rest) >= len(w) && strings.EqualFold(rest[:len(w)], w) && (len(rest) == len(w) || rest[len(w)] == ' ' || rest[len(w)] == '(' || rest[len(w)] == '\t') {
		p.i += len(w)
		return true
	}
	return false
}

func (p *matchParser) or() (*node, error) {
	n, err := p.and()
	for err == nil && p.word("or") {
		var r *node
		if r, err = p.and(); err == nil {
			n = &node{op: "or", left: n, right: r}
		}
	}
	return n, err
}

func (p *matchParser) and() (*node, error) {
	n, err := p.unary()
	for err == nil && p.word("and") {
		var r *node
		if r, err = p.unary(); err == nil {
			n = &node{op: "and", left: n, right: r}
		}
	}
	return n, err
}

func (p *matchParser) unary() (*node, error) {
	if p.word("not") {
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: "not", left: n}, nil
	}
	if p.skip() < len(p.s) && p.s[p.i] == '(' {
		p.i++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.skip() >= len(p.s) || p.s[p.i] != ')' {
			return nil, p.errorf("a ( has no closing )")
		}
		p.i++
		return n, nil
	}
	return p.cond()
}

// cond parses FIELD OP VALUE.
func (p *matchParser) cond() (*node, error) {
	start := p.skip()
	for p.i < len(p.s) && (isVarByte(p.s[p.i]) || p.s[p.i] == '.' || p.s[p.i] == '-' || p.s[p.i] == ':') {
		p.i++
	}
	field := p.s[start:p.i]
	if field == "" {
		if start >= len(p.s) {
			return nil, p.errorf("a condition is missing at its end")
		}
		return nil, p.errorf("expected a field name at %q", p.s[start:])
	}
	n := &node{field: field}
	p.skip()
	rest := p.s[p.i:]
	switch {
	case p.word("in"):
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		path, ok := strings.CutPrefix(v, "file:")
		if !ok {
			return nil, p.errorf("%s in %s: want file:PATH, a file of one value per line", field, v)
		}
		return p.inFile(n, path)
	case strings.HasPrefix(rest, "!~"), strings.HasPrefix(rest, "!="), strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, ">="):
		n.op = rest[:2]
	case strings.HasPrefix(rest, "~"), strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, ">"):
		n.op = rest[:1]
	default:
		return nil, p.errorf("expected =, !=, <, <=, >, >=, ~, !~ or in after %s", field)
	}
	p.i += len(n.op)
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	n.value = v
	switch n.op {
	case "~", "!~":
		if n.re, err = regexp.Compile(v); err != nil {
			return nil, p.errorf("%s%s%s: %v", field, n.op, v, err)
		}
	case "<", "<=", ">", ">=":
		num, e := parseDecimal([]byte(v), 1e9, false)
		if e != numOK {
			return nil, p.errorf("%s%s%s: %q is not a number (with at most 9 decimals)", field, n.op, v, v)
		}
		n.num = num
	}
	return n, nil
}

// value parses a value: quoted, or a word up to a space or a ).
func (p *matchParser) value() (string, error) {
	p.skip()
	if p.i >= len(p.s) {
		return "", p.errorf("a value is missing at its end")
	}
	if q := p.s[p.i]; q == '\'' || q == '"' {
		end := strings.IndexByte(p.s[p.i+1:], q)
		if end < 0 {
			return "", p.errorf("a quote has no closing %c", q)
		}
		v := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return v, nil
	}
	// A ) ends the value unless the value opened it: (?i)bot is one.
	start, depth := p.i, 0
	for p.i < len(p.s) && p.s[p.i] != ' ' && p.s[p.i] != '\t' && (p.s[p.i] != ')' || depth > 0) {
		switch p.s[p.i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// inFile reads the set of FIELD in file:PATH.
func (p *matchParser) inFile(n *node, path string) (*node, error) {
	n.op = "in"
	if p.readFile == nil {
		return nil, p.errorf("no file can be read here")
	}
	data, err := p.readFile(path)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	n.set = map[string]struct{}{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		n.set[line] = struct{}{}
		if strings.Contains(line, "/") {
			if pr, err := netip.ParsePrefix(line); err == nil {
				n.prefixes = append(n.prefixes, pr.Masked())
			}
		}
	}
	return n, nil
}
