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

// column describes one output column.
type column struct {
	name  string
	right bool // right-aligned in tables: a number
}

// recordWriter writes rows of fields as CSV, JSON Lines or a JSON array,
// appending into one large buffer (no fmt, no allocation per row); for table
// and markdown it keeps the first maxTableRows rows as text and counts the
// rest.
type recordWriter struct {
	w      io.Writer
	format outputFormat
	cols   []column
	keys   [][]byte // per column: `"name":` with its leading comma (JSON)
	buf    []byte
	field  int
	rows   int64
	err    error

	// table and markdown
	cells  [][]string
	row    []string
	hidden int64 // rows beyond maxTableRows
}

func newRecordWriter(w io.Writer, format outputFormat, cols []column) *recordWriter {
	rw := &recordWriter{w: w, format: format, cols: cols}
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
			k = appendJSONString(k, c.name)
			k = append(k, ':')
			rw.keys = append(rw.keys, k)
		}
		if format == outJSON {
			rw.buf = append(rw.buf, '[')
		}
	}
	return rw
}

// textual reports whether rows are kept as cells for a table.
func (rw *recordWriter) textual() bool { return rw.format == outTable || rw.format == outMarkdown }

// begin starts a row.
func (rw *recordWriter) begin() {
	rw.field = 0
	switch rw.format {
	case outJSON:
		if rw.rows > 0 {
			rw.buf = append(rw.buf, ',')
		}
		rw.buf = append(rw.buf, '\n', '{')
	case outJSONL:
		rw.buf = append(rw.buf, '{')
	case outTable, outMarkdown:
		if len(rw.cells) < maxTableRows {
			rw.row = make([]string, 0, len(rw.cols))
		} else {
			rw.row = nil
		}
	}
}

// next starts the next field.
func (rw *recordWriter) next() {
	switch rw.format {
	case outCSV:
		if rw.field > 0 {
			rw.buf = append(rw.buf, ',')
		}
	case outJSON, outJSONL:
		rw.buf = append(rw.buf, rw.keys[rw.field]...)
	}
	rw.field++
}

// str writes a text field.
func (rw *recordWriter) str(b []byte) {
	rw.next()
	switch rw.format {
	case outCSV:
		rw.buf = appendCSVBytes(rw.buf, b)
	case outJSON, outJSONL:
		rw.buf = appendJSONBytes(rw.buf, b)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, string(b))
		}
	}
}

// state writes a state text; tables shorten long ones.
func (rw *recordWriter) state(b []byte) {
	if rw.textual() && utf8.RuneCount(b) > maxStateWidth {
		rw.next()
		if rw.row != nil {
			rw.row = append(rw.row, shorten(string(b), maxStateWidth))
		}
		return
	}
	rw.str(b)
}

// num writes a field that is a valid JSON number.
func (rw *recordWriter) num(b []byte) {
	rw.next()
	switch rw.format {
	case outCSV, outJSON, outJSONL:
		rw.buf = append(rw.buf, b...)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, string(b))
		}
	}
}

// int writes an integer field.
func (rw *recordWriter) int(n int64) {
	rw.next()
	switch rw.format {
	case outCSV, outJSON, outJSONL:
		rw.buf = strconv.AppendInt(rw.buf, n, 10)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, strconv.FormatInt(n, 10))
		}
	}
}

// null writes a field with no value: null in JSON, empty in CSV, and the
// given text in tables.
func (rw *recordWriter) null(text string) {
	rw.next()
	switch rw.format {
	case outCSV:
	case outJSON, outJSONL:
		rw.buf = append(rw.buf, "null"...)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, text)
		}
	}
}

// bool writes true or false.
func (rw *recordWriter) bool(v bool) {
	rw.next()
	switch rw.format {
	case outCSV, outJSON, outJSONL:
		rw.buf = strconv.AppendBool(rw.buf, v)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, strconv.FormatBool(v))
		}
	}
}

// time writes a timestamp as the trace wrote it: a JSON number when it is
// one, else a JSON string.
func (rw *recordWriter) time(b []byte) {
	if (rw.format == outJSON || rw.format == outJSONL) && !isJSONNumber(b) {
		rw.str(b)
		return
	}
	rw.num(b)
}

// end finishes a row, writing the buffer out when it is large.
func (rw *recordWriter) end() error {
	rw.rows++
	switch rw.format {
	case outCSV:
		rw.buf = append(rw.buf, '\n')
	case outJSON:
		rw.buf = append(rw.buf, '}')
	case outJSONL:
		rw.buf = append(rw.buf, '}', '\n')
	default:
		if rw.row != nil {
			rw.cells = append(rw.cells, rw.row)
		} else {
			rw.hidden++
		}
		return nil
	}
	if len(rw.buf) >= flushAt {
		return rw.flush()
	}
	return nil
}

func (rw *recordWriter) flush() error {
	if rw.err == nil && len(rw.buf) > 0 {
		_, rw.err = rw.w.Write(rw.buf)
	}
	rw.buf = rw.buf[:0]
	return rw.err
}

// close finishes CSV and JSON output; tables are rendered by the caller.
func (rw *recordWriter) close() error {
	if rw.format == outJSON {
		if rw.rows > 0 {
			rw.buf = append(rw.buf, '\n')
		}
		rw.buf = append(rw.buf, ']', '\n')
	}
	return rw.flush()
}

func (rw *recordWriter) header() []string {
	h := make([]string, len(rw.cols))
	for i, c := range rw.cols {
		h[i] = c.name
	}
	return h
}

func (rw *recordWriter) aligns() []bool {
	a := make([]bool, len(rw.cols))
	for i, c := range rw.cols {
		a[i] = c.right
	}
	return a
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
