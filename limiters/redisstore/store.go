package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

// A Clock says where a Store's time comes from.
type Clock uint8

const (
	// CallerClock uses the time passed to Allow: exact replays, and the
	// same decisions as the in-memory limiters. Instances whose clocks
	// disagree make a key's time jump.
	CallerClock Clock = iota
	// ServerClock uses the Redis server's TIME, read inside each script:
	// one clock for every instance of a live service, at a microsecond's
	// resolution. The time passed to Allow is ignored.
	ServerClock
)

// A Failure says what a Store does with a request it cannot decide
// because Redis did not answer (unreachable, timed out, out of memory, ...).
type Failure uint8

const (
	// FailError returns the error, and no decision.
	FailError Failure = iota
	// FailOpen allows the request, with every other field zero, and counts
	// it in FailureDecisions.
	FailOpen
	// FailClosed refuses the request with ReasonUnavailable, every other
	// field zero, and counts it in FailureDecisions.
	FailClosed
)

// String returns the policy's name: "error", "open" or "closed".
func (f Failure) String() string {
	switch f {
	case FailError:
		return "error"
	case FailOpen:
		return "open"
	case FailClosed:
		return "closed"
	}
	return "Failure(" + strconv.Itoa(int(f)) + ")"
}

// ReasonUnavailable is the reason of a refusal made by FailClosed.
const ReasonUnavailable limiters.Reason = "store unavailable"

// ErrTimeRange is returned, under ServerClock, for a request the server
// judged at a time more than 2^52-1 ns (about 52 days) from this host's
// clock: its windows cannot be aligned exactly. Two clocks that far apart
// are a misconfigured host.
var ErrTimeRange = errors.New("redisstore: time out of range: the server clock is more than 52 days from this host's")

// Options configures a Store. The zero value is the default.
type Options struct {
	// Prefix begins every key; "ratesim:" when empty. It may not hold
	// braces.
	Prefix string
	// Clock is where time comes from: CallerClock (the default) or
	// ServerClock.
	Clock Clock
	// Epoch is not used: the store counts time in full, from no epoch,
	// for as long as it runs.
	//
	// Deprecated: Epoch has no effect.
	Epoch int64
	// Failure is what to do when Redis cannot decide: FailError (the
	// default), FailOpen or FailClosed.
	Failure Failure
	// ExpiryMargin is added to the time each write sets its keys to
	// expire at, rounded up to a millisecond. With 0, the default, keys
	// expire exactly when their state is fresh again. Under CallerClock a
	// caller whose time may fall behind the server's clock (a replay that
	// may pause, a process that may stall) sets a margin of the longest
	// pause: a state kept past its fresh time decides as the fresh state
	// does, so a margin changes no decision, and only keeps idle keys
	// longer.
	ExpiryMargin time.Duration
	// OnFailure, unless nil, is called with the error of each decision
	// FailOpen or FailClosed made.
	OnFailure func(error)
}

// A Limiter is one named limiter of a Store: an algorithm under a policy.
type Limiter struct {
	// Name is the LIMITER of its keys, unique within a store: letters,
	// digits and "-_." only.
	Name      string
	Algorithm limiters.Algorithm
	Policy    limiters.Policy
}

// limiter is a Limiter ready to run.
type limiter struct {
	name    string
	alg     limiters.Algorithm
	pol     limiters.Policy
	limit   int64 // the most cost one request may have
	script  *source
	suffix  string // ":LIMITER:ALGO"
	params  []any
	span    int64 // the aligned spans' length, or 0
	refusal limiters.Reason
	delays  bool
}

// Store decides requests with limiters kept in Redis (5.0 or later). Each
// of its limiters decides exactly as limiters.Keyed with the same
// algorithm and policy. Keys may be any string, empty or not, any bytes.
// The zero Store refuses every request with an error; use New. Store is
// safe for simultaneous use by multiple goroutines, and several Stores,
// in several processes, may share keys.
type Store struct {
	client   redis.UniversalClient
	lims     []limiter
	opts     Options
	clock    string // the scripts' "c" or "s"
	margin   int64  // ExpiryMargin in ms
	failures atomic.Int64
	failedBy []atomic.Int64 // per limiter
}

