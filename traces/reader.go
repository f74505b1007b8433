package traces

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultMaxYAMLBytes is the size cap on a YAML trace when
// Options.MaxYAMLBytes is 0. YAML has no streaming form: a YAML trace is
// parsed whole, and its node tree takes some 25 times the size of its
// text (about 400 MB at the cap).
const DefaultMaxYAMLBytes = 16 << 20

// MaxLineBytes is the longest line (without its line end) a CSV or JSON
// Lines trace may have, and the largest a quoted CSV record may grow. A
// longer line is an error once that much of it is read, so that input
// without line ends (/dev/zero) fails rather than being read forever; in
// lenient mode the rest of the line is skipped, never held.
const MaxLineBytes = 1 << 20

// Options configure a Reader.
type Options struct {
	// Format is the trace's format. FormatAuto picks it from the name's
	// extension, else from the content.
	Format Format
	// Unit is the unit of numeric timestamps; 0 means time.Second.
	Unit time.Duration
	// Lenient makes the reader skip bad records instead of stopping at the
	// first: each is reported to OnSkip and counted by Skipped. Problems
	// that leave nothing to read on (a bad CSV header, a YAML syntax error,
	// an I/O error) still end the read.
	Lenient bool
	// OnSkip, when not nil, is called with the *ParseError of every record
	// skipped in lenient mode.
	OnSkip func(err error)
	// MaxYAMLBytes caps the size of a YAML trace (after decompression);
	// 0 means DefaultMaxYAMLBytes.
	MaxYAMLBytes int64
	// UserField, TimeField and CostField name the fields the user, the
	// timestamp and the cost are read from: CSV columns, or JSON Lines and
	// YAML keys, where a dotted path ("request.remote_ip") reaches into
	// nested objects. Empty means "user", "timestamp" and "cost"; an
	// access log's user is its "ip" unless UserField says otherwise.
	UserField, TimeField, CostField string
	// TimeFormat says how timestamps are written: TimeFormatAuto (or
	// empty: numbers in Unit, or RFC 3339 times, as the first timestamp
	// says; also with a space for the T, and without an offset),
	// TimeFormatUnix, TimeFormatUnixMs, TimeFormatUnixUs,
	// TimeFormatUnixNs (numbers in that unit, whatever Unit says),
	// TimeFormatRFC3339, TimeFormatCLF, or a Go reference layout such as
	// "2006-01-02 15:04:05".
	TimeFormat string
	// Location is the zone of times written without an offset; nil means
	// UTC. A time it skips or repeats (at a daylight saving change) is an
	// error naming the line.
	Location *time.Location
	// TimeRound rounds timestamps finer than a nanosecond to the nearest
	// nanosecond (halves away from zero) instead of refusing them.
	TimeRound bool
	// LogFormat is the line format of a log whose format takes one: an
	// nginx log_format string (or combined, common, main, upstreaminfo)
	// for Nginx, an Envoy format string for Envoy. Empty: the format's
	// default.
	LogFormat string
	// TimeIs says what a log's times record (see TimeIs); the default is
	// the format's (FormatInfo.TimeIs).
	TimeIs TimeIs
}

// A Reader reads the events of a trace one at a time, in trace order. Its
// memory does not grow with the length of a CSV or JSON Lines trace. A
// Reader is not safe for concurrent use.
type Reader struct {
	c       common
	format  Format
	opts    Options
	p       parser
	csv     *csvParser // p, when the trace is CSV
	ev      Event
	skipped int
	err     error // sticky: returned by every Next after it
	gz      *gzip.Reader
	file    *os.File
}

// parser is one format's record reader.
type parser interface {
	// next fills ev with the next record. It returns io.EOF at the end, a
	// *ParseError for bad content, or an I/O error.
	next(ev *Event) error
}

