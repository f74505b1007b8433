package presets

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// haproxyConfigs are the frontends the HAProxy differential runs side by
// side, each with a stick table of its own, and the preset parameters
// that say the same.
var haproxyConfigs = []struct {
	name                  string
	period, limit, expire string
	keys, reqs            int
}{
	{"tenseconds", "10s", "10", "30s", 8, 8000},
	{"oddperiod", "1001ms", "4", "3s", 8, 8000}, // an odd period: the tick's lock bit moves its start
	{"threeseconds", "3s", "20", "10s", 8, 8000},
	{"minute", "60s", "50", "2m", 8, 8000}, // idle gaps shorter than expire: entries kept across them
}

// haproxyLua is a sample fetch of HAProxy's own clock: core.now() is its
// internal date, from which now_ms, the tick freq_ctr counts in, is made
// (a single thread's, so the global one).
const haproxyLua = `core.register_fetches("nowms", function(txn)
  local n = core.now()
  return n.sec * 1000 + n.usec // 1000
end)
`

// startHAProxyRun starts the real HAProxy (Debian's) with a
// frontend per configuration: a stick table storing http_req_rate(P),
// tracked with track-sc0 src, and http-request deny if {
// sc_http_req_rate(0) gt N }. Each key is a loopback address of its own
// (127.0.0.2, ...), on a keep-alive connection of its own, sending random
// traces in real time: bursts, pauses and an idle gap of over a minute.
// Every response carries the millisecond HAProxy decided at (now_ms, read
// by a Lua sample fetch in the same rule set) and the rate it read. The
// test replays each key's requests at those times through the preset, in
// their order, and fails on any request where it decides otherwise
// (denied or not) or reads another rate. The times replayed carry a
// random fraction of a millisecond, which the preset must drop.
func startHAProxyRun(t *testing.T, r *realRun) {
	path, ok := binary(t, "haproxy", "/usr/sbin/haproxy")
	if !ok {
		r.skip = "haproxy is not installed: no differential against the real HAProxy"
		return
	}
	dir := t.TempDir()
	ports := startHAProxy(t, path, dir)
	var mu sync.Mutex
	answers := make([][]haproxyAnswer, len(haproxyConfigs))
	rng := rand.New(rand.NewPCG(2026, 27))
	for c, cfg := range haproxyConfigs {
		trace := randomTrace(rng, realShape(cfg.keys, cfg.reqs, 1))
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
				local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+key))}
				dialer := &net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}
				client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, MaxConnsPerHost: 1, IdleConnTimeout: 10 * time.Minute}}
				defer client.CloseIdleConnections()
				url := fmt.Sprintf("http://127.0.0.1:%d/", ports[c])
				for i, rq := range reqs {
					sleepUntil(r.at(rq.at))
					resp, err := client.Get(url)
					if err != nil {
						r.errorf("a request failed: %v", err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					ms, rate, ok := strings.Cut(strings.TrimSpace(string(body)), " ")
					n, err := strconv.ParseInt(ms, 10, 64)
					if !ok || err != nil {
						r.errorf("response %q", body)
						return
					}
					mu.Lock()
					answers[c] = append(answers[c], haproxyAnswer{key: key, ms: n, rate: rate, code: resp.StatusCode, order: i})
					mu.Unlock()
				}
			}()
		}
	}
	r.judge = func(t *testing.T) { judgeHAProxy(t, rng, path, answers) }
}

// haproxyAnswer is one response of HAProxy's: the key, the millisecond
// and the rate it read, its status, and the request's place in the key's.
type haproxyAnswer struct {
	key   int
	ms    int64
	rate  string
	code  int
	order int
}

