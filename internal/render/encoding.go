package render

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// An encoding is how one output format writes rows of values: every
// entry of the table of formats has one, and the RecordWriter, the
// Encoder and Table.Render call it instead of asking which format they
// write. A new format is its entry and its encoding.
type encoding interface {
	// start writes what comes before the first row (CSV's header, a JSON
	// array's bracket) and readies rw.enc for cols.
	start(rw *RecordWriter, cols []Column)
	// begin starts a row and returns the buffer its values are appended to.
	begin(rw *RecordWriter) []byte
	// end finishes the row whose values b holds.
	end(rw *RecordWriter, b []byte) error
	// finish appends what comes after the last row (a JSON array's end).
	finish(rw *RecordWriter)

	// open starts the value of the current column, after the first.
	open(e *Encoder, dst []byte) []byte
	// bytes and text append a text, time a timestamp as the trace wrote
	// it, null no value.
	bytes(dst, b []byte) []byte
	text(dst []byte, s string) []byte
	time(dst, b []byte) []byte
	null(e *Encoder, dst []byte) []byte
	// absent appends no value, as null does, but a table shows "-"
	// whatever the column's NullText says.
	absent(e *Encoder, dst []byte) []byte

	// table renders a table of the rows kept, with the cells as the
	// format shows them.
	table(t *Table, w io.Writer) error
}

// machineRows is what the formats for programs share: each row goes into
// rw.buf, which is written out once it is large, and a table of theirs,
// should one be asked for, is an ASCII one.
type machineRows struct{ asciiTable }

// endRow keeps b, the buffer with the row and its terminator, and writes
// it out when it is large.
func endRow(rw *RecordWriter, b []byte) error {
	rw.buf = b
	rw.rows++
	if len(rw.buf) >= flushAt {
		return rw.flush()
	}
	return nil
}

// csvEncoding writes comma-separated values with a header row.
type csvEncoding struct{ machineRows }

func (csvEncoding) start(rw *RecordWriter, cols []Column) {
	rw.buf = make([]byte, 0, flushAt+4096)
	for i, c := range cols {
		if i > 0 {
			rw.buf = append(rw.buf, ',')
		}
		rw.buf = appendCSV(rw.buf, c.Name)
	}
	rw.buf = append(rw.buf, '\n')
	rw.enc.sep = ','
}

func (csvEncoding) begin(rw *RecordWriter) []byte        { return rw.buf }
func (csvEncoding) end(rw *RecordWriter, b []byte) error { return endRow(rw, append(b, '\n')) }
func (csvEncoding) finish(*RecordWriter)                 {}
func (csvEncoding) open(_ *Encoder, dst []byte) []byte   { return append(dst, ',') }
func (csvEncoding) bytes(dst, b []byte) []byte           { return appendCSVBytes(dst, b) }
func (csvEncoding) text(dst []byte, s string) []byte     { return appendCSV(dst, s) }
func (csvEncoding) time(dst, b []byte) []byte            { return appendCSVBytes(dst, b) }
func (csvEncoding) null(_ *Encoder, dst []byte) []byte   { return dst }
func (csvEncoding) absent(_ *Encoder, dst []byte) []byte { return dst }

// jsonEncoding writes a JSON object per row: in an array, or with lines,
// one per line (JSON Lines).
type jsonEncoding struct {
	machineRows
	lines bool
}

func (j jsonEncoding) start(rw *RecordWriter, cols []Column) {
	rw.buf = make([]byte, 0, flushAt+4096)
	for i, c := range cols {
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		rw.enc.keys = append(rw.enc.keys, append(appendJSONString(k, c.Name), ':'))
	}
	if !j.lines {
		rw.buf = append(rw.buf, '[')
	}
}

func (j jsonEncoding) begin(rw *RecordWriter) []byte {
	b := rw.buf
	if !j.lines {
		if rw.rows > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, '{')
	rw.enc.mark = len(b)
	return append(b, rw.enc.keys[0]...)
}

func (j jsonEncoding) end(rw *RecordWriter, b []byte) error {
	if j.lines {
		return endRow(rw, append(b, '}', '\n'))
	}
	return endRow(rw, append(b, '}'))
}

func (j jsonEncoding) finish(rw *RecordWriter) {
	if j.lines {
		return
	}
	if rw.rows > 0 {
		rw.buf = append(rw.buf, '\n')
	}
	rw.buf = append(rw.buf, ']', '\n')
}

