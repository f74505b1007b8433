package traces

import (
	"bytes"
	"time"
)

// FormatInfo describes one trace format of the catalogue: its name, how
// it is recognized, its fields and what they mean, and how its times are
// read. Formats returns them all; ratesim formats lists them.
type FormatInfo struct {
	Format      Format
	Name        string   // as --format takes it
	Aliases     []string // other names --format takes
	Description string
	// Sniffed says how the format is recognized without --format; empty
	// when it never is.
	Sniffed string
	// Fields are the format's fields, in the order it writes them (for
	// formats given their fields, the ones read in a particular way).
	Fields []FieldInfo
	// Time names the field the time is read from; TimeRecords says what
	// it records, the arrival or the completion of a request.
	Time        string
	TimeRecords TimeIs
	// Duration names the field (or the sum of fields) of a request's
	// duration; Arrival names an explicit arrival field; empty: none.
	Duration, Arrival string
	// TimeIs is the default of --time-is; TimeNote says when it differs.
	TimeIs   TimeIs
	TimeNote string
	// Observed is the default of --observed: the field that records what
	// a limiter did, and the values that mean it limited the request.
	Observed string
	// Resolution is the resolution of its times, 0 when it varies.
	Resolution time.Duration
	// User is the field the user is read from unless --user-field names
	// another.
	User string
	// Example is the bundled example of the format (traces/examples).
	Example string
	// Log: the format is a server's log (its times are absolute).
	Log bool
	// Extensions are the file extensions that imply the format, without
	// the dot (each also with .gz after it); none: the extension says
	// nothing, and the content is sniffed.
	Extensions []string
}

// A FieldInfo is one field of a format.
type FieldInfo struct {
	Name    string // as the format's documentation names it: "$remote_addr", "c-ip"
	Attr    string // the attribute it is read into ("timestamp" for the time); empty: none
	Meaning string
}

// formatEntry is a FormatInfo and the functions that read its format.
type formatEntry struct {
	FormatInfo
	// open returns the parser of a trace of the format.
	open func(c *common, lr *lineReader, opts Options) (parser, error)
	// sniff reports whether the head of a trace (its first lines, after
	// a byte order mark) is of the format; nil: it is never guessed.
	sniff func(head []byte) bool
}

// catalogue holds every format, in the order of the Format constants. A
// new format is one entry here (and its constant).
var catalogue = []formatEntry{
	{FormatInfo: FormatInfo{Format: CSV, Name: "csv", Description: "comma-separated values with a header naming user and timestamp (optional cost); other columns are attributes",
		Sniffed: "the fallback: content that is no other format", Time: "timestamp", Fields: []FieldInfo{
			{"user", "user", "the key the request is limited by"}, {"timestamp", "timestamp", "a number in --unit, or an RFC 3339 time"},
			{"cost", "cost", "units the request takes (default 1)"}, {"any other column", "its name", "an attribute"}},
		User: "user", Example: "boundary.csv", Extensions: []string{"csv"}},
		open: func(c *common, lr *lineReader, _ Options) (parser, error) { return &csvParser{c: c, lr: lr}, nil }},
	{FormatInfo: FormatInfo{Format: YAML, Name: "yaml", Aliases: []string{"yml"}, Description: "a sequence of {user, timestamp, cost} maps, or a map whose requests: holds one",
		Sniffed: "a first line that is a sequence entry, a document marker, a comment or a key:", Time: "timestamp",
		Fields: []FieldInfo{{"user", "user", "the key"}, {"timestamp", "timestamp", "a number in --unit, or an RFC 3339 time"}, {"cost", "cost", "units the request takes"}},
		User:   "user", Example: "boundary.yaml", Extensions: []string{"yaml", "yml"}},
		open: func(c *common, lr *lineReader, opts Options) (parser, error) {
			p, err := newYAMLParser(c, lr, opts.MaxYAMLBytes)
			if err != nil {
				return nil, err
			}
			return p, nil
		}},
	{FormatInfo: FormatInfo{Format: JSONL, Name: "jsonl", Aliases: []string{"ndjson"}, Description: "JSON Lines: one object per line; --user-field and --time-field take dotted paths",
		Sniffed: "a first line that is a JSON object of no log format", Time: "timestamp",
		Fields: []FieldInfo{{"user", "user", "the key"}, {"timestamp", "timestamp", "a number in --unit, or an RFC 3339 time"}, {"cost", "cost", "units the request takes"}, {"any other key", "its dotted path", "an attribute"}},
		User:   "user", Example: "boundary.jsonl", Extensions: []string{"jsonl", "ndjson"}},
		open: func(c *common, lr *lineReader, _ Options) (parser, error) { return newJSONLParser(c, lr), nil }},
	nginxEntry(Combined, "combined", "nginx's and Apache's combined access log; text after its last field is read as extra fields (extra1, extra2, ...)",
		"a first line that reads as it", "access.log"),
	nginxEntry(Common, "common", "the Common Log Format (combined without referer and user agent), and extra fields after it",
		"a first line that reads as it", "common.log"),
	nginxEntry(Nginx, "nginx", "any nginx log_format, given with --log-format (a format string, or combined, common, main or upstreaminfo; default combined)",
		"", "nginx-timed.log"),
	nginxEntry(Upstreaminfo, "upstreaminfo", "ingress-nginx's default log format (log-format-upstream): combined, $request_length, $request_time and the upstream's",
		"a first line that reads as it", "upstreaminfo.log"),
	albEntry,
	w3cEntry(CloudFront),
	w3cEntry(W3C),
	envoyEntry,
	haproxyEntry,
	traefikEntry,
	caddyEntry,
}

