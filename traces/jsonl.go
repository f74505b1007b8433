package traces

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonlParser reads JSON Lines traces with its own scanner, so that numbers
// keep their text (no float64) and a record allocates nothing. Each line
// holds one object; user, timestamp and cost are its fields of those names,
// every other field is an attribute whose value is the string's text, or
// the JSON text of any other value.
type jsonlParser struct {
	c       *common
	lr      *lineReader
	scratch []byte // unescaped strings of the current record
	names   nameTable
	seen    map[string]struct{}
	// timeFn, when not nil, sets the event's time from the text of its
	// time field instead of common.setTime: a log's time (see jsonLog).
	timeFn func(ev *Event, text []byte, line, col int) error
	// aliases, when not nil, name by a field another name its value is
	// an attribute under too (a log's ClientHost is also ip); pending
	// are the current record's, added once it is read.
	aliases map[string]string
	pending []attr
	// aliasLens has bit n set when an alias's field is n bytes long: most
	// fields need no look-up.
	aliasLens uint64
	// keys are the names of the last records' fields, by their order in
	// the record (nested ones counted too), with their aliases; nkeys
	// counts the current record's. The lines of a log have the same
	// fields in the same order, so the k-th field's name is almost always
	// the last record's k-th: a comparison of its bytes, instead of
	// building a dotted path and looking it up in two maps.
	keys  []jsonKey
	nkeys int
	// hits: every field of the current record so far was the last
	// records' of its order. distinct: the names of keys[:distinct] are
	// known to differ, so that a field of a record that is such a hit
	// needs no search for a duplicate among the fields before it.
	hits     bool
	distinct int

	// The shape of the last record the members' reading read: its steps
	// (a value, a nested object's start and end, the record's end), each
	// after the text from the step before (names, colons, commas and
	// braces), in shapeLine. The lines of a log mostly have the same
	// shape: replay reads a record of that shape by comparing that text
	// and reading the values only (none: no shape). steps, mark and
	// shapeOK are the shape being recorded.
	shape     []jsonStep
	shapeLine []byte
	steps     []jsonStep
	mark      int
	shapeOK   bool
	nested    []jsonOpen // replay's nested objects
}

// jsonStep is one step of a record's shape: the text line[from:to]
// before it, then, for a value, one of kind vkind, the value of the
// record's field of order kn (also for a nested object's start and end).
type jsonStep struct {
	what     jsonStepKind
	vkind    jsonKind
	kn       int
	from, to int
	// words and masks hold the text before it when that is at most 16
	// bytes (most are a key and its quotes): a line's 16 bytes there,
	// masked, equal words when they are the text.
	words, masks [2]uint64
}

// setWords sets st's words and masks from the text before it, lit.
func (st *jsonStep) setWords(lit []byte) {
	st.words, st.masks = [2]uint64{}, [2]uint64{}
	for i, c := range lit[:min(len(lit), 16)] {
		st.words[i/8] |= uint64(c) << (i % 8 * 8)
		st.masks[i/8] |= 0xff << (i % 8 * 8)
	}
}

// jsonStepKind is what a step of a shape is.
type jsonStepKind uint8

const (
	jsonStepValue jsonStepKind = iota // a value (the text before it ends at its start)
	jsonStepOpen                      // a nested object's start (the text before it ends with its '{')
	jsonStepClose                     // a nested object's end (the text before it ends with its '}')
	jsonStepEnd                       // the record's end (the text before it ends with its '}')
)

// jsonOpen is a nested object replay is in: its field's order, its
// attribute's slot and where its text starts.
type jsonOpen struct{ kn, slot, start int }

// jsonKey is the name of a field of a record, and its alias.
type jsonKey struct {
	name     string // its dotted path, interned
	alias    string
	hasAlias bool
	role     jsonRole
	// plain: the name has no byte a JSON string escapes or that needs
	// checking (no quote, backslash, control character or non-ASCII
	// byte), so that a record spells it the same way in its bytes.
	plain bool
}

