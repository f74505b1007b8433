package traces

import (
	"bytes"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/internal/bytemask"
)

// A template is a compiled line format: literal text and fields, as an
// nginx log_format, Envoy's format strings and the fixed layouts of ALB,
// HAProxy and Traefik describe a line. One engine reads them all: each
// field's value runs from where the literal before it ends to the first
// place the literal after it begins (past the spaces the field's own
// value holds, such as the one inside $time_local); a field between
// double quotes in the format ends at the first double quote that no odd
// number of backslashes escapes. The last field runs to the end of the
// line.
type template struct {
	name   string // for errors: "the combined log format"
	lead   []byte // the literal before the first field
	fields []tfield
	// extras: text after the last literal is read as extra fields
	// (extra1, extra2, ...) instead of being an error: the predefined
	// formats are often extended at their end.
	extras bool
	// min, when not 0, is the fewest fields a line may have: the later
	// ones were added to the format over the years, and older lines end
	// without them.
	min int

	time     int   // the field of the logged time (of roleTime); -1 none
	arrival  int   // the field of an explicit arrival time (of roleTime); -1 none
	duration []int // the fields whose sum is the duration; none: empty
	// timeIs is what the logged time records; fixed: --time-is
	// completion is refused (the time is the request's start).
	timeIs TimeIs
	fixed  bool
	user   string // the default user attribute
	attrs  []string
	// nattrs is the number of attributes of all the fields.
	nattrs int
	// spaced: every field is a word or a double-quoted text, and one
	// space is between each and the next (ALB's lines): the fields are
	// the line cut at its spaces outside double quotes, and splitPlain
	// reads them so.
	spaced  bool
	nquoted int // the number of double-quoted fields
	// cuts are a spaced template's fields as splitPlain reads them, one
	// to a field.
	cuts []cutField
}

// tfield is one field of a template.
type tfield struct {
	name   string // as the format writes it: "$remote_addr", "%START_TIME%"
	attr   string // the attribute it is read into; "" for none
	port   string // roleHostPort: the attribute of the port
	after  []byte // the literal after it
	role   fieldRole
	time   timeKind
	dur    durKind
	check  checkKind
	spaces int  // spaces its own value holds
	quoted bool // between double quotes in the format
	// list: the value may be a list whose items ", " or " : " separate
	// (nginx's $upstream_* variables), spaces the literal after it is not.
	list bool
	// scan is how the end of its value is found at first; fieldEnd
	// finds it when that does not.
	scan scanKind
	// bracketed: between [ and ] in the format, and so may be empty.
	bracketed bool
	// required: its value may not be empty (it is not quoted,
	// bracketed or HAProxy's tail, which may be): servers write - for a
	// value they have not, so an empty one is a field missing.
	required bool
	// slot is the index of its first attribute among a line's.
	slot int
	// word: a value without spaces (not quoted, bracketed or a list,
	// nor the last field) whose end is not found at a space: a space
	// inside it is an error. findEnd finds its end only when no space
	// is before it; fields and plain look for one in an end fieldEnd
	// found.
	word bool
	// stop is the byte its value ends at, when findEnd finds it by one
	// (scanByte, scanQuoted), or the first of the literal after it
	// (scanLit); stopWord has it in every byte.
	stop     byte
	stopWord uint64
	// simple: an attribute as written, without check or duration, as
	// most fields are: take's work on it is one store.
	simple bool
}

// scanKind is how the end of a field's value is found at first: the
// common shapes of fields, each by a search of the library's.
type scanKind uint8

const (
	scanEnd    scanKind = iota // by fieldEnd
	scanByte                   // a word before a literal of one byte: where that byte first is
	scanQuoted                 // a quoted value: the first quote, when no backslash is before it
	scanLit                    // a value before a literal of several bytes, without spaces of its own: where the literal first is
	scanList                   // a list before a space: the first space that no ',' is before nor ": " after
)

// fieldRole says what a field's value becomes.
type fieldRole uint8

const (
	roleAttr        fieldRole = iota // an attribute
	roleRequest                      // "METHOD PATH PROTOCOL": method, path and protocol
	roleHostPort                     // "host:port": attr, and attr+"_port"
	roleSkip                         // nothing (an ident field)
	roleTime                         // a time: the logged one, the arrival, or an attribute
	roleHAProxyTail                  // HAProxy's "{request headers} {response headers} "request line""
)

