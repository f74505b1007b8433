// Package presets describes real rate-limiting libraries as limiters of
// package limiters: each preset takes that library's own parameters and
// returns the algorithm and policy that decide as it does, its quirks
// included, with exact arithmetic.
package presets

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// A Preset is one library's rate limiter, described with its own
// parameter names. The zero Preset is not useful; use All or Lookup.
type Preset struct {
	Name       string  // as --limiter spells it: "redis-rate"
	Library    string  // the implementation it reproduces
	Reproduces string  // what it reproduces, quirks included
	Params     []Param // the library's own parameters
	// Mapping says how the parameters become the algorithm's.
	Mapping string
	// Burst says what a user's "burst=5" means in this library.
	Burst string
	// Example is a parameter list for --limiter.
	Example string
	// Differences names what the preset does not reproduce.
	Differences string

	build func(v values) (limiters.Algorithm, limiters.Policy, error)
}

// A Param is one parameter of a preset.
type Param struct {
	Name  string // the library's own name: "requests_per_unit"
	Usage string // what it means
	// Default is its value when none is given, or "" when it must be
	// given (or when another parameter stands in for it).
	Default string
	// Flag reports whether the parameter may be given bare, as nginx's
	// nodelay: "nodelay" means "nodelay=true".
	Flag bool
}

// values are a preset's parameters as given, by name.
type values map[string]string