// jsonRole says which of the fields names the user, the time and the
// cost a field is, if any.
type jsonRole uint8

const (
	roleNone jsonRole = iota
	roleUser
	roleTimestamp
	roleCost
)

// maxJSONKeys bounds the fields of a record keyed by their order.
const maxJSONKeys = 256

// key returns the name of the record's next field, key in the object
// at prefix (depth 0: the record itself), and its alias.
func (p *jsonlParser) key(prefix string, key []byte, depth int) (jsonKey, int) {
	n := p.nkeys
	p.nkeys++
	if n < len(p.keys) {
		k := &p.keys[n]
		if depth == 0 && k.name == string(key) ||
			depth > 0 && len(k.name) == len(prefix)+1+len(key) && k.name[:len(prefix)] == prefix &&
				k.name[len(prefix)] == '.' && k.name[len(prefix)+1:] == string(key) {
			return *k, n
		}
	}
	p.hits = false
	p.distinct = min(p.distinct, n)
	var k jsonKey
	if depth == 0 {
		k.name = p.names.get(key)
	} else {
		from := len(p.scratch)
		p.scratch = append(append(append(p.scratch, prefix...), '.'), key...)
		k.name = p.names.get(p.scratch[from:])
		p.scratch = p.scratch[:from]
	}
	if p.aliasLens&(1<<min(len(k.name), 63)) != 0 {
		k.alias, k.hasAlias = p.aliases[k.name]
	}
	k.plain = true
	for i := 0; i < len(k.name); i++ {
		if jsonSpecial[k.name[i]] {
			k.plain = false
		}
	}
	switch names := &p.c.names; k.name {
	case names.user:
		k.role = roleUser
	case names.time:
		k.role = roleTimestamp
	case names.cost:
		k.role = roleCost
	}
	switch {
	case n < len(p.keys):
		p.keys[n] = k
	case n == len(p.keys) && n < maxJSONKeys:
		p.keys = append(p.keys, k)
	}
	return k, n
}

// predictedKey returns the order of the record's next field when its
// name at line[i:] (line[i] is '"'), a key of the object at prefix, is
// the last records' field of that order spelled without an escape, and
// the offset after the name: such a name needs no scan of its own, and
// str and key would find the same. ok is false otherwise: str and key
// read the name.
func (p *jsonlParser) predictedKey(line []byte, i int, prefix string, depth int) (n, next int, ok bool) {
	n = p.nkeys
	if n >= len(p.keys) || !p.keys[n].plain {
		return 0, 0, false
	}
	seg := p.keys[n].name
	if depth > 0 {
		if len(seg) <= len(prefix) || seg[len(prefix)] != '.' || seg[:len(prefix)] != prefix {
			return 0, 0, false
		}
		seg = seg[len(prefix)+1:]
	}
	end := i + 1 + len(seg)
	if end >= len(line) || line[end] != '"' || string(line[i+1:end]) != seg {
		return 0, 0, false
	}
	p.nkeys++
	return n, end + 1, true
}

// known reports whether the field of order n of the record is known to
// differ from those before it.
func (p *jsonlParser) known(n int) bool { return p.hits && n < p.distinct }

// checked notes that the field of order n differs from those before
// it.
func (p *jsonlParser) checked(n int) {
	if p.hits && n == p.distinct {
		p.distinct++
	}
}

// setAliases sets the parser's aliases: field -> other name.
func (p *jsonlParser) setAliases(aliases map[string]string) {
	p.aliases = aliases
	for k := range aliases {
		p.aliasLens |= 1 << min(len(k), 63)
	}
}

// alias notes the alias of the field k, whose value is val.
func (p *jsonlParser) alias(k *jsonKey, val []byte) {
	if k.hasAlias {
		// Set field by field, as Event.addAttr does.
		n := len(p.pending)
		if n == cap(p.pending) {
			p.pending = append(p.pending, attr{})
		} else {
			p.pending = p.pending[:n+1]
		}
		p.pending[n].name, p.pending[n].value = k.alias, val
	}
}