// attrs returns the number of attributes a field of role r gives a
// line: as many as newTemplate lists in template.attrs.
func (r fieldRole) attrs(f *tfield) int {
	switch r {
	case roleRequest:
		return 3
	case roleHostPort:
		return 2
	case roleSkip:
		return 0
	case roleTime:
		if f.attr == "" {
			return 0
		}
		return 1
	case roleHAProxyTail:
		return 5
	}
	return 1
}

// checkKind is the check a field's value gets.
type checkKind uint8

const (
	checkNone   checkKind = iota
	checkStatus           // three digits
	checkBytes            // digits or "-"
	checkNumber           // digits, or "-": a status a proxy may leave unset
)

// A templateVar describes a variable a format may name: where its value
// goes and how it is read. The dictionaries of nginx, Envoy and the fixed
// formats are tables of these.
type templateVar struct {
	attr    string
	port    string // roleHostPort: the port's attribute
	role    fieldRole
	time    timeKind
	dur     durKind
	check   checkKind
	spaces  int
	meaning string
}

// compileError is a problem with a line format.
func compileError(msg string) *FormatError { return &FormatError{Msg: msg} }

// newTemplate builds a template from its parts: lits[0] before the first
// field, lits[i+1] after field i.
func newTemplate(name string, lits [][]byte, fields []tfield) (*template, error) {
	t := &template{name: name, lead: lits[0], fields: fields, time: -1, arrival: -1}
	for i := range fields {
		f := &t.fields[i]
		f.after = lits[i+1]
		before := lits[i]
		f.quoted = len(before) > 0 && before[len(before)-1] == '"' && len(f.after) > 0 && f.after[0] == '"'
		plain := !f.quoted && !f.list && f.spaces == 0 && len(f.after) == 1
		f.bracketed = len(before) > 0 && before[len(before)-1] == '[' && len(f.after) > 0 && f.after[0] == ']'
		f.word = !f.quoted && !f.bracketed && !f.list && f.spaces == 0 && i < len(fields)-1 && !(plain && f.after[0] == ' ')
		switch {
		case plain:
			f.scan = scanByte
		case f.quoted:
			f.scan = scanQuoted
		case !f.list && f.spaces == 0 && len(f.after) > 1:
			f.scan = scanLit
		case f.list && len(f.after) == 1 && f.after[0] == ' ':
			f.scan = scanList
		}
		switch f.scan {
		case scanByte, scanLit:
			f.stop = f.after[0]
		case scanQuoted:
			f.stop = '"'
		}
		f.stopWord = uint64(f.stop) * ones
		f.required = !f.quoted && !f.bracketed && f.role != roleHAProxyTail
		f.simple = f.role == roleAttr && f.check == checkNone && f.dur == durNone
		if len(f.after) == 0 && i < len(fields)-1 {
			return nil, compileError("log format " + strconv.Quote(name) + ": " + f.name + " and " + fields[i+1].name + " have nothing between them, so where one ends cannot be told")
		}
		switch f.role {
		case roleRequest:
			t.attrs = append(t.attrs, "method", "path", "protocol")
		case roleHostPort:
			t.attrs = append(t.attrs, f.attr, f.port)
		case roleSkip:
		case roleTime:
			if f.attr != "" {
				t.attrs = append(t.attrs, f.attr)
			}
		case roleHAProxyTail:
		default:
			t.attrs = append(t.attrs, f.attr)
		}
	}
	// A line's attributes are in the order of t.attrs: each field's are
	// written in their slots.
	for i := range t.fields {
		f := &t.fields[i]
		f.slot = t.nattrs
		t.nattrs += f.role.attrs(f)
	}
	for i := range fields {
		for j := range i {
			if fields[i].attr != "" && fields[i].attr == fields[j].attr && fields[i].role != roleSkip {
				return nil, compileError("log format " + strconv.Quote(name) + " names " + fields[i].name + " twice")
			}
		}
	}
	t.spaced = spaced(lits, t.fields)
	for i := range t.fields {
		f := &t.fields[i]
		if f.quoted {
			t.nquoted++
		}
		if t.spaced {
			t.cuts = append(t.cuts, cutField{f.attr, int32(f.slot), f.check, f.role == roleAttr, f.dur != durNone, f.quoted, f.required})
		}
	}
	return t, nil
}

