package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
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

// ReasonUnavailable is the reason of a refusal made by FailClosed.
const ReasonUnavailable limiters.Reason = "store unavailable"

// ErrTimeRange is returned for a request whose time is more than 2^52-1
// ns (about 52 days) from the store's epoch: no decision could be exact.
var ErrTimeRange = errors.New("redisstore: time out of range: more than 2^52-1 ns from the epoch")

// Options configures a Store. The zero value is the default.
type Options struct {
	// Prefix begins every key; "ratesim:" when empty. It may not hold
	// braces.
	Prefix string
	// Clock is where time comes from: CallerClock (the default) or
	// ServerClock.
	Clock Clock
	// Epoch is the time the scripts count from, in ns: on the caller's
	// clock under CallerClock, a Unix time under ServerClock. Every request
	// must come within 2^52-1 ns of it. Stores that share keys must share
	// the epoch: the windows' indices are stored relative to it.
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
	limit   int64 // the most cost one request may have
	script  *script
	keys    []string // key suffixes after PREFIX{KEY}:
	params  []string
	clamp   string
	refusal limiters.Reason
	delays  bool
}

// Store decides requests with limiters kept in Redis (5.0 or later). Each
// of its limiters decides exactly as limiters.Keyed with the same
// algorithm and policy. Keys may be any non-empty string: an empty one
// would leave the hash tag {} empty, and Redis Cluster would scatter the
// key's states. The zero Store refuses every request with an error; use
// New. Store is safe for simultaneous use by multiple goroutines, and
// several Stores, in several processes, may share keys.
type Store struct {
	client   redis.UniversalClient
	lims     []limiter
	opts     Options
	epochSec string // the epoch's seconds and nanoseconds, for ServerClock
	epochNs  string
	margin   string // ExpiryMargin in ms
	failures atomic.Int64
	scripts  map[string]*script // by file; written only by New
}

// New returns a store deciding with ls in Redis through client. It checks
// every policy, and refuses one whose exact arithmetic could exceed 2^53
// with an error naming the parameter; it does not contact Redis. Pass a
// client made by NewClient, or one whose options set MaxRetries: -1: a
// client that retries a script after a timeout may run it twice.
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
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("redisstore: prefix %q holds a brace", opts.Prefix)
	}
	if opts.Clock > ServerClock {
		return nil, fmt.Errorf("redisstore: unknown clock %d", opts.Clock)
	}
	if opts.Failure > FailClosed {
		return nil, fmt.Errorf("redisstore: unknown failure policy %d", opts.Failure)
	}
	if opts.ExpiryMargin < 0 || opts.ExpiryMargin > maxTime {
		return nil, fmt.Errorf("redisstore: expiry margin %v out of range", opts.ExpiryMargin)
	}
	s := &Store{client: client, opts: opts}
	s.margin = itoa(int64((opts.ExpiryMargin + time.Millisecond - 1) / time.Millisecond))
	sec, ns := opts.Epoch/1e9, opts.Epoch%1e9
	if ns < 0 {
		sec, ns = sec-1, ns+1e9
	}
	s.epochSec, s.epochNs = itoa(sec), itoa(ns)
	seen := map[string]bool{}
	for _, l := range ls {
		if !validName(l.Name) {
			return nil, fmt.Errorf("redisstore: limiter name %q: want letters, digits and -_. only", l.Name)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("redisstore: limiter name %q given twice", l.Name)
		}
		seen[l.Name] = true
		r, err := limiters.NewRule(l.Algorithm, l.Policy)
		if err != nil {
			return nil, fmt.Errorf("redisstore: limiter %s: %w", l.Name, err)
		}
		k, ok := kinds[l.Algorithm]
		if !ok {
			var kept []string
			for _, a := range limiters.AllAlgorithms() {
				if Supports(a) {
					kept = append(kept, a.String())
				}
			}
			return nil, fmt.Errorf("redisstore: limiter %s: algorithm %v is not kept in Redis (the store keeps %s)", l.Name, l.Algorithm, strings.Join(kept, ", "))
		}
		params, err := k.params(r, opts.Epoch)
		if err != nil {
			return nil, err
		}
		lm := limiter{
			name:    l.Name,
			alg:     l.Algorithm,
			script:  s.script(k.file),
			params:  params,
			clamp:   "0",
			refusal: l.Algorithm.Refusal(),
			delays:  l.Algorithm.Delays(),
		}
		if l.Algorithm.Windowed() {
			lm.limit = l.Policy.Limit
		} else {
			lm.limit = l.Policy.Capacity
		}
		if l.Policy.Clock == limiters.ClockClamp {
			lm.clamp = "1"
		}
		for _, suffix := range k.keys {
			lm.keys = append(lm.keys, ":"+l.Name+suffix)
		}
		s.lims = append(s.lims, lm)
	}
	return s, nil
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