// maxJSONDepth bounds the nesting of attribute values.
const maxJSONDepth = 64

func newJSONLParser(c *common, lr *lineReader) *jsonlParser {
	return &jsonlParser{c: c, lr: lr}
}

// jsonKind is the kind of a scanned JSON value.
type jsonKind uint8

const (
	jsonString jsonKind = iota
	jsonNumber
	jsonNull
	jsonBool
	jsonComposite // an object or an array
)

// jsonError is a problem at a byte offset of the current line.
type jsonError struct {
	off int
	msg string
}

func (p *jsonlParser) next(ev *Event) error {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == errLineTooLong {
				return p.c.lineTooLong(p.lr.line)
			}
			return err
		}
		i := skipSpace(line, 0)
		if i == len(line) {
			continue
		}
		lineNo := p.lr.line
		ev.Line = lineNo
		if jerr := p.object(ev, line, i); jerr != nil {
			if pe, ok := jerr.(*ParseError); ok {
				return pe
			}
			je := jerr.(*jsonError)
			return p.c.errorf(lineNo, je.off+1, "%s", je.msg)
		}
		return nil
	}
}

func skipSpace(b []byte, i int) int {
	// Most places have no space: one comparison tells (every byte
	// above ' ' is no space).
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

func (e *jsonError) Error() string { return e.msg }

func truncated(off int) *jsonError {
	return &jsonError{off, "truncated JSON object (the line ends inside it)"}
}

// jsonRecord is what object finds of a record's user, timestamp and cost.
type jsonRecord struct {
	haveUser, haveTime, haveCost bool
	userOff, timeOff, costOff    int
	userKind, timeKind, costKind jsonKind
	costVal                      []byte
}

// object parses the object at line[i:] into ev.
func (p *jsonlParser) object(ev *Event, line []byte, i int) error {
	if line[i] != '{' {
		return &jsonError{i, "expected a JSON object"}
	}
	var rec jsonRecord
	p.reset(ev)
	if end, ok := p.replay(ev, line, i, &rec); ok {
		i = end
	} else {
		// The members' reading, recording the record's shape.
		rec = jsonRecord{}
		p.reset(ev)
		p.shape, p.steps, p.mark, p.shapeOK = p.shape[:0], p.steps[:0], i, true
		end, err := p.members(ev, line, i, "", &rec, 0)
		if err != nil {
			return err
		}
		p.step(jsonStepEnd, 0, 0, end)
		if p.shapeOK && p.nkeys <= len(p.keys) {
			p.shapeLine = append(p.shapeLine[:0], line...)
			p.shape, p.steps = p.steps, p.shape
			for k := range p.shape {
				p.shape[k].setWords(p.shapeLine[p.shape[k].from:p.shape[k].to])
			}
		}
		i = end
	}
	haveUser, haveTime, haveCost := rec.haveUser, rec.haveTime, rec.haveCost
	userOff, timeOff, costOff := rec.userOff, rec.timeOff, rec.costOff
	userKind, timeKind, costKind := rec.userKind, rec.timeKind, rec.costKind
	costVal := rec.costVal
	if i = skipSpace(line, i); i != len(line) {
		return &jsonError{i, "unexpected text after the JSON object"}
	}
	c := p.c
	line0 := ev.Line
	if !haveUser {
		return c.missing(line0, 0, FieldUser, ev.fieldList())
	}
	switch userKind {
	case jsonString, jsonNumber:
	case jsonNull:
		return c.errorf(line0, userOff+1, "empty user")
	default:
		return c.errorf(line0, userOff+1, "%s must be a string or a number", quote([]byte(c.names.user)))
	}
	if len(ev.User) == 0 {
		return c.errorf(line0, userOff+1, "empty user")
	}
	if !haveTime {
		return c.missing(line0, 0, FieldTime, ev.fieldList())
	}
	switch timeKind {
	case jsonString, jsonNumber:
	case jsonNull:
		return c.errorf(line0, timeOff+1, "empty timestamp")
	default:
		return c.errorf(line0, timeOff+1, "%s must be a number or a string", quote([]byte(c.names.time)))
	}
	// The aliases come after the record's own fields: Attr finds a
	// field of the record first.
	ev.attrs = append(ev.attrs, p.pending...)
	setTime := c.setTime
	if p.timeFn != nil {
		setTime = p.timeFn
	}
	if err := setTime(ev, ev.TimeText, line0, timeOff+1); err != nil {
		return err
	}
	if haveCost {
		switch costKind {
		case jsonNull:
			costVal = nil
		case jsonString, jsonNumber:
			if len(costVal) == 0 {
				return c.errorf(line0, costOff+1, "invalid cost \"\" (want a positive integer)")
			}
		default:
			return c.errorf(line0, costOff+1, "%s must be a number", quote([]byte(c.names.cost)))
		}
	}
	return c.setCost(ev, costVal, line0, costOff+1)
}

// members parses the members of the object at line[i:] (line[i] is '{')
// into ev: the user, timestamp and cost into rec, the others into
// attributes. A member of a nested object is also an attribute of its own,
// named by its dotted path ("request.remote_ip"), so that fields and keys
// can name it; prefix is the path of the object (depth 0: the record).
// It returns the offset after the object.
func (p *jsonlParser) members(ev *Event, line []byte, i int, prefix string, rec *jsonRecord, depth int) (int, error) {
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(line) {
			return i, truncated(i)
		}
		if line[i] != '"' {
			return i, &jsonError{i, "expected a field name in double quotes"}
		}
		keyOff := i
		var k jsonKey
		kn, ni, ok := p.predictedKey(line, i, prefix, depth)
		if ok {
			k = p.keys[kn]
		} else {
			raw, end, jerr := p.str(line, i, true)
			if jerr != nil {
				return end, jerr
			}
			k, kn = p.key(prefix, raw, depth)
			ni = end
		}
		key := k.name
		i = skipSpace(line, ni)
		if i >= len(line) {
			return i, truncated(i)
		}
		if line[i] != ':' {
			return i, &jsonError{i, "expected : after a field name"}
		}
		i = skipSpace(line, i+1)
		valOff := i
		if i < len(line) && line[i] == '{' && depth < maxJSONDepth && k.role == roleNone {
			// A nested object: an attribute of its JSON text, and one of
			// each of its members, read in one pass.
			slot, ok := p.open(ev, &k, kn)
			if !ok {
				return keyOff, &jsonError{keyOff, "duplicate field " + quote([]byte(key))}
			}
			p.step(jsonStepOpen, 0, kn, i+1)
			end, jerr := p.members(ev, line, i, key, rec, depth+1)
			if jerr != nil {
				return end, jerr
			}
			p.step(jsonStepClose, 0, kn, end)
			p.close(ev, &k, slot, line[valOff:end])
			i = skipSpace(line, end)
			if i >= len(line) {
				return i, truncated(i)
			}
			if line[i] == ',' {
				i = skipSpace(line, i+1)
				continue
			}
			if line[i] == '}' {
				return i + 1, nil
			}
			return i, &jsonError{i, "expected , or } after a field"}
		}
		val, kind, ni, jerr := p.value(line, i, depth)
		if jerr != nil {
			return ni, jerr
		}
		i = ni
		if !p.take(ev, &k, kn, val, kind, valOff, rec) {
			return keyOff, &jsonError{keyOff, "duplicate field " + quote([]byte(key))}
		}
		p.step(jsonStepValue, kind, kn, valOff)
		p.mark = i
		if kind == jsonComposite && line[valOff] == '{' {
			p.shapeOK = false // an object the record reads as its user, time or cost, or too deep
			if _, jerr := p.members(ev, line, valOff, key, rec, depth+1); jerr != nil {
				return valOff, jerr
			}
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return i, truncated(i)
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
			continue
		}
		if line[i] == '}' {
			return i + 1, nil
		}
		return i, &jsonError{i, "expected , or } after a field"}
	}
}