// nginxEntry is the catalogue entry of an nginx format: Nginx takes its
// format from Options.LogFormat, the others are named ones.
func nginxEntry(f Format, name, about, sniffed, example string) formatEntry {
	named := name
	if f == Nginx {
		named = ""
	}
	e := formatEntry{FormatInfo: FormatInfo{Format: f, Name: name, Description: about, Sniffed: sniffed,
		Fields: nginxVarDocs(), Time: "$msec, $time_iso8601 or $time_local: the finest the format has", TimeRecords: TimeIsCompletion,
		Duration: "$request_time", TimeIs: TimeIsCompletion,
		TimeNote: "arrival (the time as logged) when the format has no $request_time",
		Observed: "limit_req_status=REJECTED,REJECTED_DRY_RUN when the format has $limit_req_status, else status=429,503",
		User:     "ip", Example: example, Log: true},
		open: func(c *common, lr *lineReader, opts Options) (parser, error) {
			if f == Combined || f == Common {
				return newCombinedParser(c, lr, f == Combined, opts)
			}
			format := named
			if format == "" {
				format = opts.LogFormat
				if format == "" {
					format = "combined"
				}
			}
			t, err := compileNginx(format)
			if err != nil {
				return nil, err
			}
			return newTemplateParser(c, lr, t, opts)
		}}
	switch f {
	case Combined, Common:
		e.Fields = nil
		t, _ := compileNginx(name)
		for _, fl := range t.fields {
			e.Fields = append(e.Fields, fieldDoc(fl, nginxVars[fl.name[1:]]))
		}
		e.Duration, e.TimeIs, e.TimeNote = "", TimeIsArrival, "nginx writes $time_local as a request ends, Apache's %t as it starts; the format logs no duration, so times are replayed as logged"
		e.Time, e.Resolution, e.Observed = "$time_local", time.Second, "status=429,503"
	case Upstreaminfo:
		e.Time, e.Resolution, e.Observed, e.TimeNote = "$time_local", time.Second, "status=429,503", ""
	}
	switch {
	case f == Combined || f == Common:
		e.sniff = func(head []byte) bool {
			ok, combined := sniffAccessLog(firstLine(head))
			return ok && combined == (f == Combined)
		}
	case named != "":
		e.sniff = func(head []byte) bool {
			t, err := compileNginx(named)
			return err == nil && sniffTemplate(t, head)
		}
	}
	return e
}

// fieldDoc documents a template's field.
func fieldDoc(f tfield, v templateVar) FieldInfo {
	a := f.attr
	switch f.role {
	case roleRequest:
		a = "method, path, protocol"
	case roleHostPort:
		a = f.attr + ", " + f.port
	case roleTime:
		if a == "" {
			a = "timestamp"
		}
	}
	return FieldInfo{Name: f.name, Attr: a, Meaning: v.meaning}
}

// sniffTemplate reports whether the first line of head reads as t.
func sniffTemplate(t *template, head []byte) bool {
	line := firstLine(head)
	if len(line) == 0 {
		return false
	}
	c := common{}
	c.init("", 1)
	c.tf.loc = time.UTC
	p := tmplParser{c: &c, t: t, userName: t.user, timeIs: TimeIsArrival}
	if t.time < 0 {
		return false
	}
	var ev Event
	return p.parse(&ev, line) == nil
}

// firstLine returns the first line of head with content.
func firstLine(head []byte) []byte {
	for len(head) > 0 {
		var line []byte
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			line, head = head, nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return bytes.TrimRight(line, "\r")
		}
	}
	return nil
}

// Formats returns the catalogue: every trace format, in the order of the
// Format constants.
func Formats() []FormatInfo {
	out := make([]FormatInfo, len(catalogue))
	for i := range catalogue {
		out[i] = catalogue[i].FormatInfo
	}
	return out
}

// Info returns the catalogue's entry of f; ok is false for FormatAuto and
// unknown formats.
func (f Format) Info() (info FormatInfo, ok bool) {
	if e := entryOf(f); e != nil {
		return e.FormatInfo, true
	}
	return FormatInfo{}, false
}

func entryOf(f Format) *formatEntry {
	if f == FormatAuto || int(f) > len(catalogue) {
		return nil
	}
	return &catalogue[f-1]
}

// sniffOrder is the order the formats are tried in when a trace's format
// is guessed: the logs whose lines another reading would also take, most
// particular first, then the rest.
var sniffOrder = []Format{CloudFront, W3C, ALB, Envoy, HAProxy, Traefik, Caddy, Upstreaminfo, Combined, Common}
