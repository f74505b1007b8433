package traces

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestAccessLogLines(t *testing.T) {
	for _, tt := range []struct {
		line string
		want string // user, time text, unix ns, cost, then the attributes
	}{
		{`203.0.113.7 - - [10/Oct/2024:13:55:36 +0200] "GET /search?q=rate+limit&page=1 HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (X11; Linux x86_64)"`,
			`203.0.113.7 10/Oct/2024:13:55:36 +0200 1728561336000000000 1 ip=203.0.113.7 remote_user=- method=GET path=/search?q=rate+limit&page=1 protocol=HTTP/1.1 status=200 bytes=5120 referer=- user_agent=Mozilla/5.0 (X11; Linux x86_64)`},
		{`2001:db8::1 - alice [29/Feb/2024:23:59:59.250 -0130] "POST /api HTTP/2.0" 201 - "https://x/" "curl/8 \"quoted\" \\ end"`,
			`2001:db8::1 29/Feb/2024:23:59:59.250 -0130 1709256599250000000 1 ip=2001:db8::1 remote_user=alice method=POST path=/api protocol=HTTP/2.0 status=201 bytes=- referer=https://x/ user_agent=curl/8 \"quoted\" \\ end`},
		{`198.51.100.23 - - [10/Oct/2024:13:55:40 +0000] "-" 400 0 "-" "-"`,
			`198.51.100.23 10/Oct/2024:13:55:40 +0000 1728568540000000000 1 ip=198.51.100.23 remote_user=- method=- path= protocol= status=400 bytes=0 referer=- user_agent=-`},
		{`10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET /a b c HTTP/1.0" 200 1 "-" "x"`,
			`10.0.0.1 10/Oct/2024:13:55:40 +0000 1728568540000000000 1 ip=10.0.0.1 remote_user=- method=GET path=/a b c protocol=HTTP/1.0 status=200 bytes=1 referer=- user_agent=x`},
	} {
		got, err := readLines(t, "access.log", tt.line+"\n", Options{})
		if err != nil {
			t.Errorf("%s: %v", tt.line, err)
			continue
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.line, got, tt.want)
		}
	}
	// Common: no referer and user agent.
	got, err := readLines(t, "access.log", `10.0.0.1 - bob [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 304 0`+"\n", Options{})
	if err != nil || len(got) != 1 || got[0] != "10.0.0.1 10/Oct/2024:13:55:40 +0000 1728568540000000000 1 ip=10.0.0.1 remote_user=bob method=GET path=/ protocol=HTTP/1.1 status=304 bytes=0" {
		t.Errorf("common: %q, %v", got, err)
	}
}

func TestAccessLogErrors(t *testing.T) {
	good := `10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`
	for _, tt := range []struct{ line, want string }{
		{`10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x" 0.003 "open`, `access.log:2:80: extra field 2 has no closing '"'`},
		{`10.0.0.1 - - [10/Foo/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`, `access.log:2:15: invalid time "10/Foo/2024:13:55:40 +0000"`},
		{`10.0.0.1 - - [31/Feb/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`, `access.log:2:15: invalid time "31/Feb/2024:13:55:40 +0000"`},
		{`10.0.0.1 - - 10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x"`, `access.log:2:14: expected '[' before the time`},
		{`10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 20 1 "-" "x"`, `access.log:2:60: invalid status "20" (want three digits)`},
		{`10.0.0.1 - - [10/Oct/2024:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "x`, `access.log:2:70: the user agent has no closing '"'`},
	} {
		_, err := readLines(t, "access.log", good+"\n"+tt.line+"\n", Options{Format: Combined})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.line, err, tt.want)
		}
	}
	// Lenient: bad lines are skipped, the others read.
	var skipped []string
	got, err := readLines(t, "access.log", good+"\nnot a log line\n"+good+"\n", Options{Format: Combined, Lenient: true, OnSkip: func(err error) { skipped = append(skipped, err.Error()) }})
	if err != nil || len(got) != 2 || len(skipped) != 1 {
		t.Errorf("lenient: %d read, %v skipped, %v", len(got), skipped, err)
	}
	if _, err := NewReader(strings.NewReader(good), "access.log", Options{UserField: "agent"}); err == nil || !strings.Contains(err.Error(), `the combined log format has no "agent" field (its fields: ip, remote_user, method, path, protocol, status, bytes, referer, user_agent, and extra1, extra2, ... after them)`) {
		t.Errorf("unknown user field: %v", err)
	}
	if _, err := NewReader(strings.NewReader(good), "access.log", Options{TimeField: "t"}); err == nil || !strings.Contains(err.Error(), "no time or cost field") {
		t.Errorf("time field: %v", err)
	}
}

