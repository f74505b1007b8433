package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// TimeStyle says how a Writer writes timestamps.
type TimeStyle uint8

// The time styles.
const (
	// TimeDecimal writes Event.Time as an exact decimal number of the
	// writer's unit ("7", "1.5", "-0.25"). It is the default.
	TimeDecimal TimeStyle = iota
	// TimeAsWritten writes Event.TimeText as it is (TimeDecimal when it is
	// empty), as a string in JSON Lines and YAML.
	TimeAsWritten
	// TimeRFC3339 writes Event.Time as Unix nanoseconds in RFC 3339, in UTC
	// with as many fraction digits as needed.
	TimeRFC3339
)

// A Writer writes events as a trace in one format, so that reading the
// output gives the same events back: the same users, times, costs and
// attributes. It buffers; call Flush at the end. A Writer is not safe for
// concurrent use.
//
// A CSV trace has one header for all rows: its columns are fixed by
// SetColumns or, by default, by the first event (a cost column when that
// event has an explicit cost or a cost other than 1, and its attributes).
// A later event with an attribute outside the header, or a cost other than
// 1 without a cost column, is an error; a missing attribute is written
// empty. JSON Lines and YAML write each event's own fields, and cost only
// when the event has an explicit cost or a cost other than 1.
type Writer struct {
	w       *bufio.Writer
	format  Format
	unit    time.Duration
	style   TimeStyle
	started bool // the CSV header is out
	colsSet bool
	costCol bool
	names   []string
	buf     []byte
	seen    map[string]struct{}
	err     error
}

// NewWriter returns a Writer of format f (FormatAuto means CSV; the
// access log formats, which are only read, are written as CSV too) to w, with
// numeric timestamps in unit (0 means seconds).
func NewWriter(w io.Writer, f Format, unit time.Duration) *Writer {
	if f == FormatAuto || f > JSONL {
		f = CSV
	}
	if unit <= 0 {
		unit = time.Second
	}
	return &Writer{w: bufio.NewWriterSize(w, 32<<10), format: f, unit: unit}
}

// SetTimeStyle sets how timestamps are written; TimeDecimal by default.
func (w *Writer) SetTimeStyle(s TimeStyle) { w.style = s }

// SetColumns fixes the CSV header: user, timestamp, then cost when cost is
// true, then the attributes named. It must be called before the first
// Write, and has no effect on the other formats. Flush writes the header
// even when no event follows.
func (w *Writer) SetColumns(cost bool, attrs ...string) error {
	if w.started {
		return errors.New("traces: SetColumns after the first Write")
	}
	if err := checkColumns(attrs); err != nil {
		return err
	}
	w.colsSet, w.costCol, w.names = true, cost, append([]string(nil), attrs...)
	return nil
}

// checkColumns reports attribute names a CSV header cannot hold so that
// they read back as the same attributes.
func checkColumns(names []string) error {
	for i, n := range names {
		switch {
		case n == "":
			return errors.New("traces: an attribute with an empty name cannot be a CSV column")
		case strings.TrimSpace(n) != n:
			return fmt.Errorf("traces: attribute %q has surrounding spaces and cannot be a CSV column", n)
		case isReserved(n):
			return fmt.Errorf("traces: attribute %q clashes with a reserved CSV column", n)
		case !utf8.ValidString(n):
			return fmt.Errorf("traces: invalid UTF-8 in attribute name %q", n)
		}
		for _, m := range names[:i] {
			if m == n {
				return fmt.Errorf("traces: duplicate attribute %q", n)
			}
		}
	}
	return nil
}

