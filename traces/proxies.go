package traces

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// This file holds the line formats of load balancers and proxies: AWS
// ALB, Envoy, HAProxy and Traefik, each a template of the one engine.

// albVars are the fields of an ALB access log entry.
var albVars = map[string]templateVar{
	"type":                     {attr: "type", meaning: "http, https, h2, grpcs, ws or wss"},
	"time":                     {role: roleTime, time: timeISO, attr: "time", meaning: "when the load balancer generated the response (ISO 8601, microseconds): the completion"},
	"elb":                      {attr: "elb", meaning: "the load balancer's resource ID"},
	"client":                   {role: roleHostPort, attr: "ip", port: "client_port", meaning: "client:port: the user is its ip"},
	"target":                   {role: roleHostPort, attr: "target", port: "target_port", meaning: "target:port, or -"},
	"request_processing_time":  {attr: "request_processing_time", dur: durSeconds, meaning: "seconds from receiving the request to sending it to a target (-1: none)"},
	"target_processing_time":   {attr: "target_processing_time", dur: durSeconds, meaning: "seconds the target took (-1: none)"},
	"response_processing_time": {attr: "response_processing_time", dur: durSeconds, meaning: "seconds from the target's response to the client's (-1: none)"},
	"elb_status_code":          {attr: "status", check: checkNumber, meaning: "the status the load balancer sent"},
	"target_status_code":       {attr: "target_status", check: checkNumber, meaning: "the target's status, or -"},
	"received_bytes":           {attr: "received_bytes", meaning: "bytes of the request"},
	"sent_bytes":               {attr: "bytes", meaning: "bytes of the response"},
	"request":                  {role: roleRequest, meaning: "the request line: method, the URL, protocol"},
	"user_agent":               {attr: "user_agent", meaning: "the User-Agent header"},
	"ssl_cipher":               {attr: "ssl_cipher"},
	"ssl_protocol":             {attr: "ssl_protocol"},
	"target_group_arn":         {attr: "target_group_arn"},
	"trace_id":                 {attr: "trace_id", meaning: "the X-Amzn-Trace-Id header"},
	"domain_name":              {attr: "domain_name", meaning: "the SNI domain"},
	"chosen_cert_arn":          {attr: "chosen_cert_arn"},
	"matched_rule_priority":    {attr: "matched_rule_priority"},
	"request_creation_time":    {role: roleTime, time: timeISO, attr: "request_creation_time", meaning: "when the load balancer received the request: the arrival"},
	"actions_executed":         {attr: "actions_executed", meaning: "waf, forward, redirect, ..."},
	"redirect_url":             {attr: "redirect_url"},
	"error_reason":             {attr: "error_reason"},
	"target_port_list":         {attr: "target_port_list"},
	"target_status_code_list":  {attr: "target_status_code_list"},
	"classification":           {attr: "classification"},
	"classification_reason":    {attr: "classification_reason"},
}

const albFormat = `$type $time $elb $client $target $request_processing_time $target_processing_time $response_processing_time ` +
	`$elb_status_code $target_status_code $received_bytes $sent_bytes "$request" "$user_agent" $ssl_cipher $ssl_protocol ` +
	`$target_group_arn "$trace_id" "$domain_name" "$chosen_cert_arn" $matched_rule_priority $request_creation_time ` +
	`"$actions_executed" "$redirect_url" "$error_reason" "$target_port_list" "$target_status_code_list" "$classification" "$classification_reason"`

func albTemplate() *template {
	t := fixedTemplate("the ALB access log format", albFormat, albVars)
	t.extras, t.user, t.timeIs = true, "ip", TimeIsCompletion
	for i, f := range t.fields {
		switch f.name {
		case "time":
			t.time = i
		case "request_creation_time":
			t.arrival, t.min = i, i+1
		}
		if f.dur != durNone {
			t.duration = append(t.duration, i)
		}
	}
	return t
}

