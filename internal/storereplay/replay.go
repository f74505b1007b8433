// Package storereplay replays a trace through limiters kept in Redis, as
// several instances of a service sharing one limit would: workers, each a
// client with its own connection, send the requests in pipelines, and each
// limiter's script decides atomically in Redis. Beside it the trace runs
// through the in-memory limiters (package sim), so that the store's
// decisions can be counted against them, and a checker holds every key
// to its algorithm's tight bound at the times the store judged.
//
// A replay has three stages, a call each: Open connects, refuses a key
// prefix that already holds keys and reads the server's figures; Replay
// runs the trace and hands every decided request, in trace order, to a
// Sink; Close removes the keys the run wrote. The package prints nothing:
// its results are values.
package storereplay

import (
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

	"github.com/ratesim/ratesim/internal/keyhash"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/sim"
)

// A Lane is one limiter of the replay.
type Lane = sim.Lane

// A Route says which worker sends a request.
type Route uint8

const (
	// RouteKey sends all of a key's requests to one worker, in trace
	// order: the store then decides exactly as the in-memory replay does.
	RouteKey Route = iota
	// RouteSpread deals the requests out in turn, so a key's requests race
	// between workers, as they do behind a load balancer.
	RouteSpread
)

func (r Route) String() string {
	if r == RouteSpread {
		return "spread"
	}
	return "key"
}

// Limits of a Config.
const (
	MaxWorkers  = 1024
	MaxPipeline = 1 << 16
)

// ExpiryMargin keeps a replay's keys in Redis this much past their fresh
// time: the replay's trace time may run slower than the server's clock,
// and a key expired before its trace time says it is fresh would change
// a decision. A margin changes none (redisstore.Options.ExpiryMargin).
// Keys kept with KeepState expire on their own that much after they are
// fresh again.
const ExpiryMargin = time.Hour

// Config describes a replay.
type Config struct {
	Addr  redisstore.Address
	Lanes []Lane
	// Workers clients send Pipeline requests per round trip each.
	Workers, Pipeline int
	Route             Route
	// Naive decides by GET, decide in Go, SET (redisstore.Naive): the
	// race, to show it.
	Naive bool
	// Verify keeps the in-memory replay's decisions beside the store's,
	// for the Sink and Result.Differ.
	Verify bool
	// Prefix begins the run's keys; "" means a new random one.
	Prefix string
	// Resume lets the run use a Prefix that already holds keys,
	// continuing from the state under it; without it Open refuses one.
	Resume bool
	// KeepState leaves the run's keys in Redis; Close removes them
	// otherwise.
	KeepState bool
	// Failure is what the atomic store does when Redis cannot decide.
	Failure        redisstore.Failure
	ConnectTimeout time.Duration
}

// A Request is one request of the trace, decided: the Sink gets them in
// trace order. Its slices are valid only during the call.
type Request struct {
	Line            int
	User, Key, Time []byte // the texts the trace wrote
	Now, Cost       int64
	Store           []limiters.Decision // per lane
	Failed          []bool              // per lane: decided by the failure policy
	// Memory holds, with Config.Verify, the in-memory replay's decisions,
	// and MemoryAllowed always whether it allowed the request: per lane.
	Memory        []limiters.Decision
	MemoryAllowed []bool
}

// A Sink takes the decided requests, in trace order.
type Sink interface {
	Request(q *Request) error
}

// A Run is a replay against a store, from Open to Close.
type Run struct {
	cfg     Config
	prefix  string
	nlanes  int
	workers []*worker
	before  []redisstore.ServerStats
	statErr error
	keys    []string // the keys the run wrote, once Replay has run
}

// worker is one client of the store: an application instance.
type worker struct {
	id     int
	client redis.UniversalClient
	store  *redisstore.Store
	naive  []*redisstore.Naive
	trips  tripCounter
	lat    Latencies
	calls  int64
	jobs   chan *window
	reqs   []redisstore.Request
	out    []redisstore.Result
	keys   map[string]struct{} // the keys it sent requests for
}

// A PrefixInUseError is a key prefix that already holds keys, refused
// without Config.Resume: the run would read them as its state, and
// before, remove them.
type PrefixInUseError struct {
	Prefix string
	Key    string // one of them
}