// New returns a store deciding with ls in Redis through client. It checks
// every policy, and refuses one the store cannot keep exactly with a
// *ParamError naming the limiter and the parameter; it does not contact
// Redis. Pass a client made by NewClient, or one whose options set
// MaxRetries: -1: a client that retries a script after a timeout may run
// it twice.
func New(client redis.UniversalClient, ls []Limiter, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil client")
	}
	if len(ls) == 0 {
		return nil, errors.New("redisstore: no limiters")
	}
	if opts.Prefix == "" {
		opts.Prefix = "ratesim:"
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.Clock > ServerClock {
		return nil, fmt.Errorf("redisstore: unknown clock %d", opts.Clock)
	}
	if opts.Failure > FailClosed {
		return nil, fmt.Errorf("redisstore: unknown failure policy %d", opts.Failure)
	}
	if opts.ExpiryMargin < 0 {
		return nil, fmt.Errorf("redisstore: expiry margin %v is negative", opts.ExpiryMargin)
	}
	s := &Store{client: client, opts: opts, clock: "c", failedBy: make([]atomic.Int64, len(ls))}
	if opts.Clock == ServerClock {
		s.clock = "s"
	}
	s.margin = int64((opts.ExpiryMargin + time.Millisecond - 1) / time.Millisecond)
	seen := map[string]bool{}
	for _, l := range ls {
		if !validName(l.Name) {
			return nil, fmt.Errorf("redisstore: limiter name %q: want letters, digits and -_. only", l.Name)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("redisstore: limiter name %q given twice", l.Name)
		}
		seen[l.Name] = true
		lm, err := newLimiter(l)
		if err != nil {
			return nil, err
		}
		s.lims = append(s.lims, lm)
	}
	return s, nil
}

// newLimiter checks l and readies it.
func newLimiter(l Limiter) (limiter, error) {
	r, err := limiters.NewRule(l.Algorithm, l.Policy)
	if err != nil {
		return limiter{}, fmt.Errorf("redisstore: limiter %s: %w", l.Name, err)
	}
	k, ok := kinds[l.Algorithm]
	if !ok {
		var kept []string
		for _, a := range limiters.AllAlgorithms() {
			if Supports(a) {
				kept = append(kept, a.String())
			}
		}
		return limiter{}, fmt.Errorf("redisstore: limiter %s: algorithm %v is not kept in Redis (the store keeps %s)", l.Name, l.Algorithm, strings.Join(kept, ", "))
	}
	params, err := k.params(r)
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			pe.Limiter = l.Name
		}
		return limiter{}, err
	}
	lm := limiter{
		name:    l.Name,
		alg:     l.Algorithm,
		pol:     l.Policy,
		script:  scripts[k.script()],
		suffix:  ":" + l.Name + ":" + l.Algorithm.String(),
		params:  params,
		refusal: l.Algorithm.Refusal(),
		delays:  l.Algorithm.Delays(),
	}
	if k.span != nil {
		lm.span = k.span(r)
	}
	lm.limit = *l.Policy.Field(l.Algorithm.Params()[0]).(*int64)
	return lm, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Limiters returns the names of the store's limiters, in order.
func (s *Store) Limiters() []string {
	names := make([]string, len(s.lims))
	for i := range s.lims {
		names[i] = s.lims[i].name
	}
	return names
}

// Algorithm returns the algorithm of the store's first limiter, and
// Policy its policy: what package httplimit advertises for a store.
func (s *Store) Algorithm() limiters.Algorithm {
	if len(s.lims) == 0 {
		return 0
	}
	return s.lims[0].alg
}

// Policy returns the policy of the store's first limiter.
func (s *Store) Policy() limiters.Policy {
	if len(s.lims) == 0 {
		return limiters.Policy{}
	}
	return s.lims[0].pol
}

// Keys returns the Redis names of key's state under every limiter of the
// store, in order.
func (s *Store) Keys(key string) []string {
	names := make([]string, len(s.lims))
	for i := range s.lims {
		names[i] = keyName(s.opts.Prefix, key, s.lims[i].suffix)
	}
	return names
}

// FailureDecisions returns the number of decisions FailOpen or FailClosed
// made so far.
func (s *Store) FailureDecisions() int64 { return s.failures.Load() }