// reset makes ev and the parser ready to read a record.
func (p *jsonlParser) reset(ev *Event) {
	p.scratch = p.scratch[:0]
	p.pending = p.pending[:0]
	p.nkeys, p.hits = 0, true
	ev.attrs = ev.attrs[:0]
	ev.User, ev.TimeText, ev.costText = nil, nil, nil
	if p.seen != nil {
		clear(p.seen)
	}
}

// step records the next step of the record's shape, whose text before
// it ends at to.
func (p *jsonlParser) step(what jsonStepKind, vkind jsonKind, kn, to int) {
	p.steps = append(p.steps, jsonStep{what: what, vkind: vkind, kn: kn, from: p.mark, to: to})
	p.mark = to
}

// replay reads the record at line[i:] (line[i] is '{') into ev and rec
// when it has the shape of the last record the members' reading read:
// the same text between its values, values of the same kinds, plain
// strings (no escape, only ASCII). It takes every value as members
// would (take, open, close) and returns the offset after the record.
// ok is false when the record does not have that shape: members reads it
// then, from the start, and finds what replay would have.
func (p *jsonlParser) replay(ev *Event, line []byte, i int, rec *jsonRecord) (end int, ok bool) {
	if len(p.shape) == 0 {
		return 0, false
	}
	p.nested = p.nested[:0]
	pos := i
	for k := range p.shape {
		st := &p.shape[k]
		if n := st.to - st.from; n <= 16 && len(line)-pos >= 16 {
			// The text before the value, in two words.
			if (binary.LittleEndian.Uint64(line[pos:])^st.words[0])&st.masks[0]|(binary.LittleEndian.Uint64(line[pos+8:])^st.words[1])&st.masks[1] != 0 {
				return 0, false
			}
			pos += n
		} else {
			lit := p.shapeLine[st.from:st.to]
			if len(line)-pos < len(lit) || string(line[pos:pos+len(lit)]) != string(lit) {
				return 0, false
			}
			pos += len(lit)
		}
		switch st.what {
		case jsonStepEnd:
			return pos, true
		case jsonStepOpen:
			slot, ok := p.open(ev, &p.keys[st.kn], st.kn)
			if !ok {
				return 0, false
			}
			p.nkeys++
			p.nested = append(p.nested, jsonOpen{st.kn, slot, pos - 1})
			continue
		case jsonStepClose:
			o := p.nested[len(p.nested)-1]
			p.nested = p.nested[:len(p.nested)-1]
			p.close(ev, &p.keys[o.kn], o.slot, line[o.start:pos])
			continue
		}
		valOff := pos
		var val []byte
		switch st.vkind {
		case jsonString:
			j := plainString(line, pos)
			if j < 0 {
				return 0, false
			}
			val, pos = line[pos+1:j], j+1
		case jsonComposite:
			// An array of one plain string (a header's values, mostly) is
			// found without value's call, as value finds it.
			if pos+1 < len(line) && line[pos] == '[' && line[pos+1] == '"' && len(p.nested) < maxJSONDepth {
				if j := plainString(line, pos+1); j >= 0 && j+1 < len(line) && line[j+1] == ']' {
					val, pos = line[pos:j+2], j+2
					break
				}
			}
			fallthrough
		default:
			v, kind, ni, err := p.value(line, pos, len(p.nested))
			if err != nil || kind != st.vkind || kind == jsonString || kind == jsonComposite && line[pos] != '[' {
				return 0, false
			}
			val, pos = v, ni
		}
		p.nkeys++
		if !p.take(ev, &p.keys[st.kn], st.kn, val, st.vkind, valOff, rec) {
			return 0, false
		}
	}
	return 0, false
}