var albEntry = templateEntry(ALB, "alb", "AWS Application Load Balancer access logs (space-separated, quoted texts; fields added since are read as extra1, ...)",
	"a first line that begins with http, https, h2, grpcs, ws or wss and an ISO 8601 time, and reads as it",
	albTemplate, albVars, FormatInfo{Time: "time", TimeRecords: TimeIsCompletion, Arrival: "request_creation_time",
		Duration: "request_processing_time + target_processing_time + response_processing_time", TimeIs: TimeIsArrival,
		Observed: "status=429,503", Resolution: time.Microsecond, User: "ip", Example: "alb.log"})

// envoyVars name Envoy's command operators; any other is an attribute
// named by it in lower case (REQ(X-Foo) as x_foo).
var envoyVars = map[string]templateVar{
	"START_TIME":                             {role: roleTime, time: timeISO, meaning: "when the request started, with milliseconds: the arrival"},
	"REQ(:METHOD)":                           {attr: "method", meaning: "the method"},
	"REQ(X-ENVOY-ORIGINAL-PATH?:PATH)":       {attr: "path", meaning: "the path"},
	"PROTOCOL":                               {attr: "protocol", meaning: "HTTP/1.1, HTTP/2, ..."},
	"RESPONSE_CODE":                          {attr: "status", check: checkNumber, meaning: "the status (0: none was sent)"},
	"RESPONSE_FLAGS":                         {attr: "response_flags", meaning: "flags such as RL (rate limited), UH, UF, comma-separated"},
	"BYTES_RECEIVED":                         {attr: "bytes_received", meaning: "body bytes received"},
	"BYTES_SENT":                             {attr: "bytes", meaning: "body bytes sent"},
	"DURATION":                               {attr: "duration", dur: durMillis, meaning: "milliseconds from the start to the last byte out"},
	"RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)":    {attr: "upstream_service_time", meaning: "milliseconds the upstream took"},
	"REQ(X-FORWARDED-FOR)":                   {attr: "x_forwarded_for", meaning: "the X-Forwarded-For header: the user of the default format"},
	"REQ(USER-AGENT)":                        {attr: "user_agent", meaning: "the User-Agent header"},
	"REQ(X-REQUEST-ID)":                      {attr: "request_id", meaning: "the X-Request-Id header"},
	"REQ(:AUTHORITY)":                        {attr: "authority", meaning: "the Host (authority)"},
	"UPSTREAM_HOST":                          {attr: "upstream_host", meaning: "the upstream's address"},
	"DOWNSTREAM_REMOTE_ADDRESS":              {role: roleHostPort, attr: "ip", port: "client_port", meaning: "the client's address and port: the user"},
	"DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT": {attr: "ip", meaning: "the client's address: the user"},
}

// envoyDefault is Envoy's default access log format.
const envoyDefault = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"`