// LimiterFailureDecisions returns the number of decisions FailOpen or
// FailClosed made so far for the store's limiter of index i.
func (s *Store) LimiterFailureDecisions(i int) int64 {
	if i < 0 || i >= len(s.failedBy) {
		return 0
	}
	return s.failedBy[i].Load()
}

// An Op is what a Request asks of its limiter.
type Op uint8

const (
	// OpAllow judges the request and takes its cost when it is allowed.
	OpAllow Op = iota
	// OpPeek judges a request of cost 1 without taking anything: the
	// decision says whether one would pass (RetryAfter until it would),
	// Remaining how much a request could take and ResetAfter when the key
	// is fresh again. It writes nothing.
	OpPeek
	// OpAtMost takes as much of Cost as remains, at least 1: Granted says
	// how much. It is allowed whenever a request of cost 1 would be, and
	// otherwise judged as one. Every algorithm grants in part this way.
	OpAtMost
)

// A Request is one request of a batch: an operation (by default, allow)
// of a cost at a time for a key, under the store's limiter of index
// Limiter.
type Request struct {
	Limiter int
	Key     string
	Now     int64 // ns; ignored under ServerClock
	Cost    int64
	Op      Op
}

// A Result is the store's answer to one request of a batch.
type Result struct {
	limiters.Decision
	// At is the time the request was judged at, in ns: its Now, or the
	// key's latest time when its clock went backwards (ClockClamp judges
	// it then, as limiters.Table.DecidedAt says), or the server's time
	// under ServerClock. 0 when the store did not judge it.
	At int64
	// Granted is the cost taken: Cost when an OpAllow is allowed, the
	// grant of an OpAtMost, 0 otherwise.
	Granted int64
	// Failed reports that the failure policy decided the request:
	// Redis did not.
	Failed bool
	// Err is why the request has no decision, or nil.
	Err error
}

// Allow judges a request of cost at time now (in ns; ignored under
// ServerClock) for key under the store's first limiter, and updates the
// key's state, in one round trip. Under FailOpen and FailClosed a server
// that cannot answer gives a decision and no error; errors then come only
// from what a failure policy must not hide (see Decide).
func (s *Store) Allow(ctx context.Context, key string, now, cost int64) (limiters.Decision, error) {
	r, err := s.one(ctx, Request{Key: key, Now: now, Cost: cost})
	return r.Decision, err
}

// Peek returns the decision a request of cost 1 at now for key would get
// from the store's first limiter, without taking anything (OpPeek).
func (s *Store) Peek(ctx context.Context, key string, now int64) (limiters.Decision, error) {
	r, err := s.one(ctx, Request{Key: key, Now: now, Cost: 1, Op: OpPeek})
	return r.Decision, err
}

// AllowAtMost takes up to most of what key's first limiter has left at
// now, and returns how much it took with the decision (OpAtMost): the
// partial grant of redis_rate's AllowAtMost.
func (s *Store) AllowAtMost(ctx context.Context, key string, now, most int64) (granted int64, d limiters.Decision, err error) {
	r, err := s.one(ctx, Request{Key: key, Now: now, Cost: most, Op: OpAtMost})
	return r.Granted, r.Decision, err
}

func (s *Store) one(ctx context.Context, q Request) (Result, error) {
	var out [1]Result
	err := s.Decide(ctx, []Request{q}, out[:])
	if err != nil {
		err = out[0].Err
	}
	return out[0], err
}

// AllowAll judges a request under every limiter of the store, writing
// limiter i's decision to out[i], in one round trip. Each limiter decides
// atomically and on its own, as a limiters.Group's do; out must have room
// for every limiter.
func (s *Store) AllowAll(ctx context.Context, key string, now, cost int64, out []limiters.Decision) error {
	if len(out) < len(s.lims) {
		return fmt.Errorf("redisstore: AllowAll: out has room for %d decisions, the store has %d limiters", len(out), len(s.lims))
	}
	reqs := make([]Request, len(s.lims))
	for i := range reqs {
		reqs[i] = Request{Limiter: i, Key: key, Now: now, Cost: cost}
	}
	return s.AllowBatch(ctx, reqs, out)
}