// Write writes one event. An event the readers would refuse (an empty
// user, a cost below 1, text that is not UTF-8) is an error, and so is an
// event that does not fit the CSV header.
func (w *Writer) Write(e *Event) error {
	if w.err != nil {
		return w.err
	}
	if err := w.check(e); err != nil {
		return err
	}
	b := w.buf[:0]
	var err error
	switch w.format {
	case CSV:
		b, err = w.appendCSV(b, e)
	case JSONL:
		b = w.appendJSONL(b, e)
	case YAML:
		b = w.appendYAML(b, e)
	}
	w.buf = b
	if err != nil {
		return err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush writes any buffered data (and a CSV header set by SetColumns when
// no event was written) to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.format == CSV && w.colsSet && !w.started {
		w.buf = w.appendHeader(w.buf[:0])
		if _, err := w.w.Write(w.buf); err != nil {
			w.err = err
			return err
		}
	}
	if err := w.w.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) check(e *Event) error {
	if len(e.User) == 0 {
		return errors.New("traces: event with an empty user")
	}
	if !utf8.Valid(e.User) {
		return fmt.Errorf("traces: invalid UTF-8 in user: %s", quote(e.User))
	}
	if e.Cost < 1 {
		return fmt.Errorf("traces: event cost %d is not positive", e.Cost)
	}
	if w.style == TimeAsWritten && !utf8.Valid(e.TimeText) {
		return fmt.Errorf("traces: invalid UTF-8 in timestamp %s", quote(e.TimeText))
	}
	for i := range e.attrs {
		a := &e.attrs[i]
		if !utf8.ValidString(a.name) {
			return fmt.Errorf("traces: invalid UTF-8 in attribute name %q", a.name)
		}
		if a.name == "user" || a.name == "timestamp" || a.name == "cost" {
			return fmt.Errorf("traces: attribute named %q", a.name)
		}
		if !utf8.Valid(a.value) {
			return fmt.Errorf("traces: invalid UTF-8 in attribute %q", a.name)
		}
	}
	if len(e.attrs) > 1 {
		if len(e.attrs) <= 16 {
			for i := range e.attrs {
				for j := range i {
					if e.attrs[i].name == e.attrs[j].name {
						return fmt.Errorf("traces: duplicate attribute %q", e.attrs[i].name)
					}
				}
			}
		} else {
			if w.seen == nil {
				w.seen = make(map[string]struct{})
			}
			clear(w.seen)
			for i := range e.attrs {
				if _, dup := w.seen[e.attrs[i].name]; dup {
					return fmt.Errorf("traces: duplicate attribute %q", e.attrs[i].name)
				}
				w.seen[e.attrs[i].name] = struct{}{}
			}
		}
	}
	return nil
}

// writeCost reports whether the event's cost is worth writing.
func writeCost(e *Event) bool { return e.Cost != 1 || e.costText != nil }

// appendTime appends the event's time in the writer's style and reports
// whether it is text (a string in JSON Lines and YAML) rather than a number.
func (w *Writer) appendTime(b []byte, e *Event) (out []byte, isText bool) {
	switch w.style {
	case TimeAsWritten:
		if len(e.TimeText) > 0 {
			return append(b, e.TimeText...), true
		}
	case TimeRFC3339:
		return appendRFC3339(b, e.Time), true
	}
	return AppendDecimal(b, e.Time, w.unit), false
}

func (w *Writer) appendHeader(b []byte) []byte {
	w.started = true
	b = append(b, "user,timestamp"...)
	if w.costCol {
		b = append(b, ",cost"...)
	}
	for _, n := range w.names {
		b = append(b, ',')
		b = AppendCSVField(b, []byte(n))
	}
	return append(b, '\n')
}

func (w *Writer) appendCSV(b []byte, e *Event) ([]byte, error) {
	if !w.started {
		if !w.colsSet {
			names := make([]string, len(e.attrs))
			for i := range e.attrs {
				names[i] = e.attrs[i].name
			}
			if err := checkColumns(names); err != nil {
				return b, err
			}
			w.costCol, w.names = writeCost(e), names
		}
		b = w.appendHeader(b)
	}
	if !w.costCol && e.Cost != 1 {
		return b, fmt.Errorf("traces: cost %d but the CSV header has no cost column", e.Cost)
	}
	// Every attribute must have a column.
	if len(e.attrs) > len(w.names) {
		return b, fmt.Errorf("traces: %d attributes but the CSV header has %d attribute columns", len(e.attrs), len(w.names))
	}
	for i := range e.attrs {
		if i < len(w.names) && e.attrs[i].name == w.names[i] {
			continue
		}
		found := false
		for _, n := range w.names {
			if n == e.attrs[i].name {
				found = true
				break
			}
		}
		if !found {
			return b, fmt.Errorf("traces: attribute %q is not a column of the CSV header", e.attrs[i].name)
		}
	}
	b = AppendCSVField(b, e.User)
	b = append(b, ',')
	start := len(b)
	b, _ = w.appendTime(b, e)
	if needsQuotes(b[start:]) {
		t := append([]byte(nil), b[start:]...)
		b = AppendCSVField(b[:start], t)
	}
	if w.costCol {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(e.Cost), 10)
	}
	for j, n := range w.names {
		b = append(b, ',')
		if j < len(e.attrs) && e.attrs[j].name == n {
			b = AppendCSVField(b, e.attrs[j].value)
			continue
		}
		for i := range e.attrs {
			if e.attrs[i].name == n {
				b = AppendCSVField(b, e.attrs[i].value)
				break
			}
		}
	}
	return append(b, '\n'), nil
}