// NewReader returns a Reader of the trace r. name is the name errors give
// the trace ("trace.csv"; "-" shows as "stdin"); its extension picks the
// format when opts.Format is FormatAuto. Gzip-compressed content is
// recognized by its magic bytes and decompressed. Closing the Reader does
// not close r.
func NewReader(r io.Reader, name string, opts Options) (*Reader, error) {
	if name == "-" {
		name = "stdin"
	}
	if opts.Unit < 0 {
		return nil, fmt.Errorf("traces: time unit must be positive, got %v", opts.Unit)
	}
	if opts.Unit == 0 {
		opts.Unit = time.Second
	}
	tf, unit, err := parseTimeFormat(opts)
	if err != nil {
		return nil, err
	}
	opts.Unit = unit
	if opts.MaxYAMLBytes <= 0 {
		opts.MaxYAMLBytes = DefaultMaxYAMLBytes
	}
	if opts.Format != FormatAuto && entryOf(opts.Format) == nil {
		return nil, fmt.Errorf("traces: unknown format %v", opts.Format)
	}
	rd := &Reader{opts: opts}
	rd.c.init(name, opts.Unit)
	rd.c.names = newFieldNames(opts)
	rd.c.tf = tf
	switch tf.kind {
	case timeNumericKind:
		rd.c.mode = modeNumeric
	case timeRFC3339Kind, timeLayoutKind:
		rd.c.mode = modeRFC3339
	}
	if n := rd.c.names; n.user == n.time || n.user == n.cost || n.time == n.cost {
		return nil, fmt.Errorf("traces: the user, timestamp and cost fields must differ, got %q, %q and %q", n.user, n.time, n.cost)
	}
	rd.ev.names = &rd.c.names
	rd.ev.File = name

	var magic [2]byte
	n, err := io.ReadFull(r, magic[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("traces: %s: %w", name, err)
	}
	src := io.MultiReader(bytes.NewReader(magic[:n]), r)
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("traces: %s: %w", name, err)
		}
		rd.gz = gz
		src = gzipStream{gz}
	}

	lr := newLineReader(src)
	if err := lr.peek(); err != nil {
		rd.closeGzip()
		return nil, fmt.Errorf("traces: %s: %w", name, err)
	}
	lr.skipBOM()
	rd.format = opts.Format
	if rd.format == FormatAuto {
		rd.format = FormatOf(name)
	}
	if rd.format == FormatAuto {
		rd.format = sniff(lr.buffered())
	}
	if opts.LogFormat != "" && rd.format != Nginx && rd.format != Envoy {
		rd.closeGzip()
		return nil, fmt.Errorf("traces: %s: a log format is given, but the trace is %s, which takes none (--format nginx or envoy does)", name, rd.format)
	}
	p, err := entryOf(rd.format).open(&rd.c, lr, opts)
	if err != nil {
		rd.closeGzip()
		if fe, ok := err.(*FormatError); ok && fe.File == "" {
			fe.File = name
		}
		return nil, err
	}
	rd.p = p
	rd.csv, _ = p.(*csvParser)
	return rd, nil
}

// gzipStream is a gzip-compressed trace's content, whose reads say what
// an early end means.
type gzipStream struct{ gz *gzip.Reader }

// ErrTruncatedGzip is the error for a gzip-compressed trace whose
// compressed stream ends early: a file cut short, as a copy or download
// interrupted leaves it. What was read before it is good; nothing after
// it can be.
var ErrTruncatedGzip = errors.New("unexpected EOF in the gzip-compressed stream (the file is truncated)")

func (g gzipStream) Read(p []byte) (int, error) {
	n, err := g.gz.Read(p)
	if err == io.ErrUnexpectedEOF {
		err = ErrTruncatedGzip
	}
	return n, err
}

