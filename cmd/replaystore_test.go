package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
)

// storeURL returns the store URL of the server (RATESIM_REDIS_ADDR) or
// cluster (RATESIM_REDIS_CLUSTER) the tests run against. Without one the
// test is skipped, except under CI=true, where a skip would hide that
// nothing was tested.
func storeURL(t *testing.T, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; under CI=true the Redis tests must run", env)
		}
		t.Skipf("%s not set: no Redis server to test against", env)
	}
	if env == "RATESIM_REDIS_CLUSTER" {
		return "redis+cluster://" + v
	}
	return "redis://" + v + "/0"
}

// genTrace writes a generated trace to a file of the test's and returns
// its path.
func genTrace(t *testing.T, args ...string) string {
	t.Helper()
	r := ratesim(t, "", append([]string{"gen"}, args...)...)
	if r.code != 0 {
		t.Fatalf("gen %v: %s", args, r.stderr)
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// replaySummary runs replay --summary -o json and returns its rows.
func replaySummary(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := ratesim(t, "", append([]string{"replay", "--summary", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("replay %v: exit %d: %s", args, r.code, r.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	return rows
}

// storeAlgos lists, for --algos, every algorithm the Redis store keeps.
func storeAlgos() string {
	var names []string
	for _, a := range limiters.AllAlgorithms() {
		if redisstore.Supports(a) {
			names = append(names, a.String())
		}
	}
	return strings.Join(names, ",")
}

// storePolicy is a policy under which a generated trace in ms meets its
// limits often.
var storePolicy = []string{"--unit", "ms", "--limit", "4", "--window", "1s", "--capacity", "4", "--rate", "3/1s", "--block", "1500ms"}

// TestReplayEqualsCompare: with --route key, replay's rows are byte for
// byte compare's (several limiters) and run's (one), on one server and on
// a cluster, with pipelines and without, and --verify finds nothing.
func TestReplayEqualsCompare(t *testing.T) {
	for _, env := range []string{"RATESIM_REDIS_ADDR", "RATESIM_REDIS_CLUSTER"} {
		t.Run(env, func(t *testing.T) {
			store := storeURL(t, env)
			trace := genTrace(t, "--pattern", "bursty", "--users", "1000", "--requests", strconv.Itoa(30000/replayScale), "--seed", "5", "--unit", "ms")
			args := append([]string{"--algos", storeAlgos(), "-o", "csv"}, storePolicy...)
			want := ratesim(t, "", append(append([]string{"compare"}, args...), trace)...)
			if want.code != 0 {
				t.Fatal(want.stderr)
			}
			for _, extra := range [][]string{{"--workers", "8"}, {"--workers", "3", "--pipeline", "1"}} {
				got := ratesim(t, "", append(append(append([]string{"replay", "--store", store}, extra...), args...), trace)...)
				if got.code != 0 {
					t.Fatalf("%v: exit %d: %s", extra, got.code, got.stderr)
				}
				if got.stdout != want.stdout {
					t.Errorf("%v: replay differs from compare (-want +got):\n%s", extra, cmp.Diff(strings.Split(want.stdout, "\n"), strings.Split(got.stdout, "\n")))
				}
			}
			run := ratesim(t, "", append([]string{"run", "--algo", "leaky-queue", "-o", "csv", trace}, storePolicy...)...)
			got := ratesim(t, "", append([]string{"replay", "--store", store, "--algos", "leaky-queue", "--workers", "4", "-o", "csv", trace}, storePolicy...)...)
			if got.code != 0 || got.stdout != run.stdout {
				t.Errorf("replay of one limiter differs from run: exit %d %s\n%s", got.code, got.stderr, cmp.Diff(strings.Split(run.stdout, "\n"), strings.Split(got.stdout, "\n")))
			}
			for _, row := range replaySummary(t, append([]string{"--store", store, "--algos", storeAlgos(), "--workers", "8", "--verify", trace}, storePolicy...)...) {
				if row["differ"] != 0.0 || row["holds"] != true || row["extra_allowed"] != 0.0 {
					t.Errorf("%v: differ %v, holds %v, extra_allowed %v", row["algo"], row["differ"], row["holds"], row["extra_allowed"])
				}
			}
		})
	}
}

// TestReplayNaiveRace: on a bursty trace, eight workers that race for
// each key (--route spread) keep every bound with the atomic store, and
// break them with the naive one, which admits more. The bounds are the
// tight invariants: the sliding log allows at most its limit in any
// closed window, the fixed window its limit per aligned window (three
// times it was checked, and a naive store's excess went unseen), the
// token bucket at most capacity + rate x elapsed.
func TestReplayNaiveRace(t *testing.T) {
	store := storeURL(t, "RATESIM_REDIS_ADDR")
	trace := genTrace(t, "--pattern", "bursty", "--users", "50", "--requests", strconv.Itoa(20000/replayScale), "--seed", "1")
	args := []string{"--store", store, "--workers", "8", "--route", "spread", "--algos", "sliding-log,token-bucket,fixed-window", trace}
	atomic := replaySummary(t, append([]string{"--pipeline", "1"}, args...)...)
	naive := replaySummary(t, append([]string{"--naive"}, args...)...)
	for i, a := range atomic {
		n := naive[i]
		t.Logf("%s: atomic allowed %v (violations %v), naive %v (violations %v, by up to %v), in memory %v",
			a["algo"], a["allowed"], a["violations"], n["allowed"], n["violations"], n["max_excess"], a["memory_allowed"])
		if a["holds"] != true || a["violations"] != 0.0 {
			t.Errorf("%s: the atomic store broke its bound %q: %v violations", a["algo"], a["bound"], a["violations"])
		}
		if n["holds"] != false || n["violations"].(float64) == 0 {
			t.Errorf("%s: the naive store kept its bound %q: the race did not show", n["algo"], n["bound"])
		}
		if n["allowed"].(float64) <= a["allowed"].(float64) {
			t.Errorf("%s: the naive store allowed %v, the atomic one %v: want more", n["algo"], n["allowed"], a["allowed"])
		}
	}
}

// scratchServer starts a redis-server of the test's own on a free
// loopback port, for tests that stop it or starve it of memory, and
// returns its address and the process. The test's cleanup stops it.
func scratchServer(t *testing.T, args ...string) (string, *os.Process) {
	t.Helper()
	storeURL(t, "RATESIM_REDIS_ADDR") // the Redis tests are on
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server not on PATH")
		}
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	})
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	for i := 0; ; i++ {
		if err := c.Ping(context.Background()).Err(); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			break
		}
		if i == 100 {
			t.Fatalf("redis-server on %s did not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, cmd.Process
}

// waitForKeys waits until the server at addr holds a key: the replay has
// begun.
func waitForKeys(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	for i := 0; ; i++ {
		if n, _ := c.DBSize(context.Background()).Result(); n > 0 {
			return
		}
		if i == 500 {
			t.Fatal("the replay wrote no key")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var stoppedRE = regexp.MustCompile(`(\d+) requests? decided and written in trace order, stopped at (\S+):(\d+) \(request (\d+)\)`)

// TestReplayServerKilled: the server dies in the middle of a replay. The
// replay exits with status 1, says how many requests were decided and
// where it stopped, and has written exactly those, in trace order, as
// the in-memory replay decides them.
func TestReplayServerKilled(t *testing.T) {
	addr, proc := scratchServer(t)
	trace := genTrace(t, "--pattern", "steady", "--users", "500", "--requests", "200000", "--seed", "2", "--unit", "ms")
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	done := make(chan result)
	go func() {
		var out, errb strings.Builder
		code := Main("test", append([]string{"replay", "--store", "redis://" + addr + "/0", "--algos", "token-bucket", "--workers", "4", "--pipeline", "2", "-o", "csv", trace}, storePolicy...), strings.NewReader(""), &out, &errb)
		done <- result{out.String(), errb.String(), code}
	}()
	waitForKeys(t, c)
	time.Sleep(100 * time.Millisecond)
	proc.Kill()
	got := <-done
	if got.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", got.code, got.stderr)
	}
	m := stoppedRE.FindStringSubmatch(got.stderr)
	if m == nil {
		t.Fatalf("stderr does not say where the replay stopped:\n%s", got.stderr)
	}
	decided, _ := strconv.Atoi(m[1])
	line, _ := strconv.Atoi(m[3])
	if decided == 0 || decided >= 200000 || m[2] != trace || line != decided+2 {
		t.Errorf("decided %d, stopped at %s:%d: want a line past the header and the rows decided", decided, m[2], line)
	}
	rows := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
	if len(rows)-1 != decided {
		t.Errorf("%d rows written, the message says %d", len(rows)-1, decided)
	}
	want := ratesim(t, "", append([]string{"run", "--algo", "token-bucket", "-o", "csv", trace}, storePolicy...)...)
	if !strings.HasPrefix(want.stdout, got.stdout) {
		t.Errorf("the rows written are not the first %d of the in-memory replay, in order", decided)
	}
	t.Logf("%s", strings.TrimSpace(got.stderr))
}

// TestReplayScriptFlush: SCRIPT FLUSH, again and again during a replay,
// changes no decision: the store loads its scripts again.
func TestReplayScriptFlush(t *testing.T) {
	addr, _ := scratchServer(t)
	trace := genTrace(t, "--pattern", "bursty", "--users", "300", "--requests", strconv.Itoa(60000/replayScale), "--seed", "4", "--unit", "ms")
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	stop := make(chan struct{})
	flushed := make(chan int)
	go func() {
		waitForKeys(t, c)
		n := 0
		for {
			select {
			case <-stop:
				flushed <- n
				return
			case <-time.After(20 * time.Millisecond):
				if c.ScriptFlush(context.Background()).Err() == nil {
					n++
				}
			}
		}
	}()
	rows := replaySummary(t, append([]string{"--store", "redis://" + addr + "/0", "--algos", "sliding-log,token-bucket,sliding-buckets", "--workers", "4", "--pipeline", "16", "--verify", trace}, storePolicy...)...)
	close(stop)
	n := <-flushed
	if n == 0 {
		t.Fatal("no SCRIPT FLUSH happened during the replay")
	}
	for _, row := range rows {
		if row["differ"] != 0.0 {
			t.Errorf("%v: %v decisions differ after %d SCRIPT FLUSH", row["algo"], row["differ"], n)
		}
	}
	t.Logf("%d SCRIPT FLUSH during the replay", n)
}

// TestReplayUnreachable: a store that does not answer fails the replay
// within --connect-timeout, naming its address. It needs no server.
func TestReplayUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// A listener that never answers: connecting succeeds, PING does not.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	for _, addr := range []string{closed, mute.Addr().String()} {
		began := time.Now()
		r := ratesim(t, "", "replay", "--store", "redis://"+addr+"/0", "--connect-timeout", "300ms", "traces/examples/boundary.csv")
		took := time.Since(began)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach redis at "+addr) || !strings.Contains(r.stderr, "300ms") {
			t.Errorf("%s: exit %d, stderr %q", addr, r.code, r.stderr)
		}
		if took > 2*time.Second {
			t.Errorf("%s: failed after %v, the timeout is 300ms", addr, took)
		}
	}
}

// TestReplayOutOfMemory: a server at its maxmemory refuses the scripts'
// writes with OOM. --on-failure decides: error stops the replay, naming
// OOM; open allows and closed refuses what the store could not decide,
// and the report counts them.
func TestReplayOutOfMemory(t *testing.T) {
	addr, _ := scratchServer(t)
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	ctx := context.Background()
	used, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`used_memory:(\d+)`).FindStringSubmatch(used)
	base, _ := strconv.Atoi(m[1])
	if err := c.ConfigSet(ctx, "maxmemory", strconv.Itoa(base+512<<10)).Err(); err != nil {
		t.Fatal(err)
	}
	trace := genTrace(t, "--pattern", "steady", "--users", "20000", "--requests", "40000", "--seed", "3", "--unit", "ms", "--uniform")
	store := "redis://" + addr + "/0"
	args := append([]string{"--store", store, "--algos", "sliding-log", "--workers", "2", trace}, storePolicy...)

	r := ratesim(t, "", append([]string{"replay", "-o", "csv"}, args...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "OOM") || !stoppedRE.MatchString(r.stderr) {
		t.Errorf("--on-failure error: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, policy := range []string{"open", "closed"} {
		rows := replaySummary(t, append([]string{"--on-failure", policy}, args...)...)
		row := rows[0]
		if row["failure_decisions"].(float64) == 0 {
			t.Errorf("--on-failure %s: no decision made by the failure policy", policy)
		}
		t.Logf("--on-failure %s: allowed %v, %v decided by the policy", policy, row["allowed"], row["failure_decisions"])
	}
	closed := ratesim(t, "", append([]string{"replay", "--on-failure", "closed", "-o", "csv"}, args...)...)
	if closed.code != 0 || !strings.Contains(closed.stdout, ",store unavailable\n") {
		t.Errorf("--on-failure closed: exit %d, no row refused with reason store unavailable; stderr %s", closed.code, closed.stderr)
	}
}

// TestReplayCleanUp: the run's keys are gone at the end, unless
// --keep-state, which leaves them under --prefix.
func TestReplayCleanUp(t *testing.T) {
	store := storeURL(t, "RATESIM_REDIS_ADDR")
	addr, _ := redisstore.ParseURL(store)
	c, _ := addr.NewClient(time.Second)
	defer c.Close()
	ctx := context.Background()
	prefix := fmt.Sprintf("ratesim:test:%d:", time.Now().UnixNano())
	count := func() int {
		keys, err := c.Keys(ctx, prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	for _, keep := range []bool{false, true} {
		args := []string{"replay", "--store", store, "--prefix", prefix, "--algos", "sliding-log,token-bucket", "traces/examples/boundary.csv"}
		if keep {
			args = append(args, "--keep-state")
		}
		if r := ratesim(t, "", args...); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if n := count(); (n > 0) != keep {
			t.Errorf("--keep-state %v: %d keys left under %s", keep, n, prefix)
		}
	}
	c.Del(ctx, must(c.Keys(ctx, prefix+"*").Result())...)
}

func must[T any](v T, _ error) T { return v }

// TestReplayUnixSocket: a server on a Unix socket, with a database other
// than 0, decides as one over TCP.
func TestReplayUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "redis.sock")
	scratchServer(t, "--unixsocket", sock, "--unixsocketperm", "700")
	want := ratesim(t, "", "compare", "-o", "csv", "traces/examples/boundary.csv")
	got := ratesim(t, "", "replay", "--store", "unix://"+sock+"?db=3", "-o", "csv", "traces/examples/boundary.csv")
	if got.code != 0 || got.stdout != want.stdout {
		t.Errorf("exit %d, stderr %s\n%s", got.code, got.stderr, cmp.Diff(want.stdout, got.stdout))
	}
}

// TestReplayClusterDown: a Redis Cluster one of whose three masters has
// stopped, and which the others have marked down: its keys answer
// CLUSTERDOWN, or are tables.Unreachable. --on-failure closed refuses every
// request, the summary counts them, and the replay succeeds; --on-failure
// error stops at the first request, naming CLUSTERDOWN or the stopped
// master.
func TestReplayClusterDown(t *testing.T) {
	cl := redistest.StartCluster(t, 3, "--cluster-node-timeout", "500", "--cluster-require-full-coverage", "yes")
	cl.Stop(2)
	cl.WaitState(cl.Addrs[0], "fail", 10*time.Second)
	cl.WaitState(cl.Addrs[1], "fail", 10*time.Second)
	store := "redis+cluster://" + cl.Addrs[0] + "," + cl.Addrs[1]
	trace := genTrace(t, "--pattern", "steady", "--users", "50", "--requests", "2000", "--seed", "6", "--unit", "ms")
	args := append([]string{"--store", store, "--algos", "token-bucket,sliding-log", "--workers", "2", "--connect-timeout", "500ms", trace}, storePolicy...)

	began := time.Now()
	rows := replaySummary(t, append([]string{"--on-failure", "closed"}, args...)...)
	for _, row := range rows {
		if row["allowed"] != 0.0 || row["failure_decisions"] != 2000.0 {
			t.Errorf("%v: allowed %v, failure decisions %v: want 0 and every decision of its limiter", row["algo"], row["allowed"], row["failure_decisions"])
		}
	}
	r := ratesim(t, "", append([]string{"replay", "--on-failure", "closed", "--summary"}, args...)...)
	t.Logf("--on-failure closed: exit %d\n%s%s", r.code, r.stdout, r.stderr)

	r = ratesim(t, "", append([]string{"replay", "-o", "csv"}, args...)...)
	if r.code != 1 || !stoppedRE.MatchString(r.stderr) || !strings.Contains(r.stderr, "CLUSTERDOWN") && !strings.Contains(r.stderr, cl.Addrs[2]) {
		t.Errorf("--on-failure error: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Logf("--on-failure error: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the replays of a cluster down took %v", took)
	}
}
