package redisstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
)

// redirects counts the replies of a cluster's nodes that send a command
// elsewhere or ask for it again: what the client meets while slots move.
type redirects struct {
	moved, ask, tryAgain, noScript, other atomic.Int64
	mu                                    sync.Mutex
	others                                []string // the first few other errors
}

func (r *redirects) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redirects) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		r.count([]redis.Cmder{cmd})
		return err
	}
}

func (r *redirects) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		r.count(cmds)
		return err
	}
}

func (r *redirects) count(cmds []redis.Cmder) {
	for _, c := range cmds {
		if n := c.Name(); n != "evalsha" && n != "eval" {
			continue // not the store's: ASKING, the connection's set-up
		}
		switch err := c.Err(); {
		case err == nil:
		case strings.HasPrefix(err.Error(), "MOVED "):
			r.moved.Add(1)
		case strings.HasPrefix(err.Error(), "ASK "):
			r.ask.Add(1)
		case strings.HasPrefix(err.Error(), "TRYAGAIN "):
			r.tryAgain.Add(1)
		case strings.HasPrefix(err.Error(), "NOSCRIPT "):
			r.noScript.Add(1) // a master new to the key has not seen the script
		default:
			if r.other.Add(1) <= 3 {
				r.mu.Lock()
				r.others = append(r.others, err.Error())
				r.mu.Unlock()
			}
		}
	}
}

// everyLimiter returns a limiter for every algorithm the store keeps.
func everyLimiter() []Limiter {
	var ls []Limiter
	for _, a := range keptAlgorithms() {
		if Supports(a) {
			ls = append(ls, Limiter{Name: a.String(), Algorithm: a, Policy: policyFor(a)})
		}
	}
	return ls
}