// Open opens the trace file at path and returns a Reader of it; path "-"
// reads stdin instead. Close closes the file.
func Open(path string, stdin io.Reader, opts Options) (*Reader, error) {
	if path == "-" {
		if stdin == nil {
			return nil, errors.New("traces: no standard input to read")
		}
		return NewReader(stdin, "-", opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	r, err := NewReader(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// Next returns the next event, or io.EOF after the last. The returned
// *Event is the same on every call and its slices are views: both are
// valid until the next call of Next. In strict mode the first bad record
// ends the read: Next returns its *ParseError, then the same error again.
// In lenient mode bad records are skipped (see Options.Lenient).
func (r *Reader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.csv != nil && r.csv.nextFast(&r.ev) {
		return &r.ev, nil
	}
	for {
		err := r.p.next(&r.ev)
		if err == nil {
			return &r.ev, nil
		}
		if pe, ok := err.(*ParseError); ok && r.opts.Lenient && !pe.fatal {
			r.skipped++
			if r.opts.OnSkip != nil {
				r.opts.OnSkip(err)
			}
			continue
		}
		if err != io.EOF {
			if _, ok := err.(*ParseError); !ok {
				err = fmt.Errorf("traces: %s: %w", r.c.file, err)
			}
		}
		r.err = err
		return nil, err
	}
}

// SkipOtherUsers makes Next pass over, without reading them, the plain
// CSV records (no quote) whose user is none of users: for a second read
// of a trace already read whole, which needs only some users' records.
// The records passed over are not checked; every other is read as
// before. Other formats are read as before.
func (r *Reader) SkipOtherUsers(users []string) {
	if r.csv == nil {
		return
	}
	r.csv.only = [][]byte{}
	for _, u := range users {
		r.csv.only = append(r.csv.only, []byte(u))
	}
}

// Skipped returns the number of records skipped so far in lenient mode.
func (r *Reader) Skipped() int { return r.skipped }

// RFC3339 reports whether the trace's timestamps are RFC 3339 times rather
// than numbers. It is known once the first event has been read.
func (r *Reader) RFC3339() bool { return r.c.mode == modeRFC3339 }

// TimesKnown reports whether the kind of the trace's timestamps (RFC 3339
// times or numbers) is known: once a timestamp has been read, or from the
// format (access logs, --time-format).
func (r *Reader) TimesKnown() bool { return r.c.mode != modeUnknown }

// Resolution returns the resolution of the times a log wrote, as far as
// it has been read: the coarsest power of ten of a nanosecond, up to a
// second, that every one of them is a multiple of (time.Second for
// $time_local's whole seconds, time.Millisecond for $msec); 0 for traces
// that are not logs, and before a time is read.
func (r *Reader) Resolution() time.Duration { return time.Duration(r.c.res) }

// Format returns the trace's format, as given or as detected.
func (r *Reader) Format() Format { return r.format }

// Name returns the name errors give the trace.
func (r *Reader) Name() string { return r.c.file }

// Unit returns the unit of numeric timestamps.
func (r *Reader) Unit() time.Duration { return r.opts.Unit }

// Close releases the reader's resources, closing the file if Open opened
// one. It does not close an io.Reader given to NewReader.
func (r *Reader) Close() error {
	if r.err == nil {
		r.err = errors.New("traces: read after Close")
	}
	err := r.closeGzip()
	if r.file != nil {
		if ferr := r.file.Close(); err == nil {
			err = ferr
		}
		r.file = nil
	}
	return err
}

func (r *Reader) closeGzip() error {
	if r.gz == nil {
		return nil
	}
	err := r.gz.Close()
	r.gz = nil
	return err
}

// Timestamp kinds, fixed by the first timestamp of a trace.
const (
	modeUnknown = iota
	modeNumeric
	modeRFC3339
)

// common is what every format's parser shares: the file name for errors
// and the conversion of timestamps, costs and users.
type common struct {
	file string
	unit int64
	// fastMax is the largest integer timestamp whose product with unit
	// fits in an int64; 0 when the unit is not a power of ten.
	fastMax int64
	mode    uint8
	// names are the fields the user, timestamp and cost are read from.
	names fieldNames
	tf    timeFormat
	// layout is how a log shows its times (TimeWriter): a Go layout, or
	// layoutEpoch; "" for traces whose times are numbers or RFC 3339.
	layout string
	// res is the coarsest power of ten of nanoseconds, up to a second,
	// that every time a log wrote is a multiple of: its resolution; 0
	// before the first.
	res int64
}

// noteResolution takes the logged time ns into the trace's resolution.
func (c *common) noteResolution(ns int64) {
	if c.res == 0 {
		c.res = 1e9
	}
	for c.res > 1 && ns%c.res != 0 {
		c.res /= 10
	}
}

// fieldNames are the names of the fields a trace's user, timestamp and
// cost are read from.
type fieldNames struct {
	user, time, cost string
	// mapped: they are not the defaults user, timestamp and cost.
	mapped bool
}

// newFieldNames returns the field names opts asks for.
func newFieldNames(opts Options) fieldNames {
	n := fieldNames{user: "user", time: "timestamp", cost: "cost"}
	for _, f := range []struct {
		from string
		to   *string
	}{{opts.UserField, &n.user}, {opts.TimeField, &n.time}, {opts.CostField, &n.cost}} {
		if f.from != "" && f.from != *f.to {
			*f.to, n.mapped = f.from, true
		}
	}
	return n
}

// is reports whether name is one of the three fields, case aside when
// caseless.
func (n *fieldNames) is(name string, caseless bool) bool {
	for _, f := range [3]string{n.user, n.time, n.cost} {
		if name == f || caseless && strings.EqualFold(name, f) {
			return true
		}
	}
	return false
}

func (c *common) init(file string, unit time.Duration) {
	c.file = file
	c.unit = int64(unit)
	c.fastMax = math.MaxInt64 / c.unit
}

func (c *common) errorf(line, col int, format string, args ...any) *ParseError {
	return &ParseError{File: c.file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// missing is the error for a record without the field f; fields lists
// the fields it has.
func (c *common) missing(line, col int, f Field, fields string) *ParseError {
	name := c.names.user
	if f == FieldTime {
		name = c.names.time
	}
	e := c.errorf(line, col, "missing %s%s", quote([]byte(name)), fields)
	e.Missing = f
	return e
}

// formatErr is the error for a way of reading the trace that does not
// fit it (see FormatError).
func (c *common) formatErr(format string, args ...any) *FormatError {
	return &FormatError{File: c.file, Msg: fmt.Sprintf(format, args...)}
}

func (c *common) fatalf(line, col int, format string, args ...any) *ParseError {
	e := c.errorf(line, col, format, args...)
	e.fatal = true
	return e
}

// lineTooLong is the error for a line over MaxLineBytes.
func (c *common) lineTooLong(line int) *ParseError {
	return c.errorf(line, 0, "line longer than %s", byteSize(MaxLineBytes))
}

// setTime converts text into ev.Time and sets ev.TimeText.
func (c *common) setTime(ev *Event, text []byte, line, col int) error {
	ev.TimeText = text
	// Fast path: a short unsigned integer, the common case.
	if n := len(text); n > 0 && n <= 18 && c.mode == modeNumeric {
		var v int64
		i := 0
		for ; i < n; i++ {
			d := text[i] - '0'
			if d > 9 {
				break
			}
			v = v*10 + int64(d)
		}
		if i == n && v <= c.fastMax {
			ev.Time = v * c.unit
			return nil
		}
	}
	if len(text) == 0 {
		return c.errorf(line, col, "empty timestamp")
	}
	if c.tf.kind == timeLayoutKind {
		return c.setLayoutTime(ev, text, line, col)
	}
	if isRFC3339(text) && c.tf.kind != timeNumericKind {
		if c.mode == modeNumeric {
			return c.errorf(line, col, "timestamp %s is an RFC 3339 time but earlier timestamps are numbers", quote(text))
		}
		loc := c.tf.loc
		if c.tf.kind == timeRFC3339Kind {
			loc = nil // RFC 3339 proper: the offset is required
		}
		ns, e, why := parseRFC3339(text, loc, c.tf.round)
		switch e {
		case numRange:
			return c.errorf(line, col, "timestamp %s out of range (%s to %s)", quote(text), minRFC3339, maxRFC3339)
		case numPrecision:
			return c.errorf(line, col, "timestamp %s is finer than a nanosecond (--time-round rounds it)", quote(text))
		case numLeapSecond:
			return c.errorf(line, col, "timestamp %s is a leap second; leap seconds are not supported", quote(text))
		case numLocal:
			return c.errorf(line, col, "local time %s %s", quote(text), why)
		case numSyntax:
			return c.errorf(line, col, "invalid RFC 3339 timestamp %s", quote(text))
		}
		c.mode = modeRFC3339
		ev.Time = ns
		return nil
	}
	if c.tf.kind == timeRFC3339Kind {
		return c.errorf(line, col, "invalid RFC 3339 timestamp %s", quote(text))
	}
	ns, e := parseDecimal(text, c.unit, c.tf.round)
	switch e {
	case numRange:
		e := c.errorf(line, col, "timestamp %s out of range (int64 nanoseconds)", quote(text))
		if u, name := epochUnit(text, c.unit); u != 0 {
			e.Msg += "; it looks like epoch " + name
			e.EpochUnit = u
		}
		return e
	case numPrecision:
		return c.errorf(line, col, "timestamp %s is finer than a nanosecond (--time-round rounds it)", quote(text))
	case numSyntax:
		return c.errorf(line, col, "invalid timestamp %s (want a number of %s or an RFC 3339 time)", quote(text), UnitName(time.Duration(c.unit)))
	}
	if c.mode == modeRFC3339 {
		return c.errorf(line, col, "timestamp %s is a number but earlier timestamps are RFC 3339 times", quote(text))
	}
	c.mode = modeNumeric
	ev.Time = ns
	return nil
}

// epochUnit returns the unit of epoch time, and its name, that a whole
// number that overflowed in unit looks like, when its digits count as
// epoch milliseconds, microseconds or nanoseconds of today's dates
// (1710064800123: milliseconds); 0 when it looks like none.
func epochUnit(text []byte, unit int64) (time.Duration, string) {
	digits := text
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if !isDigits(digits) {
		return 0, ""
	}
	for _, u := range []struct {
		n    int
		name string
		unit time.Duration
	}{{13, "milliseconds", time.Millisecond}, {16, "microseconds", time.Microsecond}, {19, "nanoseconds", time.Nanosecond}} {
		if len(digits) == u.n && unit > int64(u.unit) {
			return u.unit, u.name
		}
	}
	return 0, ""
}

// setLayoutTime converts text in the trace's layout.
func (c *common) setLayoutTime(ev *Event, text []byte, line, col int) error {
	// Read in UTC: a zoned text keeps its own offset, and a wall time's
	// fields are its own, not normalised into a zone.
	t, err := time.Parse(c.tf.layout, string(text))
	if err != nil {
		return c.errorf(line, col, "timestamp %s does not match the time format %q", quote(text), c.tf.layout)
	}
	if !c.tf.zoned && c.tf.loc != time.UTC {
		ns, why := localInstant(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), c.tf.loc)
		if why != "" {
			return c.errorf(line, col, "local time %s %s", quote(text), why)
		}
		ev.Time = ns
		return nil
	}
	if y := t.Year(); y < 1678 || y > 2261 {
		if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
			return c.errorf(line, col, "timestamp %s out of range (%s to %s)", quote(text), minRFC3339, maxRFC3339)
		}
	}
	ev.Time = t.UnixNano()
	return nil
}

// setCost converts text (nil or empty: none given) into ev.Cost.
func (c *common) setCost(ev *Event, text []byte, line, col int) error {
	if len(text) == 0 {
		ev.Cost = 1
		ev.costText = nil
		return nil
	}
	var v int64
	for _, ch := range text {
		d := ch - '0'
		if d > 9 {
			return c.errorf(line, col, "invalid cost %s (want a positive integer)", quote(text))
		}
		if v > (math.MaxInt64-int64(d))/10 {
			return c.errorf(line, col, "cost %s out of range", quote(text))
		}
		v = v*10 + int64(d)
	}
	if v == 0 {
		return c.errorf(line, col, "invalid cost %s (want a positive integer)", quote(text))
	}
	ev.Cost = v
	ev.costText = text
	return nil
}

// checkUser reports an empty user or one that is not UTF-8.
func (c *common) checkUser(user []byte, line, col int) error {
	if len(user) == 0 {
		return c.errorf(line, col, "empty user")
	}
	if !utf8.Valid(user) {
		return c.errorf(line, col, "invalid UTF-8 in user: %s", quote(user))
	}
	return nil
}

// lineReader splits a stream into lines without copying them: a line is a
// view into its buffer, valid until the next call. Its buffer starts small
// and grows up to MaxLineBytes+1, so memory stays bounded.
type lineReader struct {
	r     io.Reader
	buf   []byte
	pos   int   // start of the unread data in buf
	end   int   // end of the data in buf
	err   error // the error that ended the input (io.EOF at the end)
	line  int   // number of the last line returned
	empty int   // consecutive empty reads
	total int64 // bytes read
	// skip: the last line was too long and the rest of it, not yet read,
	// is for the next call to discard. The buffer is empty meanwhile, so
	// csvParser.nextFast, which reads it directly, cannot see that rest.
	skip bool
}

// The line buffer starts at initialBuffer bytes and grows to fullBuffer as
// the input proves long, or to MaxLineBytes+1 for a long line.
const (
	initialBuffer = 4 << 10
	fullBuffer    = 64 << 10
)

var errLineTooLong = errors.New("line too long")

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, initialBuffer)}
}

// fill compacts the buffer, grows it when full, and reads once.
func (lr *lineReader) fill() {
	if lr.pos > 0 {
		copy(lr.buf, lr.buf[lr.pos:lr.end])
		lr.end -= lr.pos
		lr.pos = 0
	}
	// Grow when a line fills the buffer, and, up to fullBuffer, when the
	// input turns out long (so short traces need not pay for a big one).
	if lr.end == len(lr.buf) || (len(lr.buf) < fullBuffer && lr.total > 4*int64(len(lr.buf))) {
		size := min(2*len(lr.buf), MaxLineBytes+1)
		if size <= len(lr.buf) {
			return
		}
		nb := make([]byte, size)
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	lr.total += int64(n)
	if err != nil {
		lr.err = err
	} else if n == 0 {
		if lr.empty++; lr.empty > 100 {
			lr.err = io.ErrNoProgress
		}
	} else {
		lr.empty = 0
	}
}

// peek reads until the buffer holds a line with content, 4 KiB, or the
// whole input, so that the format can be sniffed. It returns a read error
// other than io.EOF.
func (lr *lineReader) peek() error {
	for lr.err == nil && lr.end < 4096 {
		if lr.headRead() {
			break
		}
		lr.fill()
	}
	if lr.err != nil && lr.err != io.EOF {
		return lr.err
	}
	return nil
}

// headRead reports whether the buffer holds a whole line with content
// that is not a #-directive of a W3C log: enough to tell the format.
func (lr *lineReader) headRead() bool {
	data := lr.buf[lr.pos:lr.end]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return false
		}
		line := bytes.TrimSpace(data[:i])
		if len(line) > 0 && line[0] != '#' {
			return true
		}
		data = data[i+1:]
	}
}

