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

// ReadFormats are the formats a Reader reads, as ParseFormat takes them:
// every entry of the catalogue, in its order (ratesim formats lists them
// with their fields).
var ReadFormats = readFormats()

func readFormats() choice.List {
	l := make(choice.List, len(catalogue))
	for i, e := range catalogue {
		l[i] = choice.Choice{Name: e.Name, Description: e.Description}
	}
	return l
}

// TimeIsChoices are the values of Options.TimeIs as ParseTimeIs takes
// them, beside "" for the format's default.
var TimeIsChoices = choice.List{
	{Name: "arrival", Description: "the times are when requests arrived: replayed as logged"},
	{Name: "completion", Description: "the times are when responses ended: replayed at the time less the duration"},
}
