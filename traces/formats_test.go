package traces

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logEvent is what a test expects of one line of a log.
type logEvent struct {
	line  int
	user  string
	text  string            // the time as shown
	at    string            // the replayed instant, RFC 3339
	attrs map[string]string // some of its attributes
}

// readExample reads a bundled example with opts and returns its events
// by line, and the reader.
func readLogExample(t *testing.T, name string, opts Options) (map[int]*Event, *Reader) {
	t.Helper()
	r, err := Open(filepath.Join("examples", name), nil, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { r.Close() })
	out := map[int]*Event{}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, r
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cp := *ev
		cp.User = append([]byte(nil), ev.User...)
		cp.TimeText = append([]byte(nil), ev.TimeText...)
		cp.attrs = nil
		for i := range ev.NumAttrs() {
			k, v := ev.AttrAt(i)
			cp.attrs = append(cp.attrs, attr{k, append([]byte(nil), v...)})
		}
		out[ev.Line] = &cp
	}
}

func mustTime(t *testing.T, s string) int64 {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UnixNano()
}

// TestFormatExamples reads every bundled log with the lines its format's
// documentation describes: fields in the documented order, quoting and
// escapes, IPv6 clients, fields missing as -.
func TestFormatExamples(t *testing.T) {
	for _, tt := range []struct {
		file   string
		format Format // given; FormatAuto: sniffed as want
		want   Format
		opts   Options
		events int
		check  []logEvent
	}{
		{file: "common.log", want: Common, events: 4, check: []logEvent{
			{2, "198.51.100.4", "10/Oct/2024:13:55:36 +0200", "2024-10-10T11:55:36Z", map[string]string{"remote_user": "frank", "path": "/apache_pb.gif", "protocol": "HTTP/1.0", "bytes": "2326"}},
			{3, "2001:db8::7", "10/Oct/2024:13:55:37 +0200", "2024-10-10T11:55:37Z", map[string]string{"method": "HEAD", "bytes": "-"}},
		}},
		{file: "nginx-timed.log", format: Nginx, opts: Options{LogFormat: `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $limit_req_status`},
			events: 5, check: []logEvent{
				// Completion times less $request_time: the arrivals.
				{1, "203.0.113.7", "10/Oct/2024:13:55:35.997 +0200", "2024-10-10T11:55:35.997Z", map[string]string{"request_time": "0.003", "limit_req_status": "PASSED", "status": "200"}},
				{2, "203.0.113.7", "10/Oct/2024:13:55:35.896 +0200", "2024-10-10T11:55:35.896Z", map[string]string{"limit_req_status": "DELAYED"}},
				{3, "203.0.113.7", "10/Oct/2024:13:55:36 +0200", "2024-10-10T11:55:36Z", map[string]string{"limit_req_status": "REJECTED", "status": "503"}},
				{4, "2001:db8::1", "10/Oct/2024:13:55:35.75 +0200", "2024-10-10T11:55:35.75Z", map[string]string{"remote_user": "alice", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "referer": "https://example.com/"}},
				{5, "198.51.100.23", "10/Oct/2024:13:55:38 +0200", "2024-10-10T11:55:38Z", map[string]string{"method": "-", "path": "", "limit_req_status": "-"}},
			}},
		{file: "nginx-timed.log", format: Nginx, opts: Options{TimeIs: TimeIsArrival, LogFormat: `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $limit_req_status`},
			events: 5, check: []logEvent{
				{1, "203.0.113.7", "10/Oct/2024:13:55:36 +0200", "2024-10-10T11:55:36Z", nil},
			}},
		{file: "nginx-timed.log", want: Combined, events: 5, check: []logEvent{
			// Read as combined, the extra fields are attributes.
			{1, "203.0.113.7", "10/Oct/2024:13:55:36 +0200", "2024-10-10T11:55:36Z", map[string]string{"extra1": "0.003", "extra2": "PASSED", "user_agent": "curl/8.5.0"}},
		}},
		{file: "upstreaminfo.log", want: Upstreaminfo, events: 3, check: []logEvent{
			{1, "192.0.2.10", "10/Oct/2024:13:55:35.988 +0000", "2024-10-10T13:55:35.988Z", map[string]string{"proxy_upstream_name": "shop-api-8080", "proxy_alternative_upstream_name": "", "upstream_addr": "10.244.1.17:8080", "req_id": "7f3a1c0e5b2d4f6a8e9c0b1d2e3f4a5b"}},
			{3, "2001:db8:1::5", "10/Oct/2024:13:55:36.75 +0000", "2024-10-10T13:55:36.75Z", map[string]string{"upstream_addr": "10.244.2.9:8080, 10.244.1.17:8080", "upstream_status": "502, 201", "upstream_response_time": "0.120, 0.129"}},
		}},
		{file: "alb.log", want: ALB, events: 3, check: []logEvent{
			// request_creation_time: the arrival.
			{1, "192.0.2.44", "2024-10-10T11:55:36.185000Z", "2024-10-10T11:55:36.185Z", map[string]string{"type": "http", "client_port": "2817", "target": "10.0.0.1", "status": "200", "method": "GET", "path": "http://www.example.com:80/", "user_agent": "curl/8.5.0", "trace_id": "Root=1-67080a28-36d228ad5d99923122bbe354"}},
			{2, "2001:db8::44", "2024-10-10T11:55:36.187000Z", "2024-10-10T11:55:36.187Z", map[string]string{"client_port": "50541", "status": "429", "extra1": "TID_1a2b3c4d5e6f"}},
			{3, "192.0.2.44", "2024-10-10T11:55:36.998000Z", "2024-10-10T11:55:36.998Z", map[string]string{"target": "-", "target_status": "-", "status": "502", "error_reason": "TargetConnectionErrorCode"}},
		}},
		{file: "alb.log", format: ALB, opts: Options{TimeIs: TimeIsCompletion}, events: 2, check: []logEvent{
			// time less the three processing times.
			{1, "192.0.2.44", "2024-10-10T11:55:36.185641Z", "2024-10-10T11:55:36.185641Z", nil},
			{2, "2001:db8::44", "2024-10-10T11:55:36.187305Z", "2024-10-10T11:55:36.187305Z", nil},
		}},
		{file: "cloudfront.log", want: CloudFront, events: 3, check: []logEvent{
			{3, "192.0.2.100", "2024-10-10 11:55:35.999", "2024-10-10T11:55:35.999Z", map[string]string{"status": "200", "path": "/index.html", "user_agent": "Mozilla/5.0%20(Windows%20NT%2010.0;%20Win64;%20x64)", "x_edge_result_type": "Hit", "time_taken": "0.001"}},
			{5, "192.0.2.100", "2024-10-10 11:55:35.75", "2024-10-10T11:55:35.75Z", map[string]string{"status": "429", "query": "page=3", "x_edge_result_type": "Error"}},
		}},
		{file: "iis.log", want: W3C, events: 3, check: []logEvent{
			{5, "192.0.2.80", "2024-10-10 11:55:35.985", "2024-10-10T11:55:35.985Z", map[string]string{"user_agent": "Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64)", "s_ip": "10.0.0.5", "query": "-"}},
			{6, "2001:db8::80", "2024-10-10 11:55:34.75", "2024-10-10T11:55:34.75Z", map[string]string{"remote_user": `CONTOSO\alice`}},
			// #Fields: changed: fewer fields.
			{11, "192.0.2.80", "2024-10-10 11:55:37", "2024-10-10T11:55:37Z", map[string]string{"method": "POST", "status": "429"}},
		}},
		{file: "envoy.log", format: Envoy, events: 3, check: []logEvent{
			{1, "192.0.2.7", "2024-10-10T11:55:36.310Z", "2024-10-10T11:55:36.31Z", map[string]string{"method": "GET", "path": "/api/items", "status": "200", "response_flags": "-", "duration": "3", "upstream_host": "10.0.0.11:8080"}},
			{2, "192.0.2.7", "2024-10-10T11:55:36.412Z", "2024-10-10T11:55:36.412Z", map[string]string{"response_flags": "RL", "status": "429", "upstream_service_time": "-", "protocol": "HTTP/2"}},
			{3, "2001:db8::7, 10.0.0.1", "2024-10-10T11:55:37.001Z", "2024-10-10T11:55:37.001Z", map[string]string{"response_flags": "UH,UF"}},
		}},
		{file: "haproxy.log", want: HAProxy, events: 3, check: []logEvent{
			{1, "192.0.2.55", "10/Oct/2024:13:55:36.120", "2024-10-10T13:55:36.12Z", map[string]string{"client_port": "48214", "frontend": "www~", "backend": "shop", "server": "srv1", "Ta": "11", "status": "200", "termination_state": "----", "path": "/api/items?page=2", "request_headers": ""}},
			{2, "192.0.2.55", "10/Oct/2024:13:55:36.254", "2024-10-10T13:55:36.254Z", map[string]string{"server": "<NOSRV>", "status": "429", "Tw": "-1", "termination_state": "PR--"}},
			{3, "2001:db8::55", "10/Oct/2024:13:55:37.002", "2024-10-10T13:55:37.002Z", map[string]string{"client_port": "50001", "request_headers": "shop.example|curl/8.5.0", "method": "GET"}},
		}},
		{file: "traefik.log", want: Traefik, events: 3, check: []logEvent{
			{1, "192.0.2.60", "10/Oct/2024:13:55:36 +0200", "2024-10-10T11:55:36Z", map[string]string{"request_count": "1", "router": "shop@docker", "server_url": "http://10.0.0.21:8080", "duration": "3ms"}},
			{3, "2001:db8::60", "10/Oct/2024:13:55:37 +0200", "2024-10-10T11:55:37Z", map[string]string{"remote_user": "carol", "duration": "1250ms"}},
		}},
		{file: "traefik-json.log", want: Traefik, events: 2, check: []logEvent{
			{1, "192.0.2.60", "2024-10-10T11:55:36.10025Z", "2024-10-10T11:55:36.10025Z", map[string]string{"ip": "192.0.2.60", "status": "200", "method": "GET", "path": "/api/items", "user_agent": "curl/8.5.0", "Duration": "3120000"}},
			{2, "192.0.2.60", "2024-10-10T11:55:36.204Z", "2024-10-10T11:55:36.204Z", map[string]string{"status": "429"}},
		}},
		{file: "caddy.log", want: Caddy, events: 2, check: []logEvent{
			// ts less duration, exactly: 1728561336.5241024 - 0.000929792.
			{1, "192.0.2.70", "1728561336.523172608", "2024-10-10T11:55:36.523172608Z", map[string]string{"ip": "192.0.2.70", "status": "200", "method": "GET", "path": "/api/items", "user_agent": `["curl/8.5.0"]`, "request.client_ip": "192.0.2.70"}},
			{2, "2001:db8::70", "1728561336", "2024-10-10T11:55:36Z", map[string]string{"status": "429", "protocol": "HTTP/1.1"}},
		}},
	} {
		name := tt.file + "/" + tt.format.String() + "/" + tt.opts.TimeIs.String()
		t.Run(name, func(t *testing.T) {
			opts := tt.opts
			opts.Format = tt.format
			if tt.format == ALB && tt.opts.TimeIs == TimeIsCompletion {
				opts.Lenient = true // the third line has no processing times
			}
			evs, r := readLogExample(t, tt.file, opts)
			if tt.format == FormatAuto && r.Format() != tt.want {
				t.Errorf("sniffed as %v, want %v", r.Format(), tt.want)
			}
			if len(evs) != tt.events {
				t.Errorf("%d events, want %d", len(evs), tt.events)
			}
			if !r.RFC3339() {
				t.Errorf("the times of a log are absolute")
			}
			for _, w := range tt.check {
				ev := evs[w.line]
				if ev == nil {
					t.Errorf("line %d: no event", w.line)
					continue
				}
				if string(ev.User) != w.user || string(ev.TimeText) != w.text || ev.Time != mustTime(t, w.at) {
					t.Errorf("line %d: user %q, time %q (%v), want %q, %q (%s)", w.line, ev.User, ev.TimeText, time.Unix(0, ev.Time).UTC().Format(time.RFC3339Nano), w.user, w.text, w.at)
				}
				for k, v := range w.attrs {
					if got, ok := ev.Attr(k); !ok || string(got) != v {
						t.Errorf("line %d: %s = %q (%v), want %q", w.line, k, got, ok, v)
					}
				}
			}
		})
	}
}

