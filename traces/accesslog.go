package traces

import (
	"bytes"
	"strings"
)

// accessLogParser reads web server access logs in the default formats of
// nginx and Apache:
//
//	common:   $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
//	combined: common + ` "$http_referer" "$http_user_agent"`
//
// Each line is one request, whose attributes are ip, remote_user, method,
// path, protocol, status, bytes and, for combined, referer and
// user_agent; the user is the ip unless Options.UserField names another
// attribute. The time is $time_local ("10/Oct/2024:13:55:36 +0200", with
// an optional fraction of a second), read by hand without allocating.
// Quoted fields keep their text as written, escapes included (nginx writes
// a quote inside one as \x22, Apache as \"); a "-" stays "-". A request
// line that is not METHOD PATH PROTOCOL (a scanner's garbage, or "-")
// still makes a request: method takes what there is, path and protocol
// what follows. Empty lines are skipped.
type accessLogParser struct {
	c        *common
	lr       *lineReader
	combined bool
	user     int // index in attrNames of the attribute that is the user

	// The last time read, to the minute, and its offset: lines of one
	// minute share them, and only their seconds need reading.
	minute   [17]byte // "10/Oct/2024:13:55"
	offset   [5]byte  // "+0200"
	minuteAt int64    // the minute's start in Unix seconds
	cached   bool
}

// accessAttrs are the attributes of an access log line, in order.
var accessAttrs = []string{"ip", "remote_user", "method", "path", "protocol", "status", "bytes", "referer", "user_agent"}

func newAccessLogParser(c *common, lr *lineReader, combined bool, opts Options) (*accessLogParser, error) {
	p := &accessLogParser{c: c, lr: lr, combined: combined}
	names := accessAttrs
	if !combined {
		names = names[:7]
	}
	if opts.TimeField != "" || opts.CostField != "" {
		return nil, c.fatalf(0, 0, "an access log has no time or cost field to name (its fields: %s)", strings.Join(names, ", "))
	}
	user := opts.UserField
	if user == "" {
		user = "ip"
	}
	p.user = -1
	for i, n := range names {
		if n == user {
			p.user = i
		}
	}
	if p.user < 0 {
		return nil, c.fatalf(0, 0, "an access log has no %q field (its fields: %s)", user, strings.Join(names, ", "))
	}
	c.mode = modeRFC3339 // absolute times
	return p, nil
}

