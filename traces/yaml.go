package traces

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// yamlParser reads YAML traces: a sequence of maps, or a map whose
// "requests" key holds one. YAML has no streaming form, so the whole text
// (at most the size cap) is parsed into a node tree first; events are then
// made one at a time from it, and each request's nodes are let go once
// read.
//
// Numbers are read from their text, never decoded as int or float. Aliases
// are resolved only where a request map or a scalar is expected, and merge
// keys (<<) are refused. Each alias counts against the size cap as the
// size of what it repeats, before any request is read: a 1 MB scalar
// repeated by 20,000 aliases is a 20 GB trace, refused as such, not a
// 1 MB one that writes 20 GB.
type yamlParser struct {
	c       *common
	items   []*yaml.Node
	i       int
	scratch []byte
	names   nameTable
}

func newYAMLParser(c *common, lr *lineReader, max int64) (*yamlParser, error) {
	data, err := readCapped(lr, max)
	if err != nil {
		return nil, fmt.Errorf("traces: %s: %w", c.file, err)
	}
	if int64(len(data)) > max {
		return nil, &ParseError{File: c.file, fatal: true, Msg: fmt.Sprintf(
			"YAML trace larger than %s; YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream",
			byteSize(max))}
	}
	p := &yamlParser{c: c}
	items, perr := p.load(data)
	if perr != nil && perr.Line == 0 {
		// The YAML package gives no line for some errors: find it.
		perr.Line, perr.Column = locate(data, perr.Msg)
	}
	if perr != nil {
		return nil, perr
	}
	if perr := p.checkExpansion(items, int64(len(data)), max); perr != nil {
		return nil, perr
	}
	p.items = items
	return p, nil
}

// checkExpansion refuses a trace whose aliases make it larger than max
// once expanded: every scalar counts its bytes, and every alias the size
// of what it stands for, aliases within it expanded in turn (each
// anchor's size is worked out once, so this takes time in proportion to
// the nodes, not to the expanded size). size is the size of the text, the
// most a trace without aliases can count.
func (p *yamlParser) checkExpansion(items []*yaml.Node, size, max int64) *ParseError {
	x := expansion{memo: map[*yaml.Node]int64{}, max: max}
	var total int64
	for _, n := range items {
		for _, a := range aliasesIn(n, nil) {
			total = min(total+x.size(a.Alias), max+1)
			if x.cycle != nil {
				return p.c.fatalf(x.cycle.Line, x.cycle.Column, "alias *%s is inside the node it refers to", x.cycle.Value)
			}
			if total+size > max {
				return p.c.fatalf(a.Line, a.Column,
					"YAML trace larger than %s once its aliases are expanded (each alias counts as the size of what it repeats); YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream",
					byteSize(max))
			}
		}
	}
	return nil
}

// aliasesIn appends to list the alias nodes in n, outside other aliases,
// in document order.
func aliasesIn(n *yaml.Node, list []*yaml.Node) []*yaml.Node {
	if n.Kind == yaml.AliasNode {
		return append(list, n)
	}
	for _, c := range n.Content {
		list = aliasesIn(c, list)
	}
	return list
}

// expansion works out the expanded sizes of the nodes aliases refer to.
type expansion struct {
	memo  map[*yaml.Node]int64 // the sizes known; -1 while being worked out
	max   int64                // sizes stop growing past max+1
	cycle *yaml.Node           // an alias found inside what it refers to
}

// size returns the bytes of n's scalars with its aliases expanded, at
// most x.max+1.
func (x *expansion) size(n *yaml.Node) int64 {
	if n == nil || x.cycle != nil {
		return 0
	}
	if s, ok := x.memo[n]; ok {
		if s < 0 {
			return 0 // the caller's alias is the cycle; see below
		}
		return s
	}
	x.memo[n] = -1
	s := int64(len(n.Value)) + 1 // a node counts a byte even when empty
	for _, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			if m, ok := x.memo[c.Alias]; ok && m < 0 {
				x.cycle = c
				return 0
			}
			s += x.size(c.Alias)
		} else {
			s += x.size(c)
		}
		s = min(s, x.max+1)
	}
	x.memo[n] = s
	return s
}

// readCapped returns the rest of lr's input, reading at most max+1 bytes
// so that a longer input is known to be too long without reading it all.
func readCapped(lr *lineReader, max int64) ([]byte, error) {
	head := lr.buffered()
	if int64(len(head)) > max {
		return head[:max+1], nil
	}
	data := make([]byte, len(head), min(max+1, int64(len(head))+initialBuffer))
	copy(data, head)
	lr.pos = lr.end
	if lr.err != nil {
		if lr.err == io.EOF {
			return data, nil
		}
		return nil, lr.err
	}
	buf := bytes.NewBuffer(data)
	_, err := buf.ReadFrom(io.LimitReader(lr.r, max+1-int64(len(data))))
	return buf.Bytes(), err
}