// TestFormatErrors checks that a malformed line of every log format is an
// error naming the file, the line and the column.
func TestFormatErrors(t *testing.T) {
	for _, tt := range []struct {
		format Format
		opts   Options
		good   string // a good first line ("" for none)
		bad    string
		want   string
	}{
		{Combined, Options{}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x" "unclosed`, `log:2:74: extra field 1 has no closing '"'`},
		{Nginx, Options{LogFormat: `$remote_addr [$time_local] $status $request_time`}, `10.0.0.1 [10/Oct/2024:13:55:40 +0000] 200 0.004`, `10.0.0.1 [10/Oct/2024:13:55:40 +0000] 200 0.0x4`, `log:2:43: invalid $request_time "0.0x4" (want a number of seconds such as 0.003)`},
		{Nginx, Options{LogFormat: `$remote_addr $msec $status`}, `10.0.0.1 1728561336.123 200`, `10.0.0.1 17285x1336.123 200`, `log:2:10: invalid time "17285x1336.123" (want seconds since the epoch`},
		{Nginx, Options{LogFormat: `$remote_addr [$time_local] $status`}, `10.0.0.1 [10/Oct/2024:13:55:40 +0000] 200`, `10.0.0.1 [10/Oct/2024:13:55:40 +0000] 200 trailing`, `log:2:43: unexpected text "trailing" after the last field of the nginx log format`},
		{ALB, Options{}, "", `http 2024-10-10T11:55:36.186641Z app/lb/1 192.0.2.44:2817 - 0.000 0.001 0.000 200 200 34 366 "GET / HTTP/1.1`, `log:1:94: request has no closing '"'`},
		{ALB, Options{}, "", `http 2024-10-10T11:55:36.186641Z app/lb/1 192.0.2.44:2817 - 0.000 0.001 0.000 2x0 200 34 366 "GET / HTTP/1.1" "ua" - - - "t" "-" "-" 0 2024-10-10T11:55:36.1Z`, `log:1:79: invalid elb_status_code "2x0" (want a number or -)`},
		{CloudFront, Options{}, "#Version: 1.0\n#Fields: date time c-ip sc-status time-taken", "2024-10-10\t11:55:36\t192.0.2.1\t200", `log:3: expected 5 fields, as the #Fields: directive on line 2 names, got 4`},
		{CloudFront, Options{}, "#Version: 1.0\n#Fields: date time c-ip sc-status time-taken", "2024-10-10\t11:5x:36\t192.0.2.1\t200\t0.001", `log:3:1: invalid date and time "2024-10-10 11:5x:36"`},
		{W3C, Options{}, "", "2024-10-10 11:55:36 192.0.2.1 200", `log:1:1: a line of fields before any #Fields: directive names them`},
		{W3C, Options{}, "#Fields: date time c-ip sc-status time-taken", "2024-10-10 11:55:36 192.0.2.1 200 1x", `log:2:35: invalid time-taken "1x" (want a whole number)`},
		{Envoy, Options{}, "", `[2024-10-10T11:55:36.310Z] "GET /a HTTP/1.1" 200 - 0 512 3 2 "192.0.2.7" "curl/8.5.0" "id" "host" "up`, `log:1:99: %UPSTREAM_HOST% has no closing '"'`},
		{Envoy, Options{}, "", `[2024-10-10T11:55:36.310] "GET /a HTTP/1.1" 200 - 0 512 3 2 "192.0.2.7" "curl/8.5.0" "id" "host" "up"`, `log:1:2: invalid time "2024-10-10T11:55:36.310"`},
		{HAProxy, Options{}, "", `192.0.2.55:48214 [10/Oct/2024:13:55:36.120] www shop/srv1 0/0/1/10/11 200 1450 - - ---- 3/3/1/1/0 0/0 GET / HTTP/1.1`, `log:1:103: expected the request line in double quotes`},
		{HAProxy, Options{}, "", `Oct 10 13:55:36 lb1 haproxy[1]: 192.0.2.55:48214 [10/Okt/2024:13:55:36.120] www shop/srv1 0/0/1/10/11 200 1450 - - ---- 3/3/1/1/0 0/0 "GET / HTTP/1.1"`, `log:1:51: invalid time "10/Okt/2024:13:55:36.120"`},
		{Traefik, Options{}, "", `192.0.2.60 - - [10/Oct/2024:13:55:36 +0200] "GET / HTTP/1.1" 200 512 "-" "curl" 1 "r" "u" 3s`, `log:1:91: invalid duration "3s" (want milliseconds such as 12ms)`},
		{Traefik, Options{}, `{"ClientHost":"192.0.2.60","StartUTC":"2024-10-10T11:55:36Z","Duration":1}`, `{"ClientHost":"192.0.2.60","StartUTC":"2024-10-10T11:55:3xZ","Duration":1}`, `log:2:39: invalid time "2024-10-10T11:55:3xZ"`},
		{Caddy, Options{}, "", `{"ts":1728561336.5,"request":{"remote_ip":"192.0.2.70"},"duration":"0.x","status":200}`, `log:1: invalid duration "0.x"`},
		{Caddy, Options{}, "", `{"ts":1728561336.5,"request":{"remote_ip":"192.0.2.70"},"duration":0.1,"status":200`, `log:1:84: truncated JSON object`},
	} {
		text := tt.bad + "\n"
		if tt.good != "" {
			text = tt.good + "\n" + text
		}
		opts := tt.opts
		opts.Format = tt.format
		_, err := readLines(t, "log", text, opts)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %q:\n got %v\nwant %s", tt.format, tt.bad, err, tt.want)
		}
	}
}

// TestArrivalEqualsLoggedArrival: an nginx log of completion times with
// $request_time, replayed with --time-is completion, gives the events of
// the same requests logged at their arrival.
func TestArrivalEqualsLoggedArrival(t *testing.T) {
	completion := "" +
		"10.0.0.1 [10/Oct/2024:13:55:40 +0000] 0.250\n" + // arrived 39.75
		"10.0.0.1 [10/Oct/2024:13:55:40 +0000] 0.000\n" + // arrived 40
		"10.0.0.2 [10/Oct/2024:13:55:41 +0000] 1.001\n" + // arrived 39.999
		"10.0.0.1 [10/Oct/2024:13:55:45 +0000] 4.500\n" // arrived 40.5
	arrival := "" +
		"10.0.0.1 [10/Oct/2024:13:55:39.750 +0000] 0.250\n" +
		"10.0.0.1 [10/Oct/2024:13:55:40 +0000] 0.000\n" +
		"10.0.0.2 [10/Oct/2024:13:55:39.999 +0000] 1.001\n" +
		"10.0.0.1 [10/Oct/2024:13:55:40.500 +0000] 4.500\n"
	format := `$remote_addr [$time_local] $request_time`
	a := readTimes(t, completion, Options{Format: Nginx, LogFormat: format})
	b := readTimes(t, arrival, Options{Format: Nginx, LogFormat: format, TimeIs: TimeIsArrival})
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("completion less duration:\n%s\nlogged at arrival:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if _, err := readLines(t, "log", completion, Options{Format: Combined, TimeIs: TimeIsCompletion}); err == nil || !strings.Contains(err.Error(), "logs no duration") {
		t.Errorf("combined with completion: %v", err)
	}
	if _, err := readLines(t, "log", "[2024-10-10T11:55:36.310Z] \"GET / HTTP/1.1\" 200 - 0 1 3 - \"-\" \"-\" \"-\" \"-\" \"-\"\n", Options{Format: Envoy, TimeIs: TimeIsCompletion}); err == nil || !strings.Contains(err.Error(), "when the request started") {
		t.Errorf("envoy with completion: %v", err)
	}
}

// readTimes reads the user and time of every event of text.
func readTimes(t *testing.T, text string, opts Options) []string {
	t.Helper()
	r, err := NewReader(strings.NewReader(text), "log", opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(ev.User)+" "+time.Unix(0, ev.Time).UTC().Format(time.RFC3339Nano))
	}
}