func (e *PrefixInUseError) Error() string {
	return fmt.Sprintf("the prefix %q already holds keys (%q, for one): a run would read them as its limiters' state", e.Prefix, e.Key)
}

// Open checks cfg, makes the workers' stores and connects them, refuses
// a Prefix that already holds keys (unless Resume), and reads the server's
// figures. A policy the store cannot keep is a *redisstore.ParamError, a
// store that does not answer a PING within ConnectTimeout a
// *redisstore.ConnectError.
func Open(ctx context.Context, cfg Config) (*Run, error) {
	switch {
	case cfg.Workers < 1 || cfg.Workers > MaxWorkers:
		return nil, fmt.Errorf("storereplay: %d workers, want 1 to %d", cfg.Workers, MaxWorkers)
	case cfg.Pipeline < 1 || cfg.Pipeline > MaxPipeline:
		return nil, fmt.Errorf("storereplay: pipeline of %d, want 1 to %d", cfg.Pipeline, MaxPipeline)
	case len(cfg.Lanes) == 0:
		return nil, errors.New("storereplay: no lanes")
	case cfg.ConnectTimeout <= 0:
		return nil, errors.New("storereplay: no connect timeout")
	}
	r := &Run{cfg: cfg, prefix: cfg.Prefix, nlanes: len(cfg.Lanes)}
	if r.prefix == "" {
		var id [6]byte
		_, _ = rand.Read(id[:])
		r.prefix = "ratesim:replay:" + hex.EncodeToString(id[:]) + ":"
	}
	opts := redisstore.Options{Prefix: r.prefix, Failure: cfg.Failure, ExpiryMargin: ExpiryMargin}
	ls := storeLimiters(cfg.Lanes)
	for i := range cfg.Workers {
		w := &worker{id: i, jobs: make(chan *window, 4), keys: map[string]struct{}{}}
		var err error
		if w.client, err = cfg.Addr.NewClient(cfg.ConnectTimeout); err != nil {
			r.closeClients()
			return nil, err
		}
		r.workers = append(r.workers, w)
		if w.store, err = redisstore.New(w.client, ls, opts); err != nil {
			r.closeClients()
			return nil, err
		}
		if cfg.Naive {
			for _, l := range ls {
				n, err := redisstore.NewNaive(w.client, l, opts)
				if err != nil {
					r.closeClients()
					return nil, err
				}
				w.naive = append(w.naive, n)
			}
		}
	}
	for _, w := range r.workers {
		ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
		err := w.client.Ping(ctx).Err()
		cancel()
		if err != nil {
			r.closeClients()
			return nil, &redisstore.ConnectError{Addr: cfg.Addr, Err: err}
		}
		w.client.AddHook(&w.trips)
	}
	if cfg.Prefix != "" && !cfg.Resume {
		// A prefix of one's own may hold other applications' keys, or an
		// earlier run's: look for one. (A random one holds none.)
		key, err := firstKey(ctx, r.workers[0].client, r.prefix)
		if err != nil {
			r.closeClients()
			return nil, fmt.Errorf("storereplay: looking for keys under the prefix %q: %w", r.prefix, err)
		}
		if key != "" {
			r.closeClients()
			return nil, &PrefixInUseError{Prefix: r.prefix, Key: key}
		}
	}
	r.before, r.statErr = redisstore.Stats(ctx, r.workers[0].client)
	return r, nil
}

// Prefix returns the run's key prefix.
func (r *Run) Prefix() string { return r.prefix }

// Before returns the server's figures read by Open, and the error that
// kept them from being read (an ACL user without +info), if any.
func (r *Run) Before() ([]redisstore.ServerStats, error) { return r.before, r.statErr }