// script returns the store's script of the file.
func (s *Store) script(file string) *script {
	if s.scripts == nil {
		s.scripts = map[string]*script{}
	}
	if sc := s.scripts[file]; sc != nil {
		return sc
	}
	sc := &script{src: scripts[file]}
	s.scripts[file] = sc
	return sc
}

// A script is one of the store's scripts, and whether the store has seen
// it run.
type script struct {
	src  *source
	warm atomic.Bool
}

// Limiters returns the names of the store's limiters, in order.
func (s *Store) Limiters() []string {
	names := make([]string, len(s.lims))
	for i := range s.lims {
		names[i] = s.lims[i].name
	}
	return names
}

// FailureDecisions returns the number of decisions FailOpen or FailClosed
// made so far.
func (s *Store) FailureDecisions() int64 { return s.failures.Load() }

// A Request is one request of a batch: a cost at a time for a key, under
// the store's limiter of index Limiter.
type Request struct {
	Limiter int
	Key     string
	Now     int64 // ns; ignored under ServerClock
	Cost    int64
}

// Allow judges a request of cost at time now (in ns; ignored under
// ServerClock) for key under the store's first limiter, and updates the
// key's state, in one round trip. Under FailOpen and FailClosed an
// unreachable server gives a decision and no error; errors then come only
// from the request itself (an empty key, a time out of range).
func (s *Store) Allow(ctx context.Context, key string, now, cost int64) (limiters.Decision, error) {
	var d [1]limiters.Decision
	err := s.AllowBatch(ctx, []Request{{Key: key, Now: now, Cost: cost}}, d[:])
	return d[0], err
}

// AllowAll judges a request under every limiter of the store, writing
// limiter i's decision to out[i], in one round trip. Each limiter decides
// atomically and on its own, as a limiters.Group's do (under ServerClock
// each reads the server's clock itself); out must have room for every
// limiter.
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

// job is one request of a batch on its way.
type job struct {
	l    *limiter
	keys []string
	args []any
	cmd  redis.Cmder // a *scriptCmd once sent
	eval bool        // the script was not loaded where the job went: send it whole
}

// AllowBatch judges reqs in order, in one pipeline, writing the decision
// of reqs[i] to out[i]: the throughput of many requests per round trip.
// Requests for one key and limiter are decided in their order. With
// FailError, it returns the first request's error, with the other
// requests' decisions in out; a request refused before it reached Redis
// (an empty key, a time out of range) gives an error under every failure
// policy.
func (s *Store) AllowBatch(ctx context.Context, reqs []Request, out []limiters.Decision) error {
	if len(out) < len(reqs) {
		return fmt.Errorf("redisstore: AllowBatch: out has room for %d decisions, got %d requests", len(out), len(reqs))
	}
	jobs := make([]job, len(reqs))
	errs := make([]error, len(reqs))
	sent := 0
	for i, q := range reqs {
		out[i] = limiters.Decision{}
		if q.Limiter < 0 || q.Limiter >= len(s.lims) {
			errs[i] = fmt.Errorf("redisstore: no limiter %d", q.Limiter)
			continue
		}
		l := &s.lims[q.Limiter]
		if q.Cost < 1 {
			out[i] = limiters.Decision{Reason: limiters.ReasonBadCost}
			continue
		}
		if q.Key == "" {
			errs[i] = errors.New("redisstore: empty key")
			continue
		}
		args, err := s.args(l, q.Now, q.Cost)
		if err != nil {
			errs[i] = err
			continue
		}
		jobs[i] = job{l: l, keys: l.keyNames(s.opts.Prefix, q.Key), args: args}
		sent++
	}
	if sent > 0 {
		s.run(ctx, jobs)
	}
	var first error
	for i := range jobs {
		if err := errs[i]; err != nil {
			if first == nil {
				first = fmt.Errorf("request %d: %w", i, err)
			}
			continue
		}
		if jobs[i].cmd == nil {
			continue // decided here: a bad cost
		}
		d, err := jobs[i].l.decision(jobs[i].cmd.(*scriptCmd).Cmd)
		if err != nil {
			d, err = s.fail(err)
		}
		out[i] = d
		if err != nil && first == nil {
			first = fmt.Errorf("request %d: %w", i, err)
		}
	}
	if first != nil && len(reqs) == 1 {
		first = errors.Unwrap(first)
	}
	return first
}

