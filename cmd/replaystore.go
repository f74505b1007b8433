package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/storereplay"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/limiters/redisstore"
)

var replayLong = helpText("replay")

const replayExample = `  ratesim replay --store redis://127.0.0.1:6379/0 --algos token-bucket --rate 1/1s trace.csv
  ratesim replay --store redis://127.0.0.1:6379/0 --workers 8 --route key --verify --summary trace.csv
  ratesim replay --store redis://127.0.0.1:6379/0 --workers 8 --route spread --naive --summary bursty.csv
  REDIS_PASSWORD=... ratesim replay --store rediss://redis.internal:6380/0 --prefix rl-test: --summary trace.csv
  ratesim replay --store redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster --summary trace.csv
  ratesim replay --store redis+cluster://10.0.0.1:7000,10.0.0.2:7000 --algos all --summary trace.csv`

// replayStoreExitStatus is the EXIT STATUS of "ratesim replay".
const replayStoreExitStatus = `  0  success
  1  error: the trace could not be read, the store failed (what was decided is written), --verify differs under --route key or state was lost, or the atomic store broke a bound
  2  usage error: a bad flag or argument, a bad store URL, a bad parameter, a --prefix that holds keys without --resume
  3  partial: --lenient skipped bad rows (each is reported on standard error)`

// replayOptions are the options of "ratesim replay".
type replayOptions struct {
	trace          traceOptions
	policy         policyOptions
	Algos          []string
	Store          string
	PasswordFile   string
	Workers        int
	Route          string
	Pipeline       int
	Naive          bool
	Verify         bool
	Summary        bool
	Prefix         string
	Resume         bool
	KeepState      bool
	OnFailure      string
	ConnectTimeout time.Duration
	Output         string
}

func newReplayCmd() *cobra.Command {
	o := &replayOptions{}
	c := replayCmd(&cobra.Command{
		Use:         "replay --store URL [--workers N] [--route key|spread] [flags] TRACE|- [TRACE...]",
		Short:       "Replay a trace through limiters kept in Redis",
		Long:        replayLong + policyHelp,
		Example:     replayExample,
		Annotations: map[string]string{exitStatusKey: replayStoreExitStatus},
	}, &o.trace, &o.policy, nil, func(c *cobra.Command, s streams) error {
		return runReplay(c.Context(), o, s)
	})
	fs := c.Flags()
	fs.StringVar(&o.Store, "store", "", "where the limiters live: redis[s]://HOST:PORT/DB, redis[s]+cluster://HOST:PORT,..., redis[s]+sentinel://HOST:PORT,.../MASTER or unix:///PATH (required)")
	fs.StringVar(&o.PasswordFile, "password-file", "", "read the store's password from the first line of this file (default: $REDIS_PASSWORD, when the URL has none)")
	fs.IntVar(&o.Workers, "workers", 1, "concurrent clients, each with its own connection")
	fs.StringVar(&o.Route, "route", "key", "which worker sends a request: key (a key's requests go to one worker, in trace order) or spread (round-robin: they race)")
	fs.IntVar(&o.Pipeline, "pipeline", 64, "requests per round trip of a worker (the atomic store; --naive makes two round trips per request and limiter)")
	fs.BoolVar(&o.Naive, "naive", false, "decide with GET, decide in ratesim, SET, in separate round trips: the race, to show it")
	fs.BoolVar(&o.Verify, "verify", false, "replay in memory as well and list every decision that differs")
	fs.BoolVar(&o.Summary, "summary", false, "print only the summary: per limiter the counts and the bounds' checks, and the store's figures")
	fs.StringVar(&o.Prefix, "prefix", "", "prefix of the run's Redis keys (default: ratesim:replay:RANDOM:, new for each run); one that holds keys needs --resume")
	fs.BoolVar(&o.Resume, "resume", false, "use a --prefix that already holds keys, continuing from the state under it (a run kept with --keep-state)")
	fs.BoolVar(&o.KeepState, "keep-state", false, "leave the run's keys in Redis at the end instead of removing them; they expire an hour after they are fresh again")
	fs.StringVar(&o.OnFailure, "on-failure", "error", "when the store cannot decide a request: error (stop), open (allow it) or closed (refuse it)")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 2*time.Second, "how long to wait for the store to answer when connecting")
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to replay, comma-separated, or all (default: the five classic algorithms)")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// storeAddress parses --store and finds its password: in the URL, in
// --password-file, or in $REDIS_PASSWORD.
func (o *replayOptions) storeAddress() (redisstore.Address, error) {
	if o.Store == "" {
		return redisstore.Address{}, usageErrorf("replay needs --store URL: redis://HOST:PORT/DB, redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER or unix:///PATH")
	}
	addr, err := redisstore.ParseURL(o.Store)
	if err != nil {
		return addr, usageErrorf("--store: %s", ErrorText(err))
	}
	switch {
	case o.PasswordFile != "" && addr.Password != "":
		return addr, usageErrorf("--password-file: the --store URL %s gives a password too; give it once", redisstore.Redact(o.Store))
	case o.PasswordFile != "":
		pw, err := redisstore.ReadPassword(o.PasswordFile)
		if err != nil {
			return addr, usageErrorf("--password-file: %s", ErrorText(err))
		}
		addr.Password = pw
	case addr.Password == "":
		addr.Password = os.Getenv("REDIS_PASSWORD")
	}
	return addr, nil
}

