package traces

import "github.com/ratesim/ratesim/internal/choice"

// Units are the units of numeric timestamps, as ParseUnit takes them.
var Units = choice.List{
	{Name: "s", Description: "seconds"},
	{Name: "ms", Description: "milliseconds"},
	{Name: "us", Description: "microseconds"},
	{Name: "ns", Description: "nanoseconds"},
}

// TimeFormats are the named time formats of Options.TimeFormat; a Go
// layout is taken too.
var TimeFormats = choice.List{
	{Name: TimeFormatAuto, Description: "numbers in --unit, or RFC 3339 times (default)"},
	{Name: TimeFormatUnix, Description: "seconds since the Unix epoch"},
	{Name: TimeFormatUnixMs, Description: "milliseconds since the Unix epoch"},
	{Name: TimeFormatUnixUs, Description: "microseconds since the Unix epoch"},
	{Name: TimeFormatUnixNs, Description: "nanoseconds since the Unix epoch"},
	{Name: TimeFormatRFC3339, Description: "RFC 3339 times with an offset"},
	{Name: TimeFormatCLF, Description: "the access log time, 10/Oct/2024:13:55:36 +0200"},
}

// PatternChoices are Patterns, each with what it generates.
var PatternChoices = choice.List{
	{Name: "steady", Description: "Poisson arrivals at a steady rate"},
	{Name: "bursty", Description: "quiet spells and bursts"},
	{Name: "boundary", Description: "clusters straddling window edges"},
	{Name: "ramp", Description: "load rising, then falling"},
}

// KeyStyles are the styles of generated keys, in the order of the
// KeyStyle constants.
var KeyStyles = choice.List{
	{Name: "short", Description: "u1, u2, ..."},
	{Name: "uuid", Description: "36-character UUIDs"},
}

// WriteFormats are the formats a Writer writes.
var WriteFormats = choice.List{
	{Name: "csv", Description: "comma-separated values with a header"},
	{Name: "yaml", Description: "a YAML sequence of requests"},
	{Name: "jsonl", Description: "JSON Lines, one request per line"},
}

// ReadFormats are the formats a Reader reads, as ParseFormat takes them.
var ReadFormats = choice.List{
	{Name: "csv", Description: "comma-separated values with a header"},
	{Name: "yaml", Description: "a YAML sequence of requests"},
	{Name: "jsonl", Description: "JSON Lines, one request per line"},
	{Name: "combined", Description: "an nginx or Apache access log, combined format"},
	{Name: "common", Description: "an nginx or Apache access log, common format"},
}
