package cmd

import (
	"io"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/traces"
)

// A cell is one value of a small report (a summary, a burst list): its text
// and how JSON writes it.
type cell struct {
	text string
	kind cellKind
}

type cellKind uint8

const (
	kindString cellKind = iota
	kindNumber          // text is a JSON number
	kindBool            // text is true or false
	kindNull            // no value: null in JSON, empty in CSV, "-" in tables
)

func strCell(s string) cell { return cell{s, kindString} }
func intCell(n int64) cell  { return cell{strconv.FormatInt(n, 10), kindNumber} }
func numCell(s string) cell { return cell{s, kindNumber} }
func nullCell() cell        { return cell{"", kindNull} }
func boolCell(v bool) cell  { return cell{strconv.FormatBool(v), kindBool} }
func decCell(d time.Duration, unit time.Duration) cell {
	return cell{string(traces.AppendDecimal(nil, int64(d), unit)), kindNumber}
}

// timeCell is a timestamp: a number for numeric traces, a string for RFC 3339.
func timeCell(text string) cell {
	if isJSONNumber([]byte(text)) {
		return numCell(text)
	}
	return strCell(text)
}

// field is a column of a small report.
type field struct {
	name    string
	right   bool
	inTable bool   // shown in table and markdown output
	title   string // table header, when it differs from name
	suffix  string // appended to the text in tables ("%")
	// omitNull leaves the key out of JSON when the value is null: a
	// parameter the algorithm does not use.
	omitNull bool
}

// writeRecords writes rows of cells as CSV, JSON, JSON Lines or a table.
// A table is returned for the caller to place, not written.
func writeRecords(w io.Writer, format outputFormat, fields []field, rows [][]cell) (*table, error) {
	switch format {
	case outTable, outMarkdown:
		t := &table{}
		var idx []int
		for i, f := range fields {
			if !f.inTable {
				continue
			}
			idx = append(idx, i)
			title := f.name
			if f.title != "" {
				title = f.title
			}
			t.header = append(t.header, title)
			t.right = append(t.right, f.right)
		}
		for _, r := range rows {
			var tr []string
			for _, i := range idx {
				c := r[i]
				switch {
				case c.kind == kindNull:
					tr = append(tr, "-")
				default:
					tr = append(tr, c.text+fields[i].suffix)
				}
			}
			t.rows = append(t.rows, tr)
		}
		return t, nil
	}
	var buf []byte
	switch format {
	case outCSV:
		for i, f := range fields {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendCSV(buf, f.name)
		}
		buf = append(buf, '\n')
		for _, r := range rows {
			for i, c := range r {
				if i > 0 {
					buf = append(buf, ',')
				}
				if c.kind != kindNull {
					buf = appendCSV(buf, c.text)
				}
			}
			buf = append(buf, '\n')
		}
	case outJSON, outJSONL:
		if format == outJSON {
			buf = append(buf, '[')
		}
		for n, r := range rows {
			if format == outJSON {
				if n > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, '\n')
			}
			buf = append(buf, '{')
			first := true
			for i, c := range r {
				if c.kind == kindNull && fields[i].omitNull {
					continue
				}
				if !first {
					buf = append(buf, ',')
				}
				first = false
				buf = appendJSONString(buf, fields[i].name)
				buf = append(buf, ':')
				switch c.kind {
				case kindString:
					buf = appendJSONString(buf, c.text)
				case kindNull:
					buf = append(buf, "null"...)
				default:
					buf = append(buf, c.text...)
				}
			}
			buf = append(buf, '}')
			if format == outJSONL {
				buf = append(buf, '\n')
			}
		}
		if format == outJSON {
			if len(rows) > 0 {
				buf = append(buf, '\n')
			}
			buf = append(buf, ']', '\n')
		}
	}
	_, err := w.Write(buf)
	return nil, err
}

// pct renders part of whole as a percentage with one decimal, rounded half
// up in integers so that output never depends on float formatting.
func pct(part, whole int64) string {
	if whole <= 0 {
		return "0.0"
	}
	tenths := (part*1000 + whole/2) / whole
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10)
}

// ratio renders num/den with two decimals, rounded half up.
func ratio(num, den int64) string {
	if den <= 0 {
		return "0.00"
	}
	hundredths := (num*100 + den/2) / den
	frac := hundredths % 100
	s := strconv.FormatInt(hundredths/100, 10) + "."
	if frac < 10 {
		s += "0"
	}
	return s + strconv.FormatInt(frac, 10)
}
