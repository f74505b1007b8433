package storereplay

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/limiters/redisstore"
)

// Flags are the flags of a replay against a store: where the store is
// and its password, the workers and how requests are routed to them,
// the run's keys, and what a request the store cannot decide gets.
// Config checks them.
type Flags struct {
	Store          string // --store, the store's URL
	PasswordFile   string // --password-file
	Workers        int
	Route          string // one of Routes
	Pipeline       int
	Naive          bool
	Verify         bool
	Prefix         string
	Resume         bool
	KeepState      bool
	OnFailure      string // one of Failures
	ConnectTimeout time.Duration
}

// Routes are the values of --route, in the order of RouteKey and
// RouteSpread.
var Routes = choice.List{
	{Name: "key", Description: "a key's requests go to one worker, in trace order: decisions equal the in-memory replay's"},
	{Name: "spread", Description: "round-robin: a key's requests race between workers"},
}

// Failures are the values of --on-failure, in the order of
// redisstore.FailError, FailOpen and FailClosed.
var Failures = choice.List{
	{Name: "error", Description: "stop the replay at the first request the store cannot decide"},
	{Name: "open", Description: "allow what the store cannot decide"},
	{Name: "closed", Description: "refuse what the store cannot decide"},
}

// AddFlags adds the flags of f to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Store, "store", "", "where the limiters live: redis[s]://HOST:PORT/DB, redis[s]+cluster://HOST:PORT,..., redis[s]+sentinel://HOST:PORT,.../MASTER or unix:///PATH (required)")
	fs.StringVar(&f.PasswordFile, "password-file", "", "read the store's password from the first line of this file (default: $REDIS_PASSWORD, when the URL has none)")
	fs.IntVar(&f.Workers, "workers", 1, "concurrent clients, each with its own connection")
	fs.StringVar(&f.Route, "route", "key", "which worker sends a request: key (a key's requests go to one worker, in trace order) or spread (round-robin: they race)")
	fs.IntVar(&f.Pipeline, "pipeline", 64, "requests per round trip of a worker (the atomic store; --naive makes two round trips per request and limiter)")
	fs.BoolVar(&f.Naive, "naive", false, "decide with GET, decide in ratesim, SET, in separate round trips: the race, to show it")
	fs.BoolVar(&f.Verify, "verify", false, "replay in memory as well and list every decision that differs")
	fs.StringVar(&f.Prefix, "prefix", "", "prefix of the run's Redis keys (default: ratesim:replay:RANDOM:, new for each run); one that holds keys needs --resume")
	fs.BoolVar(&f.Resume, "resume", false, "use a --prefix that already holds keys, continuing from the state under it (a run kept with --keep-state)")
	fs.BoolVar(&f.KeepState, "keep-state", false, "leave the run's keys in Redis at the end instead of removing them; they expire an hour after they are fresh again")
	fs.StringVar(&f.OnFailure, "on-failure", "error", "when the store cannot decide a request: error (stop), open (allow it) or closed (refuse it)")
	fs.DurationVar(&f.ConnectTimeout, "connect-timeout", 2*time.Second, "how long to wait for the store to answer when connecting")
}

// A FlagError is a flag of Flags given a value it does not take, or
// flags that exclude each other given together. It is a mistake in how
// the program was called.
type FlagError = choice.UsageError

var flagErrorf = choice.Usagef

// text is err's message without the store's package name.
func text(err error) string { return strings.TrimPrefix(err.Error(), "redisstore: ") }

