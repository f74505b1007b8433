package cmd

import (
	"io"
	"math/big"
	"strconv"
	"strings"
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
func pct(part, whole int64) string { return decimalQuotient(part, whole, 2, 1) }

// ratio renders num/den with two decimals, rounded half up.
func ratio(num, den int64) string { return decimalQuotient(num, den, 0, 2) }

// decimalQuotient renders num/den × 10^shift rounded half up to places
// decimals, exactly; zero when den is not positive. The scaled numerator
// passes int64 long before num does, so it is computed in big integers.
func decimalQuotient(num, den int64, shift, places int) string {
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
