package traces

import (
	"bytes"
	"io"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// csvParser reads CSV traces. Lines without a double quote, nearly all of
// them, are split in place by a fast path; a line with a quote goes to a
// full RFC 4180 parser that may read further lines for a quoted field.
type csvParser struct {
	c  *common
	lr *lineReader

	headerDone bool
	ncols      int
	userCol    int
	timeCol    int
	costCol    int // -1: no cost column
	attrCols   []int
	attrNames  []string

	// fast: nextFast may read records (the header is read, there is no
	// cost column nor more than maxFastCols, and timestamps are numbers).
	fast   bool
	noFast bool // tests: read every record the general way
	// only, when not nil, are the users whose plain lines nextFast reads;
	// it passes over the others (see Reader.SkipOtherUsers).
	only [][]byte

	fields []csvField
	rec    []byte    // the unquoted fields of a record read by the slow path
	spans  []recSpan // where they are in rec
}

// recSpan is a field of a record read by the slow path: its bounds in
// csvParser.rec and where it starts in the trace.
type recSpan struct{ start, end, line, col int }

// csvField is one field of a record: its value and where it starts.
type csvField struct {
	val  []byte
	line int
	col  int
}

func (p *csvParser) next(ev *Event) error {
	if !p.headerDone {
		if err := p.readHeader(); err != nil {
			return err
		}
	}
	line, ascii, err := p.record()
	if err != nil {
		return err
	}
	f := p.fields
	if len(f) != p.ncols {
		return p.c.errorf(line, 0, "expected %d fields, got %d", p.ncols, len(f))
	}
	if !ascii {
		for i := range f {
			if !utf8.Valid(f[i].val) {
				return p.c.errorf(f[i].line, f[i].col, "invalid UTF-8 in %s: %s", p.columnName(i), quote(f[i].val))
			}
		}
	}
	ev.Line = line
	uf := &f[p.userCol]
	ev.User = uf.val
	if len(uf.val) == 0 {
		return p.c.errorf(uf.line, uf.col, "empty user")
	}
	tf := &f[p.timeCol]
	if err := p.c.setTime(ev, tf.val, tf.line, tf.col); err != nil {
		return err
	}
	if p.costCol >= 0 {
		cf := &f[p.costCol]
		if err := p.c.setCost(ev, cf.val, cf.line, cf.col); err != nil {
			return err
		}
		// The column exists even where a cell is empty: writers keep it.
		ev.costText = cf.val[:len(cf.val):len(cf.val)]
	} else {
		ev.Cost = 1
		ev.costText = nil
	}
	ev.attrs = ev.attrs[:0]
	for j, ci := range p.attrCols {
		ev.attrs = append(ev.attrs, attr{name: p.attrNames[j], value: f[ci].val})
	}
	p.fast = p.costCol < 0 && p.ncols <= maxFastCols && p.c.mode == modeNumeric
	return nil
}

// nextFast reads the next record straight into ev when it has the common
// shape: a whole line already buffered, no quote, only ASCII bytes, the
// header's number of fields, a non-empty user, a timestamp of at most 18
// digits after earlier numeric ones, and no cost column. It
// reports whether it did; otherwise it has read nothing, and next, which
// handles every case, reads the record instead. Doing the common case in
// one function, without building the fields, roughly halves the time a
// record takes to read.
func (p *csvParser) nextFast(ev *Event) bool {
	if !p.fast || p.noFast {
		return false
	}
	lr := p.lr
	buf := lr.buf[lr.pos:lr.end]
	nl := bytes.IndexByte(buf, '\n')
	for p.only != nil && nl > 0 && nl <= MaxLineBytes && p.other(buf[:nl]) {
		lr.pos += nl + 1
		lr.line++
		buf = lr.buf[lr.pos:lr.end]
		nl = bytes.IndexByte(buf, '\n')
	}
	if nl <= 0 || nl > MaxLineBytes {
		return false // a refill, a blank or an overlong line: the general path
	}
	line := buf[:nl]
	if line[nl-1] == '\r' {
		line = line[:nl-1]
	}
	// Field boundaries: ends[i] is the index of the comma after field i.
	var ends [maxFastCols]int
	cols, high := 0, uint64(0)
	for i := 0; i < len(line); i += 8 {
		w := wordAt(line, i)
		high |= w
		if zeroBytes(w^('"'*ones)) != 0 {
			return false
		}
		for c := zeroBytes(w ^ (',' * ones)); c != 0; c &= c - 1 {
			if cols == p.ncols-1 {
				return false // too many fields
			}
			ends[cols] = i + bits.TrailingZeros64(c)/8
			cols++
		}
	}
	if cols != p.ncols-1 || high&(0x80*ones) != 0 {
		return false
	}
	ends[cols] = len(line)
	field := func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1] + 1
		}
		return line[start:ends[i]:ends[i]]
	}
	user, ts := field(p.userCol), field(p.timeCol)
	if len(user) == 0 || len(ts) == 0 || len(ts) > 18 {
		return false
	}
	var v int64
	for _, c := range ts {
		d := c - '0'
		if d > 9 {
			return false
		}
		v = v*10 + int64(d)
	}
	if v > p.c.fastMax {
		return false
	}
	lr.pos += nl + 1
	lr.line++
	ev.Line, ev.User, ev.TimeText, ev.Time, ev.Cost = lr.line, user, ts, v*p.c.unit, 1
	ev.costText, ev.attrs = nil, ev.attrs[:0]
	for j, ci := range p.attrCols {
		ev.attrs = append(ev.attrs, attr{name: p.attrNames[j], value: field(ci)})
	}
	return true
}