func TestAccessLogSniffAndFields(t *testing.T) {
	line := `10.0.0.1 - alice [10/Oct/2024:13:55:40 +0000] "GET /x HTTP/1.1" 200 1 "-" "x"` + "\n"
	for _, name := range []string{"access.log", "access.log.1", "x"} {
		r, err := NewReader(strings.NewReader(line), name, Options{})
		if err != nil || r.Format() != Combined {
			t.Errorf("%s: format %v, %v", name, r.Format(), err)
		}
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	io.WriteString(w, line)
	w.Close()
	r, err := NewReader(&gz, "access.log.2.gz", Options{})
	if err != nil || r.Format() != Combined {
		t.Fatalf("gzip: %v, %v", r, err)
	}
	ev, err := r.Next()
	if err != nil || string(ev.User) != "10.0.0.1" || !r.RFC3339() {
		t.Fatalf("gzip: %v %v", ev, err)
	}
	if v, ok := ev.Attr("ip"); !ok || string(v) != "10.0.0.1" {
		t.Errorf(`Attr("ip") = %q, %v`, v, ok)
	}
	common := `10.0.0.1 - alice [10/Oct/2024:13:55:40 +0000] "GET /x HTTP/1.1" 200 1` + "\n"
	if r, err := NewReader(strings.NewReader(common), "access.log", Options{}); err != nil || r.Format() != Common {
		t.Errorf("common: %v, %v", r, err)
	}
	// CSV, YAML and JSON Lines are sniffed as before.
	for text, want := range map[string]Format{"user,timestamp\nu,1\n": CSV, "- {user: u, timestamp: 1}\n": YAML, `{"user":"u","timestamp":1}` + "\n": JSONL} {
		if r, err := NewReader(strings.NewReader(text), "t", Options{}); err != nil || r.Format() != want {
			t.Errorf("%q: %v, %v", text, r.Format(), err)
		}
	}
	got, err := readLines(t, "access.log", line, Options{UserField: "remote_user"})
	if err != nil || !strings.HasPrefix(got[0], "alice ") {
		t.Errorf("remote_user as the user: %q, %v", got, err)
	}
}

func FuzzAccessLog(f *testing.F) {
	f.Add(`203.0.113.7 - - [10/Oct/2024:13:55:36 +0200] "GET /search?q=a HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (X11)"`)
	f.Add(`2001:db8::1 - alice [29/Feb/2024:23:59:59.250 -0130] "POST /api HTTP/2.0" 201 - "https://x/" "curl \"q\""`)
	f.Add(`1.2.3.4 - - [10/Oct/2024:13:55:40 +0000] "-" 400 0`)
	f.Fuzz(func(t *testing.T, line string) {
		for _, format := range []Format{Combined, Common} {
			r, err := NewReader(strings.NewReader(line), "access.log", Options{Format: format})
			if err != nil {
				continue
			}
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				// What parses has its fields, the time in range and a user.
				if len(ev.User) == 0 || ev.NumAttrs() < 7 {
					t.Fatalf("%q: %+v", line, ev)
				}
				if v, _ := ev.Attr("ip"); !bytes.Equal(v, ev.User) {
					t.Fatalf("%q: user %q, ip %q", line, ev.User, v)
				}
				if !strings.Contains(line, string(ev.TimeText)) {
					t.Fatalf("%q: time text %q not in the line", line, ev.TimeText)
				}
			}
		}
	})
}

// accessLogs returns n requests as a combined log and as CSV with the
// same fields: user (the ip), timestamp, and the other attributes.
func accessLogs(n int) (combined, csv []byte) {
	var lb, cb bytes.Buffer
	cb.WriteString("user,timestamp,remote_user,method,path,protocol,status,bytes,referer,user_agent\n")
	base := time.Date(2024, 10, 10, 13, 0, 0, 0, time.UTC)
	agents := []string{`Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36`, `curl/8.5.0`, `Go-http-client/1.1`}
	for i := range n {
		ip := fmt.Sprintf("10.%d.%d.%d", i%7, i%251, i%13)
		if i%5 == 0 {
			ip = fmt.Sprintf("2001:db8::%x", i%4093)
		}
		at := base.Add(time.Duration(i) * 7 * time.Millisecond)
		fmt.Fprintf(&lb, "%s - - [%s] \"GET /search?q=item%d&page=%d HTTP/1.1\" 200 %d \"-\" \"%s\"\n",
			ip, at.Format("02/Jan/2006:15:04:05 -0700"), i%1000, i%7, 500+i%4000, agents[i%3])
		fmt.Fprintf(&cb, "%s,%d,-,GET,/search?q=item%d&page=%d,HTTP/1.1,200,%d,-,\"%s\"\n", ip, at.Unix(), i%1000, i%7, 500+i%4000, agents[i%3])
	}
	return lb.Bytes(), cb.Bytes()
}

// BenchmarkReadAccessLog reads the same requests, with the same fields, as
// a combined log and as CSV; the target is at most 3x CSV's time per line.
func BenchmarkReadAccessLog(b *testing.B) {
	n := 5_000_000
	if testing.Short() {
		n = 200_000
	}
	combined, csv := accessLogs(n)
	for _, tt := range []struct {
		name string
		data []byte
	}{{"combined", combined}, {"csv", csv}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.data)))
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(tt.data), "t", Options{})
				if err != nil {
					b.Fatal(err)
				}
				rows := 0
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows++
				}
				if rows != n {
					b.Fatalf("%d rows, want %d", rows, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
		})
	}
}