// compileEnvoy compiles an Envoy format string of %OPERATOR% command
// operators ("" for the default format).
func compileEnvoy(format string) (*template, error) {
	name := "the Envoy log format"
	if format == "" {
		format, name = envoyDefault, "Envoy's default log format"
	}
	format = strings.TrimSuffix(format, "\n")
	var lits [][]byte
	var fields []tfield
	lit := []byte{}
	for i := 0; i < len(format); {
		if format[i] != '%' {
			lit = append(lit, format[i])
			i++
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			lit = append(lit, '%')
			i += 2
			continue
		}
		k := strings.IndexByte(format[i+1:], '%')
		if k < 0 {
			return nil, compileError(fmt.Sprintf("Envoy log format: %% at byte %d has no closing %%", i+1))
		}
		op := format[i+1 : i+1+k]
		if op == "" {
			return nil, compileError(fmt.Sprintf("Envoy log format: %%%% at byte %d names no operator", i+1))
		}
		i += k + 2
		base, _, _ := strings.Cut(op, ":") // REQ(X):10, a length
		if strings.HasPrefix(op, "REQ(") || strings.HasPrefix(op, "RESP(") {
			base = op[:strings.IndexByte(op, ')')+1]
			if strings.IndexByte(op, ')') < 0 {
				return nil, compileError("Envoy log format: %" + op + "% has no closing )")
			}
		}
		d, ok := envoyVars[base]
		if !ok {
			if strings.HasPrefix(base, "START_TIME(") {
				return nil, compileError("Envoy log format: %" + op + "%: a START_TIME with a format of its own is not supported; use %START_TIME%")
			}
			d = templateVar{attr: envoyAttrName(base)}
		}
		lits = append(lits, lit)
		lit = []byte{}
		fields = append(fields, tfield{name: "%" + op + "%", attr: d.attr, port: d.port, role: d.role, time: d.time, dur: d.dur, check: d.check})
	}
	lits = append(lits, lit)
	if len(fields) == 0 {
		return nil, compileError("Envoy log format " + quote([]byte(format)) + " has no command operator")
	}
	for i := range fields {
		for j := range i {
			if fields[i].attr != "" && fields[i].attr == fields[j].attr {
				fields[i].attr = envoyAttrName(strings.Trim(fields[i].name, "%"))
			}
		}
	}
	t, err := newTemplate(name, lits, fields)
	if err != nil {
		return nil, err
	}
	t.user, t.timeIs, t.fixed = "x_forwarded_for", TimeIsArrival, true
	for i, f := range t.fields {
		switch {
		case f.role == roleTime && t.time < 0:
			t.time = i
		case f.dur != durNone:
			t.duration = append(t.duration, i)
		}
		if f.attr == "ip" {
			t.user = "ip"
		}
	}
	if t.time < 0 {
		return nil, compileError("Envoy log format has no %START_TIME%")
	}
	return t, nil
}

// envoyAttrName is the attribute of an operator: REQ(X-Foo) is x_foo,
// UPSTREAM_CLUSTER is upstream_cluster.
func envoyAttrName(op string) string {
	op = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(op, "REQ("), "RESP("), ")")
	op = strings.TrimLeft(op, ":")
	return strings.NewReplacer("-", "_", ":", "_", "?", "_or_", "(", "_", ")", "").Replace(strings.ToLower(op))
}

var envoyEntry = func() formatEntry {
	t, _ := compileEnvoy("")
	e := formatEntry{FormatInfo: FormatInfo{Format: Envoy, Name: "envoy", Description: "Envoy's access log in its default format, or the format string given with --envoy-format",
		Sniffed: "a first line that begins with [ and an ISO 8601 time and reads as the default format",
		Time:    "%START_TIME%", TimeRecords: TimeIsArrival, Duration: "%DURATION%", TimeIs: TimeIsArrival,
		Observed: "response_flags=RL", Resolution: time.Millisecond, User: "x_forwarded_for (ip with %DOWNSTREAM_REMOTE_ADDRESS%)",
		Example: "envoy.log", Log: true},
		open: func(c *common, lr *lineReader, opts Options) (parser, error) {
			t, err := compileEnvoy(opts.LogFormat)
			if err != nil {
				return nil, err
			}
			return newTemplateParser(c, lr, t, opts)
		},
		sniff: func(head []byte) bool { return sniffTemplate(t, head) }}
	for _, f := range t.fields {
		e.Fields = append(e.Fields, fieldDoc(f, envoyVars[strings.Trim(f.name, "%")]))
	}
	e.Fields = append(e.Fields, fieldDoc(tfield{name: "%DOWNSTREAM_REMOTE_ADDRESS%", attr: "ip", port: "client_port", role: roleHostPort}, envoyVars["DOWNSTREAM_REMOTE_ADDRESS"]),
		FieldInfo{Name: "%ANY_OTHER%", Attr: "any_other", Meaning: "any other operator: an attribute of its name in lower case (%REQ(X-API-KEY)% as x_api_key)"})
	return e
}()

