package limiters

import (
	"math"
	"sync"
	"time"

	"github.com/ratesim/ratesim/internal/keyhash"
)

const (
	keyedShards   = 64 // a power of two
	minSweepShard = 64 // a shard sweeps once it holds this many keys
)

// Keyed is a limiter for many keys, such as users or API tokens, under one
// algorithm and policy. Each key has its own state, created fresh on the
// key's first request.
//
// Keys are spread over shards, each with its own lock, so requests for
// different keys rarely wait for each other. A key whose state has become
// the fresh state again (its window has passed, its bucket is full or empty
// again) is forgotten, so memory follows the keys that are live rather than
// every key ever seen. A shard looks for such keys each time the number of
// keys it holds doubles, judging them at the latest request time it has
// seen less twice the furthest any request so far came before the latest
// one: callers whose clocks differ a little, or requests that reach the
// shard a little out of order, are then judged exactly. Forgetting a key
// changes no decision for requests at or after that time; a request for a
// forgotten key that arrives earlier still (further back than any request
// before it) is judged as the key's first request.
//
// An algorithm whose keys interact (Algorithm.KeysInteract: nginx's zone)
// keeps all its keys in one shard, under one lock, as the one zone they
// share.
//
// Keyed is safe for simultaneous use by multiple goroutines. Use NewKeyed
// to make one: the zero Keyed refuses every request with ReasonBadRule.
type Keyed struct {
	rule   *Rule
	shards [keyedShards]keyedShard
}

type keyedShard struct {
	mu     sync.Mutex
	ids    map[string]uint32
	free   []uint32
	next   uint32
	table  Table
	latest int64
	seen   bool
	// disorder is the furthest a request came before latest.
	disorder uint64
	sweepAt  int
	_        [64]byte // keeps neighbouring shards' locks off one cache line
}

// NewKeyed returns a keyed limiter for algorithm a under policy p, or an
// error if p is not valid for a.
func NewKeyed(a Algorithm, p Policy) (*Keyed, error) {
	r, err := NewRule(a, p)
	if err != nil {
		return nil, err
	}
	k := &Keyed{rule: r}
	for i := range k.shards {
		sh := &k.shards[i]
		sh.ids = make(map[string]uint32)
		sh.table = Table{s: newStore([]*Rule{r})}
		sh.sweepAt = minSweepShard
	}
	return k, nil
}

// Algorithm returns the limiter's algorithm; for the zero Keyed, the zero
// Algorithm.
func (k *Keyed) Algorithm() Algorithm {
	if k.rule == nil {
		return 0
	}
	return k.rule.alg
}

// Policy returns the limiter's policy; for the zero Keyed, the zero
// Policy, which is valid for no algorithm.
func (k *Keyed) Policy() Policy {
	if k.rule == nil {
		return Policy{}
	}
	return k.rule.pol
}

// Allow judges a request of cost at time now (in nanoseconds) for key and
// updates the key's state.
func (k *Keyed) Allow(key string, now, cost int64) Decision {
	if k.rule == nil {
		return Decision{Reason: ReasonBadRule} // a zero Keyed
	}
	sh := k.shard(key)
	sh.mu.Lock()
	d := sh.allow(key, now, cost)
	sh.mu.Unlock()
	return d
}

// AllowExact is Allow that also returns the decision's durations in full,
// as Table.AllowExact does.
func (k *Keyed) AllowExact(key string, now, cost int64) (Decision, Exact) {
	if k.rule == nil {
		return Decision{Reason: ReasonBadRule}, Exact{}
	}
	sh := &k.shards[keyhash.String(key)&(keyedShards-1)]
	sh.mu.Lock()
	id, ok := sh.ids[key]
	if !ok {
		id = sh.alloc()
	}
	d, x := sh.table.AllowExact(id, now, cost)
	sh.after(key, id, ok, now)
	sh.mu.Unlock()
	return d, x
}

// AllowExplain is Allow that also appends the state text that
// Table.AllowExplain describes to dst.
func (k *Keyed) AllowExplain(key string, now, cost int64, unit time.Duration, dst []byte) (Decision, []byte) {
	if k.rule == nil {
		return Decision{Reason: ReasonBadRule}, dst
	}
	sh := k.shard(key)
	sh.mu.Lock()
	id, ok := sh.ids[key]
	if !ok {
		id = sh.alloc()
	}
	var d Decision
	d, dst = sh.table.AllowExplain(id, now, cost, unit, dst)
	sh.after(key, id, ok, now)
	sh.mu.Unlock()
	return d, dst
}

// shard returns the shard that holds key.
func (k *Keyed) shard(key string) *keyedShard {
	if k.rule.k.zoned {
		return &k.shards[0]
	}
	return &k.shards[keyhash.String(key)&(keyedShards-1)]
}

func (sh *keyedShard) allow(key string, now, cost int64) Decision {
	id, ok := sh.ids[key]
	if !ok {
		id = sh.alloc()
	}
	d := sh.table.Allow(id, now, cost)
	sh.after(key, id, ok, now)
	return d
}

func (sh *keyedShard) alloc() uint32 {
	if n := len(sh.free); n > 0 {
		id := sh.free[n-1]
		sh.free = sh.free[:n-1]
		return id
	}
	id := sh.next
	sh.next++
	return id
}

// after records the decision's key and time and forgets idle keys.
func (sh *keyedShard) after(key string, id uint32, known bool, now int64) {
	if !sh.seen || now > sh.latest {
		sh.latest, sh.seen = now, true
	} else if d := since(sh.latest, now); d > sh.disorder {
		sh.disorder = d
	}
	if !known {
		if sh.table.Idle(id, now) {
			// Refused without a trace (a cost above the limit): keep nothing.
			sh.table.Reset(id)
			sh.free = append(sh.free, id)
			return
		}
		sh.ids[key] = id
	}
	if len(sh.ids) >= sh.sweepAt {
		sh.sweep()
	}
}

func (sh *keyedShard) sweep() {
	// latest - 2*disorder, not below MinInt64; unsigned, as it may not fit.
	at := int64(math.MinInt64)
	if above, slack := uint64(sh.latest)^1<<63, 2*sh.disorder; sh.disorder < 1<<62 && above > slack {
		at = int64(uint64(sh.latest) - slack)
	}
	for key, id := range sh.ids {
		if sh.table.Idle(id, at) {
			delete(sh.ids, key)
			sh.table.Reset(id)
			sh.free = append(sh.free, id)
		}
	}
	sh.sweepAt = max(2*len(sh.ids), minSweepShard)
}

// Len returns the number of keys the limiter holds state for.
func (k *Keyed) Len() int {
	n := 0
	for i := range k.shards {
		sh := &k.shards[i]
		sh.mu.Lock()
		n += len(sh.ids)
		sh.mu.Unlock()
	}
	return n
}
