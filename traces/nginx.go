package traces

import (
	"fmt"
	"strings"
)

// The predefined nginx log formats --log-format names. combined and
// common also read Apache's formats of those names, whose second field
// (%l, the ident) may be other than "-".
var nginxNamed = []struct {
	name, format, about string
}{
	{"combined", `$remote_addr $ident $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`,
		"nginx's and Apache's combined format"},
	{"common", `$remote_addr $ident $remote_user [$time_local] "$request" $status $body_bytes_sent`,
		"the Common Log Format: combined without referer and user agent"},
	{"main", `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for"`,
		"the main format of nginx's sample nginx.conf: combined and X-Forwarded-For"},
	{"upstreaminfo", `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`,
		"ingress-nginx's default log-format-upstream"},
}

// nginxVars are the nginx variables whose values ratesim reads in a
// particular way, or under a name of its own; any other variable is an
// attribute named as the variable without its $.
var nginxVars = map[string]templateVar{
	"remote_addr":      {attr: "ip", meaning: "the client address: the user"},
	"ident":            {role: roleSkip, meaning: "Apache's %l, the identd user: nginx writes -"},
	"remote_user":      {attr: "remote_user", meaning: "the user name of basic authentication"},
	"time_local":       {role: roleTime, time: timeCLF, spaces: 1, meaning: "when the line was written, in the Common Log Format (whole seconds)"},
	"time_iso8601":     {role: roleTime, time: timeISO, meaning: "when the line was written, ISO 8601 (whole seconds)"},
	"msec":             {role: roleTime, time: timeEpoch, meaning: "when the line was written, seconds since the epoch with milliseconds"},
	"request":          {role: roleRequest, meaning: "the request line: method, path and protocol"},
	"request_method":   {attr: "method", meaning: "the method"},
	"request_uri":      {attr: "path", meaning: "the original URI, with its arguments"},
	"server_protocol":  {attr: "protocol", meaning: "the protocol"},
	"status":           {attr: "status", check: checkStatus, meaning: "the response status"},
	"body_bytes_sent":  {attr: "bytes", check: checkBytes, meaning: "bytes of the response body"},
	"http_referer":     {attr: "referer", meaning: "the Referer header"},
	"http_user_agent":  {attr: "user_agent", meaning: "the User-Agent header"},
	"request_time":     {attr: "request_time", dur: durSeconds, meaning: "seconds from the first byte read to the line written (milliseconds): the duration"},
	"limit_req_status": {attr: "limit_req_status", meaning: "what limit_req did: PASSED, DELAYED, REJECTED, DELAYED_DRY_RUN or REJECTED_DRY_RUN"},
}

// nginxTimeRank orders nginx's time variables, finest first: the finest a
// format has is its time, the others are attributes.
var nginxTimeRank = []string{"msec", "time_iso8601", "time_local"}

// compileNginx compiles an nginx log_format string, or the name of a
// predefined one. A predefined format reads text after its last field as
// extra fields (extra1, extra2, ...).
func compileNginx(format string) (*template, error) {
	name, extras := "the nginx log format", false
	for _, n := range nginxNamed {
		if strings.TrimSpace(format) == n.name {
			name, format, extras = "the "+n.name+" log format", n.format, true
			break
		}
	}
	if strings.TrimSpace(format) == "" {
		return nil, compileError("an empty nginx log format")
	}
	lits, vars, err := dollarVars(format, "nginx log format")
	if err != nil {
		return nil, err
	}
	timeVar := ""
	for _, r := range nginxTimeRank {
		for _, v := range vars {
			if v == r && timeVar == "" {
				timeVar = r
			}
		}
	}
	fields := make([]tfield, len(vars))
	taken := map[string]bool{}
	for i, v := range vars {
		d, known := nginxVars[v]
		if !known {
			d = templateVar{attr: v}
		}
		f := tfield{name: "$" + v, attr: d.attr, role: d.role, time: d.time, dur: d.dur, check: d.check, spaces: d.spaces,
			list: strings.HasPrefix(v, "upstream_")}
		if f.role == roleTime && v != timeVar {
			f.attr = v // a time other than the one replayed: an attribute
		}
		if f.attr != "" {
			if taken[f.attr] {
				f.attr = v
			}
			if taken[f.attr] {
				return nil, compileError("nginx log format names $" + v + " twice")
			}
			taken[f.attr] = true
		}
		fields[i] = f
	}
	t, err := newTemplate(name, lits, fields)
	if err != nil {
		return nil, err
	}
	t.extras = extras
	t.user = "ip"
	t.timeIs = TimeIsCompletion // nginx writes a line when the response ends
	for i, v := range vars {
		switch {
		case v == timeVar:
			t.time = i
		case v == "request_time":
			t.duration = append(t.duration, i)
		}
	}
	if t.time < 0 {
		return nil, compileError("nginx log format " + quote([]byte(format)) + " has no time: give it $msec, $time_iso8601 or $time_local")
	}
	return t, nil
}