// judgeHAProxy replays the answers of each frontend of haproxyConfigs
// through its preset and compares.
func judgeHAProxy(t *testing.T, rng *rand.Rand, path string, answers [][]haproxyAnswer) {
	version := haproxyVersion(path)
	total, differ := 0, 0
	for c, cfg := range haproxyConfigs {
		tab := table(t, "haproxy", map[string]string{"period": cfg.period, "limit": cfg.limit, "expire": cfg.expire})
		// Each key's answers in the order it sent them: a key's state is
		// its own, so the keys need not be interleaved.
		byKey := map[int][]haproxyAnswer{}
		for _, a := range answers[c] {
			byKey[a.key] = append(byKey[a.key], a)
		}
		n, bad := 0, 0
		for key := range cfg.keys {
			list := byKey[key]
			for i := range list {
				if list[i].order != i {
					t.Fatalf("%s: key %d's answers out of order", cfg.name, key)
				}
			}
			for _, a := range list {
				at := a.ms*int64(time.Millisecond) + rng.Int64N(int64(time.Millisecond))
				d, text := tab.AllowExplain(uint32(key), at, 1, time.Second, nil)
				n++
				rate, _, _ := strings.Cut(strings.TrimPrefix(string(text), "rate "), " ")
				if d.Allowed != (a.code == http.StatusOK) || rate != a.rate || a.code != http.StatusOK && a.code != http.StatusTooManyRequests {
					bad++
					if bad <= 5 {
						t.Errorf("%s: key %d request %d at %d ms: HAProxy %d, rate %s; preset %+v, %q", cfg.name, key, a.order, a.ms, a.code, a.rate, d, text)
					}
				}
			}
		}
		proof(t, "haproxy %s (http_req_rate(%s) gt %s, expire %s) | %s, real server | %d | %d", cfg.name, cfg.period, cfg.limit, cfg.expire, version, n, bad)
		total += n
		differ += bad
	}
	proof(t, "haproxy | %s, real server on loopback, %d frontends | %d | %d", version, len(haproxyConfigs), total, differ)
}

// startHAProxy writes haproxy.cfg for haproxyConfigs in dir, starts
// HAProxy there with a free port per frontend and returns the ports.
func startHAProxy(t *testing.T, path, dir string) []int {
	t.Helper()
	lua := filepath.Join(dir, "nowms.lua")
	if err := os.WriteFile(lua, []byte(haproxyLua), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 5; attempt++ {
		ports := freePorts(t, len(haproxyConfigs))
		var b strings.Builder
		fmt.Fprintf(&b, `global
    nbthread 1
    lua-load %s
defaults
    mode http
    timeout client 300s
    timeout server 10s
    timeout connect 5s
    timeout http-keep-alive 300s
`, lua)
		for i, c := range haproxyConfigs {
			fmt.Fprintf(&b, `frontend %[1]s
    bind 127.0.0.1:%[2]d
    http-request set-var(txn.now) lua.nowms
    http-request track-sc0 src table t_%[1]s
    http-request deny deny_status 429 content-type text/plain lf-string "%%[var(txn.now)] %%[sc_http_req_rate(0)]" if { sc_http_req_rate(0) gt %[3]s }
    http-request return status 200 content-type text/plain lf-string "%%[var(txn.now)] %%[sc_http_req_rate(0)]"
backend t_%[1]s
    stick-table type ip size 100k expire %[4]s store http_req_rate(%[5]s)
`, c.name, ports[i], c.limit, c.expire, c.period)
		}
		cfg := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(path, "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
			t.Fatalf("haproxy -c: %v\n%s", err, out)
		}
		_, ok := startServer(t, dir, filepath.Join(dir, "haproxy.out"), path, []string{"-db", "-f", cfg}, func() bool {
			for _, p := range ports {
				if !listening(p) {
					return false
				}
			}
			return true
		})
		if ok {
			return ports
		}
	}
	t.Fatal("could not start haproxy on free ports")
	return nil
}

// haproxyVersion returns "HAProxy 2.6.12 (Debian 2.6.12-1+deb12u4)" or
// what of it the system says.
func haproxyVersion(path string) string {
	out, _ := exec.Command(path, "-v").Output()
	v, _, _ := strings.Cut(string(out), "\n")
	if f := strings.Fields(v); len(f) >= 3 {
		v = "HAProxy " + strings.SplitN(f[2], "-", 2)[0]
	}
	if dpkg, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "haproxy").Output(); err == nil && len(dpkg) > 0 {
		v += " (Debian " + string(dpkg) + ")"
	}
	return v
}
