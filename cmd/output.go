package cmd

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ratesim/ratesim/traces"
)

// maxTableRows is how many per-request rows a table shows; the rest are
// counted, and -o csv gives them all.
const maxTableRows = 1000

// maxStateWidth is the widest state text a table shows before shortening it.
const maxStateWidth = 60

// flushAt is the buffered output size that triggers a write.
const flushAt = 256 << 10

// column is the spec of one output column: how every format names and
// shows it. Its zero value, but for the name, is a left-aligned text
// column shown everywhere.
type column struct {
	name  string // the CSV header and JSON key: part of the public contract
	title string // the table header, when it differs from name
	right bool   // right-aligned in tables: a number
	// machineOnly leaves the column out of tables and markdown; CSV and
	// JSON carry it.
	machineOnly bool
	// tableOnly leaves the column out of CSV and JSON: a table's view of
	// a value they carry in another column (writeRecords only).
	tableOnly bool
	suffix    string // appended in tables to a value that is there ("%")
	nullText  string // how tables show no value; "-" when empty
	width     int    // tables shorten longer texts to this many runes; 0 for no limit
	// omitNull leaves the key out of JSON when the value is null: a
	// parameter the algorithm does not use. Not for the first column.
	omitNull bool
}

// tableText is how a table shows a value with the text v, or no value.
func (c *column) tableText(missing bool, v []byte) string {
	if missing {
		if c.nullText != "" {
			return c.nullText
		}
		return "-"
	}
	s := string(v) + c.suffix
	if c.width > 0 {
		s = shorten(s, c.width)
	}
	return s
}

// encoder writes the values of a row in one output format, column by
// column, strconv.Append style: each method appends to dst and returns the
// extended slice. It is the one place that knows how a format writes a
// value. A row appends its first value directly and each later one after
// next; numbers and booleans read the same in every format, so they are
// appended with strconv.Append* or appendWait, without the encoder.
// Tables get every text as it is, to be shown by table.render.
type encoder struct {
	format outputFormat
	cols   []column
	keys   [][]byte // JSON: per column, its key, after a comma but for the first
	col    int      // the column whose value is being written
	mark   int      // JSON: where the current column's key begins

	// table and markdown
	ends    []int  // where each cell's text ends in the row
	missing []bool // per column: no value
}

// json reports whether the encoder writes JSON (an array or JSON Lines).
func (e *encoder) json() bool { return e.format == outJSON || e.format == outJSONL }

// next ends a value and starts the next column's: a comma in CSV, the key
// in JSON, the end of a cell in a table. The CSV case is kept small
// enough to inline: it runs for every value of run -o csv.
func (e *encoder) next(dst []byte) []byte {
	e.col++
	if e.format == outCSV {
		return append(dst, ',')
	}
	return e.open(dst)
}

// open starts the current column's value in JSON or a table.
func (e *encoder) open(dst []byte) []byte {
	if e.json() {
		e.mark = len(dst)
		return append(dst, e.keys[e.col]...)
	}
	e.ends = append(e.ends, len(dst))
	return dst
}

// str appends a text.
func (e *encoder) str(dst, b []byte) []byte {
	switch e.format {
	case outCSV:
		return appendCSVBytes(dst, b)
	case outJSON, outJSONL:
		return appendJSONBytes(dst, b)
	}
	return append(dst, b...)
}

// text appends a text held in a string.
func (e *encoder) text(dst []byte, s string) []byte {
	switch e.format {
	case outCSV:
		return appendCSV(dst, s)
	case outJSON, outJSONL:
		return appendJSONString(dst, s)
	}
	return append(dst, s...)
}

// time appends a timestamp as the trace wrote it; JSON writes it as a
// number when it is one, else as a string.
func (e *encoder) time(dst, b []byte) []byte {
	switch e.format {
	case outCSV:
		return appendCSVBytes(dst, b)
	case outJSON, outJSONL:
		if isJSONNumber(b) {
			return append(dst, b...)
		}
		return appendJSONBytes(dst, b)
	}
	return append(dst, b...)
}

// null appends no value: nothing in CSV, null in JSON (or, for an
// omitNull column, not even the key), and a table shows the column's
// nullText.
func (e *encoder) null(dst []byte) []byte {
	switch e.format {
	case outCSV:
		return dst
	case outJSON, outJSONL:
		if e.cols[e.col].omitNull {
			return dst[:e.mark]
		}
		return append(dst, "null"...)
	}
	e.missing[e.col] = true
	return dst
}