// cutField is what splitPlain reads a field of a spaced template by,
// from its tfield, in a few bytes: the fields' are read one after
// another, for every line.
type cutField struct {
	name  string // the attribute's
	slot  int32
	check checkKind
	// attr: the field is an attribute as written (roleAttr), with its
	// check and maybe a duration (dur); take reads the others.
	attr, dur bool
	// quoted and required are the tfield's.
	quoted, required bool
}

// spaced reports whether a line of the fields, with the literals lits
// around them (as newTemplate takes them), is its fields cut at one
// space each, the double-quoted ones in their quotes: whether each
// literal is a space and the quotes around it, and every field a value
// without spaces of its own, quoted or not.
func spaced(lits [][]byte, fields []tfield) bool {
	quote := func(i int) string {
		if i >= 0 && i < len(fields) && fields[i].quoted {
			return `"`
		}
		return ""
	}
	for i := range lits {
		want := quote(i - 1)
		if i > 0 && i < len(lits)-1 {
			want += " "
		}
		if want += quote(i); string(lits[i]) != want {
			return false
		}
	}
	for i := range fields {
		if f := &fields[i]; f.list || f.spaces != 0 || f.bracketed || f.role == roleHAProxyTail {
			return false
		}
	}
	return len(fields) > 0
}

// tmplParser reads lines of a template.
type tmplParser struct {
	c  *common
	lr *lineReader
	t  *template
	lc logClock
	// user is the index in the event's attributes of the user; -1: the
	// name is looked up on every line (it is an extra field).
	userName string
	// userAt is the index of the user among a line's attributes, when
	// that is the same on every line; -1: it is looked up by name.
	userAt int
	timeIs TimeIs
	extra  []string // extra field names: extra1, extra2, ...
	// masks are splitPlain's, kept from line to line: the line's
	// bytemask masks.
	masks []uint64
}

func newTemplateParser(c *common, lr *lineReader, t *template, opts Options) (*tmplParser, error) {
	p := &tmplParser{c: c, lr: lr, t: t, userAt: -1}
	if opts.TimeField != "" || opts.CostField != "" {
		return nil, c.formatErr("%s has no time or cost field to name (its fields: %s)", t.name, strings.Join(t.attrs, ", "))
	}
	p.userName = opts.UserField
	if p.userName == "" {
		p.userName = t.user
	}
	if !strings.HasPrefix(p.userName, "extra") || !t.extras {
		for i, a := range t.attrs {
			if a == p.userName && (t.min == 0 || i < t.min) && !slices.ContainsFunc(t.fields, func(f tfield) bool { return f.role == roleHAProxyTail }) {
				p.userAt = i
			}
		}
		if !slices.Contains(t.attrs, p.userName) {
			return nil, c.formatErr("%s has no %q field (its fields: %s)", t.name, p.userName, strings.Join(t.attrs, ", "))
		}
	}
	ti, err := resolveTimeIs(opts.TimeIs, t.timeIs, t.fixed, len(t.duration) > 0, t.arrival >= 0, t.name)
	if err != nil {
		return nil, c.formatErr("%s", err.Error())
	}
	p.timeIs = ti
	if t.time < 0 {
		return nil, c.formatErr("%s has no time field", t.name)
	}
	c.mode = modeRFC3339 // absolute times
	tf := t.fields[t.time]
	if p.timeIs == TimeIsArrival && t.arrival >= 0 {
		tf = t.fields[t.arrival]
	}
	c.layout = tf.time.layout()
	return p, nil
}

func (p *tmplParser) next(ev *Event) error {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == errLineTooLong {
				return p.c.lineTooLong(p.lr.line)
			}
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ev.Line = p.lr.line
		return p.parse(ev, line)
	}
}

// parse reads one line into ev.
func (p *tmplParser) parse(ev *Event, line []byte) error { return p.read(ev, line, true) }