// skipBOM drops a UTF-8 byte order mark at the start of the input.
func (lr *lineReader) skipBOM() {
	if bytes.HasPrefix(lr.buf[lr.pos:lr.end], utf8BOM) {
		lr.pos += len(utf8BOM)
	}
}

// buffered returns the data read but not yet consumed.
func (lr *lineReader) buffered() []byte { return lr.buf[lr.pos:lr.end] }

// next returns the next line without its '\n' (a '\r' before it stays).
// It returns errLineTooLong for a line over MaxLineBytes as soon as the
// line is known to be that long, without waiting for its end: the input
// may have none. The next call skips the rest of that line first. At the
// end it returns io.EOF, or the read error that ended the input.
func (lr *lineReader) next() ([]byte, error) {
	if lr.skip {
		lr.skip = false
		lr.skipLine()
	}
	scan := lr.pos
	for {
		if i := bytes.IndexByte(lr.buf[scan:lr.end], '\n'); i >= 0 {
			nl := scan + i
			line := lr.buf[lr.pos:nl]
			lr.pos = nl + 1
			lr.line++
			if len(line) > MaxLineBytes {
				return nil, errLineTooLong
			}
			return line, nil
		}
		if lr.end-lr.pos > MaxLineBytes {
			lr.line++
			lr.pos = lr.end
			lr.skip = true
			return nil, errLineTooLong
		}
		if lr.err != nil {
			// A last line without a line end is a line at the end of the
			// input, but not before a read error: it may be cut short
			// (a truncated gzip stream ends inside a line, "u1,12" as
			// "u1,1").
			if lr.pos < lr.end && lr.err == io.EOF {
				line := lr.buf[lr.pos:lr.end]
				lr.pos = lr.end
				lr.line++
				return line, nil
			}
			return nil, lr.err
		}
		scan = lr.end - lr.pos
		lr.fill()
		scan += lr.pos
	}
}

// skipLine discards input up to and including the next '\n', reading it
// a buffer at a time.
func (lr *lineReader) skipLine() {
	for {
		if i := bytes.IndexByte(lr.buf[lr.pos:lr.end], '\n'); i >= 0 {
			lr.pos += i + 1
			return
		}
		lr.pos = lr.end
		if lr.err != nil {
			return
		}
		lr.fill()
	}
}