// take takes val, the value of the record's field k of order kn, of
// kind kind at offset valOff: the user, time or cost into rec, any other
// an attribute, and its alias. It reports false for a field the record
// has twice (nothing is taken then).
func (p *jsonlParser) take(ev *Event, k *jsonKey, kn int, val []byte, kind jsonKind, valOff int, rec *jsonRecord) bool {
	dup := false
	p.alias(k, val)
	switch k.role {
	case roleUser:
		dup, rec.haveUser, rec.userOff, rec.userKind = rec.haveUser, true, valOff, kind
		ev.User = val
	case roleTimestamp:
		dup, rec.haveTime, rec.timeOff, rec.timeKind = rec.haveTime, true, valOff, kind
		ev.TimeText = val
	case roleCost:
		dup, rec.haveCost, rec.costOff, rec.costKind = rec.haveCost, true, valOff, kind
		rec.costVal = val
	default:
		dup = !p.known(kn) && p.seenAttr(ev, k.name)
		if !dup {
			ev.addAttr(k.name, val)
		}
	}
	if dup {
		return false
	}
	p.checked(kn)
	return true
}

// open takes the start of a nested object, the record's field k of
// order kn: an attribute whose value, its JSON text, close sets. It
// returns the attribute's slot, and false for a field the record has
// twice.
func (p *jsonlParser) open(ev *Event, k *jsonKey, kn int) (int, bool) {
	if !p.known(kn) && p.seenAttr(ev, k.name) {
		return 0, false
	}
	p.checked(kn)
	slot := len(ev.attrs)
	ev.addAttr(k.name, nil)
	return slot, true
}