// needsQuotes reports whether a CSV field must be quoted: it holds a comma,
// a quote or a line end, or starts with a space or a tab, which some
// readers would trim.
func needsQuotes[T []byte | string](s T) bool {
	if len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	return false
}

// AppendCSVField appends s to b as one CSV field: as it is, or quoted with
// its quotes doubled when needsQuotes says so. Reading the field back
// gives s exactly.
func AppendCSVField[T []byte | string](b []byte, s T) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

func (w *Writer) appendJSONL(b []byte, e *Event) []byte {
	b = append(b, `{"user":`...)
	b = AppendJSONString(b, e.User)
	b = append(b, `,"timestamp":`...)
	start := len(b)
	b, isText := w.appendTime(b, e)
	if isText {
		t := append([]byte(nil), b[start:]...)
		b = AppendJSONString(b[:start], t)
	}
	if writeCost(e) {
		b = append(b, `,"cost":`...)
		b = strconv.AppendUint(b, uint64(e.Cost), 10)
	}
	for i := range e.attrs {
		b = append(b, ',')
		b = AppendJSONString(b, []byte(e.attrs[i].name))
		b = append(b, ':')
		b = AppendJSONString(b, e.attrs[i].value)
	}
	return append(b, "}\n"...)
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s to b as a JSON string. Bytes that are not
// UTF-8 become U+FFFD, and U+2028 and U+2029 are escaped, so that the
// result is valid JSON and safe in JavaScript too.
func AppendJSONString[T []byte | string](b []byte, s T) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20:
				b = append(b, c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		// At most utf8.UTFMax bytes, converted on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, byte('8'+r-'\u2028'))
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func (w *Writer) appendYAML(b []byte, e *Event) []byte {
	b = append(b, "- {user: "...)
	b = appendYAMLString(b, e.User)
	b = append(b, ", timestamp: "...)
	start := len(b)
	b, isText := w.appendTime(b, e)
	if isText {
		t := append([]byte(nil), b[start:]...)
		b = appendYAMLString(b[:start], t)
	}
	if writeCost(e) {
		b = append(b, ", cost: "...)
		b = strconv.AppendUint(b, uint64(e.Cost), 10)
	}
	for i := range e.attrs {
		b = append(b, ", "...)
		b = appendYAMLString(b, []byte(e.attrs[i].name))
		b = append(b, ": "...)
		b = appendYAMLString(b, e.attrs[i].value)
	}
	return append(b, "}\n"...)
}

// appendYAMLString appends s, valid UTF-8, as a YAML double-quoted scalar,
// escaping what YAML would fold, refuse or read as a line break.
func appendYAMLString(b, s []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r <= 0x9f:
			b = append(b, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			b = append(b, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
