package traces

import (
	"bytes"
	"strings"
	"time"
)

// A jsonLogSpec describes a JSON access log: one object per line, read
// by the JSON Lines reader with the log's own names for the user and the
// time, and the time and duration read as the log writes them.
type jsonLogSpec struct {
	name     string
	user     string   // the field of the user
	time     string   // the field of the logged time
	timeKind timeKind // timeISO, or timeEpoch (an ISO text is read as such too)
	round    bool     // the time is written from a float64: round it to the nanosecond
	dur      string   // the field of the duration
	durKind  durKind
	records  TimeIs // what the time records
	fixed    bool   // it is the request's start
	// aliases are attributes under the names every format shares (ip,
	// status, method, path, user_agent, ...), beside the log's own.
	aliases [][2]string
}

var traefikJSON = &jsonLogSpec{name: "Traefik's JSON access log", user: "ClientHost", time: "StartUTC", timeKind: timeISO,
	dur: "Duration", durKind: durNanos, records: TimeIsArrival, fixed: true,
	aliases: [][2]string{{"ip", "ClientHost"}, {"status", "DownstreamStatus"}, {"method", "RequestMethod"}, {"path", "RequestPath"},
		{"protocol", "RequestProtocol"}, {"host", "RequestHost"}, {"user_agent", "request_User-Agent"}, {"router", "RouterName"}}}

var traefikJSONDocs = []FieldInfo{
	{"ClientHost", "ClientHost, ip", "JSON: the client's address: the user"},
	{"StartUTC", "timestamp", "JSON: when the request started, RFC 3339 with nanoseconds: the arrival"},
	{"Duration", "Duration", "JSON: the duration in nanoseconds"},
	{"DownstreamStatus", "DownstreamStatus, status", "JSON: the status sent"},
	{"RequestMethod, RequestPath, RequestProtocol, RequestHost", "also method, path, protocol, host", "JSON: the request"},
	{"request_User-Agent", "request_User-Agent, user_agent", "JSON: the User-Agent header, when Traefik keeps headers"},
	{"any other key", "its name", "JSON: an attribute (dotted paths reach into objects)"},
}

var caddyJSON = &jsonLogSpec{name: "Caddy's JSON access log", user: "request.remote_ip", time: "ts", timeKind: timeEpoch, round: true,
	dur: "duration", durKind: durFloatSeconds, records: TimeIsCompletion,
	aliases: [][2]string{{"ip", "request.remote_ip"}, {"method", "request.method"}, {"path", "request.uri"}, {"protocol", "request.proto"},
		{"host", "request.host"}, {"user_agent", "request.headers.User-Agent"}}}

var caddyEntry = formatEntry{FormatInfo: FormatInfo{Format: Caddy, Name: "caddy", Description: "Caddy's JSON access log (http.log.access)",
	Sniffed: `a first line that is a JSON object with "logger":"http.log.access", or with ts and a request object`,
	Fields: []FieldInfo{
		{"ts", "timestamp", "when the line was written, seconds since the epoch (a float; an ISO 8601 time too): the completion"},
		{"request.remote_ip", "ip", "the peer's address: the user (request.client_ip, behind trusted proxies, with --user-field)"},
		{"request.method, request.uri, request.proto, request.host", "also method, path, protocol, host", "the request"},
		{"request.headers.User-Agent", "also user_agent", "the User-Agent header, as a JSON array"},
		{"status", "status", "the status"},
		{"duration", "duration", "seconds the request took (a float): the duration"},
		{"size", "size", "bytes of the response body"},
		{"any other key", "its dotted path", "an attribute"}},
	Time: "ts", TimeRecords: TimeIsCompletion, Duration: "duration", TimeIs: TimeIsCompletion, Observed: "status=429,503",
	User: "request.remote_ip", Example: "caddy.log", Log: true},
	open: func(c *common, lr *lineReader, opts Options) (parser, error) {
		return newJSONLog(c, lr, caddyJSON, opts)
	},
	sniff: func(head []byte) bool {
		line := firstLine(head)
		return len(line) > 0 && line[0] == '{' && (bytes.Contains(line, []byte(`"logger":"http.log.access`)) ||
			bytes.Contains(line, []byte(`"ts":`)) && bytes.Contains(line, []byte(`"request":{`)) && bytes.Contains(line, []byte(`"remote_ip"`)))
	}}

// jsonLog reads a JSON access log.
type jsonLog struct {
	*jsonlParser
	spec   *jsonLogSpec
	timeIs TimeIs
	lc     logClock
}

func newJSONLog(c *common, lr *lineReader, spec *jsonLogSpec, opts Options) (parser, error) {
	if opts.TimeField != "" {
		return nil, c.formatErr("%s reads its time from %s; it has no other time field to name", spec.name, spec.time)
	}
	ti, err := resolveTimeIs(opts.TimeIs, spec.records, spec.fixed, true, false, spec.name)
	if err != nil {
		return nil, c.formatErr("%s", err.Error())
	}
	user := opts.UserField
	if user == "" {
		user = spec.user
	}
	cost := opts.CostField
	if cost == "" {
		cost = "cost"
	}
	c.names = fieldNames{user: user, time: spec.time, cost: cost, mapped: true}
	c.mode = modeRFC3339
	if spec.timeKind == timeEpoch {
		c.layout = layoutEpoch
	}
	p := &jsonLog{jsonlParser: newJSONLParser(c, lr), spec: spec, timeIs: ti}
	p.timeFn = p.setTime
	aliases := map[string]string{}
	for _, a := range spec.aliases {
		aliases[a[1]] = a[0]
	}
	p.setAliases(aliases)
	return p, nil
}