// storeLimiters are the store's limiters for the lanes: each named by its
// lane, or by its place when the lane's name is not one Redis keys take.
func storeLimiters(lanes []Lane) []redisstore.Limiter {
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

func (r *Run) closeClients() {
	for _, w := range r.workers {
		w.client.Close()
	}
	r.workers = nil
}

// Result is what a replay found. When the replay stopped early it covers
// the requests decided and written until then, Requests of them.
type Result struct {
	// Requests is the number of requests decided and given to the Sink.
	Requests int64
	Lanes    []LaneResult
	// Memory is the in-memory replay's report; nil when it stopped early.
	Memory *sim.Report
	// The store's figures: calls to it, round trips, the time from the
	// first request to the last decision, and each request's latency.
	Calls, RoundTrips int64
	Elapsed           time.Duration
	Latency           Latencies
	// The server's figures after the replay, and the error that kept them
	// from being read.
	After   []redisstore.ServerStats
	StatErr error
	// Stop says where and why a replay stopped early; nil when it ran the
	// whole trace.
	Stop *Stop
}

// LaneResult is one lane's part of a Result.
type LaneResult struct {
	Allowed        int64
	MemoryAllowed  int64 // what the in-memory replay allowed of the same requests
	ClockBackwards int64 // refused because the key's time went back
	Differ         int64 // with Verify: decisions unlike the in-memory replay's
	// FailureDecisions counts the requests the failure policy decided.
	FailureDecisions int64
	Bound            Bound
}

// A Stop is where a replay stopped: the store failed at the request of
// Line (the Requests+1'th, the first not decided and written).
type Stop struct {
	Err  error
	Line int
}

// A StoppedError is the error of a replay that stopped early: the store
// failed, or the replay was interrupted (its context cancelled). Written
// requests were decided and given to the Sink, in trace order; the next,
// at File:Line, was not (Line is 0 when no request was left undecided).
type StoppedError struct {
	Err         error
	Written     int64
	File        string
	Line        int
	Interrupted bool
}

func (e *StoppedError) Error() string {
	what := fmt.Sprintf("the store failed: %v", e.Err)
	if e.Interrupted {
		what = "interrupted"
	}
	where := ""
	if e.Line > 0 {
		where = fmt.Sprintf(", stopped at %s:%d (request %d)", e.File, e.Line, e.Written+1)
	}
	return fmt.Sprintf("%s; %d requests decided and written in trace order%s", what, e.Written, where)
}

func (e *StoppedError) Unwrap() error { return e.Err }

// run is the state of one Replay.
type run struct {
	*Run
	sink  Sink
	check *checker
	res   *Result

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
	stopErr  error
	stop     *Stop
	started  time.Time
	finished time.Time
	q        Request // the writer's request
	allowed  []bool
	memAll   []bool
	at       []int64
}

// window is a run of consecutive requests of the trace, decided by the
// workers together and written once all are decided.
type window struct {
	seq   int64
	reqs  []windowReq
	text  []byte              // the requests' user, key and time texts
	res   []redisstore.Result // the store's, nlanes per request
	mem   []limiters.Decision // with Verify, the in-memory replay's
	memOK []bool              // the in-memory replay's allowed, nlanes per request
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
	w.reqs, w.text, w.res, w.mem, w.memOK = w.reqs[:0], w.text[:0], w.res[:0], w.mem[:0], w.memOK[:0]
	for i := range w.parts {
		w.parts[i] = w.parts[i][:0]
		w.fail[i], w.errs[i] = -1, nil
	}
}

// windowSize is how many requests a window holds. With RouteKey, enough
// for every worker's pipeline several times over, so that workers seldom
// wait for each other at the end of a window. With RouteSpread, one
// pipeline per worker: a worker runs at most windowsInFlight windows
// ahead of another, so a key's requests overtake each other only among
// those sent at about the same moment, as behind a load balancer, not
// across the seconds of trace time a large window spans when the replay
// runs faster than the trace.
func (r *run) windowSize() int {
	c := r.cfg
	if c.Route == RouteSpread {
		if c.Naive {
			return c.Workers // it sends one request at a time
		}
		return min(c.Workers*c.Pipeline, 1<<16)
	}
	return min(max(c.Workers*c.Pipeline*4, 1024), 1<<16)
}

// windowsInFlight is how many windows are being filled, decided or
// written at once.
const windowsInFlight = 3

// Replay runs the trace of src through the in-memory limiters (sim.Run
// with simCfg, which needs to give the lanes and rows) and through the
// store, and hands each request, decided, to sink in trace order. It
// returns what it found, and when it stopped early, the part it found
// with the error: a *StoppedError when the store failed or ctx was
// cancelled (the requests decided until then written), the Sink's or the
// trace's error otherwise. It reads the server's figures at the end.
func (r *Run) Replay(ctx context.Context, src sim.Source, simCfg sim.Config, sink Sink) (*Result, error) {
	x := &run{Run: r, sink: sink, check: newChecker(r.cfg.Lanes)}
	x.res = &Result{Lanes: make([]LaneResult, r.nlanes)}
	x.allowed, x.memAll, x.at = make([]bool, r.nlanes), make([]bool, r.nlanes), make([]int64, r.nlanes)
	size := x.windowSize()
	x.free = make(chan *window, windowsInFlight)
	x.inflight = make(chan *window, windowsInFlight)
	for range windowsInFlight {
		w := &window{
			parts: make([][]int32, len(r.workers)),
			fail:  make([]int, len(r.workers)),
			errs:  make([]error, len(r.workers)),
		}
		w.reqs = make([]windowReq, 0, size)
		w.reset()
		x.free <- w
	}
	x.stopSeq.Store(math.MaxInt64)
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Go(func() { x.work(ctx, w) })
	}
	file := ""
	if n, ok := src.(interface{ Name() string }); ok {
		file = n.Name()
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		x.write(file)
	}()
	x.started = time.Now()

	simCfg.Lanes = r.cfg.Lanes
	simCfg.Rows = true
	simCfg.DecisionsOnly = true
	simCfg.Detail = r.cfg.Verify
	errStopped := errors.New("the store stopped the replay")
	emit := func(b *sim.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range b.Requests {
			if x.cur == nil {
				x.cur = <-x.free
				if x.stopped.Load() {
					x.free <- x.cur
					x.cur = nil
					return errStopped
				}
			}
			x.addRequest(b, i)
			if len(x.cur.reqs) == size {
				x.dispatch()
			}
		}
		return nil
	}
	rep, err := sim.Run(src, simCfg, emit)
	if err == nil && x.cur != nil && len(x.cur.reqs) > 0 {
		x.dispatch()
	}
	close(x.inflight)
	<-writerDone
	for _, w := range r.workers {
		close(w.jobs)
	}
	wg.Wait()
	x.finish(rep)
	res := x.res
	switch {
	case x.stopErr != nil:
		return res, x.stopErr
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return res, &StoppedError{Err: err, Written: res.Requests, File: file, Line: x.nextLine(), Interrupted: true}
	case err != nil && !errors.Is(err, errStopped):
		return res, err
	}
	return res, nil
}

