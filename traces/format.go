package traces

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Format is the syntax of a trace file: an entry of the catalogue (see
// Formats).
type Format uint8

// The trace formats. FormatAuto asks the reader to pick the format from the
// file name's extension, else from the content.
const (
	FormatAuto   Format = iota
	CSV                 // comma-separated values with a header row
	YAML                // a sequence of maps, or a map whose "requests" holds one
	JSONL               // JSON Lines: one object per line
	Combined            // the combined access log format of nginx and Apache
	Common              // the common access log format (combined without referer and user agent)
	Nginx               // any nginx log_format (Options.LogFormat)
	Upstreaminfo        // ingress-nginx's default log format
	ALB                 // AWS Application Load Balancer access logs
	CloudFront          // Amazon CloudFront standard logs
	W3C                 // the W3C extended log format (IIS)
	Envoy               // Envoy's access log (its default format, or Options.LogFormat)
	HAProxy             // HAProxy's HTTP log format (option httplog)
	Traefik             // Traefik's access log: its Common Log Format or JSON
	Caddy               // Caddy's JSON access log
)

// String returns the format's name as ParseFormat accepts it: "auto",
// "csv", "yaml", "jsonl", "combined", ...
func (f Format) String() string {
	if f == FormatAuto {
		return "auto"
	}
	if e := entryOf(f); e != nil {
		return e.Name
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat parses a format name of the catalogue (or an alias: "yml",
// "ndjson"), or "auto" (also ""), case-insensitively.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if name == "" || name == "auto" {
		return FormatAuto, nil
	}
	for _, e := range catalogue {
		if e.Name == name || slices.Contains(e.Aliases, name) {
			return e.Format, nil
		}
	}
	return FormatAuto, fmt.Errorf("traces: unknown format %q (valid: %s)", s, ReadFormats)
}

// FormatOf returns the format a file name's extension implies (a
// format's Extensions: .csv, .yaml, .yml, .jsonl, .ndjson, each also
// with .gz after it), or FormatAuto when the extension says nothing.
func FormatOf(name string) Format {
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".gz")
	ext := strings.TrimPrefix(path.Ext(name), ".")
	for _, e := range catalogue {
		if ext != "" && slices.Contains(e.Extensions, ext) {
			return e.Format
		}
	}
	return FormatAuto
}

// sniff guesses the format from the first bytes of a (decompressed) trace:
// a log format whose lines the head reads as (in sniffOrder); else an
// object opening the first line is JSON Lines; a sequence entry, a flow
// sequence, a document marker, a directive, a comment or a "key:" line
// is YAML; anything else (an empty trace too) is CSV.
func sniff(head []byte) Format {
	head = bytes.TrimPrefix(head, utf8BOM)
	for _, f := range sniffOrder {
		if e := entryOf(f); e.sniff != nil && e.sniff(head) {
			return f
		}
	}
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
