package render

import (
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ratesim/ratesim/traces"
)

// MaxTableRows is how many per-request rows a Table shows; the rest are
// counted, and -o csv gives them all.
const MaxTableRows = 1000

// MaxStateWidth is the widest state text a Table shows before shortening it.
const MaxStateWidth = 60

// flushAt is the buffered output size that triggers a write.
const flushAt = 256 << 10

// Column is the spec of one output Column: how every format names and
// shows it. Its zero value, but for the name, is a left-aligned text
// Column shown everywhere.
type Column struct {
	Name  string // the CSV header and JSON key: part of the public contract
	Title string // the Table header, when it differs from name
	Right bool   // right-aligned in tables: a number
	// machineOnly leaves the Column out of tables and markdown; CSV and
	// JSON carry it.
	MachineOnly bool
	// tableOnly leaves the Column out of CSV and JSON: a Table's view of
	// a value they carry in another Column (WriteRecords only).
	TableOnly bool
	Suffix    string // appended in tables to a value that is there ("%")
	NullText  string // how tables show no value; "-" when empty
	Width     int    // tables Shorten longer texts to this many runes; 0 for no limit
	// omitNull leaves the key out of JSON when the value is null: a
	// parameter the algorithm does not use. Not for the first Column.
	OmitNull bool
}

// tableText is how a Table shows a value with the text v, or no value.
func (c *Column) tableText(missing bool, v []byte) string {
	if missing {
		if c.NullText != "" {
			return c.NullText
		}
		return "-"
	}
	s := string(v) + c.Suffix
	if c.Width > 0 {
		s = Shorten(s, c.Width)
	}
	return s
}

// Encoder writes the values of a row in one output format, Column by
// Column, strconv.Append style: each method appends to dst and returns the
// extended slice. The format's encoding (its entry in the table of
// formats) is the one place that knows how it writes a value. A row
// appends its first value directly and each later one after Next;
// numbers and booleans read the same in every format, so they are
// appended with strconv.Append* or appendWait, without the Encoder.
// Tables get every text as it is, to be shown by Table.Render.
type Encoder struct {
	format Format
	enc    encoding
	// sep, when not 0, is the byte that alone separates a row's values
	// (CSV's comma): Next appends it without a call through enc, small
	// enough to inline, as it runs for every value of run -o csv.
	sep  byte
	cols []Column
	keys [][]byte // JSON: per Column, its key, after a comma but for the first
	col  int      // the Column whose value is being written
	mark int      // JSON: where the current Column's key begins

	// Table and markdown
	ends    []int  // where each Cell's text ends in the row
	missing []bool // per Column: no value
}

// Next ends a value and starts the next Column's: a comma in CSV, the key
// in JSON, the end of a Cell in a Table.
func (e *Encoder) Next(dst []byte) []byte {
	e.col++
	if e.sep != 0 {
		return append(dst, e.sep)
	}
	return e.enc.open(e, dst)
}

// Bytes appends a text.
func (e *Encoder) Bytes(dst, b []byte) []byte { return e.enc.bytes(dst, b) }

// Text appends a text held in a string.
func (e *Encoder) Text(dst []byte, s string) []byte { return e.enc.text(dst, s) }

// Time appends a timestamp as the trace wrote it; JSON writes it as a
// number when it is one, else as a string.
func (e *Encoder) Time(dst, b []byte) []byte { return e.enc.time(dst, b) }

// Null appends no value: nothing in CSV, null in JSON (or, for an
// OmitNull Column, not even the key), and a Table shows the Column's
// NullText.
func (e *Encoder) Null(dst []byte) []byte { return e.enc.null(e, dst) }

// Absent appends no value, as Null does, but a Table shows "-" whatever
// the Column's NullText says: there is nothing, rather than the nothing
// the Column's null stands for (a retry_after that never comes).
func (e *Encoder) Absent(dst []byte) []byte { return e.enc.absent(e, dst) }

// Cell appends a report's Cell.
func (e *Encoder) Cell(dst []byte, c Cell) []byte {
	switch c.Kind {
	case KindString:
		return e.Text(dst, c.Text)
	case KindNull:
		return e.Null(dst)
	}
	return append(dst, c.Text...)
}

// RecordWriter is the one renderer of rows of columns: the per-request
// rows of run and compare as they stream, and the rows of small reports.
// It writes CSV, JSON Lines or a JSON array, appending into one large
// buffer (no fmt, no allocation per row); for Table and markdown it keeps
// the first maxRows rows as text and counts the rest. A row is written as
//
//	b := rw.Begin()
//	b = first value; b = next value after rw.Enc().Next(b); ...
//	err := rw.End(b)
type RecordWriter struct {
	w       io.Writer
	enc     Encoder // and the columns, enc.cols
	buf     []byte
	scratch []byte // the row of a Table
	rows    int64
	err     error

	// Table and markdown
	maxRows int // rows kept as text
	cells   [][]string
	hidden  int64 // rows beyond maxRows
}