// nextLine is the line of the first request not written, or 0.
func (x *run) nextLine() int {
	if x.stop != nil {
		return x.stop.Line
	}
	return 0
}

// finish fills in the result's figures.
func (x *run) finish(rep *sim.Report) {
	res := x.res
	if x.stopErr == nil {
		res.Memory = rep
	}
	if !x.finished.IsZero() {
		res.Elapsed = x.finished.Sub(x.started)
	}
	for _, w := range x.workers {
		res.Calls += w.calls
		res.RoundTrips += w.trips.n.Load()
		res.Latency.merge(&w.lat)
		for l := range res.Lanes {
			if !x.cfg.Naive {
				res.Lanes[l].FailureDecisions += w.store.LimiterFailureDecisions(l)
			}
		}
	}
	for l := range res.Lanes {
		res.Lanes[l].Bound = x.check.lanes[l].b
	}
	ctx, cancel := context.WithTimeout(context.Background(), x.cfg.ConnectTimeout)
	defer cancel()
	res.After, res.StatErr = redisstore.Stats(ctx, x.workers[0].client)
	seen := map[string]struct{}{}
	for _, w := range x.workers {
		for k := range w.keys {
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				x.keys = append(x.keys, k)
			}
		}
		w.keys = nil
	}
	res.Stop = x.stop
}

// addRequest copies request i of b into the current window and gives it
// to a worker: by its key's hash with RouteKey, in turn with RouteSpread.
func (x *run) addRequest(b *sim.Batch, i int) {
	win := x.cur
	q := &b.Requests[i]
	wr := windowReq{now: q.Time, cost: q.Cost, line: q.Line}
	wr.user, wr.key, wr.time = win.add(q.User), win.add(q.Key), win.add(q.TimeText)
	idx := len(win.reqs)
	win.reqs = append(win.reqs, wr)
	for l := range x.nlanes {
		win.memOK = append(win.memOK, b.Allowed(i, l))
		if x.cfg.Verify {
			win.mem = append(win.mem, *b.Decision(i, l))
		}
	}
	var w int
	if x.cfg.Route == RouteKey {
		w = int(keyhash.Sum(q.Key) % uint64(len(x.workers)))
	} else {
		w = int(x.seq % int64(len(x.workers)))
	}
	x.seq++
	win.parts[w] = append(win.parts[w], int32(idx))
}