// cell appends a report's cell.
func (e *encoder) cell(dst []byte, c cell) []byte {
	switch c.kind {
	case kindString:
		return e.text(dst, c.text)
	case kindNull:
		return e.null(dst)
	}
	return append(dst, c.text...)
}

// recordWriter is the one renderer of rows of columns: the per-request
// rows of run and compare as they stream, and the rows of small reports.
// It writes CSV, JSON Lines or a JSON array, appending into one large
// buffer (no fmt, no allocation per row); for table and markdown it keeps
// the first maxRows rows as text and counts the rest. A row is written as
//
//	b := rw.begin()
//	b = first value; b = next value after rw.enc.next(b); ...
//	err := rw.end(b)
type recordWriter struct {
	w       io.Writer
	enc     encoder // and the columns, enc.cols
	buf     []byte
	scratch []byte // the row of a table
	rows    int64
	err     error

	// table and markdown
	maxRows int // rows kept as text
	cells   [][]string
	hidden  int64 // rows beyond maxRows
}

// newRecordWriter returns a recordWriter of rows of cols that keeps
// maxTableRows rows of a table; CSV starts with its header and a JSON
// array with its bracket.
func newRecordWriter(w io.Writer, format outputFormat, cols []column) *recordWriter {
	rw := &recordWriter{w: w, enc: encoder{format: format, cols: cols}, maxRows: maxTableRows}
	switch format {
	case outCSV:
		rw.buf = make([]byte, 0, flushAt+4096)
		for i, c := range cols {
			if i > 0 {
				rw.buf = append(rw.buf, ',')
			}
			rw.buf = appendCSV(rw.buf, c.name)
		}
		rw.buf = append(rw.buf, '\n')
	case outJSON, outJSONL:
		rw.buf = make([]byte, 0, flushAt+4096)
		for i, c := range cols {
			var k []byte
			if i > 0 {
				k = append(k, ',')
			}
			rw.enc.keys = append(rw.enc.keys, append(appendJSONString(k, c.name), ':'))
		}
		if format == outJSON {
			rw.buf = append(rw.buf, '[')
		}
	default:
		rw.enc.missing = make([]bool, len(cols))
	}
	return rw
}

// textual reports whether rows are kept as cells for a table.
func (rw *recordWriter) textual() bool {
	return rw.enc.format == outTable || rw.enc.format == outMarkdown
}

// begin starts a row and returns the buffer its values are appended to.
func (rw *recordWriter) begin() []byte {
	e := &rw.enc
	e.col = 0
	switch e.format {
	case outCSV:
		return rw.buf
	case outJSON, outJSONL:
		b := rw.buf
		if e.format == outJSON {
			if rw.rows > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, '{')
		e.mark = len(b)
		return append(b, e.keys[0]...)
	}
	e.ends = e.ends[:0]
	clear(e.missing)
	return rw.scratch[:0]
}

// end finishes the row whose values b holds, and writes the buffer out
// when it is large. A row with a value too few or too many is a bug.
func (rw *recordWriter) end(b []byte) error {
	e := &rw.enc
	if e.col != len(e.cols)-1 {
		panic("cmd: a row of " + strconv.Itoa(e.col+1) + " values for " + strconv.Itoa(len(e.cols)) + " columns")
	}
	switch e.format {
	case outCSV:
		rw.buf = append(b, '\n')
	case outJSON:
		rw.buf = append(b, '}')
	case outJSONL:
		rw.buf = append(b, '}', '\n')
	default:
		rw.scratch = b
		rw.rows++
		if len(rw.cells) >= rw.maxRows {
			rw.hidden++
			return nil
		}
		e.ends = append(e.ends, len(b))
		row := make([]string, 0, len(e.cols))
		start := 0
		for i := range e.cols {
			c := &e.cols[i]
			if !c.machineOnly {
				row = append(row, c.tableText(e.missing[i], b[start:e.ends[i]]))
			}
			start = e.ends[i]
		}
		rw.cells = append(rw.cells, row)
		return nil
	}
	rw.rows++
	if len(rw.buf) >= flushAt {
		return rw.flush()
	}
	return nil
}

