package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/storereplay"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/limiters/redisstore"
	"github.com/ratesim/ratesim/traces"
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
	trace  traceOptions
	policy policyOptions
	store  storereplay.Flags
	Algos  []string
	// Summary prints only the summary.
	Summary bool
	Output  string
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
	o.store.AddFlags(fs)
	fs.BoolVar(&o.Summary, "summary", false, "print only the summary: per limiter the counts and the bounds' checks, and the store's figures")
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to replay, comma-separated, or all (default: the five classic algorithms)")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

func runReplay(ctx context.Context, o *replayOptions, s streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	storeCfg, err := o.store.Config()
	if err != nil {
		return err
	}
	addr := storeCfg.Addr
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	algos, specs, err := o.policy.Lanes(o.Algos)
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
	storeCfg.Lanes = rp.spec.Lanes
	run, err := storereplay.Open(ctx, storeCfg)
	if err != nil {
		if ferr := o.store.OpenError(err, rp.spec.Lanes); ferr != nil {
			return ferr
		}
		return errors.New(ErrorText(err))
	}
	st := &o.store
	settings := tables.StoreSettings{
		Addr: addr, Workers: st.Workers, Pipeline: st.Pipeline, Route: st.Route, OnFailure: st.OnFailure,
		Naive: st.Naive, Verify: st.Verify, Summary: o.Summary,
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
	var skipped *traces.SkippedError
	if finished != nil && !errors.As(finished, &skipped) {
		return finished
	}
	if err := out.Verdict(res); err != nil {
		return err
	}
	return finished
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