// dispatch hands the current window to every worker and to the writer.
func (x *run) dispatch() {
	win := x.cur
	x.cur = nil
	win.seq = x.winSeq
	x.winSeq++
	win.res = append(win.res[:0], make([]redisstore.Result, len(win.reqs)*x.nlanes)...)
	win.done.Add(len(x.workers))
	x.inflight <- win
	for _, w := range x.workers {
		w.jobs <- win
	}
}

// work decides, in order, each window's requests given to worker w, a
// pipeline of Pipeline requests at a time (or, Naive, one request and
// limiter at a time). After a failure the worker leaves the later windows
// undecided.
func (x *run) work(ctx context.Context, w *worker) {
	for win := range w.jobs {
		idx := win.parts[w.id]
		if win.seq > x.stopSeq.Load() {
			if len(idx) > 0 {
				win.fail[w.id] = int(idx[0])
			}
			win.done.Done()
			continue
		}
		var failAt int = -1
		var err error
		if x.cfg.Naive {
			failAt, err = x.decideNaive(ctx, w, win, idx)
		} else {
			failAt, err = x.decide(ctx, w, win, idx)
		}
		if err != nil {
			win.fail[w.id], win.errs[w.id] = failAt, err
			x.firstErr.CompareAndSwap(nil, &err)
			for {
				s := x.stopSeq.Load()
				if win.seq >= s || x.stopSeq.CompareAndSwap(s, win.seq) {
					break
				}
			}
		}
		win.done.Done()
	}
}

// decide sends the requests idx of win in pipelines. It returns the first
// request not decided and why, or -1 and nil.
func (x *run) decide(ctx context.Context, w *worker, win *window, idx []int32) (int, error) {
	n := x.nlanes
	for start := 0; start < len(idx); start += x.cfg.Pipeline {
		part := idx[start:min(start+x.cfg.Pipeline, len(idx))]
		w.reqs = w.reqs[:0]
		for _, i := range part {
			q := &win.reqs[i]
			key := string(win.str(q.key))
			if _, ok := w.keys[key]; !ok {
				w.keys[key] = struct{}{}
			}
			for l := range n {
				w.reqs = append(w.reqs, redisstore.Request{Limiter: l, Key: key, Now: q.now, Cost: q.cost})
			}
		}
		if cap(w.out) < len(w.reqs) {
			w.out = make([]redisstore.Result, len(w.reqs))
		}
		out := w.out[:len(w.reqs)]
		began := time.Now()
		err := w.store.Decide(ctx, w.reqs, out)
		w.lat.add(time.Since(began), int64(len(part)))
		w.calls++
		for j, i := range part {
			copy(win.res[int(i)*n:int(i+1)*n], out[j*n:(j+1)*n])
		}
		if err != nil {
			for j := range out {
				if out[j].Err != nil {
					return int(part[j/n]), out[j].Err
				}
			}
			return int(part[0]), err
		}
	}
	return -1, nil
}

// decideNaive decides the requests idx of win one by one, each limiter by
// GET, decide, SET.
func (x *run) decideNaive(ctx context.Context, w *worker, win *window, idx []int32) (int, error) {
	n := x.nlanes
	for _, i := range idx {
		q := &win.reqs[i]
		key := string(win.str(q.key))
		if _, ok := w.keys[key]; !ok {
			w.keys[key] = struct{}{}
		}
		began := time.Now()
		for l := range n {
			r, err := w.naive[l].Decide(ctx, key, q.now, q.cost)
			w.calls++
			if err != nil {
				return int(i), err
			}
			win.res[int(i)*n+l] = r
		}
		w.lat.add(time.Since(began), 1)
	}
	return -1, nil
}

// write takes the windows in trace order, waits until each is decided and
// writes its requests; at the first request not decided it stops, and
// tells emit to stop the replay.
func (x *run) write(file string) {
	for win := range x.inflight {
		win.done.Wait()
		if x.stopErr == nil {
			x.writeWindow(win, file)
		}
		x.finished = time.Now()
		win.reset()
		x.free <- win
	}
}

