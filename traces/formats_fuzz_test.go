package traces

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratesim/ratesim/traces/examples"
)

// fuzzLog reads text as format f with opts and checks what every event
// read must be: a user of valid UTF-8, a time whose text is there, and
// the reader stopping at the first error, which names the trace.
func fuzzLog(t *testing.T, text string, opts Options) {
	r, err := NewReader(strings.NewReader(text), "fuzz.log", opts)
	if err != nil {
		return
	}
	for range 1000 {
		ev, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.log") {
				t.Fatalf("error without the trace's name: %v", err)
			}
			if _, again := r.Next(); again == nil {
				t.Fatalf("Next after an error succeeded")
			}
			return
		}
		if len(ev.User) == 0 || !utf8.Valid(ev.User) || len(ev.TimeText) == 0 {
			t.Fatalf("%q: event %+v", text, ev)
		}
	}
}

// exampleLines returns the lines of a bundled example.
func exampleLines(f *testing.F, name string) []string {
	data, err := examples.FS.ReadFile(name)
	if err != nil {
		f.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// templateFormats are the formats the template engine reads.
var templateFormats = []Format{Combined, Common, Upstreaminfo, ALB, Envoy, HAProxy, Traefik}

// FuzzTemplateLogs fuzzes the line formats of the template engine: the
// first byte picks the format, the rest is the log.
func FuzzTemplateLogs(f *testing.F) {
	for i, name := range []string{"access.log", "common.log", "upstreaminfo.log", "alb.log", "envoy.log", "haproxy.log", "traefik.log"} {
		for _, l := range exampleLines(f, name) {
			f.Add(byte(i), l, false)
			f.Add(byte(i), l, true)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, text string, completion bool) {
		opts := Options{Format: templateFormats[int(which)%len(templateFormats)]}
		if completion {
			opts.TimeIs = TimeIsCompletion
		}
		fuzzLog(t, text, opts)
	})
}

// FuzzNginxLogFormat fuzzes nginx log_format strings and lines read with
// them.
func FuzzNginxLogFormat(f *testing.F) {
	f.Add(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $limit_req_status`,
		exampleLines(f, "nginx-timed.log")[0])
	f.Add(`$remote_addr $msec ${status}x "$http_x_forwarded_for" $upstream_addr`, `10.0.0.1 1728561336.123 200x "1.2.3.4, 5.6.7.8" 10.0.0.2:80, 10.0.0.3:80 : 10.0.0.4:80`)
	f.Add(`[$time_iso8601] $remote_addr $request_time`, `[2024-10-10T13:55:36+02:00] 10.0.0.1 0.250`)
	f.Fuzz(func(t *testing.T, format, line string) {
		if tmpl, err := compileNginx(format); err == nil {
			if tmpl.time < 0 || tmpl.time >= len(tmpl.fields) {
				t.Fatalf("%q: time field %d of %d", format, tmpl.time, len(tmpl.fields))
			}
		}
		fuzzLog(t, line, Options{Format: Nginx, LogFormat: format})
		fuzzLog(t, line, Options{Format: Nginx, LogFormat: format, TimeIs: TimeIsCompletion})
	})
}

// FuzzEnvoyFormat fuzzes Envoy format strings and lines read with them.
func FuzzEnvoyFormat(f *testing.F) {
	f.Add(envoyDefault, exampleLines(f, "envoy.log")[1])
	f.Add(`%START_TIME% %DOWNSTREAM_REMOTE_ADDRESS% %REQ(X-API-KEY):10% %RESPONSE_CODE% %%`, `2024-10-10T11:55:36.310Z 192.0.2.7:5000 k1 429 %`)
	f.Fuzz(func(t *testing.T, format, line string) {
		compileEnvoy(format)
		fuzzLog(t, line, Options{Format: Envoy, LogFormat: format})
	})
}

// FuzzW3C fuzzes W3C and CloudFront logs.
func FuzzW3C(f *testing.F) {
	f.Add(false, strings.Join(exampleLines(f, "iis.log"), "\n"))
	f.Add(true, strings.Join(exampleLines(f, "cloudfront.log"), "\n"))
	f.Add(false, "#Date: 2024-10-10 00:00:00\n#Fields: time c-ip\n11:55:36 10.0.0.1\n")
	f.Fuzz(func(t *testing.T, cloudfront bool, text string) {
		opts := Options{Format: W3C}
		if cloudfront {
			opts.Format = CloudFront
		}
		fuzzLog(t, text, opts)
		opts.TimeIs = TimeIsArrival
		fuzzLog(t, text, opts)
	})
}

// FuzzJSONLogs fuzzes Traefik's and Caddy's JSON logs.
func FuzzJSONLogs(f *testing.F) {
	for _, l := range exampleLines(f, "traefik-json.log") {
		f.Add(false, l)
	}
	for _, l := range exampleLines(f, "caddy.log") {
		f.Add(true, l)
	}
	f.Fuzz(func(t *testing.T, caddy bool, text string) {
		opts := Options{Format: Traefik}
		if caddy {
			opts.Format = Caddy
		}
		fuzzLog(t, text, opts)
		if bytes.HasPrefix([]byte(text), []byte("{")) {
			opts.TimeIs = TimeIsArrival
			fuzzLog(t, text, opts)
		}
	})
}

// FuzzCombinedMatchesTemplate checks the combined and common formats'
// own reader against the template engine reading the same formats
// (--format nginx --log-format combined): on every line both fail, or
// both read the same event.
func FuzzCombinedMatchesTemplate(f *testing.F) {
	for _, name := range []string{"access.log", "common.log", "nginx-timed.log", "scraped.log"} {
		for i, l := range exampleLines(f, name) {
			if i < 20 {
				f.Add(l, name == "common.log")
			}
		}
	}
	f.Add(`10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x" 0.003 "a b" [c d] e`, false)
	f.Add(`10.0.0.1 x y [10/Oct/2024:13:55:40.5 -0130] "G\"ET /" 200 - "-\\" "x"`, false)
	f.Fuzz(func(t *testing.T, line string, common bool) {
		own, tmpl := Options{Format: Combined}, Options{Format: Nginx, LogFormat: "combined"}
		if common {
			own.Format, tmpl.LogFormat = Common, "common"
		}
		a, errA := readLines(t, "x.log", line+"\n", own)
		b, errB := readLines(t, "x.log", line+"\n", tmpl)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q: own reader %v, template %v", line, errA, errB)
		}
		if errA == nil && strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("%q:\nown      %q\ntemplate %q", line, a, b)
		}
	})
}

// plainTemplates are templates of the template engine's formats, some of
// each shape of field, for checking tmplParser.plain against
// tmplParser.fields.
var plainTemplates = []struct {
	name    string
	compile func() (*template, error)
}{
	{"combined", func() (*template, error) { return compileNginx("combined") }},
	{"main", func() (*template, error) { return compileNginx("main") }},
	{"upstreaminfo", func() (*template, error) { return compileNginx("upstreaminfo") }},
	{"request-time", func() (*template, error) { return compileNginx(nginxTimedFormat) }},
	{"lists", func() (*template, error) {
		return compileNginx(`$remote_addr $msec ${status}x "$http_x_forwarded_for" $upstream_addr`)
	}},
	{"alb", func() (*template, error) { return albTemplate(), nil }},
	{"spaced", func() (*template, error) {
		return compileNginx(`"$remote_addr" $msec "$request" $status "$http_user_agent" $request_time`)
	}},
	{"spaced-envoy", func() (*template, error) {
		return compileEnvoy(`%START_TIME% %DOWNSTREAM_REMOTE_ADDRESS% "%REQ(USER-AGENT)%" %DURATION%`)
	}},
	{"haproxy", func() (*template, error) { return haproxyTemplate(), nil }},
	{"traefik", func() (*template, error) { return traefikTemplate(), nil }},
	{"envoy", func() (*template, error) { return compileEnvoy("") }},
	{"envoy-ip", func() (*template, error) {
		return compileEnvoy(`[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %RESPONSE_CODE% %DURATION% "%REQ(USER-AGENT)%"`)
	}},
}

// plainSeeds returns lines of every template of plainTemplates: the
// bundled examples', the benchmark's and logLines'.
func plainSeeds(tb testing.TB) []string {
	var out []string
	for _, name := range []string{"access.log", "upstreaminfo.log", "alb.log", "envoy.log", "haproxy.log", "traefik.log", "nginx-timed.log"} {
		data, err := examples.FS.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, strings.Split(strings.TrimSpace(string(data)), "\n")...)
	}
	reqs := benchRequests()[:3]
	for _, f := range benchFormats {
		for i := range reqs {
			out = append(out, string(f.line(nil, &reqs[i])))
		}
	}
	for _, l := range logLines {
		out = append(out, l.line)
	}
	return out
}

