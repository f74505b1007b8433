// Package render writes ratesim's outputs: rows of cells under column
// specs, in every output format (an ASCII table, Markdown, CSV, JSON, JSON
// Lines), the text lines around them, and the numbers and texts in them.
// It is the one place that knows how a format writes a value: a new
// format is one entry of the table of formats (format.go) and its
// encoding (encoding.go), which the Encoder, the RecordWriter and
// Table.Render call.
//
// It knows nothing of limiters, the engine or the command line: callers
// turn their values into Cells.
package render