// NewRecordWriter returns a RecordWriter of rows of cols that keeps
// MaxTableRows rows of a Table; CSV starts with its header and a JSON
// array with its bracket.
func NewRecordWriter(w io.Writer, format Format, cols []Column) *RecordWriter {
	enc := format.info().enc
	rw := &RecordWriter{w: w, enc: Encoder{format: format, enc: enc, cols: cols}, maxRows: MaxTableRows}
	enc.start(rw, cols)
	return rw
}

// Textual reports whether rows are kept as cells for a Table.
func (rw *RecordWriter) Textual() bool {
	return !rw.enc.format.Machine()
}

// Begin starts a row and returns the buffer its values are appended to.
func (rw *RecordWriter) Begin() []byte {
	rw.enc.col = 0
	return rw.enc.enc.begin(rw)
}

// End finishes the row whose values b holds, and writes the buffer out
// when it is large. A row with a value too few or too many is a bug.
func (rw *RecordWriter) End(b []byte) error {
	e := &rw.enc
	if e.col != len(e.cols)-1 {
		panic("cmd: a row of " + strconv.Itoa(e.col+1) + " values for " + strconv.Itoa(len(e.cols)) + " columns")
	}
	return e.enc.end(rw, b)
}

// flush writes the buffer out and keeps the first error.
func (rw *RecordWriter) flush() error {
	if rw.err == nil && len(rw.buf) > 0 {
		_, rw.err = rw.w.Write(rw.buf)
	}
	rw.buf = rw.buf[:0]
	return rw.err
}

// Close finishes CSV and JSON output; tables are rendered by the caller.
func (rw *RecordWriter) Close() error {
	rw.enc.enc.finish(rw)
	return rw.flush()
}

// Table is the Table of the rows kept, with the columns that tables show;
// footer gives the footer's cells by Column name, and nil means no footer.
func (rw *RecordWriter) Table(footer map[string]string) *Table {
	t := &Table{Rows: rw.cells}
	for _, c := range rw.enc.cols {
		if c.MachineOnly {
			continue
		}
		title := c.Name
		if c.Title != "" {
			title = c.Title
		}
		t.Header = append(t.Header, title)
		t.Right = append(t.Right, c.Right)
		if footer != nil {
			t.Footer = append(t.Footer, footer[c.Name])
		}
	}
	return t
}

// Shorten cuts s to at most n runes, ending in an ellipsis.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// Table is a Table to render with tablewriter, or as markdown.
type Table struct {
	Header []string
	Right  []bool
	Rows   [][]string
	Footer []string
}

// Render writes t as format draws a table (an ASCII table, Markdown),
// every Cell through DisplayText.
func (t *Table) Render(w io.Writer, format Format) error {
	return format.info().enc.table(t, w)
}

// displayRow is r with Cell applied to each text; nil (no footer) stays
// nil.
func displayRow(r []string, Cell func(string) string) []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = Cell(c)
	}
	return out
}

