package cmd

import (
	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/render"

	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/keyhash"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/sim"
)

const replayLong = `Replay a trace through limiters kept in Redis, as several instances of a
service sharing one limit would: --workers clients, each with its own
connection, send the requests, a pipeline of --pipeline requests per round
trip, and each limiter's Lua script decides atomically in Redis.

--route key sends all of a key's requests to one worker, in trace order: the
store then decides exactly as the in-memory replay does (--verify lists every
decision that differs; none should). --route spread deals the requests out
round-robin, so a key's requests race between workers, as they do behind a
load balancer: decisions then depend on timing, and only the bounds every
algorithm promises must hold. The summary checks them for every limiter and
key: a window algorithm allows at most its most-in-an-interval (the limit, for
the sliding log) in any window; a bucket at most capacity + rate x elapsed.

--naive decides the same algorithms the wrong way, GET, decide in ratesim,
SET, in separate round trips: with --route spread the race lets more through,
and the summary says how much more than the in-memory replay and which bound
broke.

The output is a row per request in trace order, as run (one limiter) or
compare (several) print it, or with --verify the decisions that differ, or
with --summary the summary alone: per limiter the requests, allowed,
rejected, what the in-memory replay allowed, and the bound's check; and the
store's round trips, throughput and the latency of its calls (wall-clock
time, measured for this report only). A run's keys are removed at the end
unless --keep-state; they live under --prefix (default: a new one per run).

A store that cannot answer (down, out of memory) stops the replay with the
requests decided so far written, in trace order, unless --on-failure open or
closed decides for it.`

const replayExample = `  ratesim replay --store redis://127.0.0.1:6379/0 --algos token-bucket --rate 1/1s trace.csv
  ratesim replay --store redis://127.0.0.1:6379/0 --workers 8 --route key --verify --summary trace.csv
  ratesim replay --store redis://127.0.0.1:6379/0 --workers 8 --route spread --naive --summary bursty.csv
  ratesim replay --store redis+cluster://10.0.0.1:7000,10.0.0.2:7000 --algos all --summary trace.csv`

// replayStoreExitStatus is the EXIT STATUS of "ratesim replay".
const replayStoreExitStatus = `  0  success
  1  error: the trace could not be read, the store failed (what was decided is written), or --verify differs under --route key
  2  usage error: a bad flag or argument, a bad store URL, a bad parameter
  3  partial: --lenient skipped bad rows (each is reported on standard error)`

// replayOptions are the options of "ratesim replay".
type replayOptions struct {
	trace          traceOptions
	policy         policyOptions
	Algos          []string
	Store          string
	Workers        int
	Route          string
	Pipeline       int
	Naive          bool
	Verify         bool
	Summary        bool
	Prefix         string
	KeepState      bool
	OnFailure      string
	ConnectTimeout time.Duration
	Output         string
}