// AllowBatch judges reqs in order, in one pipeline, writing the decision
// of reqs[i] to out[i]: the throughput of many requests per round trip.
// It returns Decide's error, with the other requests' decisions in out.
func (s *Store) AllowBatch(ctx context.Context, reqs []Request, out []limiters.Decision) error {
	if len(out) < len(reqs) {
		return fmt.Errorf("redisstore: AllowBatch: out has room for %d decisions, got %d requests", len(out), len(reqs))
	}
	res := make([]Result, len(reqs))
	err := s.Decide(ctx, reqs, res)
	for i := range reqs {
		out[i] = res[i].Decision
	}
	return err
}

// Reset puts keys back in their fresh state under every limiter of the
// store: it deletes their states, in pipelines.
func (s *Store) Reset(ctx context.Context, keys ...string) error {
	const chunk = 1000
	for start := 0; start < len(keys); start += chunk {
		pipe := s.client.Pipeline()
		for _, key := range keys[start:min(start+chunk, len(keys))] {
			// A key's states share a slot: one command for all.
			pipe.Unlink(ctx, s.Keys(key)...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redisstore: Reset: %w", err)
		}
	}
	return nil
}

// job is the requests of a batch for one key and limiter: one script
// call, which judges them in order.
type job struct {
	l    *limiter
	li   int
	name string // the Redis key
	reqs []int  // indices in the batch, in order
	cmd  *scriptCmd
	eval bool // the script was not loaded where the job went: send it whole
}

type jobKey struct {
	l   int
	key string
}

// Decide judges reqs in order, in one pipeline, writing the answer to
// reqs[i] to out[i]. Requests for one key and limiter are judged in their
// order, by one script call that reads and writes the key's state once.
//
// A request Redis could not decide because it was unreachable, timed
// out, was out of memory or loading, or its Redis Cluster was down, is
// decided by the failure policy: with FailOpen and FailClosed it gets a
// decision and Result.Failed. Every other error is returned whatever the
// policy, in Result.Err, with no decision: an error the server replied
// that says the store is misconfigured (WRONGTYPE: another application's
// data at a key; NOPERM: an ACL user without EVALSHA; READONLY: a
// replica; NOAUTH, CROSSSLOT, a script's own error, ...), the caller's
// context cancelled, or a request that is wrong itself (a limiter out of
// range). A cost below 1 is refused with limiters.ReasonBadCost, as
// limiters.Keyed refuses it. Decide returns the first request's error,
// "request N: ...", or nil.
func (s *Store) Decide(ctx context.Context, reqs []Request, out []Result) error {
	if len(out) < len(reqs) {
		return fmt.Errorf("redisstore: Decide: out has room for %d results, got %d requests", len(out), len(reqs))
	}
	if len(s.lims) == 0 {
		return errors.New("redisstore: a zero Store; use New")
	}
	var jobs []job
	var index map[jobKey]int
	if len(reqs) > 1 {
		index = make(map[jobKey]int, len(reqs))
	}
	for i, q := range reqs {
		out[i] = Result{}
		if q.Limiter < 0 || q.Limiter >= len(s.lims) {
			out[i].Err = storeErrorf("no limiter %d", q.Limiter)
			continue
		}
		if q.Op > OpAtMost {
			out[i].Err = storeErrorf("unknown operation %d", q.Op)
			continue
		}
		if q.Cost < 1 && q.Op != OpPeek {
			out[i].Decision = limiters.Decision{Reason: limiters.ReasonBadCost}
			continue
		}
		j := -1
		if index != nil {
			k := jobKey{q.Limiter, q.Key}
			if at, ok := index[k]; ok {
				j = at
			} else {
				index[k] = len(jobs)
			}
		}
		if j < 0 {
			l := &s.lims[q.Limiter]
			j = len(jobs)
			jobs = append(jobs, job{l: l, li: q.Limiter, name: keyName(s.opts.Prefix, q.Key, l.suffix)})
		}
		jobs[j].reqs = append(jobs[j].reqs, i)
	}
	if len(jobs) > 0 {
		s.run(ctx, reqs, jobs)
	}
	for j := range jobs {
		s.results(ctx, reqs, &jobs[j], out)
	}
	for i := range reqs {
		if err := out[i].Err; err != nil {
			if len(reqs) == 1 {
				return err
			}
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	return nil
}

// run sends the jobs' scripts by EVALSHA in one pipeline, then sends
// again those whose reply says the script did not run: NOSCRIPT (sent
// again by EVAL), and, in a Redis Cluster, TRYAGAIN (the key's slot is
// moving and its states are split between two nodes, for the moment a
// MIGRATE takes) and a MOVED or ASK that go-redis did not follow. Nothing
// else is sent again: a timeout or a lost connection may have committed.
// go-redis itself sends a command again only to follow MOVED and ASK,
// which also mean it did not run: the commands are made so (scriptCmd).
//
// Each job is the only one for its key and limiter in the pipeline, so a
// job sent again can never come after a later request of its key: a
// SCRIPT FLUSH, a restart or a slot on the move only delays it.
func (s *Store) run(ctx context.Context, reqs []Request, jobs []job) {
	var anchor int64
	if s.opts.Clock == ServerClock {
		// Near the server's time: the scripts align windows from it. Here
		// and in package httplimit only does ratesim read the system
		// clock.
		anchor = time.Now().UnixNano()
	}
	todo := make([]int, len(jobs))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			pause := time.Duration(0)
			for _, i := range todo {
				if redis.HasErrorPrefix(jobs[i].cmd.Err(), "NOSCRIPT") {
					jobs[i].eval = true
				} else {
					pause = tryAgainPauses[attempt-1] // the slot is moving
				}
			}
			if pause > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
			}
		}
		if len(todo) == 1 {
			jobs[todo[0]].cmd = s.send(ctx, s.client, reqs, &jobs[todo[0]], anchor)
		} else {
			pipe := s.client.Pipeline()
			for _, i := range todo {
				jobs[i].cmd = s.send(ctx, pipe, reqs, &jobs[i], anchor)
			}
			_, _ = pipe.Exec(ctx) // each command holds its own result
		}
		next := todo[:0]
		for _, i := range todo {
			if notRun(jobs[i].cmd.Err()) {
				next = append(next, i)
			}
		}
		todo = next
		if len(todo) == 0 || attempt >= len(tryAgainPauses) {
			return // what is left keeps its error
		}
	}
}