// TestClusterSlotMigration: while four clients decide requests for every
// algorithm over 24 keys, the slots of all those keys move from master to
// master, twice over, a key at a time: the clients meet MOVED, ASK and,
// where a key's states are split between the nodes, TRYAGAIN. Every
// decision still equals limiters.Keyed's, before, during and after the
// moves, so a key's state moved with it and no script ran twice or not at
// all; and the states are on the masters that now serve the slots.
func TestClusterSlotMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	c := NewClient(cl.Addrs, time.Second)
	defer c.Close()
	var seen redirects
	c.(*redis.ClusterClient).OnNewNode(func(n *redis.Client) { n.AddHook(&seen) })
	ls := everyLimiter()
	const epoch = 7_000_000_000
	st, err := New(c, ls, Options{Prefix: testPrefix(t), ExpiryMargin: replayMargin})
	if err != nil {
		t.Fatal(err)
	}

	const workers, keysPer, batch = 4, 6, 8
	node0 := cl.Node(0)
	var keys []string
	slots := map[int64]int{} // slot -> its master's index
	for w := range workers {
		for k := range keysPer {
			key := fmt.Sprintf("w%d.k%d", w, k)
			keys = append(keys, key)
			slot, err := node0.ClusterKeySlot(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			owner, err := cl.Owner(int(slot))
			if err != nil {
				t.Fatal(err)
			}
			slots[slot] = owner
		}
	}

	// The clients: each decides its keys' requests in trace order, a chunk
	// of trace after another, until the moves are done and one more chunk
	// has gone through, checking every decision against limiters.Keyed.
	moved := make(chan struct{})
	started := make(chan struct{}, workers)
	type tally struct{ requests, after, afterRefused int }
	tallies := make([]tally, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			errs[w] = func() error {
				keyed := make([]*limiters.Keyed, len(ls))
				for i, l := range ls {
					keyed[i], _ = limiters.NewKeyed(l.Algorithm, l.Policy)
				}
				base := int64(epoch)
				last := -1 // the chunk after the moves
				for chunk := 0; last < 0 || chunk <= last; chunk++ {
					if last < 0 {
						select {
						case <-moved:
							last = chunk
						default:
						}
					}
					reqs := makeTrace(traceSpec{
						seed: uint64(w*1000 + chunk), requests: 1000, keys: keysPer,
						base: base, span: 1000 / keysPer * 150 * time.Millisecond,
						maxCost: 4, jitter: 3 * time.Millisecond,
					})
					for i := range reqs {
						reqs[i].key = fmt.Sprintf("w%d.%s", w, reqs[i].key)
						base = max(base, reqs[i].now) + int64(10*time.Millisecond)
					}
					for start := 0; start < len(reqs); start += batch {
						part := reqs[start:min(start+batch, len(reqs))]
						var rs []Request
						for _, q := range part {
							for l := range ls {
								rs = append(rs, Request{Limiter: l, Key: q.key, Now: q.now, Cost: q.cost})
							}
						}
						out := make([]limiters.Decision, len(rs))
						if err := st.AllowBatch(ctx, rs, out); err != nil {
							return fmt.Errorf("chunk %d, request %d: %w", chunk, start, err)
						}
						for j, r := range rs {
							want := keyed[r.Limiter].Allow(r.Key, r.Now, r.Cost)
							if out[j] != want {
								return fmt.Errorf("chunk %d, %s at %d cost %d, %s:\n got  %+v\n want %+v", chunk, r.Key, r.Now, r.Cost, ls[r.Limiter].Name, out[j], want)
							}
							if chunk == last {
								tallies[w].after++
								if !want.Allowed {
									tallies[w].afterRefused++
								}
							}
						}
						tallies[w].requests += len(rs)
					}
					if chunk == 0 {
						started <- struct{}{}
					}
				}
				return nil
			}()
			if errs[w] != nil {
				for range workers { // the mover waits for every client
					select {
					case started <- struct{}{}:
					default:
					}
				}
			}
		})
	}

	// The moves, once every client is under way: each slot in use to the
	// next master, twice over.
	for range workers {
		<-started
	}
	sorted := make([]int64, 0, len(slots))
	for s := range slots {
		sorted = append(sorted, s)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	began := time.Now()
	var moveErr error
	for round := 0; round < 2 && moveErr == nil; round++ {
		for _, s := range sorted {
			to := (slots[s] + 1) % len(cl.Addrs)
			if moveErr = cl.MoveSlot(ctx, int(s), slots[s], to); moveErr != nil {
				break
			}
			slots[s] = to
		}
	}
	took := time.Since(began)
	close(moved)
	wg.Wait()
	if moveErr != nil {
		t.Fatal(moveErr)
	}
	for w, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", w, err)
		}
	}
	if t.Failed() {
		return
	}

	// The states are where the slots are now, and nowhere else.
	for _, key := range keys {
		slot, _ := node0.ClusterKeySlot(ctx, key).Result()
		state := st.Keys(key)[limiters.TokenBucket]
		for i := range cl.Addrs {
			n, err := cl.Node(i).Exists(ctx, state).Result()
			if err != nil && i == slots[slot] {
				t.Errorf("%s on its master %s: %v", state, cl.Addrs[i], err)
			}
			if (n == 1) != (i == slots[slot]) {
				t.Errorf("%s: on %s %d, its slot %d is on %s", state, cl.Addrs[i], n, slot, cl.Addrs[slots[slot]])
			}
		}
	}
	var total tally
	for _, x := range tallies {
		total.requests += x.requests
		total.after += x.after
		total.afterRefused += x.afterRefused
	}
	t.Logf("%d slots moved twice in %v; %d decisions over %d keys and %d limiters, 0 differ, %d of them after the moves (%d refused); nodes replied MOVED %d, ASK %d, TRYAGAIN %d, NOSCRIPT %d, other errors %d",
		len(sorted), took.Round(time.Millisecond), total.requests, len(keys), len(ls), total.after, total.afterRefused,
		seen.moved.Load(), seen.ask.Load(), seen.tryAgain.Load(), seen.noScript.Load(), seen.other.Load())
	if seen.moved.Load()+seen.ask.Load() == 0 {
		t.Error("no MOVED or ASK reply: the clients did not meet the moves")
	}
	if n := seen.other.Load(); n > 0 {
		t.Errorf("%d replies were errors other than MOVED, ASK, TRYAGAIN and NOSCRIPT: %q", n, seen.others)
	}
}

