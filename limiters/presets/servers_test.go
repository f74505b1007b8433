package presets

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The differentials against real servers start their own processes: the
// real nginx, HAProxy and redis-server from the system, each on a free
// loopback port, in the test's own temporary directory, and stop them by
// process when the test ends, failed or not. Outside CI a missing server
// skips the test with one line; under CI=true it fails it, as a skip
// would hide that nothing was compared.

// binary returns the path of the server name, looked for on PATH and then
// at the paths given, and whether it is there. Under CI=true a missing
// one fails the test: a skip would hide that nothing was compared.
func binary(t *testing.T, name string, paths ...string) (string, bool) {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed; under CI=true the differential against the real %s must run", name, name)
	}
	return "", false
}

// A realRun is a differential against a real server in progress: its
// traffic runs in goroutines, in real time, while the others' do (they
// spend their time waiting for the clock), and judge, once the traffic is
// over, compares and reports in a subtest of its own.
type realRun struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []string // what went wrong during the traffic
	judge func(t *testing.T)
	skip  string // why it did not run, outside CI
	// begin is closed once every run's server is up; origin is then the
	// time the traces count from, and abort says a setup failed.
	begin  chan struct{}
	origin time.Time
	abort  bool
}

// wait waits for every run's servers and reports whether to go on.
func (r *realRun) wait() bool {
	<-r.begin
	return !r.abort
}

// at returns the wall-clock time of a trace's time at.
func (r *realRun) at(at int64) time.Time { return r.origin.Add(time.Duration(at)) }

// errorf notes a failure of the traffic, for the run's subtest to report.
func (r *realRun) errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
	}
}

// TestAgainstRealServers runs the differentials against real servers,
// all at once: throttled's Redis store and redis_rate on redis-servers of
// their own, nginx and HAProxy. Each starts its server and its traffic;
// each then judges its run in a subtest named for it.
func TestAgainstRealServers(t *testing.T) {
	runs := []struct {
		name  string
		start func(t *testing.T, r *realRun)
	}{
		{"ThrottledRedis", startThrottledRedis},
		{"RedisRate", startRedisRate},
		{"Nginx", startNginxRun},
		{"HAProxy", startHAProxyRun},
	}
	started := make([]*realRun, len(runs))
	begun := false
	t.Cleanup(func() {
		if !begun { // a setup failed: the traffic waiting for it returns
			for _, r := range started {
				if r != nil {
					r.abort = true
					close(r.begin)
				}
			}
		}
	})
	for i, run := range runs {
		started[i] = &realRun{begin: make(chan struct{})}
		run.start(t, started[i])
	}
	// Every server is up: the traffic starts, on one clock.
	origin := time.Now().Add(time.Second)
	for _, r := range started {
		r.origin = origin
		close(r.begin)
	}
	begun = true
	for i, run := range runs {
		r := started[i]
		t.Run(run.name, func(t *testing.T) {
			if r.skip != "" {
				t.Skip(r.skip)
			}
			r.wg.Wait()
			for _, e := range r.errs {
				t.Error(e)
			}
			if len(r.errs) == 0 && r.judge != nil {
				r.judge(t)
			}
		})
	}
}

// freePorts returns n loopback ports nothing listens on now. A server
// given one may still lose it to another process before it binds it:
// start retries on another.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// A server is a process a test started.
type server struct {
	cmd  *exec.Cmd
	log  string // its standard output and error
	done chan struct{}
	err  error // how it exited, once done is closed
	stop sync.Once
}

// startServer starts path with args in dir, its output to log, and waits
// until ready reports true; the test's cleanup stops it by its PID (TERM,
// then KILL after a few seconds) and waits for it. When the process exits
// before it is ready, startServer returns false, for the caller to try
// another port.
func startServer(t *testing.T, dir, log, path string, args []string, ready func() bool) (*server, bool) {
	t.Helper()
	out, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("starting %s: %v", path, err)
	}
	s := &server{cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		out.Close()
		close(s.done)
	}()
	t.Cleanup(s.kill)
	deadline := time.Now().Add(60 * time.Second) // a loaded machine starts slowly
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return s, false
		default:
		}
		if ready() {
			return s, true
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	t.Fatalf("%s did not become ready in 60 s; its log:\n%s", path, readLog(log))
	return nil, false
}

// kill stops the server's process, by its PID.
func (s *server) kill() {
	s.stop.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// alive fails the test when the server has exited.
func (s *server) alive(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		t.Fatalf("the server exited (%v); its log:\n%s", s.err, readLog(s.log))
	default:
	}
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// listening reports whether something accepts connections on port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// startRedis starts a redis-server of the test's own and returns a
// client of it, or nil when there is none outside CI.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	path, ok := binary(t, "redis-server", "/usr/bin/redis-server")
	if !ok {
		return nil
	}
	dir := t.TempDir()
	for attempt := 0; attempt < 5; attempt++ {
		port := freePorts(t, 1)[0]
		client := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), PoolSize: 64})
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
		_, ok := startServer(t, dir, filepath.Join(dir, fmt.Sprintf("redis-%d.log", attempt)), path, args, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			return client.Ping(ctx).Err() == nil
		})
		if ok {
			t.Cleanup(func() { client.Close() })
			return client
		}
		client.Close()
	}
	t.Fatal("could not start redis-server on a free port")
	return nil
}

// sleepUntil sleeps until the wall clock reads at.
func sleepUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

// proofMu guards the file of RATESIM_PROOF.
var proofMu sync.Mutex

// proof logs a row of the table of what the presets were proven against
// ("preset | against | requests | differing"), and appends it to the file
// RATESIM_PROOF names, if any, for CI to show: go test shows no log of a
// test that passes.
func proof(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv("RATESIM_PROOF")
	if path == "" {
		return
	}
	proofMu.Lock()
	defer proofMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("RATESIM_PROOF: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "| %s |\n", line)
}

// expiresAt returns the last millisecond Redis keeps key in, by its own
// clock: TIME and PTTL in one pipeline; false when it holds no key or no
// expiry.
func expiresAt(ctx context.Context, c *redis.Client, key string) (int64, bool) {
	pipe := c.Pipeline()
	now := pipe.Time(ctx)
	ttl := pipe.PTTL(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, false
	}
	if ttl.Val() <= 0 {
		return 0, false
	}
	return now.Val().UnixMilli() + ttl.Val().Milliseconds(), true
}

// offExpiry waits, before a request at the wall clock, until it is clear
// of the key's expiry: more than 3 ms from both the millisecond the preset
// says the key lives to and the one Redis says, which Redis counts from
// its own time of the write, a round trip or a scheduling delay after the
// time the decision was read at. It reports whether it waited.
func offExpiry(model, real int64, haveModel, haveReal bool) bool {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range []struct {
		at int64
		ok bool
	}{{model, haveModel}, {real, haveReal}} {
		if e.ok {
			lo, hi = min(lo, e.at), max(hi, e.at)
		}
	}
	if lo > hi {
		return false
	}
	if ms := time.Now().UnixMilli(); ms >= lo-3 && ms <= hi+3 {
		sleepUntil(time.UnixMilli(hi + 4))
		return true
	}
	return false
}
