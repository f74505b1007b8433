package traces

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// w3cParser reads W3C extended logs (IIS) and CloudFront's standard
// logs: #-directives, of which #Fields: names the fields of the lines
// after it (a later #Fields: names them anew), and lines of fields
// separated by spaces (W3C) or tabs (CloudFront), "-" for none. The time
// is the date and time fields, in UTC; the user the c-ip field.
type w3cParser struct {
	c          *common
	lr         *lineReader
	cloudfront bool
	sep        byte
	opts       Options
	timeIs     TimeIs
	lc         logClock

	fieldsLine int      // the line of the #Fields: in force; 0: none yet
	names      []string // its fields' attribute names
	raw        []string // its fields as written
	date, time int      // the date and time fields; -1: none
	dur        int      // time-taken; -1: none
	user       int      // the user's field
	day        []byte   // the date of the last #Date: directive
	vals       [][]byte // the current line's fields
	buf        []byte   // the current line's time text
}

func newW3CParser(c *common, lr *lineReader, cloudfront bool, opts Options) (*w3cParser, error) {
	if opts.TimeField != "" || opts.CostField != "" {
		return nil, c.formatErr("a W3C log reads its time from its date and time fields; it has no other time or cost field to name")
	}
	p := &w3cParser{c: c, lr: lr, cloudfront: cloudfront, sep: ' ', opts: opts}
	if cloudfront {
		p.sep = '\t'
	}
	c.mode = modeRFC3339
	c.layout = w3cLayout
	return p, nil
}

func (p *w3cParser) name() string {
	if p.cloudfront {
		return "the CloudFront log"
	}
	return "the W3C log"
}

func (p *w3cParser) next(ev *Event) error {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == errLineTooLong {
				return p.c.lineTooLong(p.lr.line)
			}
			return err
		}
		if k := len(line); k > 0 && line[k-1] == '\r' {
			line = line[:k-1]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n := p.lr.line
		if line[0] == '#' {
			if err := p.directive(line, n); err != nil {
				return err
			}
			continue
		}
		ev.Line = n
		return p.parse(ev, line, n)
	}
}

// directive reads a #-directive: #Fields: names the fields, #Date: gives
// the date of lines without a date field.
func (p *w3cParser) directive(line []byte, n int) error {
	if d, ok := bytes.CutPrefix(line, []byte("#Date:")); ok {
		d = bytes.TrimSpace(d)
		if len(d) >= 10 {
			p.day = append(p.day[:0], d[:10]...)
		}
		return nil
	}
	f, ok := bytes.CutPrefix(line, []byte("#Fields:"))
	if !ok {
		return nil // #Version, #Software, #Start-Date, #Remark: nothing to read
	}
	p.names, p.raw = p.names[:0], p.raw[:0]
	p.date, p.time, p.dur, p.user = -1, -1, -1, -1
	user := p.opts.UserField
	if user == "" {
		user = "ip"
	}
	for _, w := range strings.Fields(string(f)) {
		i := len(p.names)
		lower := strings.ToLower(w)
		a, ok := w3cNames[lower]
		if !ok {
			a = w3cAttr(lower)
		}
		switch lower {
		case "date":
			p.date, a = i, "date"
		case "time":
			p.time, a = i, "time"
		case "time-taken":
			p.dur = i
		}
		if a == user || w == user {
			p.user = i
		}
		p.names = append(p.names, a)
		p.raw = append(p.raw, w)
	}
	p.fieldsLine = n
	if p.time < 0 {
		return p.c.fatalf(n, 0, "the #Fields: directive names no time field (its fields: %s)", strings.Join(p.raw, " "))
	}
	if p.user < 0 {
		return p.c.fatalf(n, 0, "the #Fields: directive names no %q field (its fields: %s)", user, strings.Join(p.raw, " "))
	}
	ti, err := resolveTimeIs(p.opts.TimeIs, TimeIsCompletion, false, p.dur >= 0, false, p.name()+" of the #Fields: on line "+strconv.Itoa(n))
	if err != nil {
		return p.c.fatalf(n, 0, "%s", err.Error())
	}
	p.timeIs = ti
	return nil
}

// w3cAttr is the attribute name of a field: lower case, every byte but
// letters and digits as _, none at either end.
func w3cAttr(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	return strings.Trim(string(b), "_")
}

// parse reads one line of fields into ev.
func (p *w3cParser) parse(ev *Event, line []byte, n int) error {
	c := p.c
	if p.fieldsLine == 0 {
		return c.fatalf(n, 1, "a line of fields before any #Fields: directive names them")
	}
	p.vals = p.vals[:0]
	start := 0
	for {
		k := indexByte(line[start:], p.sep)
		if k < 0 {
			p.vals = append(p.vals, line[start:])
			break
		}
		p.vals = append(p.vals, line[start:start+k])
		start += k + 1
	}
	if len(p.vals) != len(p.names) {
		return c.errorf(n, 0, "expected %d fields, as the #Fields: directive on line %d names, got %d", len(p.names), p.fieldsLine, len(p.vals))
	}
	ev.attrs = ev.attrs[:0]
	ev.costText, ev.Cost = nil, 1
	for i, v := range p.vals {
		if i == p.date || i == p.time {
			continue
		}
		ev.addAttr(p.names[i], v)
	}
	ev.User = p.vals[p.user]
	if err := c.checkUser(ev.User, n, p.col(p.user)); err != nil {
		return err
	}
	day := p.day
	if p.date >= 0 {
		day = p.vals[p.date]
	}
	if len(day) == 0 {
		return c.errorf(n, p.col(p.time), "no date: the fields have no date and no #Date: directive came before")
	}
	p.buf = append(append(append(p.buf[:0], day...), ' '), p.vals[p.time]...)
	ns, e, _ := parseRFC3339(p.buf, time.UTC, c.tf.round)
	if e != numOK {
		col := p.col(p.time)
		if p.date >= 0 {
			col = p.col(p.date)
		}
		return c.errorf(n, col, "invalid date and time %s (want 2024-10-10 13:55:36, UTC)", quote(p.buf))
	}
	c.noteResolution(ns)
	ev.Time, ev.TimeText = ns, p.buf
	if p.timeIs != TimeIsCompletion {
		return nil
	}
	kind := durMillis
	if p.cloudfront {
		kind = durSeconds
	}
	d, ok, err := parseLogDuration(c, kind, p.vals[p.dur], "time-taken", n, p.col(p.dur))
	if err != nil {
		return err
	}
	if !ok {
		return c.errorf(n, p.col(p.dur), "time-taken is %s: no duration to take from the completion time (--time-is arrival replays the time as logged)", quote(p.vals[p.dur]))
	}
	ev.Time -= d
	// As the log writes times: "2024-10-10 13:55:35.918".
	ev.TimeText = p.lc.formatMinute(timeW3C, ev.Time, 0, "2006-01-02 15:04", "")
	return nil
}

// col returns the 1-based byte column of field i of the current line.
func (p *w3cParser) col(i int) int {
	col := 1
	for k := 0; k < i && k < len(p.vals); k++ {
		col += len(p.vals[k]) + 1
	}
	return col
}
