package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

// Naive is a Redis store that is wrong on purpose, to show the race every
// shared limiter must avoid. It reads a key's state (GET), decides in Go
// with the in-memory algorithm (limiters.Rule.StepEncoded) and writes the
// new state back (SET), in separate round trips. Two callers deciding one
// key at once both read the same state, both admit against it, and the
// later write erases the earlier: together they admit more than the
// policy allows. A Store runs read, decision and write as one script,
// which Redis runs atomically, and never does.
//
// Alone, a Naive decides exactly as Store and limiters.Keyed do. It uses
// the caller's clock only, keeps its states under
// PREFIX{KEY}:LIMITER:naive:ALGO (keys escaped as a Store's are), and
// returns every error as it is. Naive is safe for simultaneous use by
// multiple goroutines in the sense that it does not crash; its decisions
// are then wrong.
type Naive struct {
	client redis.UniversalClient
	rule   *limiters.Rule
	suffix string
	opts   Options
}

// NewNaive returns a naive store deciding with l through client. Only
// opts.Prefix and opts.ExpiryMargin apply.
func NewNaive(client redis.UniversalClient, l Limiter, opts Options) (*Naive, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil client")
	}
	if opts.Prefix == "" {
		opts.Prefix = "ratesim:"
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if !validName(l.Name) {
		return nil, fmt.Errorf("redisstore: limiter name %q: want letters, digits and -_. only", l.Name)
	}
	r, err := limiters.NewRule(l.Algorithm, l.Policy)
	if err != nil {
		return nil, fmt.Errorf("redisstore: limiter %s: %w", l.Name, err)
	}
	return &Naive{client: client, rule: r, suffix: ":" + l.Name + ":naive:" + l.Algorithm.String(), opts: opts}, nil
}

// Key returns the Redis name of key's state.
func (n *Naive) Key(key string) string { return keyName(n.opts.Prefix, key, n.suffix) }

// Allow judges a request of cost at now for key: GET, decide, SET.
func (n *Naive) Allow(ctx context.Context, key string, now, cost int64) (limiters.Decision, error) {
	r, err := n.Decide(ctx, key, now, cost)
	return r.Decision, err
}

// Decide is Allow that also says, in the Result, the time the request
// was judged at and the cost taken.
func (n *Naive) Decide(ctx context.Context, key string, now, cost int64) (Result, error) {
	if n.rule == nil {
		return Result{}, errors.New("redisstore: a zero Naive; use NewNaive")
	}
	k := n.Key(key)
	state, err := n.client.Get(ctx, k).Bytes()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Result{}, fmt.Errorf("redisstore: %w", err)
	}
	at, err := n.rule.DecidedAtEncoded(state, now)
	if err != nil {
		return Result{}, fmt.Errorf("redisstore: %s: %w", k, err)
	}
	next, d, err := n.rule.StepEncoded(state, now, cost, nil)
	if err != nil {
		return Result{}, fmt.Errorf("redisstore: %s: %w", k, err)
	}
	// The state is fresh again after ResetAfter: expire it then.
	ttl := (d.ResetAfter + time.Millisecond - 1).Truncate(time.Millisecond)
	if ttl <= 0 {
		err = n.client.Del(ctx, k).Err()
	} else {
		err = n.client.Set(ctx, k, next, ttl+n.opts.ExpiryMargin).Err()
	}
	if err != nil {
		return Result{}, fmt.Errorf("redisstore: %w", err)
	}
	r := Result{Decision: d, At: at}
	if d.Allowed {
		r.Granted = cost
	}
	return r, nil
}
