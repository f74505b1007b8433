// Package traces reads, writes and generates request traces: streams of
// events (a user key, a time, a cost and other attributes) for replaying
// through rate limiters.
//
// # Formats
//
// CSV has a header row naming a user and a timestamp column (matched
// without regard to case or surrounding spaces), optionally a cost column;
// every other column is an attribute. Fields are RFC 4180: quoted fields
// may hold commas, doubled quotes and line breaks.
//
//	user,timestamp,cost,endpoint
//	u1,7,1,/search
//	u2,8.5,2,"/upload,v2"
//
// YAML is a sequence of maps, or a map whose only key, requests, holds
// one. Numbers are read from their text, so 1.5 stays 1.5. Merge keys are
// refused; aliases are resolved only where a request or a scalar is
// expected. YAML is parsed whole, so its size is capped
// (Options.MaxYAMLBytes), and each alias counts against the cap as the
// size of what it repeats.
//
//	requests:
//	  - {user: u1, timestamp: 7}
//	  - {user: u2, timestamp: 8.5, cost: 2, endpoint: /upload}
//
// JSON Lines holds one object per line; user may be a string or a number,
// timestamp a number or a string, cost a number. A field other than those
// is an attribute: a string's text, or the JSON text of any other value.
//
//	{"user":"u1","timestamp":7}
//	{"user":"u2","timestamp":8.5,"cost":2,"endpoint":"/upload"}
//
// The format comes from Options.Format, else the name's extension (.csv,
// .yaml, .yml, .jsonl, .ndjson, each also followed by .gz), else the
// content. Gzip is recognized by its magic bytes and decompressed. A UTF-8
// byte order mark and CRLF line ends are accepted. An empty trace, or a
// CSV header alone, is a trace of no events.
//
// # Time
//
// A numeric timestamp is a decimal number (an optional sign, a fraction
// and an exponent are allowed: 7, 0.4, -1.25, 1.5e3) of Options.Unit,
// seconds by default, converted to int64 nanoseconds exactly from its text,
// never through float64. A fraction finer than a nanosecond and a value
// beyond the int64 range are errors. A timestamp may instead be an RFC 3339
// time (2024-01-01T00:00:07.5Z), converted to Unix nanoseconds; a trace
// uses one kind or the other throughout. AppendDecimal writes nanoseconds
// back as an exact decimal in a unit, and ParseDuration reads durations
// the same way.
//
// # Errors
//
// Problems with a trace's content are *ParseError values naming the file,
// the line and, where known, the column:
//
//	traces: trace.csv:4: expected 2 fields, got 1
//	traces: trace.csv:3:4: invalid timestamp "abc" (want a number of s or an RFC 3339 time)
//
// A Reader is strict by default: the first bad record ends the read. With
// Options.Lenient it skips bad records, reports each to Options.OnSkip and
// counts them (Reader.Skipped).
//
// # Sets, sorting and interrupts
//
// OpenSet reads the traces of one replay as one Source: several files
// merged by time (Merge), or sorted (Sort) in bounded memory, spilling
// sorted runs to temporary files merged 32 at a time. Its context stops
// it: Next returns the context's error once it is done, a read blocked on
// a pipe or terminal included. A Spool lets a caller read traces that can
// be read only once (standard input, a pipe) more than once, from a copy.
// Temporary files have no name from the moment they are made, where the
// system allows, so that nothing is left of them however a process ends.
//
// # Speed
//
// Reading allocates nothing per record: Event's byte slices are views into
// the reader's buffers, valid until the next call of Next. CSV lines
// without quotes are split in place, eight bytes at a time.
//
// # Writing and generating
//
// A Writer writes events in any of the formats such that reading them back
// gives the same events. Generate writes synthetic traces (steady, bursty,
// boundary and ramp patterns, with a skewed user popularity), determined
// by a seed.
//
// Nothing in this package reads the clock.
package traces
