package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/internal/choice"
)

// Enc returns the encoder a row's values are appended with, between Begin
// and End.
func (rw *RecordWriter) Enc() *Encoder { return &rw.enc }

// Hidden returns how many rows a table left out (beyond MaxTableRows).
func (rw *RecordWriter) Hidden() int64 { return rw.hidden }

// Kept returns how many rows a table keeps to show.
func (rw *RecordWriter) Kept() int { return len(rw.cells) }

// A TextWriter writes the text parts of a report, a line at a time, and
// its tables, and keeps the first error. Every line is made safe for a
// terminal (TerminalSafe).
type TextWriter struct {
	w      io.Writer
	format Format
	err    error
}

// NewTextWriter returns a TextWriter to w of a report in format.
func NewTextWriter(w io.Writer, format Format) *TextWriter {
	return &TextWriter{w: w, format: format}
}

// Line writes s, which may hold several lines, and a newline.
func (tw *TextWriter) Line(s string) {
	if tw.err == nil {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = TerminalSafe(l)
		}
		_, tw.err = io.WriteString(tw.w, strings.Join(lines, "\n")+"\n")
	}
}

// Blank writes an empty line.
func (tw *TextWriter) Blank() { tw.Line("") }

// Table renders t.
func (tw *TextWriter) Table(t *Table) {
	if tw.err == nil {
		tw.err = t.Render(tw.w, tw.format)
	}
}

// Rows renders the table of rw's rows, with footer (by column name; nil
// for none), and says how many more rows it left out.
func (tw *TextWriter) Rows(rw *RecordWriter, footer map[string]string) {
	tw.Table(rw.Table(footer))
	if rw.hidden > 0 {
		tw.Blank()
		tw.Line(fmt.Sprintf("%s more not shown; -o csv lists every row", Plural(rw.hidden, "row")))
	}
}

// Err returns the first error writing.
func (tw *TextWriter) Err() error { return tw.err }

// Plural is "1 request", "2 requests": n and the noun, with an s unless
// n is 1.
func Plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}

// WrapText breaks text into lines of at most width columns, each after
// indent.
func WrapText(text, indent string, width int) string { return WrapLines(text, indent, indent, width) }

// WrapLines breaks text at spaces into lines of at most width columns
// (a longer word has a line of its own), the first after first and the
// others after rest.
func WrapLines(text, first, rest string, width int) string {
	var b strings.Builder
	b.WriteString(first)
	col, empty := len(first), true
	for _, w := range strings.Fields(text) {
		if !empty && col+1+len(w) > width {
			b.WriteString("\n" + rest)
			col, empty = len(rest), true
		}
		if !empty {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
		empty = false
	}
	return b.String()
}

// JoinList joins names as a sentence does, with conj ("and", "or"): "a,
// b or c" (choice.Join).
func JoinList(names []string, conj string) string { return choice.Join(names, conj) }

// A Field is one labelled text of a card (Card), and Then, when not "",
// a line that follows it at its indent (a command to run).
type Field struct{ Label, Text, Then string }

// cardIndent and cardWidth are where a card's texts begin and the
// columns they fill.
const (
	cardIndent = 14
	cardWidth  = 78
)

// Card writes title, then each field on lines of its own: its label,
// indented by two, then its text, wrapped, its continuation lines
// indented to line up with it. Every line ends with a newline.
func Card(title string, fields []Field) string {
	var b strings.Builder
	b.WriteString(title + "\n")
	indent := strings.Repeat(" ", cardIndent)
	for _, f := range fields {
		label := "  " + f.Label + ":"
		b.WriteString(WrapLines(f.Text, label+strings.Repeat(" ", max(1, cardIndent-len(label))), indent, cardWidth))
		b.WriteByte('\n')
		if f.Then != "" {
			b.WriteString(indent + f.Then + "\n")
		}
	}
	return b.String()
}

// Lines writes each of lines, "" as a blank line.
func (tw *TextWriter) Lines(lines []string) {
	for _, l := range lines {
		tw.Line(l)
	}
}