// close takes the JSON text of the nested object open took.
func (p *jsonlParser) close(ev *Event, k *jsonKey, slot int, text []byte) {
	ev.attrs[slot].value = text
	p.alias(k, text)
}

// seenAttr reports whether the attribute key was already in this record.
func (p *jsonlParser) seenAttr(ev *Event, key string) bool {
	if len(ev.attrs) < 32 {
		for i := range ev.attrs {
			if ev.attrs[i].name == key {
				return true
			}
		}
		return false
	}
	if p.seen == nil {
		p.seen = make(map[string]struct{})
	}
	if len(p.seen) == 0 {
		for i := range ev.attrs {
			p.seen[ev.attrs[i].name] = struct{}{}
		}
	}
	if _, ok := p.seen[key]; ok {
		return true
	}
	p.seen[key] = struct{}{}
	return false
}

// value scans the JSON value at line[i:]. A string's value is its
// unescaped text; a number's, true's, false's and null's is their text; an
// object's or array's is its JSON text, checked.
func (p *jsonlParser) value(line []byte, i, depth int) ([]byte, jsonKind, int, error) {
	if i >= len(line) {
		return nil, 0, i, truncated(i)
	}
	switch c := line[i]; {
	case c == '"':
		s, ni, err := p.str(line, i, false)
		return s, jsonString, ni, err
	case c == '-' || ('0' <= c && c <= '9'):
		ni, err := scanNumber(line, i)
		return line[i:ni], jsonNumber, ni, err
	case c == 't':
		return literal(line, i, "true", jsonBool)
	case c == 'f':
		return literal(line, i, "false", jsonBool)
	case c == 'n':
		return literal(line, i, "null", jsonNull)
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return nil, 0, i, &jsonError{i, "JSON value nested too deeply"}
		}
		ni, err := p.composite(line, i, depth+1)
		return line[i:ni], jsonComposite, ni, err
	}
	if r, _ := utf8.DecodeRune(line[i:]); r == utf8.RuneError {
		return nil, 0, i, &jsonError{i, "invalid UTF-8"}
	}
	return nil, 0, i, &jsonError{i, "invalid JSON value starting " + quote(line[i:i+1])}
}

