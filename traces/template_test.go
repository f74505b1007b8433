package traces

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// logLines are lines that take the log readers off their common paths,
// each read alone with its format: escaped quotes, quotes and literals
// inside values, - and empty fields, IPv6 addresses, lists, extra
// fields, lines of older versions of a format, JSON with spaces,
// escapes and its keys in another order, and malformed lines. testdata/log-lines.golden holds what each reads as (its
// event, or its error with line and column).
var logLines = []struct {
	name string
	opts Options
	line string
}{
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET /a HTTP/1.1" 200 1 "-" "Mozilla \"quoted\" x"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET /a\\" 200 1 "-" "ua\\\\"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET /" x" HTTP/1.1" 200 1 "-" "ua"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `2001:db8::1 - bob [10/Oct/2024:13:55:40 +0000] "-" 400 - "-" "-"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "" 200 1 "" ""`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.003 "a b" [c d] e`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1  - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 20 1 "-" "ua"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000]"GET / HTTP/1.1" 200 1 "-" "ua"`},
	{"combined", Options{Format: Nginx, LogFormat: "combined"}, `10.0.0.1 - - [10/Oct/2024:13:55:40] "GET / HTTP/1.1" 200 1 "-" "ua"`},
	{"request-time", Options{Format: Nginx, LogFormat: nginxTimedFormat}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.250`},
	{"request-time", Options{Format: Nginx, LogFormat: nginxTimedFormat}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" -`},
	{"request-time", Options{Format: Nginx, LogFormat: nginxTimedFormat}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 0.250 more`},
	{"custom", Options{Format: Nginx, LogFormat: `$host:$remote_addr|$status|"$http_x_forwarded_for"|$msec`}, `shop:10.0.0.1|200|"1.2.3.4, 5.6.7.8"|1728561336.123`},
	{"custom", Options{Format: Nginx, LogFormat: `$host:$remote_addr|$status|"$http_x_forwarded_for"|$msec`}, `shop:2001:db8::1|200|"-"|1728561336.123`},
	{"custom", Options{Format: Nginx, LogFormat: `$host:$remote_addr|$status|"$http_x_forwarded_for"|$msec`}, `shop:10.0.0.1|200||1728561336.123`},
	{"custom", Options{Format: Nginx, LogFormat: `$host:$remote_addr|$status|"$http_x_forwarded_for"|$msec`}, `shop:10.0.0.1 x|200|"-"|1728561336.123`},
	{"upstreaminfo", Options{Format: Nginx, LogFormat: "upstreaminfo"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 312 0.250 [shop-api-8080] [] 10.244.1.17:8080, 10.244.1.18:8080 : 10.244.1.19:8080 1450, 0 : 12 0.100, 0.050 : 0.100 502, 504 : 200 7f3a`},
	{"upstreaminfo", Options{Format: Nginx, LogFormat: "upstreaminfo"}, `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" 312 0.250 [] [] - - - - 7f3a`},
	{"alb", Options{Format: ALB}, `https 2024-10-10T11:55:36.186641Z app/lb/1 [2001:db8::5]:2817 [2001:db8::9]:80 0.000 0.001 0.000 200 200 34 366 "GET https://x:443/a HTTP/1.1" "ua \"q\"" ECDHE TLSv1.2 arn:t "Root=1" "x" "-" 0 2024-10-10T11:55:36.185000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-"`},
	{"alb", Options{Format: ALB}, `http 2024-10-10T11:55:36.186641Z app/lb/1 192.0.2.44:2817 - -1 -1 -1 460 - 34 0 "GET http://x:80/ HTTP/1.1" "-" - - - "-" "-" "-" - 2024-10-10T11:55:36.100000Z`},
	{"alb", Options{Format: ALB}, `http 2024-10-10T11:55:36.186641Z app/lb/1 192.0.2.44:2817 - 0.000 0.001 0.000 200 200 34 366 "GET / HTTP/1.1" "ua" - - - "t" "-" "-" 0 2024-10-10T11:55:36.1Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-" "new" extra`},
	{"alb", Options{Format: ALB}, `http 2024-10-10T11:55:36.186641Z app/lb/1 192.0.2.44:2817 - 0.000 0.001 0.000 200 200 34 366 "GET / HTTP/1.1" "ua" - - - "t" "-" "-" 0`},
	{"envoy", Options{Format: Envoy}, `[2024-10-10T11:55:36.310Z] "GET /a HTTP/1.1" 429 RL 0 512 3 - "192.0.2.7, 10.0.0.1" "curl/8.5.0" "id" "host" "[2001:db8::3]:80"`},
	{"envoy", Options{Format: Envoy}, `[2024-10-10T11:55:36.310Z] "- - -" 0 UF,URX 0 0 3 2 "-" "-" "-" "-" "-"`},
	{"envoy", Options{Format: Envoy, LogFormat: `[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %RESPONSE_CODE% %DURATION%`}, `[2024-10-10T11:55:36.310Z] [2001:db8::7]:443 200 12`},
	{"haproxy", Options{Format: HAProxy}, `192.0.2.55:48214 [10/Oct/2024:13:55:36.120] www~ shop/<NOSRV> -1/-1/-1/-1/0 429 212 - - PR-- 3/3/0/0/0 0/0 {host.example|curl} {} "GET /a?b=\"c\" HTTP/1.1"`},
	{"haproxy", Options{Format: HAProxy}, `Oct 10 13:55:36 lb1 haproxy[1]: [2001:db8::1]:48214 [10/Oct/2024:13:55:36.120] www shop/srv1 0/0/1/10/11 200 1450 - - ---- 3/3/1/1/0 0/0 "GET / HTTP/1.1"`},
	{"haproxy", Options{Format: HAProxy}, `192.0.2.55:48214 [10/Oct/2024:13:55:36.120] www shop/srv1 0/0/1/10 200 1450 - - ---- 3/3/1/1/0 0/0 "GET / HTTP/1.1"`},
	{"haproxy", Options{Format: HAProxy}, `192.0.2.55:48214 [10/Oct/2024:13:55:36.120] www shop/srv1 0/0/1/1 0/11 200 1450 - - ---- 3/3/1/1/0 0/0 "GET / HTTP/1.1"`},
	{"traefik", Options{Format: Traefik}, `192.0.2.60 - alice [10/Oct/2024:13:55:36 +0200] "GET /\"x\" HTTP/2.0" 429 - "-" "-" 17 "web@docker" "http://[2001:db8::2]:80" 0ms`},
	{"traefik", Options{Format: Traefik}, `192.0.2.60 - - [10/Oct/2024:13:55:36 +0200] "GET / HTTP/1.1" 200 512 "-" "curl" 1 "r" "u"`},
	{"traefik", Options{Format: Traefik}, `192.0.2.60 - - [10/Oct/2024:13:55:36 +0200] "GET / HTTP/1.1" 200 512 "-" "curl" 1 "r" "u" 12ms extra`},
	{"caddy", Options{Format: Caddy}, `{"level":"info","ts":1728561336.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"192.0.2.70","method":"GET","uri":"/a","headers":{"User-Agent":["curl"]}},"duration":0.25,"size":12,"status":200}`},
	{"caddy", Options{Format: Caddy}, ` { "status" : 429 , "duration" : 1e-3 , "request" : { "uri" : "/caf\u00e9\"\\" , "remote_ip" : "2001:db8::70" } , "ts" : 1728561336.5 } `},
	{"caddy", Options{Format: Caddy}, `{"ts":"2024-10-10T11:55:36.5Z","request":{"remote_ip":"192.0.2.70","headers":{"User-Agent":["a \ud83d\ude00 b"]}},"duration":0.5}`},
	{"caddy", Options{Format: Caddy}, `{"ts":1728561336.5,"request":{"remote_ip":"192.0.2.70"},"status":200}`},
	{"caddy", Options{Format: Caddy}, "{\"ts\":1728561336.5,\"request\":{\"remote_ip\":\"192.0.2.70\"},\"msg\":\"tab\there\",\"duration\":0.1}"},
	{"traefik-json", Options{Format: Traefik}, `{"StartUTC":"2024-10-10T11:55:36.123456789Z","Duration":5,"ClientHost":"192.0.2.60","RequestPath":"/\u0041"}`},
	{"traefik-json", Options{Format: Traefik}, `{"ClientHost":"192.0.2.60","StartUTC":"2024-10-10T11:55:36Z","Duration":1,"request_User-Agent":"é ü"}`},
}