func (p *accessLogParser) next(ev *Event) error {
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

// parse reads one log line into ev.
func (p *accessLogParser) parse(ev *Event, line []byte) error {
	c, n := p.c, ev.Line
	ev.attrs = ev.attrs[:0]
	ev.costText = nil
	ev.Cost = 1
	var vals [9][]byte // in the order of accessAttrs
	i := 0
	var err error
	// The three words: address, ident, user.
	for k, what := range [3]string{"the client address", "the ident field", "the user"} {
		if k > 0 {
			if i >= len(line) || line[i] != ' ' {
				return c.errorf(n, i+1, "expected a space before %s", what)
			}
			i++
		}
		end := bytes.IndexByte(line[i:], ' ')
		if end <= 0 {
			return c.errorf(n, i+1, "missing %s", what)
		}
		switch k {
		case 0:
			vals[0] = line[i : i+end]
		case 2:
			vals[1] = line[i : i+end]
		}
		i += end
	}
	if i+1 >= len(line) || line[i+1] != '[' {
		return c.errorf(n, i+2, "expected '[' before the time")
	}
	end := bytes.IndexByte(line[i+2:], ']')
	if end < 0 {
		return c.errorf(n, i+2, "the time has no closing ']'")
	}
	timeText, timeCol := line[i+2:i+2+end], i+3
	i += end + 3
	var request []byte
	if request, i, err = p.quoted(line, i, n, "the request"); err != nil {
		return err
	}
	for k, what := range [2]string{"the status", "the size"} {
		if i >= len(line) || line[i] != ' ' {
			return c.errorf(n, i+1, "expected a space before %s", what)
		}
		i++
		end := bytes.IndexByte(line[i:], ' ')
		if end < 0 {
			end = len(line) - i
		}
		v := line[i : i+end]
		switch {
		case k == 0 && (len(v) != 3 || !isDigits(v)):
			return c.errorf(n, i+1, "invalid status %s (want three digits)", quote(v))
		case k == 1 && len(v) == 0:
			return c.errorf(n, i+1, "missing the size")
		case k == 1 && !isDigits(v) && string(v) != "-":
			return c.errorf(n, i+1, "invalid size %s (want a number of bytes or -)", quote(v))
		}
		vals[5+k] = v
		i += end
	}
	count := 7
	if p.combined {
		count = 9
		if vals[7], i, err = p.quoted(line, i, n, "the referer"); err != nil {
			return err
		}
		if vals[8], i, err = p.quoted(line, i, n, "the user agent"); err != nil {
			return err
		}
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if rest := bytes.TrimRight(line[i:], " \t\r"); len(rest) > 0 {
		format := "common"
		if p.combined {
			format = "combined"
		}
		return c.errorf(n, i+1, "unexpected text %s after the last field of the %s log format", quote(rest), format)
	}
	vals[2], vals[3], vals[4] = splitRequest(request)
	for k := range count {
		ev.attrs = append(ev.attrs, attr{name: accessAttrs[k], value: vals[k]})
	}
	ev.User = vals[p.user]
	if err := c.checkUser(ev.User, n, 1); err != nil {
		return err
	}
	return p.setTime(ev, timeText, n, timeCol)
}

// quoted reads the space and the double-quoted field at line[i:], whose
// text may hold \" and \\, and returns the text and the offset after it.
func (p *accessLogParser) quoted(line []byte, i, n int, what string) ([]byte, int, error) {
	if i+1 >= len(line) || line[i] != ' ' || line[i+1] != '"' {
		return nil, i, p.c.errorf(n, i+1, "expected ' \"' before %s", what)
	}
	start := i + 2
	for j := start; ; {
		k := bytes.IndexByte(line[j:], '"')
		if k < 0 {
			return nil, i, p.c.errorf(n, start, "%s has no closing '\"'", what)
		}
		j += k
		// The quote is escaped when an odd number of backslashes
		// precede it.
		b := j
		for b > start && line[b-1] == '\\' {
			b--
		}
		if (j-b)%2 == 0 {
			return line[start:j], j + 1, nil
		}
		j++
	}
}

// splitRequest splits a request line "GET /a?b=1 HTTP/1.1" into its
// method, path and protocol; what is not there is empty.
func splitRequest(r []byte) (method, path, protocol []byte) {
	method, rest, _ := bytes.Cut(r, []byte{' '})
	if k := bytes.LastIndexByte(rest, ' '); k >= 0 {
		return method, rest[:k], rest[k+1:]
	}
	return method, rest, nil
}

// setTime reads $time_local, "10/Oct/2024:13:55:36 +0200" with an
// optional fraction of a second after the seconds, into ev.
func (p *accessLogParser) setTime(ev *Event, text []byte, line, col int) error {
	c := p.c
	ev.TimeText = text
	if c.tf.kind != timeAutoKind {
		return c.setTime(ev, text, line, col)
	}
	if p.cached && len(text) >= 26 && string(text[:17]) == string(p.minute[:]) && string(text[len(text)-5:]) == string(p.offset[:]) {
		if sec, frac, ok := clfSeconds(text[17 : len(text)-5]); ok {
			ev.Time = (p.minuteAt+sec)*1e9 + frac
			return nil
		}
	}
	ns, ok := parseCLF(text)
	if ok {
		sec, _, _ := clfSeconds(text[17 : len(text)-5])
		copy(p.minute[:], text[:17])
		copy(p.offset[:], text[len(text)-5:])
		p.minuteAt = floorDiv64(ns, 1e9) - sec
		p.cached = p.minuteAt < 9223372035-60 && p.minuteAt > -9223372035
	}
	if !ok {
		return c.errorf(line, col, "invalid time %s (want a time such as 10/Oct/2024:13:55:36 +0200)", quote(text))
	}
	ev.Time = ns
	return nil
}

// clfSeconds reads ":ss[.f] " (the seconds of a time, and the space
// before its offset) into whole seconds and nanoseconds.
func clfSeconds(s []byte) (sec, frac int64, ok bool) {
	if len(s) < 4 || s[0] != ':' || s[len(s)-1] != ' ' || !isDigits(s[1:3]) {
		return 0, 0, false
	}
	sec = int64(s[1]-'0')*10 + int64(s[2]-'0')
	if sec > 59 {
		return 0, 0, false
	}
	f := s[3 : len(s)-1]
	if len(f) == 0 {
		return sec, 0, true
	}
	if f[0] != '.' || len(f) == 1 || len(f) > 10 || !isDigits(f[1:]) {
		return 0, 0, false
	}
	for k, d := range f[1:] {
		frac += int64(d-'0') * int64(pow10[8-k])
	}
	return sec, frac, true
}

// floorDiv64 is a/b rounded down, for b > 0.
func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// months are the month names of the Common Log Format, in order.
var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseCLF converts a Common Log Format time, dd/Mon/yyyy:hh:mm:ss[.f]
// +hhmm, into Unix nanoseconds.
func parseCLF(s []byte) (int64, bool) {
	if len(s) < 26 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' || s[17] != ':' ||
		!isDigits(s[0:2]) || !isDigits(s[7:11]) || !isDigits(s[12:14]) || !isDigits(s[15:17]) || !isDigits(s[18:20]) {
		return 0, false
	}
	month := 0
	for m, name := range months {
		if string(s[3:6]) == name {
			month = m + 1
		}
	}
	if month == 0 {
		return 0, false
	}
	i := 20
	var frac int64
	if s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if k := i - start; k < 9 {
				frac += int64(s[i]-'0') * int64(pow10[8-k])
			} else if s[i] != '0' {
				return 0, false // finer than a nanosecond
			}
		}
		if i == start {
			return 0, false
		}
	}
	// The offset: " +hhmm".
	if len(s)-i != 6 || s[i] != ' ' || (s[i+1] != '+' && s[i+1] != '-') || !isDigits(s[i+2:i+6]) {
		return 0, false
	}
	year, day := digitsVal(s[7:11]), digitsVal(s[0:2])
	hour, minute, sec := digitsVal(s[12:14]), digitsVal(s[15:17]), digitsVal(s[18:20])
	oh, om := digitsVal(s[i+2:i+4]), digitsVal(s[i+4:i+6])
	if day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 || oh > 23 || om > 59 {
		return 0, false
	}
	offset := int64(oh*3600 + om*60)
	if s[i+1] == '-' {
		offset = -offset
	}
	secs := daysFromCivil(int64(year), int64(month), int64(day))*86400 + int64(hour*3600+minute*60+sec) - offset
	// Four-digit years keep secs*1e9 inside the int64 range only from
	// 1678 to 2261.
	const maxSec = 9223372035 // the last whole second int64 nanoseconds hold
	if secs > maxSec || secs < -maxSec {
		return 0, false
	}
	return secs*1e9 + frac, true
}

// sniffAccessLog reports whether line is an access log line, and whether
// it is the combined format.
func sniffAccessLog(line []byte) (ok, combined bool) {
	c := common{}
	c.init("", 1)
	p := accessLogParser{c: &c, combined: true, user: 0}
	var ev Event
	if p.parse(&ev, line) == nil {
		return true, true
	}
	p.combined = false
	return p.parse(&ev, line) == nil, false
}
