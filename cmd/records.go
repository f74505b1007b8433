package cmd

import (
	"io"
	"math/big"
	"slices"
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

// cellKind says how JSON writes a cell's text, and whether there is one.
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

// writeRecords writes a small report, rows of cells in the order of
// cols, through a recordWriter. A table is returned for the caller to
// place, not written.
func writeRecords(w io.Writer, format outputFormat, cols []column, rows [][]cell) (*table, error) {
	if format != outTable && format != outMarkdown && slices.ContainsFunc(cols, func(c column) bool { return c.tableOnly }) {
		// CSV and JSON leave out the columns only tables show.
		keep := func(i int) bool { return !cols[i].tableOnly }
		var machine []column
		for i, c := range cols {
			if keep(i) {
				machine = append(machine, c)
			}
		}
		out := make([][]cell, len(rows))
		for j, r := range rows {
			for i, c := range r {
				if keep(i) {
					out[j] = append(out[j], c)
				}
			}
		}
		cols, rows = machine, out
	}
	rw := newRecordWriter(w, format, cols)
	rw.maxRows = len(rows) // a report's table shows every row
	e := &rw.enc
	for _, r := range rows {
		b := rw.begin()
		for i, c := range r {
			if i > 0 {
				b = e.next(b)
			}
			b = e.cell(b, c)
		}
		if err := rw.end(b); err != nil {
			return nil, err
		}
	}
	if rw.textual() {
		return rw.table(nil), nil
	}
	return nil, rw.close()
}

// pct renders part of whole as a percentage with one decimal, rounded half
// up in integers so that output never depends on float formatting.
func pct(part, whole int64) string { return decimalQuotient(part, whole, 2, 1) }

// pctCell is part as a percentage of whole, with one decimal; null when
// whole is zero, where a percentage means nothing (an empty trace).
func pctCell(part, whole int64) cell {
	if whole <= 0 {
		return nullCell()
	}
	return numCell(pct(part, whole))
}

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