// read reads one line into ev; tryPlain: as a plain line first (see
// plain), which gives the same result faster when the line is one.
func (p *tmplParser) read(ev *Event, line []byte, tryPlain bool) error {
	c, n, t := p.c, ev.Line, p.t
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	ev.attrs = ev.attrs[:0]
	ev.costText = nil
	ev.Cost = 1
	if !bytes.HasPrefix(line, t.lead) {
		return c.errorf(n, 1, "expected %s at the start of the line (%s)", quote(t.lead), t.name)
	}
	if cap(ev.attrs) < t.nattrs {
		ev.attrs = make([]attr, 0, t.nattrs+8)
	}
	attrs := ev.attrs[:t.nattrs]
	var times [2]fieldText // the logged time and the arrival
	var durs [4]fieldText
	nd, ok := 0, false
	if tryPlain && t.spaced {
		nd, ok = p.splitPlain(line, attrs, &times, &durs)
	}
	if tryPlain && !ok {
		nd, ok = p.plain(line, attrs, &times, &durs)
	}
	if ok {
		ev.attrs = attrs
	} else {
		// What plain noted before it gave up is noted again.
		times, nd = [2]fieldText{}, 0
		if err := p.fields(ev, line, attrs, &times, &durs, &nd); err != nil {
			return err
		}
	}
	var user []byte
	ok = p.userAt >= 0 && p.userAt < len(ev.attrs)
	if ok {
		user = ev.attrs[p.userAt].value
	} else {
		user, ok = ev.attrValue(p.userName)
	}
	if !ok {
		return c.errorf(n, 0, "no %q field in this line", p.userName)
	}
	ev.User = user
	if err := c.checkUser(ev.User, n, 1); err != nil {
		return err
	}
	return p.setArrival(ev, times, durs[:nd], n)
}

// fields reads the fields of line ev.Line into attrs, the line's
// attributes, and ev, noting the logged time and the arrival in times
// and the durations in durs (nd of them). The line is read in one loop
// over the fields: each is found, then written in its slot (most fields
// only need that) or read as its role says. The first problem, in the
// order of the fields, is the error; a line of an older version of the
// format, which has fewer fields, stops early (its last value runs to
// the end of the line).
func (p *tmplParser) fields(ev *Event, line []byte, attrs []attr, times *[2]fieldText, durs *[4]fieldText, nd *int) error {
	c, n, t := p.c, ev.Line, p.t
	pos := len(t.lead)
	m := len(t.fields) // the fields found
	for i := range t.fields {
		f := &t.fields[i]
		end := findEnd(line, pos, f)
		stopped := false
		if end < 0 {
			var err error
			if end, err = p.fieldEnd(line, pos, f, n, i == len(t.fields)-1); err != nil {
				// A line of an older version of the format ends here.
				if t.min == 0 || i+1 < t.min {
					return err
				}
				end = len(line)
				if f.quoted && end > pos && line[end-1] == '"' {
					end--
				}
				stopped, m = true, i+1
			}
			if f.word {
				// A word: a space inside it is a field too many or
				// missing.
				if k := bytes.IndexByte(line[pos:end], ' '); k >= 0 {
					return c.errorf(n, pos+k+1, "expected %s after %s", quote(f.after), f.name)
				}
			}
		}
		v := line[pos:end]
		if len(v) == 0 && f.required && !stopped {
			return c.errorf(n, pos+1, "missing %s", f.name)
		}
		if f.check != checkNone && !f.check.accepts(v) {
			return p.invalid(f, v, pos, n)
		}
		// Most fields are an attribute as written; the others are read
		// as their role says.
		if f.role == roleAttr {
			attrs[f.slot].set(f.attr, v)
		} else if err := p.special(attrs[f.slot:], f, v, pos, n); err != nil {
			return err
		}
		if f.role == roleTime {
			switch i {
			case t.time:
				times[0] = fieldText{v, pos + 1, i}
			case t.arrival:
				times[1] = fieldText{v, pos + 1, i}
			}
		}
		if f.dur != durNone && *nd < len(durs) {
			durs[*nd] = fieldText{v, pos + 1, i}
			*nd++
		}
		if stopped {
			pos = len(line)
			break
		}
		pos = end + len(f.after)
	}
	if m < len(t.fields) {
		ev.attrs = attrs[:t.fields[m].slot]
	} else {
		ev.attrs = attrs
	}
	if pos < len(line) {
		if !t.extras {
			for pos < len(line)-1 && line[pos] == ' ' {
				pos++
			}
			return c.errorf(n, pos+1, "unexpected text %s after the last field of %s", quote(bytes.TrimSpace(line[pos:])), t.name)
		}
		return p.extras(ev, line, pos, n)
	}
	return nil
}