var presets = []Preset{
	{
		Name:    "envoy",
		Library: "Envoy's ratelimit service (envoyproxy/ratelimit), Redis backend",
		Reproduces: "a fixed window aligned to the unit; time read in whole seconds; every hit counted toward the window, the refused ones too " +
			"(its counter is incremented before it is compared), so a client over the limit stays refused for the rest of the window; " +
			"hits near the limit (above 80%) and over it counted as its near_limit and over_limit statistics count them (--explain)",
		Params: []Param{
			{Name: "requests_per_unit", Usage: "requests allowed per unit"},
			{Name: "unit", Usage: "second, minute, hour or day"},
			{Name: "stop_when_over", Usage: "true: a refused hit is not counted (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT)", Default: "false"},
		},
		Mapping:     "fixed-window-hits: limit = requests_per_unit, window = unit; fixed-window when stop_when_over",
		Burst:       "no burst parameter: requests_per_unit=5 allows 5 per aligned unit, up to 10 across a unit's edge",
		Example:     "requests_per_unit=10,unit=hour",
		Differences: "a cost above requests_per_unit is refused without being counted; DurationUntilReset is reset_after rounded up to a second",
		build:       envoy,
	},
	{
		Name:    "nginx",
		Library: "nginx limit_req (ngx_http_limit_req_module)",
		Reproduces: "the queue form of the leaky bucket with time in whole milliseconds and the queue in thousandths of a request, each request's drain rounded down; " +
			"rate in r/m kept as nginx keeps it, in whole thousandths per second (1r/m is 16/1000 r/s); " +
			"burst, nodelay and delay=N (two-stage: the first N queued pass at once); a refused request changes nothing; " +
			"times up to 60 s backwards taken as no time passing",
		Params: []Param{
			{Name: "rate", Usage: "Nr/s or Nr/m"},
			{Name: "burst", Usage: "requests queued beyond the one being served", Default: "0"},
			{Name: "nodelay", Usage: "queued requests pass at once", Flag: true, Default: "false"},
			{Name: "delay", Usage: "queued requests that pass at once (two-stage limiting)", Default: "0"},
		},
		Mapping:     "tick-queue: capacity = burst + 1, rate = rate in whole thousandths per second, tick = 1ms, parts = 1000, delay = delay (burst with nodelay), clock = clamp",
		Burst:       "burst=5 lets 6 requests in at once: the one served and 5 queued (delayed 1/rate apart unless nodelay)",
		Example:     "rate=1r/s,burst=5,nodelay",
		Differences: "time more than 60 s backwards is judged as the clock rule says, where nginx takes it as 1 ms",
		build:       nginx,
	},
	{
		Name:       "redis-rate",
		Library:    "go-redis/redis_rate v10 (GCRA in a Lua script)",
		Reproduces: "GCRA with Limit{Rate, Burst, Period}: the burst at once, then one request every period/rate; a cost above the burst refused without changing the state; retry_after and reset_after as its script computes them",
		Params: []Param{
			{Name: "rate", Usage: "requests per period"},
			{Name: "burst", Usage: "requests at once (redis_rate.PerSecond(n) has burst n)"},
			{Name: "period", Usage: "a Go duration", Default: "1s"},
		},
		Mapping:     "gcra: capacity = burst, rate = rate per period",
		Burst:       "burst=5 lets 5 requests in at once",
		Example:     "rate=10,burst=10,period=1s",
		Differences: "redis_rate computes in float64 seconds from Redis TIME in microseconds; a cost above the burst gets a finite retry_after there, never here",
		build:       redisRate,
	},
	{
		Name:       "x-time-rate",
		Library:    "golang.org/x/time/rate",
		Reproduces: "the token bucket of NewLimiter(r, b) and AllowN: starts full with b tokens, refills r per second; a cost above b is refused without changing the state",
		Params: []Param{
			{Name: "r", Usage: "tokens per second (rate.Limit), a decimal"},
			{Name: "every", Usage: "one token per this Go duration (rate.Every), instead of r"},
			{Name: "b", Usage: "the bucket size (burst)"},
		},
		Mapping:     "token-bucket: capacity = b, rate = r per second (or 1 per every), exactly",
		Burst:       "b=5 lets 5 requests in at once",
		Example:     "r=1,b=3",
		Differences: "x/time/rate keeps tokens in float64, and a time earlier than the last moves its clock back (golang/go#56287); here they are exact and the clock rule applies",
		build:       xTimeRate,
	},
	{
		Name:       "throttled",
		Library:    "throttled/throttled v2 (GCRARateLimiter)",
		Reproduces: "GCRA with RateQuota{MaxRate, MaxBurst}: MaxBurst+1 requests at once; the emission interval is the unit divided by the count in whole nanoseconds, as PerSec and the others compute it",
		Params: []Param{
			{Name: "per_sec", Usage: "requests per second (throttled.PerSec)"},
			{Name: "per_min", Usage: "requests per minute (throttled.PerMin)"},
			{Name: "per_hour", Usage: "requests per hour (throttled.PerHour)"},
			{Name: "per_day", Usage: "requests per day (throttled.PerDay)"},
			{Name: "max_burst", Usage: "requests beyond the first allowed at once", Default: "0"},
		},
		Mapping:     "gcra: capacity = max_burst + 1, rate = 1 per floor(unit / per_*) ns",
		Burst:       "max_burst=5 lets 6 requests in at once; for 5, give max_burst=4",
		Example:     "per_sec=10,max_burst=4",
		Differences: "throttled's stores read the time themselves (memstore in nanoseconds, its Redis store in microseconds)",
		build:       throttled,
	},
	{
		Name:       "spring-cloud-gateway",
		Library:    "Spring Cloud Gateway RedisRateLimiter (request_rate_limiter.lua)",
		Reproduces: "a token bucket read in whole seconds (Redis TIME's seconds), refilled replenishRate tokens per whole second up to burstCapacity, each request taking requestedTokens",
		Params: []Param{
			{Name: "replenishRate", Usage: "tokens added per second"},
			{Name: "burstCapacity", Usage: "the bucket size in tokens (default: replenishRate)"},
			{Name: "requestedTokens", Usage: "tokens one request takes", Default: "1"},
		},
		Mapping:     "tick-queue: capacity = burstCapacity / requestedTokens, rate = replenishRate / requestedTokens per second, tick = 1s, parts = requestedTokens, delay = capacity (no delays), clock = clamp",
		Burst:       "burstCapacity=5 lets 5 requests in at once (5 / requestedTokens)",
		Example:     "replenishRate=1,burstCapacity=5",
		Differences: "requestedTokens must divide burstCapacity; a time earlier than the last moves its clock back in the script, here the clock rule applies",
		build:       springCloudGateway,
	},
}

// All returns every preset, in a fixed order.
func All() []Preset { return slices.Clone(presets) }

// Names returns the presets' names, in the order of All.
func Names() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the preset named name.
func Lookup(name string) (*Preset, bool) {
	for i := range presets {
		if presets[i].Name == name {
			p := presets[i]
			return &p, true
		}
	}
	return nil, false
}

// ParamNames returns the names of p's parameters.
func (p *Preset) ParamNames() []string {
	names := make([]string, len(p.Params))
	for i, prm := range p.Params {
		names[i] = prm.Name
	}
	return names
}

