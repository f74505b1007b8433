package storereplay

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...interface{}) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

// trace returns a CSV trace of n requests over users, in ms, and a
// reader of it.
func trace(t *testing.T, n, users int, seed uint64) func() sim.Source {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("user,timestamp,cost\n")
	now := int64(0)
	for range n {
		now += rng.Int64N(3)
		fmt.Fprintf(&b, "u%d,%d,%d\n", rng.IntN(users), now, 1+rng.Int64N(2))
	}
	text := b.String()
	return func() sim.Source {
		r, err := traces.NewReader(strings.NewReader(text), "trace.csv", traces.Options{Unit: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// sink counts the requests it is given.
type sink struct {
	n    int64
	fail int64 // stop with an error after this many, when > 0
}

func (s *sink) Request(q *Request) error {
	s.n++
	if s.fail > 0 && s.n >= s.fail {
		return errors.New("the sink is full")
	}
	return nil
}

func lanes(algos ...limiters.Algorithm) []Lane {
	var ls []Lane
	for _, a := range algos {
		p := limiters.Policy{Limit: 5, Window: 100 * time.Millisecond}
		if !a.Windowed() {
			p = limiters.Policy{Capacity: 5, Rate: limiters.Rate{N: 4, Per: 100 * time.Millisecond}}
		}
		ls = append(ls, Lane{Name: a.String(), Algorithm: a, Policy: p})
	}
	return ls
}

// simCfg is the in-memory replay's configuration: its oracle and burst
// interval, which Replay does not use.
var simCfg = sim.Config{Policy: limiters.Policy{Limit: 5, Window: 100 * time.Millisecond}, Interval: 100 * time.Millisecond}

func config(addr string, ls []Lane) Config {
	return Config{
		Addr: redisstore.Address{Addrs: []string{addr}}, Lanes: ls, Workers: 4, Pipeline: 16,
		ConnectTimeout: time.Second,
	}
}

// TestLatencyAndFailuresPerRequest: a request's latency is counted once
// per request, whatever the pipeline and the lanes (it was counted per
// store call: a pipeline of 16 requests times 3 lanes, once); and each
// lane counts the failure policy's decisions of its own requests (each
// lane's row gave the store-wide total).
func TestLatencyAndFailuresPerRequest(t *testing.T) {
	addr := redistest.Env(t, redistest.EnvAddr)
	ctx := context.Background()
	ls := lanes(limiters.FixedWindow, limiters.SlidingLog, limiters.TokenBucket)
	src := trace(t, 3000, 40, 1)
	r, err := Open(ctx, config(addr, ls))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Replay(ctx, src(), simCfg, &sink{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 3000 || res.Latency.Count() != res.Requests {
		t.Errorf("%d requests, %d latencies counted over %d calls: want one per request", res.Requests, res.Latency.Count(), res.Calls)
	}
	for l, lr := range res.Lanes {
		if lr.Allowed != lr.MemoryAllowed || !lr.Bound.Holds() || lr.FailureDecisions != 0 {
			t.Errorf("%s: %+v", ls[l].Name, lr)
		}
	}

	// A server that has gone: under FailClosed every request of every
	// lane is the policy's, counted once in its own lane.
	gone := startServer(t)
	cfg := config(gone.addr, ls)
	cfg.Failure = redisstore.FailClosed
	r, err = Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gone.stop()
	res, err = r.Replay(ctx, src(), simCfg, &sink{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for l, lr := range res.Lanes {
		if lr.FailureDecisions != 3000 || lr.Allowed != 0 || !lr.Bound.Holds() {
			t.Errorf("%s with the server gone: %d failure decisions, %d allowed, want 3000 and 0", ls[l].Name, lr.FailureDecisions, lr.Allowed)
		}
	}
}

// TestCleanUpRemovesOnlyItsKeys: Close removes the states of the keys
// the run wrote, under its limiters, and nothing else: not the keys of
// another application under the same prefix, not its own keys of users
// the trace did not name. Open refuses the prefix, which holds keys,
// without Resume.
func TestCleanUpRemovesOnlyItsKeys(t *testing.T) {
	addr := redistest.Env(t, redistest.EnvAddr)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	prefix := fmt.Sprintf("rstest:cleanup:%x:", rand.Uint64())
	others := []string{prefix + "session:42", prefix + "{u1}:other-app", prefix + "{u1}:fixed-window", prefix + "x"}
	for _, k := range others {
		c.Set(ctx, k, "another application's", 0)
	}
	defer c.Del(ctx, others...)
	ls := lanes(limiters.FixedWindow, limiters.GCRA)
	cfg := config(addr, ls)
	cfg.Prefix = prefix
	var pu *PrefixInUseError
	if _, err := Open(ctx, cfg); !errors.As(err, &pu) || !strings.HasPrefix(pu.Key, prefix) {
		t.Fatalf("Open of a prefix that holds keys: %v, want a PrefixInUseError", err)
	}
	cfg.Resume = true
	r, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Replay(ctx, trace(t, 2000, 30, 2)(), simCfg, &sink{}); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Keys(ctx, prefix+"*").Result(); len(n) <= len(others) {
		t.Fatalf("the run wrote no key: %v", n)
	}
	cu, err := r.Close()
	if err != nil || !cu.Removed || cu.Keys != 30 {
		t.Fatalf("Close: %+v %v, want the states of 30 keys removed", cu, err)
	}
	left, _ := c.Keys(ctx, prefix+"*").Result()
	if len(left) != len(others) {
		t.Errorf("left %q, want only %q", left, others)
	}
	for _, k := range others {
		if v, err := c.Get(ctx, k).Result(); err != nil || v != "another application's" {
			t.Errorf("%s: %q %v", k, v, err)
		}
	}
}

// TestInterrupted: a replay whose context is cancelled stops, with the
// requests decided until then given to the sink, and a StoppedError
// that says it was interrupted; Close still removes the keys it wrote.
func TestInterrupted(t *testing.T) {
	addr := redistest.Env(t, redistest.EnvAddr)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Open(ctx, config(addr, lanes(limiters.SlidingLog)))
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	go func() {
		for {
			if keys, _ := c.Keys(context.Background(), r.Prefix()+"*").Result(); len(keys) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := r.Replay(ctx, trace(t, 500_000, 1000, 3)(), simCfg, s)
	var se *StoppedError
	if !errors.As(err, &se) || !se.Interrupted || !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay cancelled: %v, want an interrupted StoppedError", err)
	}
	if res.Requests != s.n || res.Requests >= 500_000 || se.Written != res.Requests {
		t.Errorf("%d requests written, the sink got %d, the error says %d", res.Requests, s.n, se.Written)
	}
	if _, err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if keys, _ := c.Keys(context.Background(), r.Prefix()+"*").Result(); len(keys) > 0 {
		t.Errorf("%d keys left after Close", len(keys))
	}
}

type server struct {
	addr string
	stop func()
}

// startServer starts a redis-server of the test's own on a free
// loopback port.
func startServer(t *testing.T) server {
	t.Helper()
	redistest.Env(t, redistest.EnvAddr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) }
	t.Cleanup(stop)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 100 {
			t.Fatal("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return server{addr, stop}
}