// dollarVars splits a format of $name (or ${name}) variables into its
// literals and variables: lits[0] before the first, lits[i+1] after the
// i-th.
func dollarVars(format, what string) (lits [][]byte, vars []string, err error) {
	lit := []byte{}
	for i := 0; i < len(format); {
		if format[i] != '$' {
			lit = append(lit, format[i])
			i++
			continue
		}
		j := i + 1
		var v string
		if j < len(format) && format[j] == '{' {
			k := strings.IndexByte(format[j:], '}')
			if k < 0 {
				return nil, nil, compileError(fmt.Sprintf("%s: ${ at byte %d has no closing }", what, i+1))
			}
			v, j = format[j+1:j+k], j+k+1
		} else {
			for j < len(format) && isVarByte(format[j]) {
				j++
			}
			v = format[i+1 : j]
		}
		if v == "" {
			return nil, nil, compileError(fmt.Sprintf("%s: $ at byte %d names no variable", what, i+1))
		}
		lits = append(lits, lit)
		vars = append(vars, v)
		lit = []byte{}
		i = j
	}
	lits = append(lits, lit)
	if len(vars) == 0 {
		return nil, nil, compileError(what + " " + quote([]byte(format)) + " has no variable")
	}
	return lits, vars, nil
}

// fixedTemplate compiles a format of $name variables, each described by
// vars (an unknown one is an error: the formats are ratesim's own).
func fixedTemplate(name, format string, vars map[string]templateVar) *template {
	lits, names, err := dollarVars(format, name)
	if err != nil {
		panic(err)
	}
	fields := make([]tfield, len(names))
	for i, v := range names {
		d, ok := vars[v]
		if !ok {
			panic("traces: " + name + ": no variable " + v)
		}
		fields[i] = tfield{name: v, attr: d.attr, port: d.port, role: d.role, time: d.time, dur: d.dur, check: d.check, spaces: d.spaces}
	}
	t, err := newTemplate(name, lits, fields)
	if err != nil {
		panic(err)
	}
	return t
}

func isVarByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// nginxVarDocs lists the variables nginxVars describes, for the catalogue.
func nginxVarDocs() []FieldInfo {
	order := []string{"remote_addr", "ident", "remote_user", "time_local", "time_iso8601", "msec", "request", "request_method", "request_uri",
		"server_protocol", "status", "body_bytes_sent", "http_referer", "http_user_agent", "request_time", "limit_req_status"}
	var out []FieldInfo
	for _, v := range order {
		d := nginxVars[v]
		a := d.attr
		switch d.role {
		case roleRequest:
			a = "method, path, protocol"
		case roleTime:
			a = "timestamp"
		case roleSkip:
			a = ""
		}
		out = append(out, FieldInfo{Name: "$" + v, Attr: a, Meaning: d.meaning})
	}
	return append(out, FieldInfo{Name: "$any_other", Attr: "any_other", Meaning: "any other variable ($http_x_forwarded_for, $upstream_response_time, ...): an attribute of its name"})
}