// run sends the jobs' scripts by EVALSHA in one pipeline, then sends
// again those whose reply says the script did not run: NOSCRIPT (sent
// again by EVAL), and, in a Redis Cluster, TRYAGAIN (the key's slot is
// moving and its states are split between two nodes, for the moment a
// MIGRATE takes) and a MOVED or ASK left over once go-redis has followed
// its redirections. Nothing else is sent again: a timeout or a lost
// connection may have committed. go-redis itself sends a command again
// only to follow MOVED and ASK, which also mean it did not run: the
// commands are made so (scriptCmd).
//
// A job sent again runs after the jobs that followed it in the pipeline.
// That changes no decision while they are for other keys, or did not run
// either and are sent again in order. A job followed by one for its key
// that did run (another client loaded the script between them, or the
// rest of the key's states moved in between) cannot be decided in order
// any more: it fails with errReordered. So that concurrent batches do not
// meet this each time a store starts, the first job of a script the store
// has not yet seen run goes alone, ahead of the rest, and loads it if need
// be.
func (s *Store) run(ctx context.Context, jobs []job) {
	for i := range jobs {
		j := &jobs[i]
		if j.l == nil || j.l.script.warm.Load() {
			continue
		}
		j.cmd = s.send(ctx, s.client, j)
		if redis.HasErrorPrefix(j.cmd.Err(), "NOSCRIPT") {
			j.eval = true
			j.cmd = s.send(ctx, s.client, j)
		}
		if j.cmd.Err() == nil {
			j.l.script.warm.Store(true)
		}
	}
	var todo []int
	for i := range jobs {
		if j := &jobs[i]; j.l != nil && (j.cmd == nil || notRun(j.cmd.Err())) {
			todo = append(todo, i)
		}
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			// The earliest job to send again first: jobs after it that
			// ran for its key put it out of order.
			reorder(ctx, jobs, todo[0])
			todo = slices.DeleteFunc(todo, func(i int) bool { return jobs[i].cmd.Err() == errReordered })
			if len(todo) == 0 || attempt > len(tryAgainPauses) {
				return // what is left keeps its error
			}
			pause := time.Duration(0)
			for _, i := range todo {
				if err := jobs[i].cmd.Err(); !redis.HasErrorPrefix(err, "NOSCRIPT") {
					pause = tryAgainPauses[attempt-1] // the slot is moving
				} else {
					jobs[i].eval = true
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
		pipe := s.client.Pipeline()
		for _, i := range todo {
			jobs[i].cmd = s.send(ctx, pipe, &jobs[i])
		}
		_, _ = pipe.Exec(ctx) // each command holds its own result
		todo = slices.DeleteFunc(todo, func(i int) bool { return !notRun(jobs[i].cmd.Err()) })
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

// errReordered fails a request that could no longer be decided in order.
var errReordered = errors.New("redisstore: the request's script did not run, and a later request for the key did, before it could be sent again")

// reorder fails with errReordered each job from index first on that did
// not run and is followed by a job for its key that did, or may have.
func reorder(ctx context.Context, jobs []job, first int) {
	ran := map[string]bool{} // the keys of jobs that ran after the one at hand
	for i := len(jobs) - 1; i >= first; i-- {
		j := &jobs[i]
		if j.cmd == nil {
			continue
		}
		switch err := j.cmd.Err(); {
		case err == errReordered:
		case notRun(err):
			if ran[j.keys[0]] {
				c := newScriptCmd(ctx, nil)
				c.SetErr(errReordered)
				j.cmd = c
			}
		default:
			ran[j.keys[0]] = true
		}
	}
}

// send queues j's script on c, or runs it when c is the client: by
// EVALSHA, or whole by EVAL once the node it went to did not have it.
func (s *Store) send(ctx context.Context, c redis.Cmdable, j *job) redis.Cmder {
	src := j.l.script.src
	args := make([]any, 0, 3+len(j.keys)+len(j.args))
	if j.eval {
		args = append(args, "eval", src.text)
	} else {
		args = append(args, "evalsha", src.sha)
	}
	args = append(args, len(j.keys))
	for _, k := range j.keys {
		args = append(args, k)
	}
	args = append(args, j.args...)
	cmd := newScriptCmd(ctx, args)
	switch c := c.(type) {
	case redis.Pipeliner:
		_ = c.Process(ctx, cmd)
	case redis.UniversalClient:
		_ = c.Process(ctx, cmd)
	}
	return cmd
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

// keyNames returns the keys of key's state under l.
func (l *limiter) keyNames(prefix, key string) []string {
	base := prefix + "{" + key + "}"
	names := make([]string, len(l.keys))
	for i, suffix := range l.keys {
		names[i] = base + suffix
	}
	return names
}

// args returns the script's arguments for a request: the time (or "" for
// the server's), the epoch, the cost, the clock rule and the parameters.
func (s *Store) args(l *limiter, now, cost int64) ([]any, error) {
	t := ""
	if s.opts.Clock == CallerClock {
		// now - epoch, refusing what would overflow on the way.
		e := s.opts.Epoch
		if e > 0 && now < math.MinInt64+e || e < 0 && now > math.MaxInt64+e {
			return nil, ErrTimeRange
		}
		rel := now - e
		if rel < -maxTime || rel > maxTime {
			return nil, ErrTimeRange
		}
		t = itoa(rel)
	}
	if cost > l.limit {
		cost = l.limit + 1 // refused for its cost; only "above" matters
	}
	args := make([]any, 0, 6+len(l.params))
	args = append(args, t, s.epochSec, s.epochNs, itoa(cost), l.clamp, s.margin)
	for _, p := range l.params {
		args = append(args, p)
	}
	return args, nil
}

// decision turns a script's reply into the Decision limiters.Keyed gives:
// the durations count from the request's own time, off before the time it
// was judged at when the clock went backwards.
func (l *limiter) decision(cmd *redis.Cmd) (limiters.Decision, error) {
	v, err := cmd.Int64Slice()
	if err != nil {
		if strings.Contains(err.Error(), "redisstore: time out of range") {
			return limiters.Decision{}, ErrTimeRange
		}
		return limiters.Decision{}, err
	}
	if len(v) != 7 {
		return limiters.Decision{}, fmt.Errorf("redisstore: script for %s replied %v", l.name, v)
	}
	allowed, code, rem, retry, reset, delay, off := v[0] == 1, v[1], v[2], v[3], v[4], v[5], v[6]
	d := limiters.Decision{Allowed: allowed, Remaining: rem, ResetAfter: time.Duration(reset + off)}
	switch code {
	case 0:
	case 1:
		d.Reason = l.refusal
	case 2:
		d.Reason = limiters.ReasonCost
		d.RetryAfter = limiters.InfDuration
	case 3:
		d.Reason = limiters.ReasonClock
	default:
		return limiters.Decision{}, fmt.Errorf("redisstore: script for %s replied reason %d", l.name, code)
	}
	if allowed && l.delays {
		d.Delay = time.Duration(delay + off)
	}
	if !allowed && code != 2 {
		d.RetryAfter = time.Duration(retry + off)
	}
	return d, nil
}

// fail decides, by the failure policy, a request Redis did not decide.
// Errors of the request itself, reported by a script, are never failures.
func (s *Store) fail(err error) (limiters.Decision, error) {
	if errors.Is(err, ErrTimeRange) || strings.Contains(err.Error(), "ERR redisstore:") || s.opts.Failure == FailError {
		return limiters.Decision{}, err
	}
	s.failures.Add(1)
	if s.opts.OnFailure != nil {
		s.opts.OnFailure(err)
	}
	if s.opts.Failure == FailOpen {
		return limiters.Decision{Allowed: true}, nil
	}
	return limiters.Decision{Reason: ReasonUnavailable}, nil
}