// readBothWays reads the lines of text with tmpl twice: trying each as a
// plain line first, as parse does, and with fields alone. It fails when
// the two read a line differently: another event (any of its fields or
// attributes), or another error.
func readBothWays(t *testing.T, tmpl *template, timeIs TimeIs, text string) {
	t.Helper()
	var parsers [2]*tmplParser
	for k := range parsers {
		c := &common{}
		c.init("x.log", time.Second)
		c.tf.loc = time.UTC
		p, err := newTemplateParser(c, nil, tmpl, Options{TimeIs: timeIs})
		if err != nil {
			return
		}
		parsers[k] = p
	}
	for n, line := range strings.Split(text, "\n") {
		var got [2]string
		for k, p := range parsers {
			ev := Event{Line: n + 1}
			if err := p.read(&ev, []byte(line), k == 0); err != nil {
				got[k] = "error " + err.Error()
				continue
			}
			got[k] = fmt.Sprintf("user %q time %d %q cost %d", ev.User, ev.Time, ev.TimeText, ev.Cost)
			for i := range ev.NumAttrs() {
				name, v := ev.AttrAt(i)
				got[k] += fmt.Sprintf(" %s=%q", name, v)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("%s, line %q:\nplain  %s\nfields %s", tmpl.name, line, got[0], got[1])
		}
	}
	if a, b := parsers[0].c.res, parsers[1].c.res; a != b {
		t.Fatalf("%s, %q: resolution %d read plain, %d by fields", tmpl.name, text, a, b)
	}
}

// FuzzPlainMatchesFields checks the template engine's plain lines
// against its loop over the fields: the first byte picks the template,
// the text holds its lines; each line reads the same either way.
func FuzzPlainMatchesFields(f *testing.F) {
	for _, l := range plainSeeds(f) {
		for i := range plainTemplates {
			f.Add(byte(i), l, false)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, text string, completion bool) {
		tmpl, err := plainTemplates[int(which)%len(plainTemplates)].compile()
		if err != nil {
			t.Fatal(err)
		}
		timeIs := TimeIsArrival
		if completion {
			timeIs = TimeIsCompletion
		}
		readBothWays(t, tmpl, timeIs, text)
	})
}
