package redisstore

import (
	"embed"
	"fmt"
	"math/big"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

//go:embed scripts/*.lua
var scriptFiles embed.FS

// Bounds of the scripts' exact arithmetic: Lua numbers are doubles.
const (
	maxExact = 1<<53 - 1 // every quantity a script holds is at most this
	maxTime  = 1<<52 - 1 // a time is at most this far from the epoch
	// maxWindow is the longest window: floor division of a time plus its
	// phase by the window needs |time| + 2*window below 2^53.
	maxWindow = 1<<51 - 1
)

// A kind is how the store keeps one algorithm: its script, the suffixes
// of its keys after PREFIX{KEY}:LIMITER, and the script's parameters for a
// rule, checked against the bounds of exact arithmetic.
type kind struct {
	file   string
	keys   []string
	params func(r *limiters.Rule, epoch int64) ([]string, error)
}

// kinds is the table of algorithms; token and leaky bucket share a script
// as they share a state in package limiters, and so do GCRA and the queue.
// Supports reports whether a store keeps limiters of algorithm a: the
// eight algorithms of fixed and sliding windows, buckets, GCRA and queues,
// not (yet) fixed-window-hits or tick-queue.
func Supports(a limiters.Algorithm) bool {
	_, ok := kinds[a]
	return ok
}

var kinds = map[limiters.Algorithm]kind{
	limiters.FixedWindow:    {"fixed_window.lua", []string{""}, alignedParams},
	limiters.SlidingLog:     {"sliding_log.lua", []string{"", ":sum"}, windowParams},
	limiters.SlidingCounter: {"sliding_counter.lua", []string{""}, counterParams},
	limiters.TokenBucket:    {"bucket.lua", []string{""}, meterParams},
	limiters.LeakyBucket:    {"bucket.lua", []string{""}, meterParams},
	limiters.GCRA:           {"gcra.lua", []string{""}, debtParams},
	limiters.LeakyQueue:     {"gcra.lua", []string{""}, debtParams},
	limiters.SlidingBuckets: {"sliding_buckets.lua", []string{""}, bucketsParams},
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
		if m[k.file] != nil {
			continue
		}
		body, err := scriptFiles.ReadFile("scripts/" + k.file)
		if err != nil {
			panic("redisstore: " + err.Error())
		}
		text := string(prelude) + "\n" + string(body)
		m[k.file] = &source{text: text, sha: redis.NewScript(text).Hash()}
	}
	return m
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// floorMod returns a mod b in [0, b) for b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// errExact is the error for a quantity that exceeds 2^53.
func errExact(param, format string, args ...any) error {
	return fmt.Errorf("redisstore: --%s: %s exceeds 2^53 in exact arithmetic", param, fmt.Sprintf(format, args...))
}

// checkWindow checks the limit and window every window algorithm shares.
func checkWindow(p limiters.Policy) error {
	if p.Limit > maxExact {
		return errExact("limit", "%d", p.Limit)
	}
	if p.Window > maxWindow {
		return errExact("window", "%dns (longer than 2^51-1 ns, about 26 days) added to times up to 2^52 ns from the epoch", int64(p.Window))
	}
	return nil
}

// windowParams: limit and window (the sliding log).
func windowParams(r *limiters.Rule, _ int64) ([]string, error) {
	p := r.Policy()
	if err := checkWindow(p); err != nil {
		return nil, err
	}
	return []string{itoa(p.Limit), itoa(int64(p.Window))}, nil
}

// alignedParams: limit, window and the epoch's phase in the window.
func alignedParams(r *limiters.Rule, epoch int64) ([]string, error) {
	ps, err := windowParams(r, epoch)
	if err != nil {
		return nil, err
	}
	return append(ps, itoa(floorMod(epoch, int64(r.Policy().Window)))), nil
}

// counterParams: as alignedParams; the estimate, scaled by the window,
// reaches 2*limit*window.
func counterParams(r *limiters.Rule, epoch int64) ([]string, error) {
	ps, err := alignedParams(r, epoch)
	if err != nil {
		return nil, err
	}
	p := r.Policy()
	v := new(big.Int).Mul(big.NewInt(2*p.Limit+2), big.NewInt(int64(p.Window)))
	if v.Cmp(big.NewInt(maxExact)) > 0 {
		return nil, errExact("limit", "the estimate's scale 2*(limit+1)*window = 2*%d*%dns = %s", p.Limit+1, int64(p.Window), v)
	}
	return ps, nil
}

// bucketsParams: limit, sub-window length, buckets, and the epoch's phase
// in the sub-window.
func bucketsParams(r *limiters.Rule, epoch int64) ([]string, error) {
	p := r.Policy()
	if err := checkWindow(p); err != nil {
		return nil, err
	}
	n := p.Buckets
	if n == 0 {
		n = limiters.DefaultBuckets
	}
	sub := int64(p.Window) / n
	return []string{itoa(p.Limit), itoa(sub), itoa(n), itoa(floorMod(epoch, sub))}, nil
}

// meterParams: capacity C, the rate in lowest terms (n per per ns) and
// C*per, the scale of a full bucket.
func meterParams(r *limiters.Rule, _ int64) ([]string, error) {
	p := r.Policy()
	n, per := big.NewInt(p.Rate.N), big.NewInt(int64(p.Rate.Per))
	g := new(big.Int).GCD(nil, nil, n, per)
	n.Quo(n, g)
	per.Quo(per, g)
	limit := big.NewInt(maxExact)
	// The scripts divide quantities up to C*per by n and by per.
	step := n
	if per.Cmp(n) > 0 {
		step = per
	}
	if new(big.Int).Add(per, step).Cmp(limit) > 0 {
		return nil, errExact("rate", "%d per %dns in lowest terms, a scale of %s per unit,", n, per, per)
	}
	full := new(big.Int).Mul(big.NewInt(p.Capacity), per)
	if new(big.Int).Add(full, step).Cmp(limit) > 0 {
		return nil, errExact("capacity", "capacity %d at --rate %d per %dns: the full bucket's scale %d*%d = %s", p.Capacity, n, per, p.Capacity, per, full)
	}
	return []string{itoa(p.Capacity), n.String(), per.String(), full.String()}, nil
}

// debtParams: as meterParams, and whether admitted requests wait.
func debtParams(r *limiters.Rule, epoch int64) ([]string, error) {
	ps, err := meterParams(r, epoch)
	if err != nil {
		return nil, err
	}
	delays := "0"
	if r.Algorithm().Delays() {
		delays = "1"
	}
	return append(ps, delays), nil
}