// composite checks the object or array at line[i:] and returns its end.
func (p *jsonlParser) composite(line []byte, i, depth int) (int, error) {
	open := line[i]
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	mark := len(p.scratch)
	defer func() { p.scratch = p.scratch[:mark] }()
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == closer {
		return i + 1, nil
	}
	for {
		if open == '{' {
			if i >= len(line) {
				return i, truncated(i)
			}
			if line[i] != '"' {
				return i, &jsonError{i, "expected a field name in double quotes"}
			}
			_, ni, err := p.str(line, i, true)
			if err != nil {
				return ni, err
			}
			i = skipSpace(line, ni)
			if i >= len(line) {
				return i, truncated(i)
			}
			if line[i] != ':' {
				return i, &jsonError{i, "expected : after a field name"}
			}
			i = skipSpace(line, i+1)
		}
		_, _, ni, err := p.value(line, i, depth)
		if err != nil {
			return ni, err
		}
		i = skipSpace(line, ni)
		if i >= len(line) {
			return i, truncated(i)
		}
		if line[i] == ',' {
			i = skipSpace(line, i+1)
			continue
		}
		if line[i] == closer {
			return i + 1, nil
		}
		return i, &jsonError{i, "expected , or " + string(closer)}
	}
}

func literal(line []byte, i int, lit string, kind jsonKind) ([]byte, jsonKind, int, error) {
	n := len(lit)
	if len(line)-i < n {
		if string(line[i:]) == lit[:len(line)-i] {
			return nil, 0, len(line), truncated(len(line))
		}
		return nil, 0, i, &jsonError{i, "invalid JSON value"}
	}
	if string(line[i:i+n]) != lit {
		return nil, 0, i, &jsonError{i, "invalid JSON value"}
	}
	return line[i : i+n], kind, i + n, nil
}

