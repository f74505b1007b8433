package render

import (
	"fmt"
	"strings"

	"github.com/ratesim/ratesim/internal/choice"
)

// A Format is an output format.
type Format uint8

// The output formats that Go code names: their places in the table of
// formats, in the order Formats lists them. A format that no code names
// needs no constant: it is its entry.
const (
	FormatTable    Format = iota // an ASCII table, for people
	FormatCSV                    // comma-separated values with a header row
	FormatJSON                   // a JSON array of objects
	FormatJSONL                  // JSON Lines, one object per line
	FormatMarkdown               // a Markdown table
)

// A FormatInfo describes an output format.
type FormatInfo struct {
	Format      Format   // its place in the table of formats
	Name        string   // as -o takes it
	Aliases     []string // other names -o takes
	Description string
	// Machine: the format is for programs (every row, every column,
	// values as numbers and booleans); otherwise it is for people (a
	// table with the columns people read and at most a page of rows).
	Machine bool
	// enc writes the format.
	enc encoding
}

// formats is the table of output formats: a new format is an entry here
// and its encoding. Each entry's Format is its place.
var formats = numbered([]FormatInfo{
	{Name: "table", Description: "an ASCII table (default)", enc: tableEncoding{asciiTable{}}},
	{Name: "csv", Description: "comma-separated values, every row", Machine: true, enc: csvEncoding{}},
	{Name: "json", Description: "a JSON array of objects", Machine: true, enc: jsonEncoding{}},
	{Name: "jsonl", Description: "JSON Lines, one object per line", Machine: true, enc: jsonEncoding{lines: true}},
	{Name: "markdown", Aliases: []string{"md"}, Description: "a Markdown table", enc: tableEncoding{markdownTable{}}},
})

// numbered sets each entry's Format to its place.
func numbered(l []FormatInfo) []FormatInfo {
	for i := range l {
		l[i].Format = Format(i)
	}
	return l
}

// info is f's entry; a Format out of the table writes as a table does.
func (f Format) info() *FormatInfo {
	if int(f) < len(formats) {
		return &formats[f]
	}
	return &formats[FormatTable]
}

// Formats returns the output formats, in a fixed order.
func Formats() []FormatInfo { return append([]FormatInfo(nil), formats...) }

// FormatNames are the formats' names: "table, csv, json, jsonl, markdown".
func FormatNames() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

// ParseFormat returns the format named name (or one of its aliases).
func ParseFormat(name string) (Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f.Format, nil
		}
		for _, a := range f.Aliases {
			if a == name {
				return f.Format, nil
			}
		}
	}
	return 0, fmt.Errorf("invalid -o %q (valid: %s)", name, strings.Join(FormatNames(), ", "))
}

// String is the format's name.
func (f Format) String() string {
	if int(f) < len(formats) {
		return formats[f].Name
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Machine reports whether the format is for programs: CSV, JSON or JSON
// Lines.
func (f Format) Machine() bool { return int(f) < len(formats) && formats[f].Machine }

// FormatChoices are the formats as choices of -o.
func FormatChoices() choice.List {
	var l choice.List
	for _, f := range formats {
		l = append(l, choice.Choice{Name: f.Name, Description: f.Description})
	}
	return l
}
