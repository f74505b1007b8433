package presets

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// nginxConfigs are the limit_req configurations the nginx differential
// runs side by side, each in a location of its own with a zone of its own,
// and the preset parameters that say the same.
var nginxConfigs = []struct {
	name       string
	zone, rate string
	limitReq   string // limit_req's parameters beyond zone=
	params     string // the preset's
	keys, reqs int
	newKeys    int // one-shot keys arriving throughout
}{
	{"nodelay", "a:10m", "20r/s", "burst=10 nodelay", "rate=20r/s,burst=10,nodelay,zone=a:10m", 20, 15000, 0},
	{"delayed", "b:10m", "5r/s", "burst=4", "rate=5r/s,burst=4,zone=b:10m", 10, 7000, 0},
	{"delay", "c:10m", "10r/s", "burst=8 delay=3", "rate=10r/s,burst=8,delay=3,zone=c:10m", 10, 9000, 0},
	// 1r/m drains a request in 62.5 s: a node idle for 60 s that a new
	// key deletes lets its key pass where the node would refuse it.
	// Its keys come back 58 to 64 s after their first request (see
	// returningTrace), among a stream of new keys.
	{"perminute", "d:10m", "1r/m", "", "rate=1r/m,zone=d:10m", 100, 0, 2400},
	// 10r/m with 420 keys and 191 nodes: a full zone deletes nodes
	// that have not drained.
	{"smallzone", "e:32k", "10r/m", "burst=1 nodelay", "rate=10r/m,burst=1,nodelay,zone=e:32k", 420, 12600, 0},
}

// startNginxRun starts the real nginx (Debian's) on a loopback
// port of its own, with each of nginxConfigs in a location, and sends it
// random traces in real time: keys bursting, pausing and going idle for
// over a minute, every configuration at once, the small zone's 420 keys
// more than its 191 nodes. It then replays each request at the time
// nginx decided it through the preset, in the order nginx decided them,
// and fails on any request decided otherwise: passed, delayed or
// rejected ($limit_req_status and the status), and for a delayed one the
// delay, which nginx's "delaying request, excess: E" line gives as
// (E - delay) * 1000 / rate ms.
//
// The decision time is nginx's own clock: limit_req reads
// ngx_current_msec, its cached monotonic milliseconds, which the access
// log shows in no variable ($msec is the wall clock, at log time, after
// any delay). $connection_time is ngx_current_msec less the connection's
// start on that same clock; "set" copies it in the server's rewrite
// phase, which runs in the same event as limit_req's preaccess phase, so
// it is the decision's millisecond. To give every request one origin, all
// of them go over one HTTP/2 connection (h2c), whose streams nginx runs
// in the order they come ($connection_requests, copied the same way, is
// that order); the keys are client addresses, which set_real_ip_from
// takes from X-Real-IP, as $binary_remote_addr, 4 bytes a key. Each
// configuration has a connection of its own (their zones are apart, so
// their times need no common origin); the test fails if nginx logs more
// than one for one configuration. The times replayed carry
// a random fraction of a millisecond, which the preset must drop as nginx
// does.
func startNginxRun(t *testing.T, r *realRun) {
	path, ok := binary(t, "nginx", "/usr/sbin/nginx")
	if !ok {
		r.skip = "nginx is not installed: no differential against the real nginx"
		return
	}
	dir := t.TempDir()
	port := startNginx(t, path, dir)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)

	rng := rand.New(rand.NewPCG(2026, 26))
	seq := 0
	for c, cfg := range nginxConfigs {
		// A connection of the configuration's own: its requests' times
		// have one origin, and another's backlog does not hold them up.
		// At most 64 requests in flight on it: Go's HTTP/2 client, held
		// to one connection (StrictMaxConcurrentRequests), stalls with
		// thousands of requests waiting for a stream at once.
		tr := &http.Transport{Protocols: &protos, HTTP2: &http.HTTP2Config{StrictMaxConcurrentRequests: true}}
		t.Cleanup(tr.CloseIdleConnections)
		client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		inflight := make(chan struct{}, 64)
		var trace []diffRequest
		if cfg.reqs == 0 {
			trace = returningTrace(rng, cfg.keys, cfg.newKeys)
		} else {
			shape := realShape(cfg.keys, cfg.reqs, 1)
			shape.newKeys = cfg.newKeys
			trace = randomTrace(rng, shape)
		}
		for i := range trace {
			trace[i].cost = int64(seq) // the request's number, in the URL
			seq++
		}
		byKey := map[int][]diffRequest{}
		for _, rq := range trace {
			byKey[rq.key] = append(byKey[rq.key], rq)
		}
		for key, reqs := range byKey {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				if !r.wait() {
					return
				}
				ip := fmt.Sprintf("10.%d.%d.%d", c, key/256, key%256)
				for _, rq := range reqs {
					sleepUntil(r.at(rq.at))
					url := fmt.Sprintf("http://127.0.0.1:%d/%s?k=%d&i=%d", port, cfg.name, key, rq.cost)
					r.wg.Add(1)
					go func() {
						defer r.wg.Done()
						inflight <- struct{}{}
						defer func() { <-inflight }()
						req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
						req.Header.Set("X-Real-IP", ip)
						resp, err := client.Do(req)
						if err != nil {
							r.errorf("a request failed: %v", err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}()
				}
			}()
		}
	}
	r.judge = func(t *testing.T) { judgeNginx(t, rng, dir, path, seq) }
}

