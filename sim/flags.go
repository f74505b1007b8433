package sim

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/traces"
)

// ClientFlags are the flags of the client model (--clients and how its
// clients retry), as AddFlags adds them; Clients checks them.
type ClientFlags struct {
	Model      string // --clients, one of ClientModels
	MaxRetries int
	Exact      bool   // --retry-after-exact
	Delay      string // --retry-delay
	Backoff    string // --backoff BASE,MAX
	Jitter     bool
	Seed       uint64
}

// AddFlags adds the flags of f to fs.
func (f *ClientFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Model, "clients", "none", "how clients answer a refusal: none (the open-loop replay), honour (retry at Retry-After), immediate, or backoff")
	fs.IntVar(&f.MaxRetries, "max-retries", 3, "with --clients, the retries a client makes before it gives up")
	fs.BoolVar(&f.Exact, "retry-after-exact", false, "with --clients honour, wait the exact retry_after instead of whole seconds rounded up")
	fs.StringVar(&f.Delay, "retry-delay", "0.1s", "with --clients immediate, the wait before each retry")
	fs.StringVar(&f.Backoff, "backoff", "1s,30s", "with --clients backoff, the first wait and the longest, BASE,MAX")
	fs.BoolVar(&f.Jitter, "jitter", false, "with --clients backoff, draw each wait from 0 to its bound (full jitter), deterministically for --seed")
	fs.Uint64Var(&f.Seed, "seed", 1, "with --jitter, the random seed of the waits")
}

// A FlagError is a flag of ClientFlags, or --shard, given a value it
// does not take, or a retry flag without the --clients it needs. It is a mistake in how the program
// was called.
type FlagError = choice.UsageError

var flagErrorf = choice.Usagef

// Clients returns the client model the flags give, Model ClientsNone
// when --clients is none; given says which flags were given on the
// command line. Durations are Go durations or numbers of seconds.
func (f *ClientFlags) Clients(given map[string]bool) (Clients, error) {
	model := f.Model
	if model == "" {
		model = "none"
	}
	m, err := ParseClientModel(model)
	if err != nil {
		return Clients{}, flagErrorf("invalid --clients %q (valid: %s)", f.Model, ClientModels)
	}
	c := Clients{Model: m, MaxRetries: f.MaxRetries, RetryAfterExact: f.Exact, Jitter: f.Jitter, Seed: f.Seed}
	if m == ClientsNone {
		for _, name := range []string{"max-retries", "retry-after-exact", "retry-delay", "backoff", "jitter", "seed"} {
			if given[name] {
				return c, flagErrorf("--%s needs --clients honour, immediate or backoff", name)
			}
		}
		return c, nil
	}
	if f.MaxRetries < 0 || f.MaxRetries > MaxClientRetries {
		return c, flagErrorf("invalid --max-retries %d: want 0 to %d; a replay makes up to 1 + --max-retries attempts a request, as one that never passes is retried every time", f.MaxRetries, MaxClientRetries)
	}
	dur := func(flag, s string) (time.Duration, error) {
		d, err := traces.ParseDuration(strings.TrimSpace(s), time.Second)
		if err != nil || d < 0 {
			return 0, flagErrorf("invalid --%s %q: want a duration such as 100ms or 2s", flag, s)
		}
		return d, nil
	}
	if c.RetryDelay, err = dur("retry-delay", f.Delay); err != nil {
		return c, err
	}
	base, max, ok := strings.Cut(f.Backoff, ",")
	if !ok {
		return c, flagErrorf("invalid --backoff %q: want BASE,MAX such as 1s,30s", f.Backoff)
	}
	if c.Base, err = dur("backoff", base); err != nil {
		return c, err
	}
	if c.Max, err = dur("backoff", max); err != nil {
		return c, err
	}
	if c.Max < c.Base {
		return c, flagErrorf("invalid --backoff %q: MAX is below BASE", f.Backoff)
	}
	return c, nil
}

// ParseShard parses a --shard I/N: shard I of N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, flagErrorf("invalid --shard %q: want I/N, shard I of N, such as 0/4 (I from 0 to N-1)", s)
	case count <= 0:
		return Shard{}, flagErrorf("invalid --shard %q: the number of shards must be positive", s)
	case index < 0 || index >= count:
		return Shard{}, flagErrorf("invalid --shard %q: shards are numbered from 0 to %d", s, count-1)
	}
	return Shard{Index: index, Count: count}, nil
}