// plain reads line as a plain line, and reports whether it is one: a
// line whose every field ends where findEnd (or fieldEnd, for a field
// findEnd does not know) finds it, has a value its check accepts, and
// is followed by the next, the last ending the line. It reads such a
// line as fields would, into attrs, times and durs (nd of them): most
// lines are plain, and without the errors to look out for, and the
// commonest ends found without a call, the loop is the shorter. A line
// that is not plain may still be good (an older or a longer version of
// the format): fields reads it, and tells what is wrong if anything is.
func (p *tmplParser) plain(line []byte, attrs []attr, times *[2]fieldText, durs *[4]fieldText) (nd int, ok bool) {
	t := p.t
	pos := len(t.lead)
	for i := range t.fields {
		f := &t.fields[i]
		end := -1
		if rest := line[pos:]; len(rest) >= 8 && f.stop != 0 {
			// findEnd's search, inlined: most values end in their first
			// eight bytes, and are found there without a call.
			k := -1
			if f.word {
				k = indexEitherInWord(rest, f.stopWord, ' '*ones)
			} else if k = indexInWord(rest, f.stopWord); k < 0 && f.scan != scanLit {
				// What is left of indexByte.
				if j := bytes.IndexByte(rest[8:], f.stop); j >= 0 {
					k = 8 + j
				}
			}
			// A word's value ends at its stop, not at a space (unless
			// the literal after it begins with one).
			switch {
			case k < 0:
			case f.scan == scanByte:
				if !f.word || rest[k] != ' ' {
					end = pos + k
				}
			case f.scan == scanQuoted:
				if quoteEnds(line, pos, pos+k, f) {
					end = pos + k
				}
			case rest[k] == f.stop && hasLit(rest[k:], f.after):
				end = pos + k
			}
		}
		if end < 0 {
			end = findEnd(line, pos, f)
		}
		if end < 0 {
			var err error
			if end, err = p.fieldEnd(line, pos, f, 0, i == len(t.fields)-1); err != nil {
				return 0, false
			}
			if f.word && bytes.IndexByte(line[pos:end], ' ') >= 0 {
				return 0, false
			}
		}
		if f.simple && (end > pos || !f.required) {
			// take's work, without the call.
			attrs[f.slot].set(f.attr, line[pos:end])
		} else if !p.take(attrs, times, durs, &nd, i, line[pos:end], pos) {
			return 0, false
		}
		pos = end + len(f.after)
	}
	if pos != len(line) {
		return 0, false
	}
	return nd, true
}

// take notes v, the value at line[pos:] of field i, as plain and
// splitPlain read a field: in attrs, times and durs (nd of them). It
// reports false when the value is not one a plain line has.
func (p *tmplParser) take(attrs []attr, times *[2]fieldText, durs *[4]fieldText, nd *int, i int, v []byte, pos int) bool {
	t := p.t
	f := &t.fields[i]
	if len(v) == 0 && f.required || f.check != checkNone && !f.check.accepts(v) {
		return false
	}
	switch f.role {
	case roleAttr:
		attrs[f.slot].set(f.attr, v)
	case roleTime:
		// What special does with a time, without the call.
		if f.attr != "" {
			attrs[f.slot].set(f.attr, v)
		}
		switch i {
		case t.time:
			times[0] = fieldText{v, pos + 1, i}
		case t.arrival:
			times[1] = fieldText{v, pos + 1, i}
		}
	default:
		if p.special(attrs[f.slot:], f, v, pos, 0) != nil {
			return false
		}
	}
	if f.dur != durNone && *nd < len(durs) {
		durs[*nd] = fieldText{v, pos + 1, i}
		*nd++
	}
	return true
}

// spacedClasses are the bytes splitPlain looks for.
var spacedClasses = bytemask.New(' ', '"')