// haproxyVars are the fields of HAProxy's HTTP log format.
var haproxyVars = map[string]templateVar{
	"client":   {role: roleHostPort, attr: "ip", port: "client_port", meaning: "%ci:%cp, the client's address and port: the user is its ip"},
	"tr":       {role: roleTime, time: timeHAProxy, meaning: "%tr, when the first byte of the request was received (milliseconds, in --tz): the arrival"},
	"ft":       {attr: "frontend", meaning: "%ft, the frontend (~ after it: over TLS)"},
	"b":        {attr: "backend", meaning: "%b, the backend"},
	"s":        {attr: "server", meaning: "%s, the server"},
	"TR":       {attr: "TR", meaning: "%TR, ms to receive the request"},
	"Tw":       {attr: "Tw", meaning: "%Tw, ms in queues"},
	"Tc":       {attr: "Tc", meaning: "%Tc, ms to connect to the server"},
	"Tr":       {attr: "Tr", meaning: "%Tr, ms the server took to respond"},
	"Ta":       {attr: "Ta", dur: durMillis, meaning: "%Ta, ms the request was active: the duration"},
	"ST":       {attr: "status", meaning: "%ST, the status"},
	"B":        {attr: "bytes", meaning: "%B, bytes read from the server"},
	"CC":       {attr: "captured_request_cookie", meaning: "%CC"},
	"CS":       {attr: "captured_response_cookie", meaning: "%CS"},
	"tsc":      {attr: "termination_state", meaning: "%tsc, how the session ended (four characters)"},
	"ac":       {attr: "actconn"},
	"fc":       {attr: "feconn"},
	"bc":       {attr: "beconn"},
	"sc":       {attr: "srv_conn"},
	"rc":       {attr: "retries"},
	"sq":       {attr: "srv_queue"},
	"bq":       {attr: "backend_queue"},
	"captures": {role: roleHAProxyTail, meaning: "%hr %hs %{+Q}r: the captured headers {...}, when captured, and the request line: method, path, protocol"},
}

const haproxyFormat = `$client [$tr] $ft $b/$s $TR/$Tw/$Tc/$Tr/$Ta $ST $B $CC $CS $tsc $ac/$fc/$bc/$sc/$rc $sq/$bq $captures`

func haproxyTemplate() *template {
	t := fixedTemplate("HAProxy's HTTP log format", haproxyFormat, haproxyVars)
	t.user, t.timeIs, t.fixed = "ip", TimeIsArrival, true
	for i, f := range t.fields {
		switch {
		case f.role == roleTime:
			t.time = i
		case f.dur != durNone:
			t.duration = append(t.duration, i)
		}
	}
	t.attrs = append(t.attrs, "method", "path", "protocol", "request_headers", "response_headers")
	return t
}

var haproxyEntry = func() formatEntry {
	t := haproxyTemplate()
	e := templateEntry(HAProxy, "haproxy", "HAProxy's HTTP log format (option httplog), with or without the syslog header before it",
		"a first line that reads as it", haproxyTemplate, haproxyVars,
		FormatInfo{Time: "%tr", TimeRecords: TimeIsArrival, Duration: "%Ta", TimeIs: TimeIsArrival, Observed: "status=429,503",
			Resolution: time.Millisecond, User: "ip", Example: "haproxy.log"})
	e.sniff = func(head []byte) bool { return sniffTemplate(t, skipSyslog(firstLine(head))) }
	e.open = func(c *common, lr *lineReader, opts Options) (parser, error) {
		p, err := newTemplateParser(c, lr, haproxyTemplate(), opts)
		if err != nil {
			return nil, err
		}
		return &syslogParser{p}, nil
	}
	return e
}()

// syslogParser is a template parser of lines that may have a syslog
// header before them ("Feb  6 12:14:14 lb haproxy[14389]: ").
type syslogParser struct{ *tmplParser }

func (p *syslogParser) next(ev *Event) error {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == errLineTooLong {
				return p.c.lineTooLong(p.lr.line)
			}
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ev.Line = p.lr.line
		rest := skipSyslog(line)
		err = p.parse(ev, rest)
		if pe, ok := err.(*ParseError); ok && pe.Column > 0 {
			pe.Column += len(line) - len(rest)
		}
		return err
	}
}

// skipSyslog returns line without a syslog header: the text up to the
// first "]: " when a "[" and digits (a process id) come just before it.
func skipSyslog(line []byte) []byte {
	// A header is short: an HAProxy line without one need not be
	// searched to its end.
	head := line[:min(len(line), 203)]
	i := bytes.Index(head, []byte("]: "))
	if i < 0 || i > 200 {
		return line
	}
	j := bytes.LastIndexByte(line[:i], '[')
	if j < 0 || j+1 == i || !isDigits(line[j+1:i]) {
		return line
	}
	return line[i+3:]
}