// other reports whether line is plainly a record of none of the users
// p.only: no quote, and its user's field is none of them.
func (p *csvParser) other(line []byte) bool {
	if bytes.IndexByte(line, '"') >= 0 {
		return false
	}
	user := line
	for range p.userCol {
		i := bytes.IndexByte(user, ',')
		if i < 0 {
			return false
		}
		user = user[i+1:]
	}
	if i := bytes.IndexByte(user, ','); i >= 0 {
		user = user[:i]
	}
	user = bytes.TrimSuffix(user, []byte("\r"))
	for _, u := range p.only {
		if bytes.Equal(user, u) {
			return false
		}
	}
	return true
}

// maxFastCols is the most columns a trace can have for nextFast to read it.
const maxFastCols = 8

// columnName names column i for an error message.
func (p *csvParser) columnName(i int) string {
	switch i {
	case p.userCol:
		return p.c.names.user
	case p.timeCol:
		return p.c.names.time
	case p.costCol:
		return p.c.names.cost
	}
	for j, ci := range p.attrCols {
		if ci == i {
			return "column " + quote([]byte(p.attrNames[j]))
		}
	}
	return "field"
}

// record reads the next non-blank record into p.fields and returns the
// line it starts on, and whether it is all ASCII (so need not be checked
// for UTF-8).
func (p *csvParser) record() (int, bool, error) {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == errLineTooLong {
				return 0, false, p.c.lineTooLong(p.lr.line)
			}
			return 0, false, err
		}
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			continue
		}
		start := p.lr.line
		quoted, ascii := p.splitPlain(line, start)
		if quoted {
			return start, false, p.splitQuoted(line, start)
		}
		return start, ascii, nil
	}
}

// splitPlain splits a line at its commas, dropping a final '\r', in one
// pass that also notes non-ASCII bytes. It stops early, reporting quoted,
// at a double quote: such a line needs splitQuoted. It looks at eight
// bytes at a time and finds the commas in a word from its bits, with no
// branch per byte, as the place of a comma differs from line to line.
func (p *csvParser) splitPlain(line []byte, lineNo int) (quoted, ascii bool) {
	if n := len(line); line[n-1] == '\r' {
		line = line[:n-1]
	}
	fields := p.fields[:0]
	start := 0
	var high uint64
	for i := 0; i < len(line); i += 8 {
		w := wordAt(line, i)
		high |= w
		if zeroBytes(w^('"'*ones)) != 0 {
			p.fields = fields
			return true, false
		}
		for c := zeroBytes(w ^ (',' * ones)); c != 0; c &= c - 1 {
			j := i + bits.TrailingZeros64(c)/8
			fields = addField(fields, line[start:j:j], lineNo, start+1)
			start = j + 1
		}
	}
	p.fields = addField(fields, line[start:len(line):len(line)], lineNo, start+1)
	return false, high&(0x80*ones) == 0
}

// addField appends a field to fields. It sets the new element's fields one
// by one: appending a composite literal builds it on the stack and copies
// it with wider loads than the stores that built it, which stalls.
func addField(fields []csvField, val []byte, line, col int) []csvField {
	n := len(fields)
	if n == cap(fields) {
		fields = append(fields, csvField{})
	} else {
		fields = fields[:n+1]
	}
	f := &fields[n]
	f.val, f.line, f.col = val, line, col
	return fields
}

