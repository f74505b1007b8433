package traces

import (
	"bytes"
	"strings"
	"time"
)

// The combined and common formats, the most common logs of all, have a
// reader of their own: the template engine reads them too (--format nginx
// --log-format combined), but this one, written out by hand for their one
// shape, takes some two thirds of its time per line. A fuzz test
// (FuzzCombinedMatchesTemplate) checks that the two read every line
// alike.

// combinedParser reads web server access logs in the default formats of
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
type combinedParser struct {
	c        *common
	lr       *lineReader
	combined bool
	userName string
	user     int // index in attrNames of the attribute that is the user
	lc       logClock
	extra    []string // extra field names: extra1, extra2, ...
}

// accessAttrs are the attributes of an access log line, in order.
var accessAttrs = []string{"ip", "remote_user", "method", "path", "protocol", "status", "bytes", "referer", "user_agent"}

func newCombinedParser(c *common, lr *lineReader, combined bool, opts Options) (*combinedParser, error) {
	p := &combinedParser{c: c, lr: lr, combined: combined}
	names := accessAttrs
	if !combined {
		names = names[:7]
	}
	name := "the common log format"
	if combined {
		name = "the combined log format"
	}
	if opts.TimeField != "" || opts.CostField != "" {
		return nil, c.formatErr("%s has no time or cost field to name (its fields: %s)", name, strings.Join(names, ", "))
	}
	if _, err := resolveTimeIs(opts.TimeIs, TimeIsCompletion, false, false, false, name); err != nil {
		return nil, c.formatErr("%s", err.Error())
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
	if p.user < 0 && (!strings.HasPrefix(user, "extra") || len(user) == 5) {
		return nil, c.formatErr("%s has no %q field (its fields: %s, and extra1, extra2, ... after them)", name, user, strings.Join(names, ", "))
	}
	p.userName = user
	c.mode = modeRFC3339 // absolute times
	c.layout = clfLayout
	return p, nil
}

func (p *combinedParser) next(ev *Event) error {
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
func (p *combinedParser) parse(ev *Event, line []byte) error {
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
	vals[2], vals[3], vals[4] = splitRequest(request)
	for k := range count {
		ev.addAttr(accessAttrs[k], vals[k])
	}
	// Text after the last field: extra fields.
	if rest := bytes.TrimRight(line[i:], " \t\r"); len(rest) > 0 {
		if err := readExtras(c, ev, rest, i, n, &p.extra); err != nil {
			return err
		}
	}
	if p.user >= 0 {
		ev.User = vals[p.user]
	} else if ev.User, _ = ev.attrValue(p.userName); ev.User == nil {
		return c.errorf(n, 0, "no %q field in this line", p.userName)
	}
	if err := c.checkUser(ev.User, n, 1); err != nil {
		return err
	}
	return p.setTime(ev, timeText, n, timeCol)
}

// quoted reads the space and the double-quoted field at line[i:], whose
// text may hold \" and \\, and returns the text and the offset after it.
func (p *combinedParser) quoted(line []byte, i, n int, what string) ([]byte, int, error) {
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

// setTime reads $time_local, "10/Oct/2024:13:55:36 +0200" with an
// optional fraction of a second after the seconds, into ev.
func (p *combinedParser) setTime(ev *Event, text []byte, line, col int) error {
	ns, err := p.lc.parse(p.c, timeCLF, text, line, col)
	if err != nil {
		return err
	}
	p.c.noteResolution(ns)
	ev.Time, ev.TimeText = ns, text
	return nil
}

// sniffAccessLog reports whether line is an access log line, and whether
// it is the combined format.
func sniffAccessLog(line []byte) (ok, combined bool) {
	c := common{}
	c.init("", 1)
	c.tf.loc = time.UTC
	p := combinedParser{c: &c, combined: true, user: 0}
	var ev Event
	if p.parse(&ev, line) == nil {
		return true, true
	}
	p.combined = false
	return p.parse(&ev, line) == nil, false
}