func runReplay(ctx context.Context, o *replayOptions, s streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	addr, err := o.storeAddress()
	if err != nil {
		return err
	}
	if o.Workers < 1 || o.Workers > storereplay.MaxWorkers {
		return usageErrorf("--workers must be from 1 to %d, got %d", storereplay.MaxWorkers, o.Workers)
	}
	if o.Pipeline < 1 || o.Pipeline > storereplay.MaxPipeline {
		return usageErrorf("--pipeline must be from 1 to %d, got %d", storereplay.MaxPipeline, o.Pipeline)
	}
	r, err := choose("--route", o.Route, routeChoices)
	if err != nil {
		return err
	}
	route := []storereplay.Route{storereplay.RouteKey, storereplay.RouteSpread}[r]
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
	if o.Resume && o.Prefix == "" {
		return usageErrorf("--resume continues the state under a --prefix: give the prefix of the run to resume")
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
	run, err := storereplay.Open(ctx, storereplay.Config{
		Addr: addr, Lanes: rp.spec.Lanes, Workers: o.Workers, Pipeline: o.Pipeline, Route: route,
		Naive: o.Naive, Verify: o.Verify, Prefix: o.Prefix, Resume: o.Resume, KeepState: o.KeepState,
		Failure: failure, ConnectTimeout: o.ConnectTimeout,
	})
	if err != nil {
		return openError(err, rp.spec.Lanes, o.ConnectTimeout)
	}
	settings := tables.StoreSettings{
		Addr: addr, Workers: o.Workers, Pipeline: o.Pipeline, Route: o.Route, OnFailure: o.OnFailure,
		Naive: o.Naive, Verify: o.Verify, Summary: o.Summary,
	}
	out := tables.NewStoreReport(rp.spec, rp.trace.name, len(o.trace.Key) > 0, settings, format, s.out, prefixWriter{s.err})
	out.Warn = func(msg string) { warnf(s.err, "%s", msg) }
	out.Text = ErrorText
	before, statErr := run.Before()
	out.Prefix, out.Before = run.Prefix(), before
	warnServer(s, before, statErr)

	cfg := rp.config(true, false)
	rp.warnUnused(cfg, s.err)
	src, stop := rp.source(s)
	res, err := run.Replay(ctx, src, cfg, out)
	stop()
	if err == nil && res.Memory != nil {
		rp.warnBackwards(res.Memory, s.err)
	}
	cleanUp, cerr := run.Close()
	switch {
	case cerr != nil:
		warnf(s.err, "could not remove the run's keys under prefix %s: %s", run.Prefix(), ErrorText(cerr))
	case cleanUp.Kept:
		fmt.Fprintf(s.err, "ratesim: the run's state is kept in %s under prefix %s: %s; they expire on their own %v after they are fresh again\n",
			addr, run.Prefix(), render.Plural(cleanUp.Keys, "key"), storereplay.ExpiryMargin)
	}
	var stopped *storereplay.StoppedError
	if err != nil && !errors.As(err, &stopped) {
		return err
	}
	if ferr := out.Finish(res, stopped); ferr != nil {
		return ferr
	}
	if stopped != nil {
		if stopped.Interrupted {
			return &interruptedError{msg: out.Stopped(stopped), err: stopped.Err}
		}
		return errors.New(out.Stopped(stopped))
	}
	// The verdict comes before the status of rows a lenient read skipped:
	// a bound broken is the answer the replay is for.
	finished := rp.trace.finish()
	var skipped *partialError
	if finished != nil && !errors.As(finished, &skipped) {
		return finished
	}
	if err := out.Verdict(res); err != nil {
		return err
	}
	return finished
}

// openError turns the errors of storereplay.Open into the CLI's: a policy
// the store cannot keep and a prefix in use are usage errors, naming the
// flags.
func openError(err error, lanes []storereplay.Lane, timeout time.Duration) error {
	var pe *redisstore.ParamError
	if errors.As(err, &pe) {
		for _, l := range lanes {
			if l.Name == pe.Limiter || strings.HasPrefix(pe.Limiter, "lane") {
				if l.Name == l.Algorithm.String() {
					return usageErrorf("--%s: %s (limiter %s, in Redis)", pe.Param, pe.Reason, pe.Limiter)
				}
				break
			}
		}
		return usageErrorf("limiter %s: %s: %s (in Redis)", pe.Limiter, pe.Param, pe.Reason)
	}
	var pu *storereplay.PrefixInUseError
	if errors.As(err, &pu) {
		return usageErrorf("--prefix: %s; choose another prefix, or --resume to continue from that state", pu.Error())
	}
	var ce *redisstore.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("cannot reach redis at %s (%s) within %s: %w", strings.Join(ce.Addr.Addrs, ","), ce.Addr, timeout, ce.Err)
	}
	return errors.New(ErrorText(err))
}

// warnServer says, before a replay, what may lose the limiters' states.
func warnServer(s streams, before []redisstore.ServerStats, err error) {
	if err != nil {
		warnf(s.err, "could not read the server's INFO (%s): evictions and flushes during the replay go unseen", ErrorText(err))
	}
	for _, st := range before {
		if st.Evicts() {
			warnf(s.err, "the server at %s evicts keys at its maxmemory (%d bytes, maxmemory-policy %s): every limiter state has a TTL, so it may evict them, and a key evicted decides as a fresh one; noeviction refuses writes instead, which --on-failure decides",
				st.Addr, st.MaxMemory, st.MaxMemoryPolicy)
		}
	}
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// routeChoices are the choices of --route, in the order of
// storereplay.RouteKey and RouteSpread.
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