// splitPlain is plain for a spaced template: it reads line as plain
// does, and reports whether it is a plain line, from the line cut at its
// spaces outside double quotes. It looks at every space and quote of the
// line at once (bytemask), instead of finding one field after another,
// and gives up on a line whose quotes are not just those around its
// quoted fields, with a backslash before a closing quote, or that is
// not cut into as many fields as the template has: plain reads those
// (the same result, or that the line is not plain). On a line it does
// read, its fields are plain's: a quoted field ends at the first quote
// after its start, the closing one here, and the others at the first
// space.
func (p *tmplParser) splitPlain(line []byte, attrs []attr, times *[2]fieldText, durs *[4]fieldText) (nd int, ok bool) {
	t := p.t
	m := spacedClasses.Masks(line, p.masks)
	// The line's end is a space too, the last field's end: in a block of
	// its own when the line fills its last.
	last := len(line) / 64 * bytemask.Stride
	if last == len(m) {
		m = append(m, make([]uint64, bytemask.Stride)...)
	}
	m[last] |= 1 << (len(line) % 64)
	p.masks = m
	cuts := t.cuts
	var in uint64 // all ones when the bytes before the block end inside quotes
	quotes, i, start := 0, 0, 0
	for k := 0; k+1 < len(m); k += bytemask.Stride {
		q := m[k+1]
		quotes += bits.OnesCount64(q)
		// Inside quotes: an odd number of quotes from the line's start
		// to the byte, the closing quote not included.
		x := q
		x ^= x << 1
		x ^= x << 2
		x ^= x << 4
		x ^= x << 8
		x ^= x << 16
		x ^= x << 32
		x ^= in
		in = uint64(int64(x) >> 63)
		// Each space outside quotes ends field i, which is read there.
		for sp := m[k] &^ x; sp != 0; sp &= sp - 1 {
			if i == len(cuts) {
				return 0, false
			}
			end := k/bytemask.Stride*64 + bits.TrailingZeros64(sp)
			f, pos, next := &cuts[i], start, end+1
			if f.quoted {
				// A backslash before the closing quote escapes it for
				// plain.
				if end-start < 2 || line[start] != '"' || line[end-1] != '"' || end-start > 2 && line[end-2] == '\\' {
					return 0, false
				}
				pos, end = start+1, end-1
			}
			// take's work, without the call, on the fields that are
			// attributes.
			v := line[pos:end]
			switch {
			case len(v) == 0 && f.required:
				return 0, false
			case f.attr:
				if f.check != checkNone && !f.check.accepts(v) {
					return 0, false
				}
				attrs[f.slot].set(f.name, v)
				if f.dur && nd < len(durs) {
					durs[nd] = fieldText{v, pos + 1, i}
					nd++
				}
			case !p.take(attrs, times, durs, &nd, i, v, pos):
				return 0, false
			}
			i, start = i+1, next
		}
	}
	if quotes != 2*t.nquoted || i != len(cuts) {
		return 0, false
	}
	return nd, true
}

// findEnd returns where the value of field f, starting at line[pos:],
// ends, when one of the common shapes of fields finds it (f.scan); -1
// when fieldEnd must. The value of a word it finds holds no space.
func findEnd(line []byte, pos int, f *tfield) int {
	switch f.scan {
	case scanByte:
		if f.word {
			if k := indexEither(line[pos:], f.after[0], ' '); k >= 0 && line[pos+k] != ' ' {
				return pos + k
			}
			return -1
		}
		if k := indexByte(line[pos:], f.after[0]); k >= 0 {
			return pos + k
		}
	case scanQuoted:
		if k := indexByte(line[pos:], '"'); k >= 0 && quoteEnds(line, pos, pos+k, f) {
			return pos + k
		}
	case scanLit:
		// A value before a literal of several bytes ("] \"" after a
		// bracketed time): where the literal first is, as fieldEnd
		// would find it. A word's is the first of its first byte or a
		// space: where a later one would be, a space is before it.
		if f.word {
			k := -1
			if f.after[0] == ' ' {
				k = indexByte(line[pos:], ' ')
			} else {
				k = indexEither(line[pos:], f.after[0], ' ')
			}
			if k >= 0 && hasLit(line[pos+k:], f.after) {
				return pos + k
			}
			return -1
		}
		if k := indexLit(line[pos:], f.after); k >= 0 {
			return pos + k
		}
	case scanList:
		// A list: its items' ", " and " : " are not the literal.
		for j := pos; ; {
			k := indexByte(line[j:], ' ')
			if k < 0 {
				break
			}
			j += k
			switch {
			case j > pos && line[j-1] == ',':
				j++
			case j+2 < len(line) && line[j+1] == ':' && line[j+2] == ' ':
				j += 3
			default:
				return j
			}
		}
	}
	return -1
}

// accepts reports whether v is a value the check k lets through.
func (k checkKind) accepts(v []byte) bool {
	switch k {
	case checkStatus:
		return len(v) == 3 && isDigits(v)
	case checkBytes, checkNumber:
		return len(v) > 0 && (isDigits(v) || string(v) == "-")
	}
	return true
}

