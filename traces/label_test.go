package traces

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestObserved(t *testing.T) {
	ev := func(kv ...string) *Event {
		var e Event
		e.SetAttrs(kv...)
		return &e
	}
	for _, tt := range []struct {
		spec string
		ev   *Event
		want Outcome
	}{
		{"status=429", ev("status", "429"), OutcomeLimited},
		{"status=429", ev("status", "503"), OutcomePassed},
		{"status", ev("status", "503"), OutcomeLimited},
		{"status", ev("status", "-"), OutcomeUnknown},
		{"status", ev("path", "/"), OutcomeUnknown},
		{"limit_req_status", ev("limit_req_status", "REJECTED"), OutcomeLimited},
		{"limit_req_status", ev("limit_req_status", "REJECTED_DRY_RUN"), OutcomeLimited},
		{"limit_req_status", ev("limit_req_status", "DELAYED"), OutcomePassed},
		{"limit_req_status", ev("limit_req_status", "-"), OutcomeUnknown},
		{"limit_req_status", ev("limit_req_status", "WHAT"), OutcomeUnknown},
		{"limit_req_status=REJECTED", ev("limit_req_status", "REJECTED_DRY_RUN"), OutcomePassed},
		{"response_flags", ev("response_flags", "UH,RL"), OutcomeLimited},
		{"response_flags", ev("response_flags", "-"), OutcomePassed},
		{"response_flags", ev("response_flags", "UH"), OutcomePassed},
		{"x_blocked=yes,true", ev("x_blocked", "true"), OutcomeLimited},
	} {
		o, err := ParseObserved(tt.spec)
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		if got := o.Outcome(tt.ev); got != tt.want {
			t.Errorf("%s on %v: %v, want %v", tt.spec, tt.ev.attrs, got, tt.want)
		}
	}
	for _, bad := range []string{"", "=429", "x_blocked", "status="} {
		if _, err := ParseObserved(bad); err == nil {
			t.Errorf("ParseObserved(%q) succeeded", bad)
		}
	}
}

// TestDefaultObserved: each log's default is the field that records what
// its limiter did.
func TestDefaultObserved(t *testing.T) {
	for _, tt := range []struct {
		file string
		opts Options
		want string
	}{
		{"access.log", Options{}, "status=429,503"},
		{"nginx-timed.log", Options{Format: Nginx, LogFormat: `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $limit_req_status`}, "limit_req_status"},
		{"envoy.log", Options{Format: Envoy}, "response_flags"},
		{"traefik.log", Options{}, "status=429"},
	} {
		_, r := readLogExample(t, tt.file, tt.opts)
		if got := r.DefaultObserved(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.file, got, tt.want)
		}
	}
}

// TestLabels counts the labels of a trace by hand: legit + abusive +
// unlabelled is every request.
func TestLabels(t *testing.T) {
	dir := t.TempDir()
	block := dir + "/blocklist.txt"
	if err := os.WriteFile(block, []byte("# scrapers\n203.0.113.0/24\n198.51.100.9\n\n2001:db8:bad::/48\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := "user,timestamp,ip,status,user_agent\n" +
		"a,1,203.0.113.5,200,Mozilla\n" + // blocked prefix: abusive
		"b,2,198.51.100.9,200,curl\n" + // blocked address: abusive
		"c,3,198.51.100.10,404,Mozilla\n" + // neither
		"d,4,2001:db8:bad::1,200,Mozilla\n" + // blocked prefix: abusive
		"e,5,192.0.2.1,200,Googlebot/2.1\n" + // bot: abusive by user agent
		"f,6,192.0.2.2,500,Mozilla\n" + // status 500: not legit
		"g,7,192.0.2.3,304,Mozilla\n" // legit
	for _, tt := range []struct {
		legit, abusive string
		want           string // the labels, in order
	}{
		{"", "ip in file:" + block, "AALALLL"},
		{"status<400 and not user_agent~(?i)bot", "", "LLALAAL"},
		{"status<400 and not user_agent~(?i)bot", "ip in file:" + block + " or user_agent~bot", ""}, // both: line 2 an error
		{"status<400 and not ip in file:" + block, "ip in file:" + block + " or user_agent~^curl", "AAUALUL"},
	} {
		l, err := NewLabeler(tt.legit, tt.abusive, "", os.ReadFile)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(strings.NewReader(trace), "t.csv", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		var counts [NumLabels]int
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			lab, err := l.Label(ev, nil)
			if err != nil {
				if tt.want != "" {
					t.Errorf("%s / %s: %v", tt.legit, tt.abusive, err)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "matches both") {
					t.Errorf("both: %v", err)
				}
				break
			}
			counts[lab]++
			got = append(got, "ULA"[lab])
		}
		if tt.want == "" {
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s / %s: labels %s, want %s", tt.legit, tt.abusive, got, tt.want)
		}
		if counts[Unlabelled]+counts[Legit]+counts[Abusive] != 7 {
			t.Errorf("%s / %s: counts %v do not add up to 7", tt.legit, tt.abusive, counts)
		}
	}
}

// FuzzMatch fuzzes the conditions of --legit and --abusive, and
// --observed.
func FuzzMatch(f *testing.F) {
	f.Add("status<400 and not user_agent~(?i)bot", "status=429,503")
	f.Add("(ip in file:x or key='a b') and status>=500", "limit_req_status")
	f.Add("not not a!=b or c!~'[x'", "response_flags=RL")
	f.Fuzz(func(t *testing.T, expr, observed string) {
		m, err := ParseMatch(expr, func(string) ([]byte, error) { return []byte("1.2.3.4\n10.0.0.0/8\n"), nil })
		var e Event
		e.SetAttrs("status", "429", "ip", "10.1.2.3", "user_agent", "Googlebot")
		if err == nil {
			m.Matches(&e, []byte("k"))
		}
		if o, err := ParseObserved(observed); err == nil {
			o.Outcome(&e)
		}
	})
}