// DisplayText is how a Table shows a text from the trace, so that nothing
// in it reaches the terminal raw and every text reads back unambiguously:
// runes that are not printable (control characters such as newline, tab,
// ESC and DEL, C1 controls, format characters) and bytes that are not
// UTF-8 are written as Go escapes (\n, \t, \x1b, \x7f, \u0085, \xff), and a
// backslash as \\. A text that begins or ends with a space, or begins
// with a double quote, is shown whole as a Go string literal in double
// quotes, so that its spaces stay visible.
func DisplayText(s string) string {
	if plainText(s) {
		return s
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '"' {
		return strconv.Quote(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// TerminalSafe is a line of text for a terminal: s with every rune that
// is not printable (a control character such as ESC or a newline, a
// format character) and every byte that is not UTF-8 written as a Go
// escape, so that names and values from the trace or the command line
// (a policy name, a user) never reach the terminal raw in a heading or a
// message. Everything else, spaces and backslashes included, is as it is.
func TerminalSafe(s string) string {
	safe := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// plainText reports whether DisplayText shows s as it is: printable ASCII
// without a backslash, not beginning with a space or a double quote, not
// ending with a space.
func plainText(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[0] == '"' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '\\' {
			return false
		}
	}
	return true
}

// markdownCell escapes a displayed text for a markdown Table: the pipes,
// which the markdown renderer leaves alone, and the backslashes, so that
// the rendered Table shows the text as -o Table does.
func markdownCell(s string) string { return markdownEscaper.Replace(s) }

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`)

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		// An empty Cell renders as nothing; tablewriter keeps the Column.
		a[i] = v
	}
	return a
}

// appendCSV appends s as one CSV field, quoted when it must be.
func appendCSV(dst []byte, s string) []byte { return traces.AppendCSVField(dst, s) }

func appendCSVBytes(dst, b []byte) []byte { return traces.AppendCSVField(dst, b) }

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte { return traces.AppendJSONString(dst, s) }

func appendJSONBytes(dst, b []byte) []byte {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendJSONString(dst, string(b))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, b...)
	return append(dst, '"')
}

// IsJSONNumber reports whether b is a number in JSON's grammar.
func IsJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// A Cell is one value of a small report (a summary, a burst list): its text
// and how JSON writes it.
type Cell struct {
	Text string
	Kind CellKind
}

// CellKind says how JSON writes a Cell's text, and whether there is one.
type CellKind uint8

const (
	KindString CellKind = iota
	KindNumber          // text is a JSON number
	KindBool            // text is true or false
	KindNull            // no value: null in JSON, empty in CSV, "-" in tables
)

func Str(s string) Cell { return Cell{s, KindString} }
func Int(n int64) Cell  { return Cell{strconv.FormatInt(n, 10), KindNumber} }
func Num(s string) Cell { return Cell{s, KindNumber} }
func Null() Cell        { return Cell{"", KindNull} }
func Bool(v bool) Cell  { return Cell{strconv.FormatBool(v), KindBool} }
func Dec(d time.Duration, unit time.Duration) Cell {
	return Cell{string(traces.AppendDecimal(nil, int64(d), unit)), KindNumber}
}

// Time is a timestamp: a number for numeric traces, a string for RFC 3339.
func Time(text string) Cell {
	if IsJSONNumber([]byte(text)) {
		return Num(text)
	}
	return Str(text)
}

// WriteRecords writes a small report, rows of cells in the order of
// cols, through a RecordWriter. A Table is returned for the caller to
// place, not written.
func WriteRecords(w io.Writer, format Format, cols []Column, rows [][]Cell) (*Table, error) {
	if format.Machine() && slices.ContainsFunc(cols, func(c Column) bool { return c.TableOnly }) {
		// CSV and JSON leave out the columns only tables show.
		keep := func(i int) bool { return !cols[i].TableOnly }
		var machine []Column
		for i, c := range cols {
			if keep(i) {
				machine = append(machine, c)
			}
		}
		out := make([][]Cell, len(rows))
		for j, r := range rows {
			for i, c := range r {
				if keep(i) {
					out[j] = append(out[j], c)
				}
			}
		}
		cols, rows = machine, out
	}
	rw := NewRecordWriter(w, format, cols)
	rw.maxRows = len(rows) // a report's Table shows every row
	e := &rw.enc
	for _, r := range rows {
		b := rw.Begin()
		for i, c := range r {
			if i > 0 {
				b = e.Next(b)
			}
			b = e.Cell(b, c)
		}
		if err := rw.End(b); err != nil {
			return nil, err
		}
	}
	if rw.Textual() {
		return rw.Table(nil), nil
	}
	return nil, rw.Close()
}

// Pct renders part of whole as a percentage with one decimal, rounded half
// up in integers so that output never depends on float formatting.
func Pct(part, whole int64) string { return DecimalQuotient(part, whole, 2, 1) }

// PctCell is part as a percentage of whole, with one decimal; null when
// whole is zero, where a percentage means nothing (an empty trace).
func PctCell(part, whole int64) Cell {
	if whole <= 0 {
		return Null()
	}
	return Num(Pct(part, whole))
}

// Ratio renders num/den with two decimals, rounded half up.
func Ratio(num, den int64) string { return DecimalQuotient(num, den, 0, 2) }

// DecimalQuotient renders num/den × 10^shift rounded half up to places
// decimals, exactly; zero when den is not positive. The scaled numerator
// passes int64 long before num does, so it is computed in big integers.
func DecimalQuotient(num, den int64, shift, places int) string {
	if den <= 0 {
		num = 0
		den = 1
	}
	n := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift+places)), nil)
	n.Mul(n, big.NewInt(num))
	neg := n.Sign() < 0
	n.Abs(n)
	d := big.NewInt(den)
	n.Add(n, new(big.Int).Rsh(d, 1))
	n.Quo(n, d)
	digits := n.String()
	if len(digits) <= places {
		digits = strings.Repeat("0", places+1-len(digits)) + digits
	}
	s := digits[:len(digits)-places] + "." + digits[len(digits)-places:]
	if neg && n.Sign() != 0 {
		s = "-" + s
	}
	return s
}