// splitQuoted parses a record that has a quote, reading further lines for
// a quoted field that spans them. Field values are copied into p.rec.
func (p *csvParser) splitQuoted(line []byte, lineNo int) error {
	spans := p.spans[:0]
	defer func() { p.spans = spans[:0] }()
	p.rec = p.rec[:0]
	cur := lineNo
	pos := 0
	for {
		col := pos + 1
		if pos < len(line) && line[pos] == '"' {
			qline, qcol := cur, col
			start := len(p.rec)
			pos++
			for {
				i := bytes.IndexByte(line[pos:], '"')
				if i < 0 {
					// The field goes on on the next line.
					p.rec = append(p.rec, line[pos:]...)
					p.rec = append(p.rec, '\n')
					if len(p.rec) > MaxLineBytes {
						return p.c.fatalf(qline, qcol, "quoted field longer than %s", byteSize(MaxLineBytes))
					}
					next, err := p.lr.next()
					switch err {
					case nil:
					case io.EOF:
						return p.c.errorf(qline, qcol, "unterminated quote")
					case errLineTooLong:
						e := p.c.lineTooLong(p.lr.line)
						e.fatal = true
						return e
					default:
						return err
					}
					line, pos, cur = next, 0, p.lr.line
					continue
				}
				p.rec = append(p.rec, line[pos:pos+i]...)
				pos += i + 1
				if pos < len(line) && line[pos] == '"' {
					p.rec = append(p.rec, '"')
					pos++
					continue
				}
				break
			}
			spans = append(spans, recSpan{start, len(p.rec), qline, qcol})
			if pos == len(line) || (pos+1 == len(line) && line[pos] == '\r') {
				break
			}
			if line[pos] != ',' {
				return p.c.errorf(cur, pos+1, "unexpected %s after a closing quote", quote(line[pos:pos+1]))
			}
			pos++
			continue
		}
		i := bytes.IndexByte(line[pos:], ',')
		var v []byte
		if i < 0 {
			v = line[pos:]
			if n := len(v); n > 0 && v[n-1] == '\r' {
				v = v[:n-1]
			}
		} else {
			v = line[pos : pos+i]
		}
		if j := bytes.IndexByte(v, '"'); j >= 0 {
			return p.c.errorf(cur, pos+j+1, `bare " in an unquoted field`)
		}
		start := len(p.rec)
		p.rec = append(p.rec, v...)
		spans = append(spans, recSpan{start, len(p.rec), cur, col})
		if i < 0 {
			break
		}
		pos += i + 1
	}
	fields := p.fields[:0]
	for _, s := range spans {
		fields = append(fields, csvField{val: p.rec[s.start:s.end:s.end], line: s.line, col: s.col})
	}
	p.fields = fields
	return nil
}

// readHeader reads the header row and finds the columns.
func (p *csvParser) readHeader() error {
	line, _, err := p.record()
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			pe.fatal = true
		}
		return err
	}
	p.headerDone = true
	p.userCol, p.timeCol, p.costCol = -1, -1, -1
	p.ncols = len(p.fields)
	names := make([]string, len(p.fields))
	for i, f := range p.fields {
		if !utf8.Valid(f.val) {
			return p.c.fatalf(line, f.col, "invalid UTF-8 in header column %d", i+1)
		}
		name := strings.TrimSpace(string(f.val))
		names[i] = name
		if name == "" {
			return p.c.fatalf(line, f.col, "empty name for column %d in the header", i+1)
		}
		for j := range i {
			if strings.EqualFold(names[j], name) && (p.c.names.is(name, true) || names[j] == name) {
				return p.c.fatalf(line, f.col, "duplicate column %q in the header", name)
			}
		}
		switch n := &p.c.names; {
		case strings.EqualFold(name, n.user):
			p.userCol = i
		case strings.EqualFold(name, n.time):
			p.timeCol = i
		case strings.EqualFold(name, n.cost):
			p.costCol = i
		default:
			p.attrCols = append(p.attrCols, i)
			p.attrNames = append(p.attrNames, name)
		}
	}
	var missing []string
	if p.userCol < 0 {
		missing = append(missing, quote([]byte(p.c.names.user)))
	}
	if p.timeCol < 0 {
		missing = append(missing, quote([]byte(p.c.names.time)))
	}
	if len(missing) == 0 {
		return nil
	}
	var e *ParseError
	if p.c.names.mapped {
		e = p.c.fatalf(line, 0, "header has no %s column (its columns: %s)",
			strings.Join(missing, " or "), strings.Join(names, ", "))
	} else {
		e = p.c.fatalf(line, 0, "header has no %s column (the first line must name the columns, e.g. user,timestamp; it has %s)",
			strings.Join(missing, " or "), quote([]byte(strings.Join(names, ","))))
	}
	if p.userCol < 0 {
		e.Missing |= FieldUser
	}
	if p.timeCol < 0 {
		e.Missing |= FieldTime
	}
	return e
}

// isReserved reports whether a column name is user, timestamp or cost, in
// any case.
func isReserved(name string) bool {
	switch strings.ToLower(name) {
	case "user", "timestamp", "cost":
		return true
	}
	return false
}
