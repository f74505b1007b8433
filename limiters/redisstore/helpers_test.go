package redisstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
)

// serverAddrs returns the addresses in the environment variable env:
// one server's for RATESIM_REDIS_ADDR, a cluster's nodes for
// RATESIM_REDIS_CLUSTER (redistest.Env: skipped without them, failed
// under CI=true).
func serverAddrs(t testing.TB, env string) []string {
	t.Helper()
	return strings.Split(redistest.Env(t, env), ",")
}

// testClient connects to the server of RATESIM_REDIS_ADDR.
func testClient(t testing.TB) redis.UniversalClient {
	t.Helper()
	return connect(t, serverAddrs(t, "RATESIM_REDIS_ADDR"))
}

func connect(t testing.TB, addrs []string) redis.UniversalClient {
	t.Helper()
	c, err := Connect(context.Background(), addrs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var prefixes atomic.Int64

// testPrefix returns a key prefix no other test run uses.
func testPrefix(t testing.TB) string {
	return fmt.Sprintf("rstest:%s:%x:%d:", strings.ReplaceAll(t.Name(), "/", "."), rand.Uint64(), prefixes.Add(1))
}

// replayMargin is the expiry margin of the replays here. Their trace time
// runs faster than the wall clock, but a pause of the test (a collection,
// the scheduler, -race) could let a key with a few ms to go expire first;
// a margin changes no decision (Options.ExpiryMargin).
const replayMargin = time.Minute

// A traceSpec describes a random trace: requests over keys, at times
// base + up to span, with random costs and steps back in time.
type traceSpec struct {
	seed     uint64
	requests int
	keys     int
	base     int64 // ns
	span     time.Duration
	maxCost  int64 // costs are 1..maxCost mostly, a few above or 0
	jitter   time.Duration
}

type request struct {
	key       string
	now, cost int64
}

// makeTrace returns the trace. Times rise in random steps, in bursts and
// lulls. Of the requests, 3% come up to jitter earlier than the clock, 3%
// repeat the key of the request before at up to jitter before its time,
// and 3% repeat it at the same time. The second request goes back the
// full jitter, so that limiters.Keyed, which forgets idle keys judging
// them at the latest time less the furthest step back so far, judges
// every later step back as if it forgot nothing.
func makeTrace(s traceSpec) []request {
	rng := rand.New(rand.NewPCG(s.seed, 0x5eed))
	reqs := make([]request, s.requests)
	step := int64(s.span) / int64(s.requests)
	now := s.base
	for i := range reqs {
		switch rng.IntN(10) {
		case 0:
			now += rng.Int64N(20*step + 1) // a lull
		case 1, 2, 3:
			// a burst: no time passes
		default:
			now += rng.Int64N(2*step + 1)
		}
		q := request{key: fmt.Sprintf("k%d", rng.IntN(s.keys)), now: now, cost: 1}
		if j := int64(s.jitter); j > 0 && i > 0 {
			switch r := rng.IntN(100); {
			case r < 3:
				q.now -= rng.Int64N(j + 1)
			case r < 6:
				q.key, q.now = reqs[i-1].key, max(reqs[i-1].now-rng.Int64N(j+1), now-j)
			case r < 9:
				q.key, q.now = reqs[i-1].key, reqs[i-1].now
			}
		}
		switch r := rng.IntN(100); {
		case r < 1:
			q.cost = 0
		case r < 4:
			q.cost = s.maxCost + 1 + rng.Int64N(3)
		case r < 30:
			q.cost = 1 + rng.Int64N(s.maxCost)
		}
		if i == 1 && s.jitter > 0 {
			q.key, q.now = reqs[0].key, reqs[0].now-int64(s.jitter)
		}
		reqs[i] = q
	}
	return reqs
}

// compareKeyed replays reqs through st (its limiter 0, batch requests per
// pipeline) and through limiters.Keyed, and reports every decision that
// differs in any field. The store gets the requests from four goroutines,
// each with a quarter of the keys, in trace order.
func compareKeyed(t *testing.T, st *Store, a limiters.Algorithm, p limiters.Policy, reqs []request, batch int) {
	t.Helper()
	k, err := limiters.NewKeyed(a, p)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]limiters.Decision, len(reqs))
	allowed := 0
	for i, q := range reqs {
		want[i] = k.Allow(q.key, q.now, q.cost)
		if want[i].Allowed {
			allowed++
		}
	}
	const workers = 4
	var parts [workers][]int
	for i, q := range reqs {
		w := keyhash(q.key) % workers
		parts[w] = append(parts[w], i)
	}
	got := make([]limiters.Decision, len(reqs))
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range parts {
		wg.Go(func() {
			rs := make([]Request, 0, batch)
			out := make([]limiters.Decision, batch)
			idx := parts[w]
			for start := 0; start < len(idx); start += batch {
				end := min(start+batch, len(idx))
				rs = rs[:0]
				for _, i := range idx[start:end] {
					q := reqs[i]
					rs = append(rs, Request{Key: q.key, Now: q.now, Cost: q.cost})
				}
				if err := st.AllowBatch(context.Background(), rs, out); err != nil {
					errs[w] = err
					return
				}
				for j, i := range idx[start:end] {
					got[i] = out[j]
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	bad := 0
	for i, q := range reqs {
		if got[i] != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("request %d (%s at %d cost %d):\n got  %+v\n want %+v", i, q.key, q.now, q.cost, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d decisions differ", bad, len(reqs))
	}
	if allowed == 0 || allowed == len(reqs) {
		t.Errorf("%d of %d allowed: the trace does not test the limit", allowed, len(reqs))
	}
	t.Logf("%d requests over %d keys, %d allowed, %d differ", len(reqs), countKeys(reqs), allowed, bad)
}

func keyhash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func countKeys(reqs []request) int {
	seen := map[string]bool{}
	for _, q := range reqs {
		seen[q.key] = true
	}
	return len(seen)
}

// scratchServer starts a redis-server of the test's own on a free
// loopback port, for tests that stop it or starve it of memory, and
// returns its address and a function that stops it. The test's cleanup
// stops it too.
func scratchServer(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	serverAddrs(t, "RATESIM_REDIS_ADDR") // the Redis tests are on
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
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	c := NewClient([]string{addr}, time.Second)
	defer c.Close()
	for i := 0; ; i++ {
		if err := c.Ping(context.Background()).Err(); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return addr, stop
		}
		if i == 100 {
			t.Fatalf("redis-server on %s did not answer", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func clientOf(c interface{}) redis.UniversalClient { return c.(redis.UniversalClient) }