// Limiter returns the algorithm and policy that reproduce the library with
// the parameters given, by the library's names ("rate" -> "1r/s"; a flag
// such as "nodelay" -> "true"). Unknown parameters and bad values are
// errors that name the parameter.
func (p *Preset) Limiter(params map[string]string) (limiters.Algorithm, limiters.Policy, error) {
	v := values{}
	for k, val := range params {
		prm := p.param(k)
		if prm == nil {
			return 0, limiters.Policy{}, errorf("%s has no parameter %q (valid: %s)", p.Name, k, strings.Join(p.ParamNames(), ", "))
		}
		v[k] = val
	}
	for _, prm := range p.Params {
		if _, ok := v[prm.Name]; !ok && prm.Default != "" {
			v[prm.Name] = prm.Default
		}
	}
	a, pol, err := p.build(v)
	if err != nil {
		return 0, limiters.Policy{}, errorf("%s: %v", p.Name, err)
	}
	if err := pol.Validate(a); err != nil {
		return 0, limiters.Policy{}, errorf("%s: %s", p.Name, policyText(err))
	}
	return a, pol, nil
}

// policyText is the message of a limiters error without the package's
// name.
func policyText(err error) string {
	if pe, ok := err.(*limiters.PolicyError); ok {
		return pe.Text()
	}
	return err.Error()
}

func (p *Preset) param(name string) *Param {
	for i := range p.Params {
		if p.Params[i].Name == name {
			return &p.Params[i]
		}
	}
	return nil
}

// count returns v[name] as a whole number of at least least.
func (v values) count(name string, least int64) (int64, error) {
	s, ok := v[name]
	if !ok {
		return 0, fmt.Errorf("%s must be given", name)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a whole number", name, s)
	}
	if n < least {
		return 0, fmt.Errorf("%s must be at least %d, got %d", name, least, n)
	}
	return n, nil
}

// flag returns v[name] as a boolean.
func (v values) flag(name string) (bool, error) {
	s := v[name]
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", name, s)
	}
	return b, nil
}

// duration returns v[name] as a positive Go duration.
func (v values) duration(name string) (time.Duration, error) {
	s := v[name]
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive Go duration such as 1s or 1m", name, s)
	}
	return d, nil
}

// envoyUnits are the units of Envoy's RateLimit descriptors.
var envoyUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
}