// TestClusterDown: one master of three stops; once the others mark it
// failed, its slots are served by no one and, as a cluster requires all
// its slots covered by default, they answer CLUSTERDOWN to every key.
// FailError returns an error that says so (or, for a key of the stopped
// master, that it cannot be reached); FailOpen and FailClosed decide, in
// a moment, and count.
func TestClusterDown(t *testing.T) {
	cl := redistest.StartCluster(t, 3, "--cluster-node-timeout", "500", "--cluster-require-full-coverage", "yes")
	ctx := context.Background()
	node0 := cl.Node(0)
	// A key served by a master that stays, and one of the master that stops.
	var live, dead string
	for i := 0; live == "" || dead == ""; i++ {
		key := fmt.Sprintf("k%d", i)
		slot, err := node0.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		owner, err := cl.Owner(int(slot))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case owner == 0 && live == "":
			live = key
		case owner == 2 && dead == "":
			dead = key
		}
	}
	c := NewClient(cl.Addrs, 200*time.Millisecond)
	defer c.Close()
	p := policyFor(limiters.TokenBucket)
	var seen []error
	fail := newStore(t, c, limiters.TokenBucket, p, Options{})
	open := newStore(t, c, limiters.TokenBucket, p, Options{Failure: FailOpen, OnFailure: func(err error) { seen = append(seen, err) }})
	closed := newStore(t, c, limiters.TokenBucket, p, Options{Failure: FailClosed})
	for _, st := range []*Store{fail, open, closed} {
		for _, key := range []string{live, dead} {
			if d, err := st.Allow(ctx, key, 0, 1); err != nil || !d.Allowed {
				t.Fatalf("cluster up: %s: %+v %v", key, d, err)
			}
		}
	}

	cl.Stop(2)
	began := time.Now()
	cl.WaitState(cl.Addrs[0], "fail", 10*time.Second)
	cl.WaitState(cl.Addrs[1], "fail", 10*time.Second)
	t.Logf("cluster_state:fail %v after the master stopped", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	if _, err := fail.Allow(ctx, live, 1, 1); err == nil || !strings.Contains(err.Error(), "CLUSTERDOWN") {
		t.Errorf("FailError, %s on a master that stays: %v, want CLUSTERDOWN", live, err)
	} else {
		t.Logf("FailError, %s on a master that stays: %v", live, err)
	}
	if _, err := fail.Allow(ctx, dead, 1, 1); err == nil {
		t.Errorf("FailError, %s on the stopped master: no error", dead)
	} else {
		t.Logf("FailError, %s on the stopped master: %v", dead, err)
	}
	reqs := []Request{{Key: live, Now: 2, Cost: 1}, {Key: dead, Now: 2, Cost: 1}, {Key: live, Now: 2, Cost: 0}, {Key: live, Now: 3, Cost: 1}}
	out := make([]limiters.Decision, len(reqs))
	for _, st := range []*Store{open, closed} {
		if err := st.AllowBatch(ctx, reqs, out); err != nil {
			t.Errorf("batch: %v", err)
		}
		want := limiters.Decision{Allowed: true}
		if st == closed {
			want = limiters.Decision{Reason: ReasonUnavailable}
		}
		for i, d := range out {
			w := want
			if reqs[i].Cost == 0 {
				w = limiters.Decision{Reason: limiters.ReasonBadCost} // decided without Redis
			}
			if d != w {
				t.Errorf("failure policy %d, request %d: %+v, want %+v", st.opts.Failure, i, d, w)
			}
		}
		if d, err := st.Allow(ctx, live, 4, 1); err != nil || d != want {
			t.Errorf("failure policy %d: %+v %v, want %+v", st.opts.Failure, d, err, want)
		}
		if n := st.FailureDecisions(); n != 4 {
			t.Errorf("failure policy %d: %d failure decisions, want 4", st.opts.Failure, n)
		}
	}
	if n := fail.FailureDecisions(); n != 0 {
		t.Errorf("FailError: %d failure decisions, want 0", n)
	}
	down := 0
	for _, err := range seen {
		if strings.Contains(err.Error(), "CLUSTERDOWN") {
			down++
		}
	}
	if len(seen) != 4 || down != 3 {
		t.Errorf("OnFailure saw %d errors, %d of them CLUSTERDOWN, want 4 and 3: %v", len(seen), down, seen)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the decisions of a cluster down took %v", took)
	}
}