// tryAgainPauses are the pauses before each sending again of jobs whose
// slot was moving: half a second in all, far longer than a MIGRATE of a
// key's states takes.
var tryAgainPauses = []time.Duration{
	1 * time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond,
	16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond, 128 * time.Millisecond,
	256 * time.Millisecond,
}

// notRun reports whether err is a reply that says the script did not run
// and may be sent again: not loaded, or its keys' slot moving or moved.
func notRun(err error) bool {
	return redis.HasErrorPrefix(err, "NOSCRIPT") || redis.HasErrorPrefix(err, "TRYAGAIN") ||
		redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK")
}

// send queues j's script on c, or runs it when c is the client: by
// EVALSHA, or whole by EVAL once the node it went to did not have it.
func (s *Store) send(ctx context.Context, c processor, reqs []Request, j *job, anchor int64) *scriptCmd {
	l := j.l
	width := 4
	if l.span > 0 {
		width = 6
	}
	args := make([]any, 0, 9+len(l.params)+width*len(j.reqs))
	if j.eval {
		args = append(args, "eval", l.script.text)
	} else {
		args = append(args, "evalsha", l.script.sha)
	}
	clamp := int64(0)
	if l.pol.Clock == limiters.ClockClamp {
		clamp = 1
	}
	args = append(args, 1, j.name, s.clock, clamp, s.margin)
	args = append(args, l.params...)
	args = append(args, len(j.reqs))
	for _, i := range j.reqs {
		q := &reqs[i]
		cost := q.Cost
		switch {
		case q.Op == OpPeek:
			cost = 1
		case cost > l.limit:
			// Above the limit: refused for its cost, or a grant of what
			// remains; only "above" matters.
			if q.Op == OpAtMost {
				cost = l.limit
			} else {
				cost = l.limit + 1
			}
		}
		ts, tn := pair(q.Now)
		args = append(args, opNames[q.Op], cost, ts, tn)
		if l.span > 0 {
			t := q.Now
			if s.opts.Clock == ServerClock {
				t = anchor
			}
			as, an := alignDown(t, l.span)
			args = append(args, as, an)
		}
	}
	cmd := newScriptCmd(ctx, args)
	_ = c.Process(ctx, cmd)
	return cmd
}