// invalid is the error for v, the value at column pos+1 of line n of
// field f, which its check does not accept.
func (p *tmplParser) invalid(f *tfield, v []byte, pos, n int) error {
	c := p.c
	switch f.check {
	case checkStatus:
		return c.errorf(n, pos+1, "invalid status %s (want three digits)", quote(v))
	case checkBytes:
		if len(v) == 0 {
			return c.errorf(n, pos+1, "missing the size")
		}
		return c.errorf(n, pos+1, "invalid size %s (want a number of bytes or -)", quote(v))
	}
	return c.errorf(n, pos+1, "invalid %s %s (want a number or -)", f.name, quote(v))
}

// special reads v, the value at column pos+1 of line n of field f, a
// field of a role other than roleAttr, into its attributes: the first
// of a is its slot.
func (p *tmplParser) special(a []attr, f *tfield, v []byte, pos, n int) error {
	switch f.role {
	case roleRequest:
		m, pth, proto := splitRequest(v)
		a[0].set("method", m)
		a[1].set("path", pth)
		a[2].set("protocol", proto)
	case roleHostPort:
		host, port := v, v[len(v):]
		if k := bytes.LastIndexByte(v, ':'); k >= 0 {
			host, port = v[:k], v[k+1:]
		}
		// An IPv6 address with a port is bracketed ([2001:db8::7]:443,
		// as Envoy writes it): the address is what is inside.
		if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		}
		a[0].set(f.attr, host)
		a[1].set(f.port, port)
	case roleTime:
		if f.attr != "" {
			a[0].set(f.attr, v)
		}
	case roleHAProxyTail:
		return p.haproxyTail(a, v, pos, n)
	}
	return nil
}

// quoteEnds reports whether the quote at line[j], the first after the
// start of the value of f, a quoted field, at line[pos:], ends it: when
// no backslash is before it (the value has no escaped quote) and the
// literal after f follows.
func quoteEnds(line []byte, pos, j int, f *tfield) bool {
	return (j == pos || line[j-1] != '\\') && hasLit(line[j:], f.after)
}

// hasLit reports whether s begins with lit, a literal of a few bytes.
func hasLit(s, lit []byte) bool {
	if len(s) < len(lit) {
		return false
	}
	for i, c := range lit {
		if s[i] != c {
			return false
		}
	}
	return true
}

// fieldText is a field's value and where it starts in its line.
type fieldText struct {
	v   []byte
	col int
	f   int // the field's index
}

// fieldEnd returns where the value of field f, starting at line[pos:],
// ends: where the literal after it begins.
func (p *tmplParser) fieldEnd(line []byte, pos int, f *tfield, n int, last bool) (int, error) {
	c := p.c
	if f.quoted {
		for j := pos; ; {
			k := bytes.IndexByte(line[j:], '"')
			if k < 0 {
				return 0, c.errorf(n, pos, "%s has no closing '\"'", f.name)
			}
			j += k
			b := j
			for b > pos && line[b-1] == '\\' {
				b--
			}
			if (j-b)%2 == 0 {
				if !bytes.HasPrefix(line[j:], f.after) {
					return 0, c.errorf(n, j+1, "expected %s after %s", quote(f.after), f.name)
				}
				return j, nil
			}
			j++
		}
	}
	if len(f.after) == 0 {
		// A last field of a value without spaces (a number, a time, a
		// status) ends where its word does; one of any text, at the end.
		word := f.check != checkNone || f.dur != durNone || f.role == roleTime
		if last && (p.t.extras || word) {
			if k := bytes.IndexByte(line[pos:], ' '); k >= 0 {
				return pos + k, nil
			}
		}
		return len(line), nil
	}
	from := pos
	for s := 0; s < f.spaces; s++ {
		k := bytes.IndexByte(line[from:], ' ')
		if k < 0 {
			break
		}
		from += k + 1
	}
	k := indexLit(line[from:], f.after)
	for f.list && k >= 0 && f.after[0] == ' ' {
		at := from + k
		skip := 0
		switch {
		case at > 0 && line[at-1] == ',':
			skip = 1
		case bytes.HasPrefix(line[at:], []byte(" : ")):
			skip = 3
		}
		if skip == 0 {
			break
		}
		from = at + skip
		if k = indexLit(line[from:], f.after); k < 0 {
			break
		}
	}
	if k < 0 {
		if pos >= len(line) {
			return 0, c.errorf(n, pos+1, "the line ends before %s", f.name)
		}
		// Where a word would end is where the literal was wanted.
		at := len(line)
		if w := bytes.IndexByte(line[from:], ' '); w >= 0 {
			at = from + w
		}
		return 0, c.errorf(n, at+1, "expected %s after %s", quote(f.after), f.name)
	}
	return from + k, nil
}