// setTime sets ev's time from text, the log's time, and adds the
// aliases.
func (p *jsonLog) setTime(ev *Event, text []byte, line, col int) error {
	c, k := p.c, p.spec.timeKind
	if k == timeEpoch && isRFC3339(text) {
		k = timeISO
	}
	var ns int64
	var err error
	if k == timeEpoch && p.spec.round {
		var e numErr
		ns, e = parseDecimal(text, 1e9, true)
		if e != numOK {
			return c.errorf(line, col, "invalid time %s (want seconds since the epoch, such as 1728561336.123)", quote(text))
		}
	} else if ns, err = p.lc.parse(c, k, text, line, col); err != nil {
		return err
	}
	c.noteResolution(ns)
	ev.Time, ev.TimeText = ns, text
	if p.timeIs != TimeIsCompletion {
		return nil
	}
	d, ok := ev.Attr(p.spec.dur)
	if !ok {
		return c.errorf(line, 0, "no %q field: no duration to take from the completion time (--time-is arrival replays the time as logged)", p.spec.dur)
	}
	dur, ok, err := parseLogDuration(c, p.spec.durKind, d, p.spec.dur, line, 0)
	if err != nil {
		return err
	}
	if !ok {
		return c.errorf(line, 0, "%s is %s: no duration to take from the completion time", p.spec.dur, quote(d))
	}
	ev.Time -= dur
	ev.TimeText = p.lc.format(c, k, ev.Time, text)
	return nil
}

// w3cLayout is how W3C and CloudFront logs write a time: their date and
// time fields, joined by a space.
const w3cLayout = "2006-01-02 15:04:05"

// w3cNames are the W3C fields read under the names every format shares.
var w3cNames = map[string]string{
	"c-ip": "ip", "cs-method": "method", "cs-uri-stem": "path", "cs-uri-query": "query", "sc-status": "status",
	"cs(user-agent)": "user_agent", "cs(referer)": "referer", "cs(referrer)": "referer", "cs-username": "remote_user",
	"sc-bytes": "bytes", "cs-bytes": "received_bytes", "cs(host)": "host", "cs-host": "host", "cs-version": "protocol",
	"cs-protocol-version": "protocol", "time-taken": "time_taken",
}

func w3cEntry(f Format) formatEntry {
	cf := f == CloudFront
	info := FormatInfo{Format: W3C, Name: "w3c", Description: "the W3C extended log format, as IIS writes it: space-separated fields a #Fields: directive names, which may change mid-file",
		Sniffed: "#-directives with a #Fields: line", Time: "date and time (UTC)", TimeRecords: TimeIsCompletion,
		Duration: "time-taken (IIS: milliseconds)", TimeIs: TimeIsCompletion, TimeNote: "arrival (the time as logged) when the fields have no time-taken",
		Observed: "status=429,503", Resolution: time.Second, User: "c-ip", Example: "iis.log", Log: true}
	if cf {
		info.Format, info.Name, info.Description = CloudFront, "cloudfront", "Amazon CloudFront standard logs: tab-separated fields a #Fields: directive names"
		info.Sniffed, info.Duration, info.Example = "a #Fields: directive naming x-edge-location", "time-taken (seconds, to the millisecond)", "cloudfront.log"
		info.TimeNote = ""
	}
	info.Fields = []FieldInfo{{"date", "timestamp", "the date (UTC); with time, when the response ended"}, {"time", "timestamp", "the time of day (UTC), whole seconds"}}
	for _, name := range []string{"c-ip", "cs-method", "cs-uri-stem", "cs-uri-query", "sc-status", "cs(User-Agent)", "cs(Referer)", "cs-username", "sc-bytes", "cs-bytes", "cs(Host)", "cs-version", "time-taken"} {
		info.Fields = append(info.Fields, FieldInfo{Name: name, Attr: w3cNames[strings.ToLower(name)], Meaning: w3cMeaning[name]})
	}
	info.Fields = append(info.Fields, FieldInfo{Name: "any other field", Attr: "its name, lower case, other than letters and digits as _ (x-edge-result-type as x_edge_result_type)", Meaning: "an attribute"})
	e := formatEntry{FormatInfo: info,
		open: func(c *common, lr *lineReader, opts Options) (parser, error) { return newW3CParser(c, lr, cf, opts) },
		sniff: func(head []byte) bool {
			fields := w3cFieldsLine(head)
			return fields != nil && bytes.Contains(fields, []byte("x-edge-location")) == cf
		}}
	return e
}

var w3cMeaning = map[string]string{
	"c-ip": "the client's address: the user", "cs-method": "the method", "cs-uri-stem": "the path", "cs-uri-query": "the query, or -",
	"sc-status": "the status", "cs(User-Agent)": "the User-Agent header (IIS writes spaces as +)", "cs(Referer)": "the Referer header",
	"cs-username": "the authenticated user", "sc-bytes": "bytes sent", "cs-bytes": "bytes received", "cs(Host)": "the Host header",
	"cs-version": "the protocol", "time-taken": "how long the request took: the duration",
}

// w3cFieldsLine returns the #Fields: directive of a W3C log's head, nil
// when the head is not one.
func w3cFieldsLine(head []byte) []byte {
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
		if line[0] != '#' {
			return nil
		}
		if f, ok := bytes.CutPrefix(line, []byte("#Fields:")); ok {
			return f
		}
	}
	return nil
}