// processor is a client or a pipeline.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

var opNames = [...]string{OpAllow: "a", OpPeek: "p", OpAtMost: "m"}

// alignDown returns the start of the span of length L > 0 holding t, at a
// multiple of L, as (s, n): it may lie before the smallest int64.
func alignDown(t, L int64) (s, n int64) {
	m := t % L
	if m < 0 {
		m += L
	}
	ts, tn := pair(t)
	ms, mn := pair(m)
	s, n = ts-ms, tn-mn
	if n < 0 {
		s, n = s-1, n+1e9
	}
	return s, n
}

// A scriptCmd is an EVALSHA or EVAL of a script that go-redis never sends
// again on its own. Its Cluster client would, whatever MaxRetries says:
// up to MaxRedirects times after a timeout or a lost connection, when the
// script may have run, and a whole pipeline to a node, scripts that ran
// included, when its first command got TRYAGAIN or CLUSTERDOWN. A
// scriptCmd still follows MOVED and ASK, which mean it did not run; the
// store sends again what did not run itself (Store.run).
type scriptCmd struct{ *redis.Cmd }

func newScriptCmd(ctx context.Context, args []any) *scriptCmd {
	c := redis.NewCmd(ctx, args...)
	c.SetFirstKeyPos(3)
	return &scriptCmd{c}
}

// NoRetry reports that go-redis may not send the command again.
func (*scriptCmd) NoRetry() bool { return true }

// Clone returns a copy that is a scriptCmd too.
func (c *scriptCmd) Clone() redis.Cmder { return &scriptCmd{c.Cmd.Clone().(*redis.Cmd)} }

// results reads j's reply into the results of its requests: decisions,
// or the failure policy's, or errors.
func (s *Store) results(ctx context.Context, reqs []Request, j *job, out []Result) {
	v, err := j.cmd.Slice()
	if err == nil && len(v) != 2+8*len(j.reqs) {
		err = storeErrorf("script for %s replied %d values for %d requests", j.l.name, len(v), len(j.reqs))
	}
	var serverNow int64
	if err == nil {
		serverNow, err = replyTime(v[0], v[1])
	}
	if err != nil {
		err = s.classify(ctx, err)
		for _, i := range j.reqs {
			out[i] = s.failed(j.li, err)
		}
		return
	}
	for k, i := range j.reqs {
		r, err := j.l.result(v[2+8*k : 2+8*(k+1)])
		if err != nil {
			out[i] = Result{Err: err}
			continue
		}
		at := reqs[i].Now
		if s.opts.Clock == ServerClock {
			at = serverNow
		}
		r.At = int64(uint64(at) + uint64(r.At)) // At held off, which is at most the key's time less at
		out[i] = r
	}
}

// classify wraps err as the store reports it: script errors and the
// server's replies as they are, others with the package's prefix.
func (s *Store) classify(ctx context.Context, err error) error {
	if strings.Contains(err.Error(), "redisstore: time out of range") {
		return ErrTimeRange
	}
	var rerr redis.Error
	var se *storeError
	if errors.As(err, &rerr) || errors.As(err, &se) {
		return err
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("redisstore: %w", err)
}

// Transient reports whether err, a Store's error, says that Redis could
// not decide for now: the server unreachable, slow past a deadline, out
// of memory, loading, busy, a Redis Cluster down or resharding. Those
// are the errors a failure policy decides. Every other error (the
// server's other replies, a cancelled context, a closed client, a bad
// request) says the store cannot work as it is set up, and is returned.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrClosed) || errors.Is(err, ErrTimeRange) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range transientReplies {
			if redis.HasErrorPrefix(rerr, p) {
				return true
			}
		}
		return strings.HasPrefix(rerr.Error(), "ERR max number of clients reached")
	}
	var pe *ParamError
	var se *storeError
	if errors.As(err, &pe) || errors.As(err, &se) {
		return false
	}
	return true // the network: refused, reset, timed out, EOF, a full pool
}