func (jsonEncoding) open(e *Encoder, dst []byte) []byte {
	e.mark = len(dst)
	return append(dst, e.keys[e.col]...)
}

func (jsonEncoding) bytes(dst, b []byte) []byte       { return appendJSONBytes(dst, b) }
func (jsonEncoding) text(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// time writes a timestamp as a number when it is one, else as a string.
func (jsonEncoding) time(dst, b []byte) []byte {
	if IsJSONNumber(b) {
		return append(dst, b...)
	}
	return appendJSONBytes(dst, b)
}

// null writes null, or for an OmitNull column not even the key.
func (jsonEncoding) null(e *Encoder, dst []byte) []byte {
	if e.cols[e.col].OmitNull {
		return dst[:e.mark]
	}
	return append(dst, "null"...)
}

func (j jsonEncoding) absent(e *Encoder, dst []byte) []byte { return j.null(e, dst) }

// tableEncoding keeps the rows as texts, at most rw.maxRows of them, for
// a table people read; its table style says how the table is drawn.
type tableEncoding struct{ style tableStyle }

// A tableStyle draws a table: an ASCII one, or Markdown.
type tableStyle interface {
	table(t *Table, w io.Writer) error
}

func (tableEncoding) start(rw *RecordWriter, cols []Column) {
	rw.enc.missing = make([]bool, len(cols))
}

func (tableEncoding) begin(rw *RecordWriter) []byte {
	e := &rw.enc
	e.ends = e.ends[:0]
	clear(e.missing)
	return rw.scratch[:0]
}

func (tableEncoding) end(rw *RecordWriter, b []byte) error {
	e := &rw.enc
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
		if !c.MachineOnly {
			row = append(row, c.tableText(e.missing[i], b[start:e.ends[i]]))
		}
		start = e.ends[i]
	}
	rw.cells = append(rw.cells, row)
	return nil
}

func (tableEncoding) finish(*RecordWriter) {}

func (tableEncoding) open(e *Encoder, dst []byte) []byte {
	e.ends = append(e.ends, len(dst))
	return dst
}

// A table gets every text as it is, to be shown by Table.Render.
func (tableEncoding) bytes(dst, b []byte) []byte       { return append(dst, b...) }
func (tableEncoding) text(dst []byte, s string) []byte { return append(dst, s...) }
func (tableEncoding) time(dst, b []byte) []byte        { return append(dst, b...) }

// null marks the column as without a value: the table shows its
// NullText.
func (tableEncoding) null(e *Encoder, dst []byte) []byte {
	e.missing[e.col] = true
	return dst
}

func (tableEncoding) absent(_ *Encoder, dst []byte) []byte { return append(dst, '-') }

func (t tableEncoding) table(tb *Table, w io.Writer) error { return t.style.table(tb, w) }

// asciiTable draws a table in ASCII lines, its footer below a rule.
type asciiTable struct{}

func (asciiTable) table(t *Table, w io.Writer) error {
	return t.write(w, DisplayText, renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)}), false)
}

// markdownTable draws a Markdown table, whose footer is its last row:
// Markdown has no footer.
type markdownTable struct{}

func (markdownTable) table(t *Table, w io.Writer) error {
	cell := func(s string) string { return markdownCell(DisplayText(s)) }
	return t.write(w, cell, renderer.NewMarkdown(), true)
}

// write draws t with tablewriter's rend, every text through cell; with
// footerRow the footer is the last row.
func (t *Table) write(w io.Writer, cell func(string) string, rend tw.Renderer, footerRow bool) error {
	align := make(tw.Alignment, len(t.Header))
	for i := range align {
		align[i] = tw.AlignLeft
		if i < len(t.Right) && t.Right[i] {
			align[i] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithFooterAutoFormat(tw.Off),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithAlignment(align),
		tablewriter.WithRenderer(rend),
	)
	tbl.Header(toAny(displayRow(t.Header, cell))...)
	rows := make([][]string, 0, len(t.Rows)+1)
	for _, r := range t.Rows {
		rows = append(rows, displayRow(r, cell))
	}
	footer := displayRow(t.Footer, cell)
	if footerRow && footer != nil {
		rows = append(rows, footer)
	}
	for _, r := range rows {
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	if !footerRow && footer != nil {
		tbl.Footer(toAny(footer)...)
	}
	return tbl.Render()
}