// indexLit returns the index of the first lit in s, or -1.
func indexLit(s, lit []byte) int {
	c := lit[0]
	for i := 0; i < len(s); {
		k := bytes.IndexByte(s[i:], c)
		if k < 0 {
			return -1
		}
		i += k
		if len(lit) == 1 || len(s)-i >= len(lit) && string(s[i+1:i+len(lit)]) == string(lit[1:]) {
			return i
		}
		i++
	}
	return -1
}

// extras reads the text after the last field as extra fields.
func (p *tmplParser) extras(ev *Event, line []byte, pos, n int) error {
	return readExtras(p.c, ev, line[pos:], pos, n, &p.extra)
}

// readExtras reads rest, the text at column off+1 of line n after the
// last field of a format, as extra fields (extra1, extra2, ...; names
// holds their names): words, double-quoted texts (quotes removed) and
// bracketed texts.
func readExtras(c *common, ev *Event, rest []byte, off, n int, names *[]string) error {
	line, pos := rest, 0
	k := 0
	for {
		for pos < len(line) && (line[pos] == ' ' || line[pos] == '\t') {
			pos++
		}
		if pos >= len(line) {
			return nil
		}
		start, end, next := pos, 0, 0
		switch line[pos] {
		case '"':
			j := pos + 1
			for {
				q := bytes.IndexByte(line[j:], '"')
				if q < 0 {
					return c.errorf(n, off+pos+1, "extra field %d has no closing '\"'", k+1)
				}
				j += q
				b := j
				for b > pos+1 && line[b-1] == '\\' {
					b--
				}
				if (j-b)%2 == 0 {
					break
				}
				j++
			}
			start, end, next = pos+1, j, j+1
		case '[':
			q := bytes.IndexByte(line[pos:], ']')
			if q < 0 {
				return c.errorf(n, off+pos+1, "extra field %d has no closing ']'", k+1)
			}
			start, end, next = pos+1, pos+q, pos+q+1
		default:
			q := bytes.IndexAny(line[pos:], " \t")
			if q < 0 {
				q = len(line) - pos
			}
			end, next = pos+q, pos+q
		}
		for len(*names) <= k {
			*names = append(*names, "extra"+strconv.Itoa(len(*names)+1))
		}
		ev.addAttr((*names)[k], line[start:end])
		k++
		pos = next
	}
}

// haproxyTail reads the end of an HAProxy line, v at column pos+1: the
// captured request and response headers, each "{...}" and there only
// when captured, and the request line in double quotes.
func (p *tmplParser) haproxyTail(a []attr, v []byte, pos, n int) error {
	var heads [2][]byte
	rest, off := v, pos
	for k := 0; k < 2 && len(rest) > 0 && rest[0] == '{'; k++ {
		e := bytes.IndexByte(rest, '}')
		if e < 0 {
			return p.c.errorf(n, off+1, "the captured headers have no closing '}'")
		}
		heads[k] = rest[1:e]
		trimmed := bytes.TrimLeft(rest[e+1:], " ")
		off += len(rest) - len(trimmed)
		rest = trimmed
	}
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		return p.c.errorf(n, off+1, "expected the request line in double quotes, got %s", quote(rest))
	}
	m, pth, proto := splitRequest(rest[1 : len(rest)-1])
	a[0].set("method", m)
	a[1].set("path", pth)
	a[2].set("protocol", proto)
	a[3].set("request_headers", heads[0])
	a[4].set("response_headers", heads[1])
	return nil
}

// splitRequest splits a request line "GET /a?b=1 HTTP/1.1" into its
// method, path and protocol; what is not there is empty. A request that
// is not three words (a scanner's garbage, or "-") still makes a
// request: method takes what there is, path and protocol what follows.
func splitRequest(r []byte) (method, path, protocol []byte) {
	method, rest, _ := bytes.Cut(r, []byte{' '})
	if k := bytes.LastIndexByte(rest, ' '); k >= 0 {
		return method, rest[:k], rest[k+1:]
	}
	return method, rest, nil
}