// writeWindow writes win's requests up to the first not decided.
func (x *run) writeWindow(win *window, file string) {
	stop, who := len(win.reqs), -1
	for w, f := range win.fail {
		if f >= 0 && f < stop {
			stop, who = f, w
		}
	}
	n := x.nlanes
	res := x.res
	q := &x.q
	if q.Store == nil {
		q.Store, q.Failed = make([]limiters.Decision, n), make([]bool, n)
	}
	for i := range stop {
		wr := &win.reqs[i]
		q.Line, q.User, q.Key, q.Time, q.Now, q.Cost = wr.line, win.str(wr.user), win.str(wr.key), win.str(wr.time), wr.now, wr.cost
		q.MemoryAllowed = win.memOK[i*n : (i+1)*n]
		q.Memory = nil
		if x.cfg.Verify {
			q.Memory = win.mem[i*n : (i+1)*n]
		}
		for l := range n {
			r := &win.res[i*n+l]
			q.Store[l], q.Failed[l] = r.Decision, r.Failed
			lr := &res.Lanes[l]
			if r.Allowed {
				lr.Allowed++
			} else if r.Reason == limiters.ReasonClock {
				lr.ClockBackwards++
			}
			if q.MemoryAllowed[l] {
				lr.MemoryAllowed++
			}
			if q.Memory != nil && r.Decision != q.Memory[l] {
				lr.Differ++
			}
			// A failure decision was judged at no time the store knows.
			x.allowed[l], x.at[l] = r.Allowed && !r.Failed, r.At
		}
		x.check.add(q.Key, q.Time, q.Cost, x.allowed, x.at)
		if err := x.sink.Request(q); err != nil {
			x.stopErr = err
			x.stopped.Store(true)
			return
		}
		res.Requests++
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
		if p := x.firstErr.Load(); p != nil {
			err = *p
		}
	}
	wr := &win.reqs[stop]
	x.stop = &Stop{Err: err, Line: wr.line}
	x.stopErr = &StoppedError{Err: err, Written: res.Requests, File: file, Line: wr.line, Interrupted: errors.Is(err, context.Canceled)}
	x.stopped.Store(true)
}

// Keys returns the keys the run sent requests for, once Replay has run.
func (r *Run) Keys() []string { return r.keys }

// CleanUp says what Close did with the run's keys.
type CleanUp struct {
	Kept    bool  // KeepState: left as they were
	Keys    int64 // the keys of the trace whose states were removed
	Removed bool
}

// Close removes the states of the keys the run sent requests for, under
// each of its limiters, and only those, unless KeepState; then it closes
// the clients. It uses a context of its own, so that a replay cancelled
// still cleans up.
func (r *Run) Close() (CleanUp, error) {
	defer r.closeClients()
	if r.cfg.KeepState {
		return CleanUp{Kept: true, Keys: int64(len(r.keys))}, nil
	}
	if len(r.workers) == 0 {
		return CleanUp{}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := r.workers[0]
	var err error
	if r.cfg.Naive {
		err = resetNaive(ctx, w, r.keys)
	} else {
		err = w.store.Reset(ctx, r.keys...)
	}
	if err != nil {
		return CleanUp{}, err
	}
	return CleanUp{Keys: int64(len(r.keys)), Removed: true}, nil
}

// resetNaive deletes the naive states of keys, a key at a time (a
// cluster refuses a command over several slots).
func resetNaive(ctx context.Context, w *worker, keys []string) error {
	const chunk = 1000
	for start := 0; start < len(keys); start += chunk {
		pipe := w.client.Pipeline()
		for _, key := range keys[start:min(start+chunk, len(keys))] {
			for _, n := range w.naive {
				pipe.Unlink(ctx, n.Key(key))
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// firstKey returns a key whose name begins with prefix, or "": a SCAN of
// every master, read only.
func firstKey(ctx context.Context, c redis.UniversalClient, prefix string) (string, error) {
	match := globEscape(prefix) + "*"
	scan := func(ctx context.Context, c redis.Cmdable) (string, error) {
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		if iter.Next(ctx) {
			return iter.Val(), nil
		}
		return "", iter.Err()
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var found string
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			k, err := scan(ctx, node)
			mu.Lock()
			defer mu.Unlock()
			if k != "" && (found == "" || k < found) {
				found = k
			}
			return err
		})
		return found, err
	}
	return scan(ctx, c)
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
