package redisstore

import (
	"embed"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

//go:embed scripts/*.lua
var scriptFiles embed.FS

// Bounds of the scripts' exact arithmetic: Lua numbers are doubles.
const (
	maxExact = 1<<53 - 1 // every amount a script holds is at most this
	maxPlain = 1<<52 - 1 // a duration the scripts hold as one number
	// maxCounter is the largest limit of a sliding counter: the scripts
	// multiply counts up to it, plus one, by 10^9.
	maxCounter = maxExact/1_000_000_000 - 1
	// MaxBuckets is the most sub-windows a sliding-buckets limiter may
	// have: a request reads every one of its key's.
	MaxBuckets = 4096
)

// A kind is how the store keeps one algorithm: its script, the length of
// the aligned spans it cuts time into (a window, a sub-window, a tick;
// 0 for none), and the script's parameters for a rule, checked against
// the bounds of exact arithmetic. A kind built on another's script has
// its own part, wrap, put before the other's (which hands it its
// algorithm).
type kind struct {
	file   string
	span   func(r *limiters.Rule) int64
	params func(r *limiters.Rule) ([]any, error)
	wrap   string
}

// script is the name of the kind's script: its files, as loadScripts
// puts them together after the prelude.
func (k kind) script() string {
	if k.wrap == "" {
		return k.file
	}
	return k.wrap + "+" + k.file
}

// kinds is the table of algorithms: every algorithm of package limiters
// but those of notKept.
// Token and leaky bucket share a script as they share a state in package
// limiters, and so do GCRA and the queue, and the fixed windows.
var kinds = map[limiters.Algorithm]kind{
	limiters.FixedWindow:     {"fixed_window.lua", windowSpan, fixedParams(0), ""},
	limiters.FixedWindowHits: {"fixed_window.lua", windowSpan, fixedParams(1), ""},
	limiters.SlidingLog:      {"sliding_log.lua", nil, logParams, ""},
	limiters.SlidingCounter:  {"sliding_counter.lua", windowSpan, counterParams, ""},
	limiters.SlidingBuckets:  {"sliding_buckets.lua", subSpan, bucketsParams, ""},
	limiters.TokenBucket:     {"bucket.lua", nil, meterParams, ""},
	limiters.LeakyBucket:     {"bucket.lua", nil, meterParams, ""},
	limiters.GCRA:            {"gcra.lua", nil, debtParams, ""},
	limiters.LeakyQueue:      {"gcra.lua", nil, debtParams, ""},
	limiters.TickQueue:       {"tick_queue.lua", tickSpan, tickParams, ""},
	limiters.BlockingCounter: {"sliding_counter.lua", windowSpan, blockingParams, "blocking_counter.lua"},
}

// notKept are the algorithms of package limiters the store has no script
// for yet: New refuses them, naming them. There are none: a new
// algorithm goes here until it has one.
var notKept []limiters.Algorithm

// Supports reports whether a store keeps limiters of algorithm a. It
// keeps every algorithm of package limiters.
func Supports(a limiters.Algorithm) bool {
	_, ok := kinds[a]
	return ok
}

// A source is a script's text and its SHA1, as EVAL and EVALSHA take them.
type source struct{ text, sha string }

// scripts are the loaded scripts by file name: the prelude followed by
// the algorithm's own part.
var scripts = loadScripts()

func loadScripts() map[string]*source {
	prelude, err := scriptFiles.ReadFile("scripts/prelude.lua")
	if err != nil {
		panic("redisstore: " + err.Error()) // embedded at build time
	}
	m := map[string]*source{}
	for _, k := range kinds {
		if m[k.script()] != nil {
			continue
		}
		text := string(prelude)
		for _, f := range []string{k.wrap, k.file} {
			if f == "" {
				continue
			}
			body, err := scriptFiles.ReadFile("scripts/" + f)
			if err != nil {
				panic("redisstore: " + err.Error())
			}
			text += "\n" + string(body)
		}
		m[k.script()] = &source{text: text, sha: redis.NewScript(text).Hash()}
	}
	return m
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// A ParamError is a limiter's policy that the store cannot keep exactly
// as the in-memory limiters do: it names the limiter and the parameter,
// as limiters.Params names it ("capacity"), and says why.
type ParamError struct {
	Limiter string // the limiter's name
	Param   string // the parameter
	Reason  string // why the store refuses its value
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("redisstore: limiter %s: %s: %s", e.Limiter, e.Param, e.Reason)
}

// paramErr returns a ParamError whose limiter New fills in.
func paramErr(param, format string, args ...any) error {
	return &ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// pair returns d as seconds and nanoseconds, as the scripts take
// durations and times.
func pair(d int64) (s, n int64) {
	s, n = d/1e9, d%1e9
	if n < 0 {
		s, n = s-1, n+1e9
	}
	return s, n
}

func windowSpan(r *limiters.Rule) int64 { return int64(r.Policy().Window) }

func bucketCount(p limiters.Policy) int64 {
	if p.Buckets == 0 {
		return limiters.DefaultBuckets
	}
	return p.Buckets
}

func subSpan(r *limiters.Rule) int64 {
	p := r.Policy()
	return int64(p.Window) / bucketCount(p)
}

func tickOf(p limiters.Policy) time.Duration {
	if p.Tick == 0 {
		return limiters.DefaultTick
	}
	return p.Tick
}

func tickSpan(r *limiters.Rule) int64 { return int64(tickOf(r.Policy())) }

func checkLimit(p limiters.Policy) error {
	if p.Limit > maxExact {
		return paramErr("limit", "%d is above 2^53-1, the most the store's exact arithmetic counts", p.Limit)
	}
	return nil
}

// fixedParams: limit, window (s, n) and whether every hit counts.
func fixedParams(hits int64) func(r *limiters.Rule) ([]any, error) {
	return func(r *limiters.Rule) ([]any, error) {
		p := r.Policy()
		if err := checkLimit(p); err != nil {
			return nil, err
		}
		s, n := pair(int64(p.Window))
		return []any{p.Limit, s, n, hits}, nil
	}
}

// logParams: limit and window (s, n).
func logParams(r *limiters.Rule) ([]any, error) {
	p := r.Policy()
	if err := checkLimit(p); err != nil {
		return nil, err
	}
	s, n := pair(int64(p.Window))
	return []any{p.Limit, s, n}, nil
}

// counterParams: limit, window (s, n) and the largest count the
// arithmetic takes: counts plus one, times 10^9 and times the window's
// seconds, stay below 2^53.
func counterParams(r *limiters.Rule) ([]any, error) {
	p := r.Policy()
	s, n := pair(int64(p.Window))
	most := min(int64(maxCounter), maxExact/(s+1)-1)
	if p.Limit > most {
		return nil, paramErr("limit", "%d is above %d, the most a sliding counter over %v keeps exactly (its estimate multiplies counts by the window in ns)", p.Limit, most, p.Window)
	}
	return []any{p.Limit, s, n, most}, nil
}

// blockingParams: the sliding counter's, then the block (s, n).
func blockingParams(r *limiters.Rule) ([]any, error) {
	params, err := counterParams(r)
	if err != nil {
		return nil, err
	}
	s, n := pair(int64(r.Policy().Block))
	return append(params, s, n), nil
}

// bucketsParams: limit, sub-window (s, n), buckets, window (s, n).
func bucketsParams(r *limiters.Rule) ([]any, error) {
	p := r.Policy()
	if err := checkLimit(p); err != nil {
		return nil, err
	}
	b := bucketCount(p)
	if b > MaxBuckets {
		return nil, paramErr("buckets", "%d is above %d, the most the store keeps (a request reads every bucket of its key)", b, MaxBuckets)
	}
	ss, sn := pair(int64(p.Window) / b)
	ws, wn := pair(int64(p.Window))
	return []any{p.Limit, ss, sn, b, ws, wn}, nil
}

// lowest returns the rate n per per ns in lowest terms.
func lowest(rate limiters.Rate) (n, per *big.Int) {
	n, per = big.NewInt(rate.N), big.NewInt(int64(rate.Per))
	g := new(big.Int).GCD(nil, nil, n, per)
	return n.Quo(n, g), per.Quo(per, g)
}

// meterParams: capacity C, the rate in lowest terms (n per per ns) and
// C*per, the scale of a full bucket. The scripts divide quantities up to
// C*per by n and by per.
func meterParams(r *limiters.Rule) ([]any, error) {
	p := r.Policy()
	n, per := lowest(p.Rate)
	limit := big.NewInt(maxExact)
	step := n
	if per.Cmp(n) > 0 {
		step = per
	}
	if new(big.Int).Add(per, step).Cmp(limit) > 0 {
		return nil, paramErr("rate", "%d per %dns in lowest terms passes 2^53 in the store's exact arithmetic", n, per)
	}
	full := new(big.Int).Mul(big.NewInt(p.Capacity), per)
	if new(big.Int).Add(full, step).Cmp(limit) > 0 {
		return nil, paramErr("capacity", "%d at a rate of %d per %dns: a full bucket's scale, %d*%d = %s, passes 2^53 in the store's exact arithmetic (the bucket takes too long to drain)",
			p.Capacity, n, per, p.Capacity, per, full)
	}
	return []any{p.Capacity, n.Int64(), per.Int64(), full.Int64()}, nil
}

// debtParams: as meterParams, and whether admitted requests wait.
func debtParams(r *limiters.Rule) ([]any, error) {
	ps, err := meterParams(r)
	if err != nil {
		return nil, err
	}
	delays := int64(0)
	if r.Algorithm().Delays() {
		delays = 1
	}
	return append(ps, delays), nil
}

// tickParams: capacity, parts, capacity*parts, the delay threshold in
// parts, the drain per tick a/b parts in lowest terms (rate * parts *
// tick), and the tick (s, n). The scripts multiply parts of the queue by
// b, and ticks to drain a full queue by the tick: both stay below 2^52.
func tickParams(r *limiters.Rule) ([]any, error) {
	p := r.Policy()
	parts := p.Parts
	if parts == 0 {
		parts = limiters.DefaultParts
	}
	tick := int64(tickOf(p))
	if tick > maxPlain {
		return nil, paramErr("tick", "%v is 2^52 ns or longer, more than the store's exact arithmetic takes", tickOf(p))
	}
	capParts := new(big.Int).Mul(big.NewInt(p.Capacity), big.NewInt(parts))
	a := new(big.Int).Mul(big.NewInt(p.Rate.N), big.NewInt(parts))
	a.Mul(a, big.NewInt(tick))
	b := big.NewInt(int64(p.Rate.Per))
	g := new(big.Int).GCD(nil, nil, a, b)
	a.Quo(a, g)
	b.Quo(b, g)
	scaled := new(big.Int).Mul(capParts, b)
	if scaled.Add(scaled, a).Cmp(big.NewInt(maxExact)) > 0 {
		return nil, paramErr("capacity", "%d in %d parts at a drain of %s/%s parts a tick: the queue's arithmetic passes 2^53 in the store", p.Capacity, parts, a, b)
	}
	// The ticks that drain a full queue, times the tick.
	drain := new(big.Int).Mul(capParts, b)
	drain.Add(drain, new(big.Int).Sub(a, big.NewInt(1)))
	drain.Quo(drain, a)
	drain.Mul(drain, big.NewInt(tick))
	if drain.Cmp(big.NewInt(maxPlain)) > 0 {
		return nil, paramErr("rate", "a full queue of %d takes %sns to drain: the store's exact arithmetic takes at most 2^52ns (52 days)", p.Capacity, drain)
	}
	delay := min(p.Delay, p.Capacity) * parts
	s, n := pair(tick)
	return []any{p.Capacity, parts, capParts.Int64(), delay, a.Int64(), b.Int64(), s, n}, nil
}