// traefikVars are the fields of Traefik's Common Log Format.
var traefikVars = map[string]templateVar{
	"remote_addr":   nginxVars["remote_addr"],
	"remote_user":   nginxVars["remote_user"],
	"time":          {role: roleTime, time: timeCLF, spaces: 1, meaning: "when the request started (StartUTC, or StartLocal), whole seconds: the arrival"},
	"request":       nginxVars["request"],
	"status":        {attr: "status", check: checkNumber, meaning: "the status sent (DownstreamStatus)"},
	"bytes":         {attr: "bytes", meaning: "bytes of the response (DownstreamContentSize)"},
	"referer":       nginxVars["http_referer"],
	"user_agent":    nginxVars["http_user_agent"],
	"request_count": {attr: "request_count", meaning: "requests received since Traefik started"},
	"router":        {attr: "router", meaning: "the router's name"},
	"server_url":    {attr: "server_url", meaning: "the server's URL"},
	"duration":      {attr: "duration", dur: durMillisSuffix, meaning: "the duration in milliseconds, as 12ms"},
}

const traefikFormat = `$remote_addr - $remote_user [$time] "$request" $status $bytes "$referer" "$user_agent" $request_count "$router" "$server_url" $duration`

func traefikTemplate() *template {
	t := fixedTemplate("Traefik's Common Log Format", traefikFormat, traefikVars)
	t.user, t.timeIs, t.fixed = "ip", TimeIsArrival, true
	for i, f := range t.fields {
		switch {
		case f.role == roleTime:
			t.time = i
		case f.dur != durNone:
			t.duration = append(t.duration, i)
		}
	}
	return t
}

var traefikEntry = func() formatEntry {
	t := traefikTemplate()
	e := templateEntry(Traefik, "traefik", "Traefik's access log: its Common Log Format, or JSON (one object per line, told apart by its first character)",
		"a first line that reads as its Common Log Format, or a JSON object with ClientHost and StartUTC",
		traefikTemplate, traefikVars, FormatInfo{Time: "[timestamp] (CLF), StartUTC (JSON)", TimeRecords: TimeIsArrival,
			Duration: "the last field, 12ms (CLF); Duration, nanoseconds (JSON)", TimeIs: TimeIsArrival, Observed: "status=429",
			User: "ip (ClientHost in JSON)", Example: "traefik.log"})
	e.Fields = append(e.Fields[:len(e.Fields)-1], traefikJSONDocs...)
	e.sniff = func(head []byte) bool {
		line := firstLine(head)
		if len(line) > 0 && line[0] == '{' {
			return bytes.Contains(line, []byte(`"ClientHost"`)) && bytes.Contains(line, []byte(`"StartUTC"`))
		}
		return sniffTemplate(t, line)
	}
	e.open = func(c *common, lr *lineReader, opts Options) (parser, error) {
		if line := firstLine(lr.buffered()); len(line) > 0 && line[0] == '{' {
			return newJSONLog(c, lr, traefikJSON, opts)
		}
		return newTemplateParser(c, lr, traefikTemplate(), opts)
	}
	return e
}()

// templateEntry is the catalogue entry of a fixed template format.
func templateEntry(f Format, name, about, sniffed string, tmpl func() *template, vars map[string]templateVar, info FormatInfo) formatEntry {
	t := tmpl()
	info.Format, info.Name, info.Description, info.Sniffed, info.Log = f, name, about, sniffed, true
	for _, fl := range t.fields {
		info.Fields = append(info.Fields, fieldDoc(fl, vars[fl.name]))
	}
	return formatEntry{FormatInfo: info,
		open: func(c *common, lr *lineReader, opts Options) (parser, error) {
			return newTemplateParser(c, lr, tmpl(), opts)
		},
		sniff: func(head []byte) bool { return sniffTemplate(t, head) }}
}