// scanNumber checks the JSON number at line[i:] and returns its end.
func scanNumber(line []byte, i int) (int, error) {
	start := i
	if line[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(line) && '0' <= line[i] && line[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(line) && line[i] == '0' {
		i++
	} else if digits() == 0 {
		if i == len(line) {
			return i, truncated(i)
		}
		return i, &jsonError{start, "invalid JSON number"}
	}
	if i < len(line) && line[i] == '.' {
		i++
		if digits() == 0 {
			return i, &jsonError{start, "invalid JSON number"}
		}
	}
	if i < len(line) && (line[i] == 'e' || line[i] == 'E') {
		i++
		if i < len(line) && (line[i] == '+' || line[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, &jsonError{start, "invalid JSON number"}
		}
	}
	return i, nil
}

// str scans the string at line[i:] (line[i] is '"') and returns its text:
// a view of line when it has no escapes, else unescaped into p.scratch.
func (p *jsonlParser) str(line []byte, i int, isKey bool) ([]byte, int, error) {
	start := i
	i++
	j := i
	ascii := true
	for j < len(line) {
		// Most bytes of a string are none of the four kinds below:
		// eight at a time pass while a word holds none, then one
		// look-up a byte.
		for j+8 <= len(line) {
			m := jsonSpecialBytes(binary.LittleEndian.Uint64(line[j:]))
			if m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		for j < len(line) && !jsonSpecial[line[j]] {
			j++
		}
		if j >= len(line) {
			break
		}
		c := line[j]
		if c == '"' {
			s := line[i:j]
			if !ascii && !utf8.Valid(s) {
				return nil, j, invalidUTF8(start, isKey)
			}
			return s, j + 1, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, j, &jsonError{j, "control character in a JSON string"}
		}
		if c >= 0x80 {
			ascii = false
		}
		j++
	}
	if j >= len(line) {
		return nil, j, truncated(j)
	}
	// Escapes: unescape into scratch.
	if !ascii && !utf8.Valid(line[i:j]) {
		return nil, j, invalidUTF8(start, isKey)
	}
	from := len(p.scratch)
	p.scratch = append(p.scratch, line[i:j]...)
	for j < len(line) {
		c := line[j]
		switch {
		case c == '"':
			s := p.scratch[from:len(p.scratch):len(p.scratch)]
			return s, j + 1, nil
		case c < 0x20:
			return nil, j, &jsonError{j, "control character in a JSON string"}
		case c == '\\':
			if j+1 >= len(line) {
				return nil, j, truncated(j + 1)
			}
			e := line[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				p.scratch = append(p.scratch, e)
			case 'b':
				p.scratch = append(p.scratch, '\b')
			case 'f':
				p.scratch = append(p.scratch, '\f')
			case 'n':
				p.scratch = append(p.scratch, '\n')
			case 'r':
				p.scratch = append(p.scratch, '\r')
			case 't':
				p.scratch = append(p.scratch, '\t')
			case 'u':
				r, ok := hex4(line, j)
				if !ok {
					if len(line)-j < 4 {
						return nil, j, truncated(len(line))
					}
					return nil, j - 2, &jsonError{j - 2, `invalid \u escape`}
				}
				j += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(0), false
					if j+1 < len(line) && line[j] == '\\' && line[j+1] == 'u' {
						r2, ok = hex4(line, j+2)
					}
					dec := utf16.DecodeRune(r, r2)
					if !ok || dec == utf8.RuneError {
						return nil, j - 6, &jsonError{j - 6, `invalid \u escape: unpaired surrogate`}
					}
					r = dec
					j += 6
				}
				p.scratch = utf8.AppendRune(p.scratch, r)
			default:
				return nil, j - 2, &jsonError{j - 2, "invalid escape " + quote(line[j-2:j])}
			}
		default:
			k := j
			for k < len(line) && line[k] != '"' && line[k] != '\\' && line[k] >= 0x20 {
				k++
			}
			if !utf8.Valid(line[j:k]) {
				return nil, j, invalidUTF8(start, isKey)
			}
			p.scratch = append(p.scratch, line[j:k]...)
			j = k
		}
	}
	return nil, j, truncated(j)
}

// plainString returns the offset of the closing quote of the string at
// line[i:] when it is plain: no escape, no control character below
// 0x20, only ASCII (what jsonSpecial marks ends it); -1 when it is not,
// or line[i] is not a quote.
func plainString(line []byte, i int) int {
	if i >= len(line) || line[i] != '"' {
		return -1
	}
	j := i + 1
	for j+8 <= len(line) {
		if m := jsonSpecialBytes(binary.LittleEndian.Uint64(line[j:])); m != 0 {
			j += bits.TrailingZeros64(m) / 8
			break
		}
		j += 8
	}
	for j < len(line) && !jsonSpecial[line[j]] {
		j++
	}
	if j >= len(line) || line[j] != '"' {
		return -1
	}
	return j
}

// jsonSpecialBytes returns w, eight bytes of a string, with the high
// bit set of each byte that jsonSpecial marks (the closing quote, a
// backslash, a control character, a non-ASCII byte) and every other bit
// clear.
func jsonSpecialBytes(w uint64) uint64 {
	return zeroBytes(w^('"'*ones)) | zeroBytes(w^('\\'*ones)) | zeroBytes(w&(0xe0*ones)) | w&(0x80*ones)
}

// jsonSpecial marks the bytes a JSON string's scan stops at: the
// closing quote, a backslash, control characters and non-ASCII bytes.
var jsonSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

func invalidUTF8(off int, isKey bool) *jsonError {
	if isKey {
		return &jsonError{off, "invalid UTF-8 in a field name"}
	}
	return &jsonError{off, "invalid UTF-8 in a string"}
}

func hex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// nameTable interns attribute names so that a record does not allocate
// one string per attribute. It stops growing at maxNames names; past that,
// new names are allocated each time.
type nameTable struct {
	m map[string]string
}

const maxNames = 4096

func (t *nameTable) get(b []byte) string {
	if s, ok := t.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if t.m == nil {
		t.m = make(map[string]string)
	}
	if len(t.m) < maxNames {
		t.m[s] = s
	}
	return s
}
