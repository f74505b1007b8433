package cmd

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/nginxtest"
)

// nginxLogFormat is the log_format of the test against a real nginx:
// the key, the time the line was written with milliseconds and the
// request's duration (so that its arrival is known), and what limit_req
// did.
const nginxLogFormat = `$http_x_user [$time_local] $msec $request_time $status $limit_req_status "$request"`

// TestCheckRealNginx runs Debian's nginx with limit_req, sends it bursts
// from several keys, and checks its access log against the nginx preset:
// the model agrees with nginx on every request; a wrong model (a smaller
// burst) shows its disagreements, with their lines.
func TestCheckRealNginx(t *testing.T) {
	srv := nginxtest.Start(t, `
    log_format ratesim '`+nginxLogFormat+`';
    limit_req_zone $http_x_user zone=fast:1m rate=10r/s;
    limit_req_zone $http_x_user zone=slow:1m rate=10r/s;
    limit_req_status 429;
    server {
        listen 127.0.0.1:{{port}};
        access_log {{dir}}/logs/access.log ratesim;
        root {{dir}}/html;
        location / {
            limit_req zone=fast burst=3 nodelay;
            try_files /index.html =404;
        }
        location /queued {
            limit_req zone=slow burst=3;
            try_files /index.html =404;
        }
    }`)
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path, user string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+srv.Addr+path, nil)
		req.Header.Set("X-User", user)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// Bursts of 8 back to back per key, far from the 100 ms a request
	// takes to drain: 4 pass (1 and a burst of 3), 4 are refused; then
	// idle long enough to drain.
	sent := 0
	for round := range 2 {
		for _, user := range []string{"alice", "bob", "carol"} {
			for range 8 {
				get("/", user+strconv.Itoa(round))
				sent++
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A client within the rate: every request passes.
	for range 4 {
		get("/", "dave")
		sent++
		time.Sleep(150 * time.Millisecond)
	}
	// A queue without nodelay: each request after the first waits for
	// its turn (DELAYED), logged when it ends.
	for range 4 {
		get("/queued", "erin")
		sent++
	}
	srv.Stop()
	log := filepath.Join(srv.Dir, "logs", "access.log")
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != sent {
		t.Fatalf("nginx logged %d lines of %d requests:\n%s", len(lines), sent, data)
	}
	for _, want := range []string{" PASSED ", " REJECTED ", " DELAYED "} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("the log has no %s:\n%s", want, data)
		}
	}
	check := func(limiter string) []map[string]any {
		t.Helper()
		args := []string{"check", "--limiter", limiter, "--log-format", nginxLogFormat, "--user-field", "http_x_user", "--key", "http_x_user,path",
			"--sort", "-o", "json", log}
		got := ratesim(t, "", args...)
		if got.code != 0 {
			t.Fatalf("check %s: exit %d: %s", limiter, got.code, got.stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(got.stdout), &rows); err != nil {
			t.Fatalf("%v in %s", err, got.stdout)
		}
		return rows
	}
	// The two locations are two zones: one limiter keyed by user and path
	// models them, as their rates and bursts are the same; the queue's
	// requests are delayed, not refused, with or without nodelay.
	rows := check("nginx:rate=10r/s,burst=3,nodelay")
	if len(rows) != 1 || rows[0]["observed"] != float64(sent) || rows[0]["agree"] != float64(sent) {
		t.Errorf("the nginx preset does not agree with nginx on every request: %v\n%s", rows, data)
	}
	if rows[0]["refused_limited"] == float64(0) || rows[0]["allowed_passed"] == float64(0) {
		t.Errorf("no request of each kind: %v", rows)
	}
	wrong := check("nginx:rate=10r/s,burst=1,nodelay")
	if len(wrong) != 1 || wrong[0]["agree"] == float64(sent) || wrong[0]["refused_passed"] == float64(0) {
		t.Errorf("a smaller burst agrees with nginx: %v", wrong)
	}
	// Its disagreements are listed with their lines: the third and
	// fourth of every burst, which nginx let through.
	got := ratesim(t, "", "check", "--limiter", "nginx:rate=10r/s,burst=1,nodelay", "--log-format", nginxLogFormat, "--user-field", "http_x_user",
		"--key", "http_x_user,path", "--sort", "--disagreements", "-o", "csv", log)
	if got.code != 0 {
		t.Fatal(got.stderr)
	}
	rowsCSV, err := csv.NewReader(strings.NewReader(got.stdout)).ReadAll()
	if err != nil || len(rowsCSV) != 1+int(wrong[0]["disagree"].(float64)) || strings.Join(rowsCSV[0], ",") != "limiter,file,line,user,key,timestamp,allowed,observed" {
		t.Fatalf("disagreements (%v):\n%s", err, got.stdout)
	}
	for _, f := range rowsCSV[1:] {
		r := strings.Join(f, ",")
		n, _ := strconv.Atoi(f[2])
		if n < 1 || n > len(lines) || !strings.HasPrefix(lines[n-1], f[3]+" ") || !strings.Contains(lines[n-1], " PASSED ") || f[6] != "false" {
			t.Errorf("disagreement %s: line %d is %q", r, n, lines[max(0, min(n, len(lines))-1)])
		}
	}
}