// locate returns the line and column of what the YAML package's error
// message msg, given without a line, is about: an unknown anchor's first
// alias, else the first byte YAML does not allow.
func locate(data []byte, msg string) (line, col int) {
	if rest, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		if name, _, ok := strings.Cut(rest, "'"); ok {
			if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
				line = 1 + bytes.Count(data[:i], []byte("\n"))
				return line, i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1
			}
		}
	}
	return badByte(data)
}

// badByte returns the line and column (1-based, in bytes) of the first
// byte of data that YAML does not allow: invalid UTF-8, or a control
// character other than tab and line ends. It returns 0, 0 when there is
// none.
func badByte(data []byte) (line, col int) {
	line, start := 1, 0
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		bad := (r == utf8.RuneError && n == 1) ||
			(r < 0x20 && r != '\t' && r != '\n' && r != '\r') ||
			(r >= 0x7f && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff
		if bad {
			return line, i - start + 1
		}
		if r == '\n' {
			line, start = line+1, i+1
		}
		i += n
	}
	return 0, 0
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// load parses data and returns the request nodes.
func (p *yamlParser) load(data []byte) (items []*yaml.Node, err *ParseError) {
	defer func() {
		// The YAML package reports its errors by panicking internally and
		// recovering; anything else escaping it is still a bad trace.
		if r := recover(); r != nil {
			items, err = nil, p.c.fatalf(0, 0, "YAML parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, p.yamlError(err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); err {
	case io.EOF:
	case nil:
		return nil, p.c.fatalf(second.Line, second.Column, "a second YAML document (a trace is a single document)")
	default:
		return nil, p.yamlError(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.AliasNode {
		top = top.Alias
	}
	switch top.Kind {
	case yaml.SequenceNode:
		return top.Content, nil
	case yaml.ScalarNode:
		if top.ShortTag() == "!!null" {
			return nil, nil
		}
	case yaml.MappingNode:
		var reqs *yaml.Node
		for k := 0; k+1 < len(top.Content); k += 2 {
			key, val := top.Content[k], top.Content[k+1]
			if key.Kind != yaml.ScalarNode || key.Value != "requests" {
				return nil, p.c.fatalf(key.Line, key.Column, "unknown top-level key %s (want requests)", quote([]byte(key.Value)))
			}
			if reqs != nil {
				return nil, p.c.fatalf(key.Line, key.Column, `duplicate key "requests"`)
			}
			if val.Kind == yaml.AliasNode {
				val = val.Alias
			}
			reqs = val
		}
		if reqs == nil {
			return nil, nil
		}
		switch {
		case reqs.Kind == yaml.SequenceNode:
			return reqs.Content, nil
		case reqs.Kind == yaml.ScalarNode && reqs.ShortTag() == "!!null":
			return nil, nil
		}
		return nil, p.c.fatalf(reqs.Line, reqs.Column, "requests: expected a sequence of requests, got %s", kindName(reqs))
	}
	return nil, p.c.fatalf(top.Line, top.Column, "expected a sequence of requests or a map with requests:, got %s", kindName(top))
}

// yamlError turns an error of the YAML package ("yaml: line 3: did not
// find expected key") into a fatal *ParseError.
func (p *yamlParser) yamlError(err error) *ParseError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line, msg = n, rest[i+2:]
			}
		}
	}
	return p.c.fatalf(line, 0, "%s", msg)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.MappingNode:
		return "a map"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return "the scalar " + quote([]byte(n.Value))
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

func (p *yamlParser) next(ev *Event) error {
	if p.i >= len(p.items) {
		p.items = nil
		return io.EOF
	}
	n := p.items[p.i]
	p.items[p.i] = nil // let the request's nodes go
	p.i++
	return p.event(ev, n)
}

// view copies s into the record's scratch space and returns the copy.
func (p *yamlParser) view(s string) []byte {
	start := len(p.scratch)
	p.scratch = append(p.scratch, s...)
	return p.scratch[start:len(p.scratch):len(p.scratch)]
}

func (p *yamlParser) event(ev *Event, n *yaml.Node) error {
	c := p.c
	ev.Line = n.Line
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return c.errorf(ev.Line, n.Column, "expected a map with user and timestamp, got %s", kindName(n))
	}
	p.scratch = p.scratch[:0]
	ev.attrs = ev.attrs[:0]
	ev.User, ev.TimeText = nil, nil
	var f yamlRecord
	if err := p.fields(ev, n, "", &f, 0); err != nil {
		return err
	}
	user, ts, cost := f.user, f.ts, f.cost
	if user == nil {
		return c.missing(ev.Line, n.Column, FieldUser, fieldList(n))
	}
	if user.Kind != yaml.ScalarNode {
		return c.errorf(user.Line, user.Column, "user: expected a scalar, got %s", kindName(user))
	}
	if user.ShortTag() == "!!null" || user.Value == "" {
		return c.errorf(user.Line, user.Column, "empty user")
	}
	ev.User = p.view(user.Value)
	if err := c.checkUser(ev.User, user.Line, user.Column); err != nil {
		return err
	}
	if ts == nil {
		return c.missing(ev.Line, n.Column, FieldTime, fieldList(n))
	}
	if ts.Kind != yaml.ScalarNode {
		return c.errorf(ts.Line, ts.Column, "timestamp: expected a scalar, got %s", kindName(ts))
	}
	if ts.ShortTag() == "!!null" {
		return c.errorf(ts.Line, ts.Column, "empty timestamp")
	}
	if err := c.setTime(ev, p.view(ts.Value), ts.Line, ts.Column); err != nil {
		return err
	}
	if cost == nil {
		return c.setCost(ev, nil, 0, 0)
	}
	if cost.Kind != yaml.ScalarNode {
		return c.errorf(cost.Line, cost.Column, "cost: expected a scalar, got %s", kindName(cost))
	}
	if cost.ShortTag() == "!!null" {
		return c.setCost(ev, nil, 0, 0)
	}
	if cost.Value == "" {
		return c.errorf(cost.Line, cost.Column, "invalid cost \"\" (want a positive integer)")
	}
	return c.setCost(ev, p.view(cost.Value), cost.Line, cost.Column)
}

// yamlRecord is what fields finds of a request's user, timestamp and
// cost.
type yamlRecord struct {
	user, ts, cost *yaml.Node
}

// fieldList lists the fields of the request n, after a space, for an
// error about a missing one: ` (fields: "user", "path")`.
func fieldList(n *yaml.Node) string {
	var q []string
	var walk func(n *yaml.Node, prefix string, depth int)
	walk = func(n *yaml.Node, prefix string, depth int) {
		for k := 0; k+1 < len(n.Content) && depth <= maxJSONDepth; k += 2 {
			key, val := n.Content[k], n.Content[k+1]
			if key.Kind == yaml.AliasNode {
				key = key.Alias
			}
			if val.Kind == yaml.AliasNode {
				val = val.Alias
			}
			name := key.Value
			if prefix != "" {
				name = prefix + "." + name
			}
			if val.Kind == yaml.MappingNode {
				walk(val, name, depth+1)
				continue
			}
			q = append(q, quote([]byte(name)))
		}
	}
	walk(n, "", 0)
	if len(q) == 0 {
		return " (the record has no fields)"
	}
	return " (fields: " + strings.Join(q, ", ") + ")"
}

// fields reads the map n into ev: the user, timestamp and cost into f,
// the other scalars into attributes. A nested map's fields are fields of
// their own, named by their dotted path ("request.remote_ip"); prefix is
// the path of n, "" at the top.
func (p *yamlParser) fields(ev *Event, n *yaml.Node, prefix string, f *yamlRecord, depth int) error {
	c := p.c
	if depth > maxJSONDepth {
		return c.errorf(n.Line, n.Column, "maps nested too deeply")
	}
	var seen map[string]int // for maps too big to scan for duplicates
	if len(n.Content) > 32 {
		seen = make(map[string]int, len(n.Content)/2)
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		if key.Kind == yaml.AliasNode {
			key = key.Alias
		}
		if val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		if key.Kind != yaml.ScalarNode {
			return c.errorf(key.Line, key.Column, "a field name must be a scalar, got %s", kindName(key))
		}
		if key.ShortTag() == "!!merge" {
			return c.errorf(key.Line, key.Column, "merge keys (<<) are not supported")
		}
		if !utf8.ValidString(key.Value) {
			return c.errorf(key.Line, key.Column, "invalid UTF-8 in a field name")
		}
		if first, dup := p.seenKey(n, k, key.Value, seen); dup {
			return c.errorf(key.Line, key.Column, "duplicate key %s (first at line %d)", quote([]byte(key.Value)), first)
		}
		name := key.Value
		if prefix != "" {
			name = prefix + "." + name
		}
		switch name {
		case c.names.user:
			f.user = val
		case c.names.time:
			f.ts = val
		case c.names.cost:
			f.cost = val
		default:
			if val.Kind == yaml.MappingNode {
				if err := p.fields(ev, val, name, f, depth+1); err != nil {
					return err
				}
				continue
			}
			if val.Kind != yaml.ScalarNode {
				return c.errorf(val.Line, val.Column, "field %s: expected a scalar or a map, got %s", quote([]byte(name)), kindName(val))
			}
			if !utf8.ValidString(val.Value) {
				return c.errorf(val.Line, val.Column, "invalid UTF-8 in field %s", quote([]byte(name)))
			}
			ev.attrs = append(ev.attrs, attr{name: p.names.get(p.view(name)), value: p.view(val.Value)})
		}
	}
	return nil
}

// seenKey reports whether the key name at index k of the map n appeared
// before it, and the line of its first appearance. Requests have few
// fields, so it scans; seen, when not nil, serves big maps instead.
func (p *yamlParser) seenKey(n *yaml.Node, k int, name string, seen map[string]int) (int, bool) {
	if seen != nil {
		if line, ok := seen[name]; ok {
			return line, true
		}
		seen[name] = n.Content[k].Line
		return 0, false
	}
	for j := 0; j < k; j += 2 {
		prev := n.Content[j]
		if prev.Kind == yaml.AliasNode {
			prev = prev.Alias
		}
		if prev.Value == name {
			return prev.Line, true
		}
	}
	return 0, false
}
