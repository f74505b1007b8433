package traces

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"time"
)

// Format is the syntax of a trace file.
type Format uint8

// The trace formats. FormatAuto asks the reader to pick the format from the
// file name's extension, else from the content.
const (
	FormatAuto Format = iota
	CSV               // comma-separated values with a header row
	YAML              // a sequence of maps, or a map whose "requests" holds one
	JSONL             // JSON Lines: one object per line
	Combined          // the combined access log format of nginx and Apache
	Common            // the common access log format (combined without referer and user agent)
)

// String returns the format's name as ParseFormat accepts it: "auto",
// "csv", "yaml" or "jsonl".
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case CSV:
		return "csv"
	case YAML:
		return "yaml"
	case JSONL:
		return "jsonl"
	case Combined:
		return "combined"
	case Common:
		return "common"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat parses a format name: "csv", "yaml" (also "yml"), "jsonl"
// (also "ndjson"), "combined", "common", or "auto" (also ""),
// case-insensitively.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return FormatAuto, nil
	case "csv":
		return CSV, nil
	case "yaml", "yml":
		return YAML, nil
	case "jsonl", "ndjson":
		return JSONL, nil
	case "combined":
		return Combined, nil
	case "common":
		return Common, nil
	}
	return FormatAuto, fmt.Errorf("traces: unknown format %q (valid: csv, yaml, jsonl, combined, common)", s)
}

// FormatOf returns the format a file name's extension implies (.csv, .yaml,
// .yml, .jsonl, .ndjson, each also with .gz after it), or FormatAuto when
// the extension says nothing.
func FormatOf(name string) Format {
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".gz")
	switch path.Ext(name) {
	case ".csv":
		return CSV
	case ".yaml", ".yml":
		return YAML
	case ".jsonl", ".ndjson":
		return JSONL
	}
	return FormatAuto
}

// sniff guesses the format from the first bytes of a (decompressed) trace:
// a first line that parses as an access log line is that access log
// format; an object opening the first line is JSON Lines; a sequence
// entry, a flow sequence, a document marker, a directive, a comment or a
// "key:" line is YAML; anything else (an empty trace too) is CSV.
func sniff(head []byte) Format {
	head = bytes.TrimPrefix(head, utf8BOM)
	for len(head) > 0 {
		var line []byte
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			line, head = head, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if ok, combined := sniffAccessLog(line); ok {
			if combined {
				return Combined
			}
			return Common
		}
		switch line[0] {
		case '{':
			return JSONL
		case '[', '#', '%':
			return YAML
		case '-':
			if len(line) == 1 || line[1] == ' ' || line[1] == '\t' || bytes.HasPrefix(line, []byte("---")) {
				return YAML
			}
			return CSV
		}
		// "requests:" or "key: value" before any comma: a YAML mapping.
		if i := bytes.IndexByte(line, ':'); i > 0 && bytes.IndexByte(line[:i], ',') < 0 &&
			(i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			return YAML
		}
		return CSV
	}
	return CSV
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// units are the time units a trace's numeric timestamps may be in.
var units = []struct {
	name string
	d    time.Duration
}{
	{"s", time.Second},
	{"ms", time.Millisecond},
	{"us", time.Microsecond},
	{"ns", time.Nanosecond},
}

// ParseUnit parses a time unit name: "s", "ms", "us" (also "µs") or "ns".
func ParseUnit(s string) (time.Duration, error) {
	switch s {
	case "µs", "μs":
		return time.Microsecond, nil
	}
	for _, u := range units {
		if s == u.name {
			return u.d, nil
		}
	}
	return 0, fmt.Errorf("traces: unknown time unit %q (valid: %s)", s, Units)
}

// UnitName returns the name ParseUnit accepts for unit ("s", "ms", "us",
// "ns"), or unit.String() for any other duration. Zero means seconds.
func UnitName(unit time.Duration) string {
	if unit == 0 {
		unit = time.Second
	}
	for _, u := range units {
		if unit == u.d {
			return u.name
		}
	}
	return unit.String()
}