func newReplayCmd() *cobra.Command {
	o := &replayOptions{}
	c := &cobra.Command{
		Use:               "replay --store URL [--workers N] [--route key|spread] [flags] TRACE|- [TRACE...]",
		Short:             "Replay a trace through limiters kept in Redis",
		Long:              replayLong + policyHelp,
		Example:           replayExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayStoreExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.policy.markSet(c.Flags())
			return runReplay(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Store, "store", "", "where the limiters live: redis://HOST:PORT/DB, redis+cluster://HOST:PORT,HOST:PORT,... or unix:///PATH (required)")
	fs.IntVar(&o.Workers, "workers", 1, "concurrent clients, each with its own connection")
	fs.StringVar(&o.Route, "route", "key", "which worker sends a request: key (a key's requests go to one worker, in trace order) or spread (round-robin: they race)")
	fs.IntVar(&o.Pipeline, "pipeline", 64, "requests per round trip of a worker (the atomic store; --naive makes two round trips per request and limiter)")
	fs.BoolVar(&o.Naive, "naive", false, "decide with GET, decide in ratesim, SET, in separate round trips: the race, to show it")
	fs.BoolVar(&o.Verify, "verify", false, "replay in memory as well and list every decision that differs")
	fs.BoolVar(&o.Summary, "summary", false, "print only the summary: per limiter the counts and the bounds' checks, and the store's figures")
	fs.StringVar(&o.Prefix, "prefix", "", "prefix of the run's Redis keys (default: ratesim:replay:RANDOM:, new for each run)")
	fs.BoolVar(&o.KeepState, "keep-state", false, "leave the run's keys in Redis at the end instead of removing them")
	fs.StringVar(&o.OnFailure, "on-failure", "error", "when the store cannot decide a request: error (stop), open (allow it) or closed (refuse it)")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 2*time.Second, "how long to wait for the store to answer when connecting")
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to replay, comma-separated, or all (default: the five classic algorithms)")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// maxWorkers bounds --workers: each is a connection.
const maxWorkers = 1024

// replayMargin keeps a replay's keys in Redis this much past their fresh
// time: the replay's trace time may run slower than the server's clock,
// and a key expired before its trace time says it is fresh would change a
// decision. A margin changes none (redisstore.Options.ExpiryMargin), and
// the run removes its keys at the end.
const replayMargin = time.Hour

// storeRun is the state of one replay through a store.
type storeRun struct {
	o       *replayOptions
	rp      *replay
	addr    redisstore.Address
	prefix  string
	lanes   []sim.Lane
	nlanes  int
	workers []*storeWorker
	failure redisstore.Failure

	// The windows: filled by emit, decided by the workers, written in
	// trace order by the writer.
	free     chan *window
	inflight chan *window
	cur      *window
	seq      int64        // requests dispatched so far
	winSeq   int64        // windows dispatched so far
	stopSeq  atomic.Int64 // the first window a worker failed in
	firstErr atomic.Pointer[error]
	stopped  atomic.Bool // the writer stopped: emit stops the replay

	// Written by the writer only.
	out      *storeOutput
	written  int64
	stopErr  error
	started  time.Time
	finished time.Time
}

// window is a run of consecutive requests of the trace, decided by the
// workers together and written once all are decided.
type window struct {
	seq   int64
	reqs  []windowReq
	text  []byte              // the requests' user, key and time texts
	dec   []limiters.Decision // the store's, nlanes per request
	mem   []limiters.Decision // with --verify, the in-memory replay's
	parts [][]int32           // per worker, its requests
	fail  []int               // per worker, the first request it did not decide, or -1
	errs  []error             // per worker, why
	done  sync.WaitGroup
}

// windowReq is one request of a window; its texts are in window.text.
type windowReq struct {
	user, key, time textSpan
	now, cost       int64
	line            int
}

type textSpan struct{ off, end uint32 }

func (w *window) str(s textSpan) []byte { return w.text[s.off:s.end] }

func (w *window) add(b []byte) textSpan {
	off := uint32(len(w.text))
	w.text = append(w.text, b...)
	return textSpan{off, uint32(len(w.text))}
}

// reset empties the window for reuse.
func (w *window) reset() {
	w.reqs, w.text, w.dec, w.mem = w.reqs[:0], w.text[:0], w.dec[:0], w.mem[:0]
	for i := range w.parts {
		w.parts[i] = w.parts[i][:0]
		w.fail[i], w.errs[i] = -1, nil
	}
}

// storeWorker is one client of the store: an application instance.
type storeWorker struct {
	id     int
	client redis.UniversalClient
	store  *redisstore.Store
	naive  []*redisstore.Naive
	trips  tripCounter
	lat    latencies
	calls  int64
	jobs   chan *window
	reqs   []redisstore.Request
	out    []limiters.Decision
}

func runReplay(o *replayOptions, s streams) error {
	if o.Store == "" {
		return usageErrorf("replay needs --store URL: redis://HOST:PORT/DB, redis+cluster://HOST:PORT,... or unix:///PATH")
	}
	addr, err := redisstore.ParseURL(o.Store)
	if err != nil {
		return usageErrorf("--store: %s", ErrorText(err))
	}
	if o.Workers < 1 || o.Workers > maxWorkers {
		return usageErrorf("--workers must be from 1 to %d, got %d", maxWorkers, o.Workers)
	}
	if o.Pipeline < 1 || o.Pipeline > 1<<16 {
		return usageErrorf("--pipeline must be from 1 to 65536, got %d", o.Pipeline)
	}
	if _, err := choose("--route", o.Route, routeChoices); err != nil {
		return err
	}
	f, err := choose("--on-failure", o.OnFailure, failureChoices)
	if err != nil {
		return err
	}
	failure := []redisstore.Failure{redisstore.FailError, redisstore.FailOpen, redisstore.FailClosed}[f]
	if o.Naive && failure != redisstore.FailError {
		return usageErrorf("--on-failure %s applies to the atomic store: --naive stops at the first error", o.OnFailure)
	}
	if o.ConnectTimeout <= 0 {
		return usageErrorf("--connect-timeout must be positive, got %s", o.ConnectTimeout)
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return usageErrorf("--prefix %q holds a brace: Redis Cluster reads braces as the key's hash tag", o.Prefix)
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	algos, specs, err := o.policy.lanesGiven(o.Algos)
	if err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, "", s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()

	// go-redis logs each refused dial on its own; the replay reports the
	// errors that matter, once.
	redis.SetLogger(quietLogger{})
	r := &storeRun{o: o, rp: rp, addr: addr, lanes: rp.spec.Lanes, nlanes: len(rp.spec.Lanes), failure: failure, prefix: o.Prefix}
	if r.prefix == "" {
		var id [6]byte
		_, _ = rand.Read(id[:])
		r.prefix = "ratesim:replay:" + hex.EncodeToString(id[:]) + ":"
	}
	if err := r.connect(); err != nil {
		return err
	}
	defer r.close()
	r.out = newStoreOutput(r, format, s)
	rep, err := r.replay(s)
	if !o.KeepState {
		if cerr := r.cleanUp(); cerr != nil {
			warnf(s.err, "could not remove the run's keys under prefix %s: %s", r.prefix, ErrorText(cerr))
		}
	} else {
		fmt.Fprintf(s.err, "ratesim: the run's state is kept in %s under prefix %s\n", addr, r.prefix)
	}
	if err != nil {
		return err
	}
	if err := r.out.finish(rep); err != nil {
		return err
	}
	if err := rp.trace.finish(); err != nil {
		return err
	}
	if o.Verify && o.Route == "key" && r.out.differ > 0 && r.failureDecisions() == 0 {
		return fmt.Errorf("%s of the store differ from the in-memory replay under --route key", render.Plural(r.out.differ, "decision"))
	}
	return nil
}

// storeLimiters are the store's limiters for the lanes: each named by its
// lane, or by its place when the lane's name is not one Redis keys take.
func storeLimiters(lanes []sim.Lane) []redisstore.Limiter {
	ls := make([]redisstore.Limiter, len(lanes))
	for i, l := range lanes {
		name := l.Name
		if !plainName(name) {
			name = fmt.Sprintf("lane%d", i)
		}
		ls[i] = redisstore.Limiter{Name: name, Algorithm: l.Algorithm, Policy: l.Policy}
	}
	return ls
}

// plainName reports whether name holds only letters, digits and "-_.".
func plainName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return name != ""
}

// connect makes the workers' stores, refusing a policy the store cannot
// decide exactly as a usage error, then connects each worker's client.
func (r *storeRun) connect() error {
	var epoch int64
	if first := r.rp.trace.first; first != nil && r.rp.trace.err == nil {
		epoch = first.Time // the scripts count from the trace's start
	}
	opts := redisstore.Options{Prefix: r.prefix, Epoch: epoch, Failure: r.failure, ExpiryMargin: replayMargin}
	ls := storeLimiters(r.lanes)
	for i := range r.o.Workers {
		w := &storeWorker{id: i, jobs: make(chan *window, 4)}
		r.workers = append(r.workers, w)
		w.client = r.addr.NewClient(r.o.ConnectTimeout)
		var err error
		if w.store, err = redisstore.New(w.client, ls, opts); err != nil {
			return usageErrorf("%s", ErrorText(err))
		}
		if r.o.Naive {
			for _, l := range ls {
				n, err := redisstore.NewNaive(w.client, l, opts)
				if err != nil {
					return usageErrorf("%s", ErrorText(err))
				}
				w.naive = append(w.naive, n)
			}
		}
	}
	for _, w := range r.workers {
		ctx, cancel := context.WithTimeout(context.Background(), r.o.ConnectTimeout)
		err := w.client.Ping(ctx).Err()
		cancel()
		if err != nil {
			return fmt.Errorf("cannot reach redis at %s (%s) within %s: %w", strings.Join(r.addr.Addrs, ","), r.addr, r.o.ConnectTimeout, err)
		}
		w.client.AddHook(&w.trips)
	}
	return nil
}

func (r *storeRun) close() {
	for _, w := range r.workers {
		w.client.Close()
	}
}

// windowSize is how many requests a window holds. With --route key,
// enough for every worker's pipeline several times over, so that workers
// seldom wait for each other at the end of a window. With spread, one
// pipeline per worker: a worker runs at most windowsInFlight windows
// ahead of another, so a key's requests overtake each other only among
// those sent at about the same moment, as behind a load balancer, not
// across the seconds of trace time a large window spans when the replay
// runs faster than the trace.
func (r *storeRun) windowSize() int {
	if r.o.Route == "spread" {
		if r.o.Naive {
			return r.o.Workers // it sends one request at a time
		}
		return min(r.o.Workers*r.o.Pipeline, 1<<16)
	}
	return min(max(r.o.Workers*r.o.Pipeline*4, 1024), 1<<16)
}

// windowsInFlight is how many windows are being filled, decided or
// written at once.
const windowsInFlight = 3

// replay runs the trace through sim (which reads it, keys its requests
// and, for --verify and the summary, replays it in memory) and through the
// store, and writes the store's decisions in trace order.
func (r *storeRun) replay(s streams) (*sim.Report, error) {
	size := r.windowSize()
	r.free = make(chan *window, windowsInFlight)
	r.inflight = make(chan *window, windowsInFlight)
	for range windowsInFlight {
		w := &window{
			parts: make([][]int32, len(r.workers)),
			fail:  make([]int, len(r.workers)),
			errs:  make([]error, len(r.workers)),
		}
		w.reqs = make([]windowReq, 0, size)
		w.reset()
		r.free <- w
	}
	r.stopSeq.Store(math.MaxInt64)
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Go(func() { r.work(w) })
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		r.write()
	}()
	r.started = time.Now()

	cfg := r.rp.config(true, false)
	cfg.DecisionsOnly = true
	cfg.Detail = r.o.Verify
	errStopped := errors.New("the store stopped the replay")
	emit := func(b *sim.Batch) error {
		for i := range b.Requests {
			if r.cur == nil {
				r.cur = <-r.free
				if r.stopped.Load() {
					r.free <- r.cur
					r.cur = nil
					return errStopped
				}
			}
			r.addRequest(b, i)
			if len(r.cur.reqs) == size {
				r.dispatch()
			}
		}
		return nil
	}
	rep, err := r.rp.run(cfg, s, emit)
	if err == nil && r.cur != nil && len(r.cur.reqs) > 0 {
		r.dispatch()
	}
	close(r.inflight)
	<-writerDone
	for _, w := range r.workers {
		close(w.jobs)
	}
	wg.Wait()
	if r.stopErr != nil {
		return nil, r.stopErr
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// addRequest copies request i of b into the current window and gives it
// to a worker: by its key's hash with --route key, in turn with spread.
func (r *storeRun) addRequest(b *sim.Batch, i int) {
	win := r.cur
	q := &b.Requests[i]
	wr := windowReq{now: q.Time, cost: q.Cost, line: q.Line}
	wr.user, wr.key, wr.time = win.add(q.User), win.add(q.Key), win.add(q.TimeText)
	idx := len(win.reqs)
	win.reqs = append(win.reqs, wr)
	if r.o.Verify {
		for l := range r.nlanes {
			win.mem = append(win.mem, *b.Decision(i, l))
		}
	}
	var w int
	if r.o.Route == "key" {
		w = int(keyhash.Sum(q.Key) % uint64(len(r.workers)))
	} else {
		w = int(r.seq % int64(len(r.workers)))
	}
	r.seq++
	win.parts[w] = append(win.parts[w], int32(idx))
}

// dispatch hands the current window to every worker and to the writer.
func (r *storeRun) dispatch() {
	win := r.cur
	r.cur = nil
	win.seq = r.winSeq
	r.winSeq++
	win.dec = append(win.dec[:0], make([]limiters.Decision, len(win.reqs)*r.nlanes)...)
	win.done.Add(len(r.workers))
	r.inflight <- win
	for _, w := range r.workers {
		w.jobs <- win
	}
}

// work decides, in order, each window's requests given to worker w, a
// pipeline of --pipeline requests at a time (or, --naive, one request and
// limiter at a time). After a failure the worker leaves the later windows
// undecided.
func (r *storeRun) work(w *storeWorker) {
	ctx := context.Background()
	for win := range w.jobs {
		idx := win.parts[w.id]
		if win.seq > r.stopSeq.Load() {
			if len(idx) > 0 {
				win.fail[w.id] = int(idx[0])
			}
			win.done.Done()
			continue
		}
		var failAt int = -1
		var err error
		if r.o.Naive {
			failAt, err = r.decideNaive(ctx, w, win, idx)
		} else {
			failAt, err = r.decide(ctx, w, win, idx)
		}
		if err != nil {
			win.fail[w.id], win.errs[w.id] = failAt, err
			r.firstErr.CompareAndSwap(nil, &err)
			for {
				s := r.stopSeq.Load()
				if win.seq >= s || r.stopSeq.CompareAndSwap(s, win.seq) {
					break
				}
			}
		}
		win.done.Done()
	}
}

// decide sends the requests idx of win in pipelines. It returns the first
// request not decided and why, or -1 and nil.
func (r *storeRun) decide(ctx context.Context, w *storeWorker, win *window, idx []int32) (int, error) {
	n := r.nlanes
	for start := 0; start < len(idx); start += r.o.Pipeline {
		part := idx[start:min(start+r.o.Pipeline, len(idx))]
		w.reqs = w.reqs[:0]
		for _, i := range part {
			q := &win.reqs[i]
			key := string(win.str(q.key))
			for l := range n {
				w.reqs = append(w.reqs, redisstore.Request{Limiter: l, Key: key, Now: q.now, Cost: q.cost})
			}
		}
		if cap(w.out) < len(w.reqs) {
			w.out = make([]limiters.Decision, len(w.reqs))
		}
		out := w.out[:len(w.reqs)]
		began := time.Now()
		err := w.store.AllowBatch(ctx, w.reqs, out)
		w.lat.add(time.Since(began))
		w.calls++
		for j, i := range part {
			copy(win.dec[int(i)*n:int(i+1)*n], out[j*n:(j+1)*n])
		}
		if err != nil {
			// A request the store did not decide has the zero Decision: a
			// decision made always has Allowed or a Reason.
			for j := range out {
				if out[j] == (limiters.Decision{}) {
					return int(part[j/n]), unwrapRequest(err)
				}
			}
			return int(part[0]), unwrapRequest(err)
		}
	}
	return -1, nil
}

// unwrapRequest drops AllowBatch's "request N:", which counts in the
// batch, not in the trace.
func unwrapRequest(err error) error {
	if u := errors.Unwrap(err); u != nil && strings.HasPrefix(err.Error(), "request ") {
		return u
	}
	return err
}

// decideNaive decides the requests idx of win one by one, each limiter by
// GET, decide, SET.
func (r *storeRun) decideNaive(ctx context.Context, w *storeWorker, win *window, idx []int32) (int, error) {
	n := r.nlanes
	for _, i := range idx {
		q := &win.reqs[i]
		key := string(win.str(q.key))
		for l := range n {
			began := time.Now()
			d, err := w.naive[l].Allow(ctx, key, q.now, q.cost)
			w.lat.add(time.Since(began))
			w.calls++
			if err != nil {
				return int(i), err
			}
			win.dec[int(i)*n+l] = d
		}
	}
	return -1, nil
}

// write takes the windows in trace order, waits until each is decided and
// writes its requests; at the first request not decided it stops, and
// tells emit to stop the replay.
func (r *storeRun) write() {
	for win := range r.inflight {
		win.done.Wait()
		if r.stopErr == nil {
			r.writeWindow(win)
		}
		r.finished = time.Now()
		win.reset()
		r.free <- win
	}
}

// writeWindow writes win's requests up to the first not decided.
func (r *storeRun) writeWindow(win *window) {
	stop, who := len(win.reqs), -1
	for w, f := range win.fail {
		if f >= 0 && f < stop {
			stop, who = f, w
		}
	}
	n := r.nlanes
	for i := range stop {
		q := &win.reqs[i]
		var mem []limiters.Decision
		if r.o.Verify {
			mem = win.mem[i*n : (i+1)*n]
		}
		if err := r.out.request(win, q, win.dec[i*n:(i+1)*n], mem); err != nil {
			r.stopErr = err
			r.stopped.Store(true)
			return
		}
		r.written++
	}
	if who < 0 {
		return
	}
	err := win.errs[who]
	if err == nil {
		for _, e := range win.errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err == nil {
		if p := r.firstErr.Load(); p != nil {
			err = *p
		}
	}
	q := &win.reqs[stop]
	r.stopErr = fmt.Errorf("the store failed: %s; %s decided and written in trace order, stopped at %s:%d (request %d)",
		ErrorText(err), render.Plural(r.written, "request"), r.rp.trace.name, q.line, r.written+1)
	r.out.flush()
	r.stopped.Store(true)
}

// failureDecisions is how many decisions --on-failure made.
func (r *storeRun) failureDecisions() int64 {
	var n int64
	for _, w := range r.workers {
		n += w.store.FailureDecisions()
	}
	return n
}

// cleanUp removes the keys under the run's prefix, from every master of a
// cluster, a key at a time (a cluster refuses a command over keys of
// several slots).
func (r *storeRun) cleanUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := r.addr.NewClient(r.o.ConnectTimeout)
	defer c.Close()
	match := globEscape(r.prefix) + "*"
	clean := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		pipe := c.Pipeline()
		for iter.Next(ctx) {
			pipe.Unlink(ctx, iter.Val())
			if pipe.Len() >= 1000 {
				if _, err := pipe.Exec(ctx); err != nil {
					return err
				}
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return clean(ctx, node) })
	}
	return clean(ctx, c)
}

// globEscape escapes the characters SCAN's MATCH pattern reads.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// routeChoices are the choices of --route.
var routeChoices = choice.List{
	{Name: "key", Description: "a key's requests go to one worker, in trace order: decisions equal the in-memory replay's"},
	{Name: "spread", Description: "round-robin: a key's requests race between workers"},
}

// failureChoices are the choices of --on-failure, in the order of
// redisstore.FailError, FailOpen and FailClosed.
var failureChoices = choice.List{
	{Name: "error", Description: "stop the replay at the first request the store cannot decide"},
	{Name: "open", Description: "allow what the store cannot decide"},
	{Name: "closed", Description: "refuse what the store cannot decide"},
}