// Config checks the flags and returns the replay's configuration but its
// lanes, which the caller sets. The store's password is the URL's, else
// --password-file's, else $REDIS_PASSWORD's.
func (f *Flags) Config() (Config, error) {
	addr, err := f.address()
	if err != nil {
		return Config{}, err
	}
	if f.Workers < 1 || f.Workers > MaxWorkers {
		return Config{}, flagErrorf("--workers must be from 1 to %d, got %d", MaxWorkers, f.Workers)
	}
	if f.Pipeline < 1 || f.Pipeline > MaxPipeline {
		return Config{}, flagErrorf("--pipeline must be from 1 to %d, got %d", MaxPipeline, f.Pipeline)
	}
	r := Routes.Index(f.Route)
	if r < 0 {
		return Config{}, flagErrorf("invalid --route %q (valid: %s)", f.Route, Routes)
	}
	fail := Failures.Index(f.OnFailure)
	if fail < 0 {
		return Config{}, flagErrorf("invalid --on-failure %q (valid: %s)", f.OnFailure, Failures)
	}
	failure := []redisstore.Failure{redisstore.FailError, redisstore.FailOpen, redisstore.FailClosed}[fail]
	switch {
	case f.Naive && failure != redisstore.FailError:
		return Config{}, flagErrorf("--on-failure %s applies to the atomic store: --naive stops at the first error", f.OnFailure)
	case f.ConnectTimeout <= 0:
		return Config{}, flagErrorf("--connect-timeout must be positive, got %s", f.ConnectTimeout)
	case strings.ContainsAny(f.Prefix, "{}"):
		return Config{}, flagErrorf("--prefix %q holds a brace: Redis Cluster reads braces as the key's hash tag", f.Prefix)
	case f.Resume && f.Prefix == "":
		return Config{}, flagErrorf("--resume continues the state under a --prefix: give the prefix of the run to resume")
	}
	return Config{
		Addr: addr, Workers: f.Workers, Pipeline: f.Pipeline, Route: []Route{RouteKey, RouteSpread}[r],
		Naive: f.Naive, Verify: f.Verify, Prefix: f.Prefix, Resume: f.Resume, KeepState: f.KeepState,
		Failure: failure, ConnectTimeout: f.ConnectTimeout,
	}, nil
}

// address parses --store and finds its password: in the URL, in
// --password-file, or in $REDIS_PASSWORD.
func (f *Flags) address() (redisstore.Address, error) {
	if f.Store == "" {
		return redisstore.Address{}, flagErrorf("replay needs --store URL: redis://HOST:PORT/DB, redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER or unix:///PATH")
	}
	addr, err := redisstore.ParseURL(f.Store)
	if err != nil {
		return addr, flagErrorf("--store: %s", text(err))
	}
	switch {
	case f.PasswordFile != "" && addr.Password != "":
		return addr, flagErrorf("--password-file: the --store URL %s gives a password too; give it once", redisstore.Redact(f.Store))
	case f.PasswordFile != "":
		pw, err := redisstore.ReadPassword(f.PasswordFile)
		if err != nil {
			return addr, flagErrorf("--password-file: %s", text(err))
		}
		addr.Password = pw
	case addr.Password == "":
		addr.Password = os.Getenv("REDIS_PASSWORD")
	}
	return addr, nil
}

// OpenError says what an error of Open means in terms of the flags: a
// policy the store cannot keep (naming the flag of the parameter when
// the limiter is an algorithm of the shared flags) and a prefix in use
// are usage errors, a store out of reach names where it was looked for;
// nil for any other error.
func (f *Flags) OpenError(err error, lanes []Lane) error {
	var pe *redisstore.ParamError
	if errors.As(err, &pe) {
		for _, l := range lanes {
			if l.Name == pe.Limiter || strings.HasPrefix(pe.Limiter, "lane") {
				if l.Name == l.Algorithm.String() {
					return flagErrorf("--%s: %s (limiter %s, in Redis)", pe.Param, pe.Reason, pe.Limiter)
				}
				break
			}
		}
		return flagErrorf("limiter %s: %s: %s (in Redis)", pe.Limiter, pe.Param, pe.Reason)
	}
	var pu *PrefixInUseError
	if errors.As(err, &pu) {
		return flagErrorf("--prefix: %s; choose another prefix, or --resume to continue from that state", pu.Error())
	}
	var ce *redisstore.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("cannot reach redis at %s (%s) within %s: %w", strings.Join(ce.Addr.Addrs, ","), ce.Addr, f.ConnectTimeout, ce.Err)
	}
	return nil
}