// transientReplies are the replies that say a server cannot decide for
// now; it runs nothing of a script before them (OOM: before its first
// write).
var transientReplies = []string{"OOM", "LOADING", "BUSY", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "MOVED", "ASK", "NOSCRIPT", "MISCONF", "NOREPLICAS"}

// failed returns the result of a request of limiter li that Redis did
// not decide, with err: the failure policy's decision for a transient
// error, the error otherwise.
func (s *Store) failed(li int, err error) Result {
	if s.opts.Failure == FailError || !Transient(err) {
		return Result{Err: err}
	}
	s.failures.Add(1)
	s.failedBy[li].Add(1)
	if s.opts.OnFailure != nil {
		s.opts.OnFailure(err)
	}
	if s.opts.Failure == FailOpen {
		return Result{Decision: limiters.Decision{Allowed: true}, Failed: true}
	}
	return Result{Decision: limiters.Decision{Reason: ReasonUnavailable}, Failed: true}
}

// A storeError is an error of the store itself, not of Redis: a request
// it cannot send, a reply it cannot read. None is transient.
type storeError struct{ msg string }

func (e *storeError) Error() string { return "redisstore: " + e.msg }

func storeErrorf(format string, args ...any) error {
	return &storeError{fmt.Sprintf(format, args...)}
}

// replyTime reads the server's time at the head of a reply.
func replyTime(sv, nv any) (int64, error) {
	s, err1 := replyInt(sv)
	n, err2 := replyInt(nv)
	if err1 != nil || err2 != nil {
		return 0, storeErrorf("script replied time %v %v", sv, nv)
	}
	return s*1e9 + n, nil
}

// replyInt reads an integer of a reply: a number, or decimal text.
func replyInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

// replyDur reads a duration of a reply, in ns: a number, or decimal text
// when it passes 2^52; saturating at math.MaxUint64.
func replyDur(v any) (uint64, bool) {
	switch v := v.(type) {
	case int64:
		return uint64(v), v >= 0
	case string:
		d, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return math.MaxUint64, true
			}
			return 0, false
		}
		return d, true
	}
	return 0, false
}

// dur returns a+b as a Duration, limiters.InfDuration when it does not fit.
func dur(a, b uint64) time.Duration {
	if a > math.MaxInt64 || b > math.MaxInt64-a {
		return limiters.InfDuration
	}
	return time.Duration(a + b)
}

// result turns one request's part of a script's reply into the Result
// limiters.Keyed would give: the durations count from the request's own
// time, off before the time it was judged at when the clock went
// backwards. Its At holds off.
func (l *limiter) result(v []any) (Result, error) {
	var f [8]int64
	var d [4]uint64 // retry, reset, delay, off
	for i, x := range v {
		if i >= 3 && i <= 6 {
			var ok bool
			if d[i-3], ok = replyDur(x); !ok && !(i == 3 && x == int64(-1)) {
				return Result{}, storeErrorf("script for %s replied %v", l.name, v)
			}
			continue
		}
		n, ok := x.(int64)
		if !ok {
			return Result{}, storeErrorf("script for %s replied %v", l.name, v)
		}
		f[i] = n
	}
	allowed, code, rem, granted := f[0] == 1, f[1], f[2], f[7]
	retry, reset, delay, off := d[0], d[1], d[2], d[3]
	dec := limiters.Decision{Allowed: allowed, Remaining: rem, ResetAfter: dur(reset, off)}
	switch code {
	case 0:
	case 1:
		dec.Reason = l.refusal
	case 2:
		dec.Reason = limiters.ReasonCost
		dec.RetryAfter = limiters.InfDuration
	case 3:
		dec.Reason = limiters.ReasonClock
	case 4:
		dec.Reason = limiters.ReasonBlocked
	default:
		return Result{}, storeErrorf("script for %s replied reason %d", l.name, code)
	}
	if allowed && l.delays {
		dec.Delay = dur(delay, off)
	}
	if !allowed && code != 2 {
		dec.RetryAfter = dur(retry, off)
	}
	return Result{Decision: dec, Granted: granted, At: int64(off)}, nil
}