// TestCatalogue checks the catalogue: every format has an entry whose
// name parses back to it, a reader, a bundled example that exists, and,
// for logs, a documented time and user.
func TestCatalogue(t *testing.T) {
	for i, info := range Formats() {
		if int(info.Format) != i+1 {
			t.Errorf("%s: entry %d is Format %d", info.Name, i, info.Format)
		}
		if f, err := ParseFormat(info.Name); err != nil || f != info.Format {
			t.Errorf("%s: ParseFormat = %v, %v", info.Name, f, err)
		}
		if entryOf(info.Format).open == nil {
			t.Errorf("%s: no reader", info.Name)
		}
		if info.Example == "" {
			t.Errorf("%s: no example", info.Name)
		} else if _, err := os.Stat(filepath.Join("examples", info.Example)); err != nil {
			t.Errorf("%s: %v", info.Name, err)
		}
		if info.Log && (info.Time == "" || info.User == "" || info.Observed == "" || info.TimeIs == TimeIsDefault || len(info.Fields) == 0) {
			t.Errorf("%s: incomplete: %+v", info.Name, info)
		}
	}
}

// TestSniffOrderIsTheSniffedFormats: the formats tried when a trace's
// format is guessed are exactly the catalogue's entries that can be
// recognized, each once, so a new format with a sniff function is never
// left out of the guess.
func TestSniffOrderIsTheSniffedFormats(t *testing.T) {
	seen := map[Format]int{}
	for _, f := range sniffOrder {
		seen[f]++
	}
	for _, e := range catalogue {
		switch n := seen[e.Format]; {
		case e.sniff != nil && n != 1:
			t.Errorf("%s: recognized by its content, but %d times in sniffOrder", e.Name, n)
		case e.sniff == nil && n != 0:
			t.Errorf("%s: in sniffOrder, but no sniff function", e.Name)
		}
		delete(seen, e.Format)
	}
	for f := range seen {
		t.Errorf("%v: in sniffOrder, not in the catalogue", f)
	}
}