// judgeNginx replays the seq requests of nginx's logs in dir through the
// presets of nginxConfigs and compares.
func judgeNginx(t *testing.T, rng *rand.Rand, dir, path string, seq int) {
	lines := readNginxLog(t, filepath.Join(dir, "access.log"), seq)
	delays := readNginxDelays(t, filepath.Join(dir, "error.log"))
	version := nginxVersion(path)
	total, differ := 0, 0
	for _, cfg := range nginxConfigs {
		tab := table(t, "nginx", paramsOf(cfg.params))
		pol := tab.Policy()
		var mine []nginxLine
		for _, l := range lines {
			if l.location == cfg.name {
				mine = append(mine, l)
			}
		}
		for _, l := range mine {
			if l.conn != mine[0].conn {
				t.Fatalf("%s: its requests came over more than one connection (%s, %s): their times have no common origin", cfg.name, mine[0].conn, l.conn)
			}
		}
		sort.Slice(mine, func(i, j int) bool { return mine[i].order < mine[j].order })
		n, bad := 0, 0
		for _, l := range mine {
			at := int64(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()) + l.ms*int64(time.Millisecond) + rng.Int64N(int64(time.Millisecond))
			d := tab.Allow(uint32(l.key), at, 1)
			n++
			want := l.status
			got := "REJECTED"
			switch {
			case d.Allowed && d.Delay > 0:
				got = "DELAYED"
			case d.Allowed:
				got = "PASSED"
			}
			ok := got == want && (l.code == 429) == !d.Allowed
			if ok && got == "DELAYED" {
				excess, found := delays[l.seq]
				rate, _ := nginxRateOf(pol.Rate)
				ok = found && time.Duration((excess-uint64(pol.Delay)*1000)*1000/rate)*time.Millisecond == d.Delay
			}
			if !ok {
				bad++
				if bad <= 5 {
					t.Errorf("%s: request %d (key %d, order %d, at %d ms): nginx %s %d (excess %v), preset %s %+v",
						cfg.name, l.seq, l.key, l.order, l.ms, want, l.code, delays[l.seq], got, d)
				}
			}
		}
		proof(t, "nginx %s (limit_req zone=%s %s, rate=%s) | %s, real server | %d | %d", cfg.name, cfg.zone, cfg.limitReq, cfg.rate, version, n, bad)
		total += n
		differ += bad
	}
	proof(t, "nginx | %s, real server on loopback, %d configurations | %d | %d", version, len(nginxConfigs), total, differ)
}