func envoy(v values) (limiters.Algorithm, limiters.Policy, error) {
	n, err := v.count("requests_per_unit", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	unit, ok := envoyUnits[strings.ToLower(v["unit"])]
	if !ok {
		return 0, limiters.Policy{}, fmt.Errorf("unit %q: want second, minute, hour or day", v["unit"])
	}
	stop, err := v.flag("stop_when_over")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	a := limiters.FixedWindowHits
	if stop {
		a = limiters.FixedWindow
	}
	// Envoy reads the time in whole seconds; its windows are whole
	// seconds, so that changes which window a hit falls in nowhere.
	return a, limiters.Policy{Limit: n, Window: unit}, nil
}

func nginx(v values) (limiters.Algorithm, limiters.Policy, error) {
	text := v["rate"]
	if text == "" {
		return 0, limiters.Policy{}, fmt.Errorf("rate must be given, as Nr/s or Nr/m")
	}
	// ngx_http_limit_req_zone: rate = N * 1000 / scale, in whole
	// thousandths of a request per second.
	scale := int64(0)
	num := text
	switch {
	case strings.HasSuffix(text, "r/s"):
		scale, num = 1, strings.TrimSuffix(text, "r/s")
	case strings.HasSuffix(text, "r/m"):
		scale, num = 60, strings.TrimSuffix(text, "r/m")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if scale == 0 || err != nil || n <= 0 {
		return 0, limiters.Policy{}, fmt.Errorf("rate %q: want a positive whole number of requests per second or minute, as 10r/s or 30r/m", text)
	}
	if n > math.MaxInt64/1000 {
		return 0, limiters.Policy{}, fmt.Errorf("rate %q is out of range", text)
	}
	milli := n * 1000 / scale
	burst, err := v.count("burst", 0)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if burst > math.MaxInt64/4000 {
		return 0, limiters.Policy{}, fmt.Errorf("burst %d is out of range", burst)
	}
	delay, err := v.count("delay", 0)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	nodelay, err := v.flag("nodelay")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if nodelay {
		if _, given := v["delay"]; given && v["delay"] != "0" {
			return 0, limiters.Policy{}, fmt.Errorf("nodelay and delay=%d given together; nginx takes one of them", delay)
		}
		delay = burst
	}
	return limiters.TickQueue, limiters.Policy{
		Capacity: burst + 1,
		Rate:     limiters.Rate{N: milli, Per: 1000 * time.Second},
		Tick:     time.Millisecond,
		Parts:    1000,
		Delay:    min(delay, burst),
		Clock:    limiters.ClockClamp, // nginx takes a time up to 60 s back as no time passing
	}, nil
}

func redisRate(v values) (limiters.Algorithm, limiters.Policy, error) {
	rate, err := v.count("rate", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	burst, err := v.count("burst", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	period, err := v.duration("period")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.GCRA, limiters.Policy{Capacity: burst, Rate: limiters.Rate{N: rate, Per: period}}, nil
}

func xTimeRate(v values) (limiters.Algorithm, limiters.Policy, error) {
	b, err := v.count("b", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	_, hasR := v["r"]
	_, hasEvery := v["every"]
	var r limiters.Rate
	switch {
	case hasR == hasEvery:
		return 0, limiters.Policy{}, fmt.Errorf("give one of r (tokens per second) and every (a Go duration)")
	case hasR:
		if r, err = limiters.ParseRate(v["r"], time.Second); err != nil || strings.Contains(v["r"], "/") {
			return 0, limiters.Policy{}, fmt.Errorf("r %q: want a positive decimal number of tokens per second", v["r"])
		}
	default:
		every, err := v.duration("every")
		if err != nil {
			return 0, limiters.Policy{}, err
		}
		r = limiters.Rate{N: 1, Per: every}
	}
	return limiters.TokenBucket, limiters.Policy{Capacity: b, Rate: r}, nil
}

// throttledUnits are throttled's Per* constructors: Rate{period: unit / n}.
var throttledUnits = []struct {
	name string
	unit time.Duration
}{{"per_sec", time.Second}, {"per_min", time.Minute}, {"per_hour", time.Hour}, {"per_day", 24 * time.Hour}}

func throttled(v values) (limiters.Algorithm, limiters.Policy, error) {
	var period time.Duration
	var given []string
	for _, u := range throttledUnits {
		if _, ok := v[u.name]; !ok {
			continue
		}
		given = append(given, u.name)
		n, err := v.count(u.name, 1)
		if err != nil {
			return 0, limiters.Policy{}, err
		}
		// throttled.PerSec(n) is Rate{time.Second / time.Duration(n), n}:
		// the period in whole nanoseconds, rounded down.
		period = u.unit / time.Duration(n)
	}
	if len(given) != 1 {
		return 0, limiters.Policy{}, fmt.Errorf("give one of per_sec, per_min, per_hour and per_day")
	}
	if period <= 0 {
		return 0, limiters.Policy{}, fmt.Errorf("%s leaves a period of 0ns (throttled rounds the unit / count down)", given[0])
	}
	maxBurst, err := v.count("max_burst", 0)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if maxBurst == math.MaxInt64 {
		return 0, limiters.Policy{}, fmt.Errorf("max_burst %d is out of range", maxBurst)
	}
	return limiters.GCRA, limiters.Policy{Capacity: maxBurst + 1, Rate: limiters.Rate{N: 1, Per: period}}, nil
}

func springCloudGateway(v values) (limiters.Algorithm, limiters.Policy, error) {
	rate, err := v.count("replenishRate", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if _, ok := v["burstCapacity"]; !ok {
		v["burstCapacity"] = strconv.FormatInt(rate, 10)
	}
	burst, err := v.count("burstCapacity", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	tokens, err := v.count("requestedTokens", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if tokens > math.MaxInt64/int64(time.Second) {
		return 0, limiters.Policy{}, fmt.Errorf("requestedTokens %d is out of range", tokens)
	}
	if burst%tokens != 0 {
		return 0, limiters.Policy{}, fmt.Errorf("requestedTokens %d does not divide burstCapacity %d: the capacity must be a whole number of requests", tokens, burst)
	}
	// The script stores nothing when its TTL, floor(2 * burstCapacity /
	// replenishRate) seconds, is 0: every request then finds a full bucket.
	if burst <= (rate-1)/2 {
		return 0, limiters.Policy{}, fmt.Errorf("burstCapacity %d is below replenishRate/2 (%d): the script's TTL is 0, it keeps no state and allows every request", burst, rate)
	}
	capacity := burst / tokens
	return limiters.TickQueue, limiters.Policy{
		Capacity: capacity,
		Rate:     limiters.Rate{N: rate, Per: time.Duration(tokens) * time.Second},
		Tick:     time.Second,
		Parts:    tokens,
		Delay:    capacity,
		Clock:    limiters.ClockClamp,
	}, nil
}