// flush writes the buffer out and keeps the first error.
func (rw *recordWriter) flush() error {
	if rw.err == nil && len(rw.buf) > 0 {
		_, rw.err = rw.w.Write(rw.buf)
	}
	rw.buf = rw.buf[:0]
	return rw.err
}

// close finishes CSV and JSON output; tables are rendered by the caller.
func (rw *recordWriter) close() error {
	if rw.enc.format == outJSON {
		if rw.rows > 0 {
			rw.buf = append(rw.buf, '\n')
		}
		rw.buf = append(rw.buf, ']', '\n')
	}
	return rw.flush()
}

// table is the table of the rows kept, with the columns that tables show;
// footer gives the footer's cells by column name, and nil means no footer.
func (rw *recordWriter) table(footer map[string]string) *table {
	t := &table{rows: rw.cells}
	for _, c := range rw.enc.cols {
		if c.machineOnly {
			continue
		}
		title := c.name
		if c.title != "" {
			title = c.title
		}
		t.header = append(t.header, title)
		t.right = append(t.right, c.right)
		if footer != nil {
			t.footer = append(t.footer, footer[c.name])
		}
	}
	return t
}

// shorten cuts s to at most n runes, ending in an ellipsis.
func shorten(s string, n int) string {
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

// table is a table to render with tablewriter, or as markdown.
type table struct {
	header []string
	right  []bool
	rows   [][]string
	footer []string
}

// render writes t in format (table or markdown), every cell through
// displayText, and for markdown through markdownCell too.
func (t *table) render(w io.Writer, format outputFormat) error {
	align := make(tw.Alignment, len(t.header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i < len(t.right) && t.right[i] {
			align[i] = tw.AlignRight
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithFooterAutoFormat(tw.Off),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithAlignment(align),
	}
	cell := displayText
	if format == outMarkdown {
		cell = func(s string) string { return markdownCell(displayText(s)) }
	}
	header := displayRow(t.header, cell)
	rows := make([][]string, 0, len(t.rows)+1)
	for _, r := range t.rows {
		rows = append(rows, displayRow(r, cell))
	}
	footer := displayRow(t.footer, cell)
	if format == outMarkdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
		if footer != nil {
			rows = append(rows, footer)
		}
	} else {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Symbols: tw.NewSymbols(tw.StyleASCII),
		})))
	}
	tbl := tablewriter.NewTable(w, opts...)
	tbl.Header(toAny(header)...)
	for _, r := range rows {
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	if format != outMarkdown && footer != nil {
		tbl.Footer(toAny(footer)...)
	}
	return tbl.Render()
}

// displayRow is r with cell applied to each text; nil (no footer) stays
// nil.
func displayRow(r []string, cell func(string) string) []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = cell(c)
	}
	return out
}

// displayText is how a table shows a text from the trace, so that nothing
// in it reaches the terminal raw and every text reads back unambiguously:
// runes that are not printable (control characters such as newline, tab,
// ESC and DEL, C1 controls, format characters) and bytes that are not
// UTF-8 are written as Go escapes (\n, \t, \x1b, \x7f, \u0085, \xff), and a
// backslash as \\. A text that begins or ends with a space, or begins
// with a double quote, is shown whole as a Go string literal in double
// quotes, so that its spaces stay visible.
func displayText(s string) string {
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

// terminalSafe is a line of text for a terminal: s with every rune that
// is not printable (a control character such as ESC or a newline, a
// format character) and every byte that is not UTF-8 written as a Go
// escape, so that names and values from the trace or the command line
// (a policy name, a user) never reach the terminal raw in a heading or a
// message. Everything else, spaces and backslashes included, is as it is.
func terminalSafe(s string) string {
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

// plainText reports whether displayText shows s as it is: printable ASCII
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

// markdownCell escapes a displayed text for a markdown table: the pipes,
// which the markdown renderer leaves alone, and the backslashes, so that
// the rendered table shows the text as -o table does.
func markdownCell(s string) string { return markdownEscaper.Replace(s) }

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`)

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		// An empty cell renders as nothing; tablewriter keeps the column.
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

// isJSONNumber reports whether b is a number in JSON's grammar.
func isJSONNumber(b []byte) bool {
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