// returningTrace is the trace of keys that come back to nginx's zone
// around the 60 s after which an idle node may be deleted: each of keys
// sends a burst at a random time in the first 8 s, and comes back once or
// twice 58 to 64 s later, while newKeys keys each send one request at
// random times, so that nodes are deleted as they turn 60 s idle.
func returningTrace(rng *rand.Rand, keys, newKeys int) []diffRequest {
	var lines [][]diffRequest
	for k := range keys {
		t := rng.Int64N(int64(8 * time.Second))
		var line []diffRequest
		for b := 1 + rng.IntN(3); b > 0; b-- {
			line = append(line, diffRequest{key: k, at: t + rng.Int64N(int64(5*time.Millisecond)), cost: 1})
		}
		back := t + int64(58*time.Second) + rng.Int64N(int64(6*time.Second))
		line = append(line, diffRequest{key: k, at: back, cost: 1})
		if rng.IntN(2) == 0 {
			line = append(line, diffRequest{key: k, at: back + rng.Int64N(int64(2*time.Second)), cost: 1})
		}
		lines = append(lines, line)
	}
	for k := keys; k < keys+newKeys; k++ {
		lines = append(lines, []diffRequest{{key: k, at: rng.Int64N(int64(realSpan)), cost: 1}})
	}
	var out []diffRequest
	for _, l := range lines {
		out = append(out, l...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// startNginx writes nginx.conf for nginxConfigs in dir, starts nginx
// there on a free port and returns the port.
func startNginx(t *testing.T, path, dir string) int {
	t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		port := freePorts(t, 1)[0]
		var zones, locations strings.Builder
		for _, c := range nginxConfigs {
			fmt.Fprintf(&zones, "    limit_req_zone $binary_remote_addr zone=%s rate=%s;\n", c.zone, c.rate)
			name, _, _ := strings.Cut(c.zone, ":")
			// A file, served in the content phase: return would answer
			// in the rewrite phase, before limit_req's preaccess phase.
			fmt.Fprintf(&locations, "        location = /%s { limit_req zone=%s %s; alias %s/ok; }\n", c.name, name, c.limitReq, dir)
		}
		conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    log_format diff '$connection $n $dt $uri $arg_k $arg_i $status $limit_req_status';
%[3]s
    server {
        listen 127.0.0.1:%[2]d http2;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Real-IP;
        http2_max_concurrent_streams 2000;
        keepalive_timeout 600s;
        keepalive_requests 10000000;
        limit_req_status 429;
        default_type text/plain;
        set $dt $connection_time;
        set $n $connection_requests;
        access_log %[1]s/access.log diff;
        location = /ready { access_log off; return 200; }
%[4]s    }
}
`, dir, port, zones.String(), locations.String())
		if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		confPath := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(path, "-t", "-q", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", confPath).CombinedOutput(); err != nil {
			t.Fatalf("nginx -t: %v\n%s", err, out)
		}
		_, ok := startServer(t, dir, filepath.Join(dir, "nginx.out"), path, []string{"-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", confPath}, func() bool { return listening(port) })
		if ok {
			return port
		}
	}
	t.Fatal("could not start nginx on a free port")
	return 0
}

// nginxLine is one request as nginx's access log shows it.
type nginxLine struct {
	conn     string
	order    int   // $connection_requests when it was decided
	ms       int64 // $connection_time when it was decided, in ms
	location string
	key, seq int
	code     int
	status   string // $limit_req_status
}

// readNginxLog reads the access log's want lines, waiting a little for
// the last.
func readNginxLog(t *testing.T, path string, want int) []nginxLine {
	t.Helper()
	var lines []nginxLine
	for wait := 0; ; wait++ {
		lines = lines[:0]
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var l nginxLine
			var dt string
			if _, err := fmt.Sscanf(sc.Text(), "%s %d %s /%s %d %d %d %s", &l.conn, &l.order, &dt, &l.location, &l.key, &l.seq, &l.code, &l.status); err != nil {
				t.Fatalf("access log line %q: %v", sc.Text(), err)
			}
			sec, frac, _ := strings.Cut(dt, ".")
			s, err1 := strconv.ParseInt(sec, 10, 64)
			m, err2 := strconv.ParseInt(frac, 10, 64)
			if err1 != nil || err2 != nil || len(frac) != 3 {
				t.Fatalf("access log line %q: connection time %q", sc.Text(), dt)
			}
			l.ms = s*1000 + m
			lines = append(lines, l)
		}
		f.Close()
		if len(lines) >= want || wait == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(lines) != want {
		t.Fatalf("nginx logged %d requests of %d", len(lines), want)
	}
	return lines
}

// nginxDelayRE matches limit_req's log line of a delayed request.
var nginxDelayRE = regexp.MustCompile(`delaying request, excess: (\d+)\.(\d{3}), by zone .*request: "GET /\w+\?k=\d+&i=(\d+) `)

// readNginxDelays returns, by request number, the excess nginx logged for
// each delayed request, in thousandths.
func readNginxDelays(t *testing.T, path string) map[int]uint64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]uint64{}
	for _, m := range nginxDelayRE.FindAllStringSubmatch(string(data), -1) {
		whole, _ := strconv.ParseUint(m[1], 10, 64)
		frac, _ := strconv.ParseUint(m[2], 10, 64)
		seq, _ := strconv.Atoi(m[3])
		out[seq] = whole*1000 + frac
	}
	return out
}

// nginxRateOf returns a preset's rate in thousandths per second.
func nginxRateOf(r limiters.Rate) (uint64, bool) {
	return uint64(r.N) * uint64(1000*time.Second) / uint64(r.Per), true
}

// nginxVersion returns what nginx -v says, as "nginx 1.22.1".
func nginxVersion(path string) string {
	out, _ := exec.Command(path, "-v").CombinedOutput()
	v := strings.TrimSpace(string(out))
	if _, after, ok := strings.Cut(v, "nginx/"); ok {
		v = "nginx " + after
	}
	if dpkg, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "nginx").Output(); err == nil && len(dpkg) > 0 {
		v += " (Debian " + string(dpkg) + ")"
	}
	return v
}

// paramsOf splits a preset's parameter list.
func paramsOf(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = "true"
		}
		m[k] = v
	}
	return m
}
