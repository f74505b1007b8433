package traces

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// A ParseError reports a problem with the content of a trace. It names the
// file, the 1-based line of the record and, where it is known, the 1-based
// byte column in that line. Line is 0 for problems with the trace as a
// whole (a YAML trace over the size cap); Column is 0 when unknown.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
	// Missing, when not 0, says which of the fields read from every
	// record the record lacks (or, for CSV, the header): the caller may
	// suggest how to name them (Options.UserField, Options.TimeField).
	Missing Field
	// EpochUnit, when not 0, is the unit of epoch time that an
	// out-of-range whole-number timestamp looks like (time.Millisecond
	// for 13 digits, time.Microsecond for 16, time.Nanosecond for 19):
	// the time format of that unit (TimeFormatUnixMs, ...) would read it
	// while leaving Options.Unit, and so durations, as they are.
	EpochUnit time.Duration

	// fatal marks errors after which reading cannot go on (a bad CSV
	// header, a YAML syntax error), even in lenient mode.
	fatal bool
}

// Error returns "traces: FILE:LINE[:COLUMN]: MSG", or "traces: FILE: MSG"
// when the line is unknown.
func (e *ParseError) Error() string {
	b := make([]byte, 0, len(e.File)+len(e.Msg)+32)
	b = append(b, "traces: "...)
	b = append(b, e.File...)
	if e.Line > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		if e.Column > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Column), 10)
		}
	}
	b = append(b, ": "...)
	b = append(b, e.Msg...)
	return string(b)
}

// A Field is one of the fields a Reader reads from every record, as a
// bit in a set.
type Field uint8

// The fields of ParseError.Missing.
const (
	FieldUser Field = 1 << iota // the user (Options.UserField)
	FieldTime                   // the timestamp (Options.TimeField)
)

// maxQuoted is how many bytes of an offending value an error message shows.
const maxQuoted = 40

// quote renders b for an error message: Go-quoted, cut to maxQuoted bytes
// (on a rune boundary) with "..." after the closing quote when cut.
func quote(b []byte) string {
	if len(b) <= maxQuoted {
		return strconv.Quote(string(b))
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return strconv.Quote(string(b[:n])) + "..."
}

// A ValueError is a value given outside a trace that does not parse: a
// duration, a unit, a time format. Its Error names the package; Text is
// the message alone.
type ValueError struct{ msg string }

func (e *ValueError) Error() string { return "traces: " + e.msg }

// Text returns the message without the package's name.
func (e *ValueError) Text() string { return e.msg }

// A FormatError is a line format, or a way of reading a trace, that does
// not fit it: an nginx log_format that does not compile, a user field a
// log does not have, --time-is completion for a log that logs no
// duration. It is a mistake in how the trace is asked to be read, not in
// the trace.
type FormatError struct {
	File string // the trace's name; empty when the mistake is the format's alone
	Msg  string
}

func (e *FormatError) Error() string {
	if e.File == "" {
		return "traces: " + e.Msg
	}
	return "traces: " + e.File + ": " + e.Msg
}

// Usage reports that the error is a mistake in how the trace was asked to
// be read.
func (e *FormatError) Usage() bool { return true }