// TestLogLines reads logLines and compares what they read as
// with the golden file.
func TestLogLines(t *testing.T) {
	var got []string
	for _, tt := range logLines {
		got = append(got, tt.name+" "+tt.line)
		evs, err := readLines(t, "log", tt.line+"\n", tt.opts)
		for _, e := range evs {
			got = append(got, "\t"+e)
		}
		if err != nil {
			got = append(got, "\terror: "+err.Error())
		}
	}
	text := strings.Join(got, "\n") + "\n"
	golden := filepath.Join("testdata", "log-lines.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(text, "\n")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}

// TestPlainMatchesFields reads lines of every shape of field, and each
// line a template reads with a byte taken out, changed or put in at
// every place, both as plain lines and with the loop over the fields:
// they read the same.
func TestPlainMatchesFields(t *testing.T) {
	seeds := plainSeeds(t)
	for _, pt := range plainTemplates {
		tmpl, err := pt.compile()
		if err != nil {
			t.Fatal(err)
		}
		for _, timeIs := range []TimeIs{TimeIsArrival, TimeIsCompletion} {
			for _, line := range seeds {
				if !sniffTemplate(tmpl, []byte(line)) {
					readBothWays(t, tmpl, timeIs, line)
					continue
				}
				var lines []string
				for i := range len(line) {
					lines = append(lines, line[:i]+line[i+1:], line[:i]+" "+line[i:])
					for _, c := range []string{" ", `"`, `\`, "x"} {
						lines = append(lines, line[:i]+c+line[i+1:])
					}
				}
				readBothWays(t, tmpl, timeIs, line+"\n"+strings.Join(lines, "\n"))
			}
		}
	}
}

// TestSpacedLines reads lines of the spaced templates (fields cut at
// single spaces, some quoted), made of tokens that are good values and
// ones that are not (empty, with spaces, quotes or backslashes), both
// ways: splitPlain (or plain) and the loop over the fields read them the
// same. It checks that splitPlain reads most of the good lines itself,
// and that the templates it is for are the spaced ones.
func TestSpacedLines(t *testing.T) {
	spacedNames := map[string]bool{"alb": true, "spaced": true, "spaced-envoy": true}
	rng := rand.New(rand.NewPCG(3, 4))
	odd := []string{"", "-", " ", `"`, `\`, `a\"b`, `a b`, `"x"`, `\\`, "x\ty", "é"}
	for _, pt := range plainTemplates {
		tmpl, err := pt.compile()
		if err != nil {
			t.Fatal(err)
		}
		if tmpl.spaced != spacedNames[pt.name] {
			t.Errorf("%s: spaced %v", pt.name, tmpl.spaced)
		}
		if !tmpl.spaced {
			continue
		}
		// Good lines: the seeds that read as the template.
		var good []string
		for _, line := range plainSeeds(t) {
			if sniffTemplate(tmpl, []byte(line)) {
				good = append(good, line)
			}
		}
		if pt.name == "spaced" || pt.name == "spaced-envoy" {
			good = append(good, spacedLine(pt.name, "10.0.0.1", `GET / HTTP/1.1`, "Mozilla/5.0 (X11)"),
				spacedLine(pt.name, "2001:db8::1", `-`, ""))
		}
		c := &common{}
		c.init("x.log", time.Second)
		p, err := newTemplateParser(c, nil, tmpl, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// splitPlain reads every good line of as many fields as the
		// template (not those with extra fields, or of older versions),
		// but for escaped quotes.
		split, want := 0, 0
		for _, line := range good {
			attrs := make([]attr, tmpl.nattrs)
			var times [2]fieldText
			var durs [4]fieldText
			_, ok := p.splitPlain([]byte(line), attrs, &times, &durs)
			if len(spacedTokens(line)) == len(tmpl.fields) && !strings.Contains(line, `\`) {
				want++
				if ok {
					split++
				} else {
					t.Logf("%s: splitPlain left %q to plain", pt.name, line)
				}
			} else if ok && len(spacedTokens(line)) != len(tmpl.fields) {
				t.Errorf("%s: splitPlain read %q, of %d fields", pt.name, line, len(spacedTokens(line)))
			}
		}
		if want < 2 || split != want {
			t.Errorf("%s: splitPlain read %d of %d good lines", pt.name, split, want)
		}
		// Lines with a field replaced by an odd token, or a token put
		// in or taken out.
		var lines []string
		for range 3000 {
			fields := spacedTokens(good[rng.IntN(len(good))])
			k := rng.IntN(len(fields))
			switch rng.IntN(4) {
			case 0:
				fields = append(fields[:k], fields[k+1:]...)
			case 1:
				fields = append(fields[:k], append([]string{odd[rng.IntN(len(odd))]}, fields[k:]...)...)
			case 2:
				fields[k] = `"` + odd[rng.IntN(len(odd))] + `"`
			default:
				fields[k] = odd[rng.IntN(len(odd))]
			}
			lines = append(lines, strings.Join(fields, " "))
		}
		for _, timeIs := range []TimeIs{TimeIsArrival, TimeIsCompletion} {
			readBothWays(t, tmpl, timeIs, strings.Join(append(good, lines...), "\n"))
		}
	}
}

// spacedLine is a line of the spaced test templates.
func spacedLine(name, ip, request, agent string) string {
	if name == "spaced" {
		return `"` + ip + `" 1728561336.020 "` + request + `" 200 "` + agent + `" 0.012`
	}
	return `2024-10-10T11:55:36.020Z ` + ip + `:4431 "` + agent + `" 12`
}

// spacedTokens cuts a line at its spaces outside double quotes.
func spacedTokens(line string) []string {
	var out []string
	in, start := false, 0
	for i := range len(line) {
		switch line[i] {
		case '"':
			in = !in
		case ' ':
			if !in {
				out = append(out, line[start:i])
				start = i + 1
			}
		}
	}
	return append(out, line[start:])
}
