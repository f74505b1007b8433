// Package presets describes real rate-limiting libraries and gateways as
// limiters of package limiters: each preset takes that library's own
// parameters and returns the library kind (limiters.LibraryAlgorithms)
// and policy that decide as it does, bit for bit, its floating-point
// arithmetic, its clock and its quirks included.
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
	// Ignores lists what the library is configured with that the
	// preset takes no notice of, and why that changes no decision, or
	// says that it does.
	Ignores string
	// Time says how the preset reads a trace's times, and how a numeric
	// trace's times fall on the library's calendar.
	Time string
	// Proven says what the preset was proven against and how: the
	// library's version, and whether the real thing ran.
	Proven string

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

// values are a preset's parameters as given, by name; given records the
// names given explicitly, as defaults are filled in.
type values struct {
	m     map[string]string
	given map[string]bool
}

func (v values) get(name string) (string, bool) {
	s, ok := v.m[name]
	return s, ok
}

// Versions the presets were proven against, in CI wherever the real thing
// runs here.
const (
	XTimeRateVersion = "golang.org/x/time v0.16.0"
	RedisRateVersion = "github.com/go-redis/redis_rate/v10 v10.0.1"
	ThrottledVersion = "github.com/throttled/throttled/v2 v2.15.0"
	NginxVersion     = "nginx 1.22.1 (Debian 1.22.1-9+deb12u11)"
	HAProxyVersion   = "HAProxy 2.6.12 (Debian 2.6.12-1+deb12u4)"
	RedisVersion     = "redis-server 7.0.15 (Debian 5:7.0.15-1~deb12u10)"
	EnvoyVersion     = "envoyproxy/ratelimit at commit f2fb157 (2026-07-05)"
	SpringVersion    = "spring-cloud-gateway at commit 5227205 (2026-08-21)"
)

var presets = []Preset{
	{
		Name:    "envoy",
		Library: "Envoy's ratelimit service (envoyproxy/ratelimit), Redis fixed-window cache",
		Reproduces: "its window: the Unix time in whole seconds divided by the unit with Go's division (truncated toward zero, so before 1970 " +
			"the window around 0 is twice as long); every hit added to the window's counter before it is compared (INCRBY, then the check), " +
			"a cost (hits_addend) above requests_per_unit included, so a client over the limit stays refused for the rest of the window; " +
			"OK while the counter is within requests_per_unit; LimitRemaining (0 when over) as remaining and DurationUntilReset " +
			"(unit - now%unit, whole seconds) as reset_after; hits near the limit (above floor(limit*0.8)) and over it as its near_limit " +
			"and over_limit statistics count them (--explain); units second to year (a month is 30 days, a year 365)",
		Params: []Param{
			{Name: "requests_per_unit", Usage: "requests allowed per unit"},
			{Name: "unit", Usage: "second, minute, hour, day, week, month or year"},
			{Name: "stop_when_over", Usage: "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: spares a request's other descriptors, not this one", Default: "false"},
		},
		Mapping:     "envoy-fixed-window: limit = requests_per_unit, window = unit",
		Burst:       "no burst parameter: requests_per_unit=5 allows 5 per window of the unit, up to 10 across a window's edge",
		Example:     "requests_per_unit=10,unit=hour",
		Differences: "one descriptor per request: a request whose other descriptors are over their limits is not modelled; a hit in a window earlier than the key's latest one is judged by --clock, where the service would add it to that window's key if Redis still held it; the service reports no retry time: retry_after is ratesim's, the exact wait until the next window",
		Ignores: "stop_when_over, which with one descriptor changes nothing (the over-limit key is incremented all the same: src/redis/fixed_cache_impl.go); " +
			"the local over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES), which skips the increment once over the limit and so changes no decision; " +
			"EXPIRATION_JITTER_MAX_SECONDS, as a window's key is never read after its window; NEAR_LIMIT_RATIO other than 0.8 (statistics only)",
		Time:   "Unix seconds, rounded down: a numeric trace's 0 is 1970-01-01T00:00:00Z, so its windows are aligned to 0; a hit in a window earlier than the key's latest is judged by --clock",
		Proven: "not run here (a gRPC service with Redis): one test per documented fact of " + EnvoyVersion + ", src/limiter/base_limiter.go, src/redis/fixed_cache_impl.go and src/utils/utilities.go",
		build:  envoy,
	},
	{
		Name:    "nginx",
		Library: "nginx limit_req (ngx_http_limit_req_module)",
		Reproduces: "ngx_http_limit_req_lookup and _account as they compute: time in whole milliseconds of nginx's clock, excess in thousandths of a request, " +
			"excess = max(0, excess - rate*ms/1000 + 1000) in unsigned arithmetic, refused above burst*1000 and then unchanged, a key's first request " +
			"given a node with excess 0, last updated only when ms is not 0, a time up to 60 s earlier taken as ms = 0 and one earlier still as ms = 1; " +
			"rate in r/m kept in whole thousandths per second (1r/m is 16/1000 r/s); delays of (excess - delay*1000)*1000/rate ms past delay=N " +
			"(nodelay: none); and the zone: a node per key, moved to the head of its queue at every lookup, a key without one first deleting up to two " +
			"nodes at the tail idle for 60 s whose excess has drained (ngx_http_limit_req_expire) and, with the zone full, the tail node whatever it holds, " +
			"the zone holding as many nodes as nginx's slab allocator fits in its size for keys of key_bytes",
		Params: []Param{
			{Name: "rate", Usage: "Nr/s or Nr/m (a bare N is N r/s, as nginx reads it)"},
			{Name: "burst", Usage: "requests queued beyond the one being served (given, at least 1)", Default: "0"},
			{Name: "nodelay", Usage: "queued requests pass at once", Flag: true, Default: "false"},
			{Name: "delay", Usage: "queued requests that pass at once (two-stage limiting; given, at least 1)", Default: "0"},
			{Name: "zone", Usage: "limit_req_zone's zone=NAME:SIZE, the size in bytes, k or m (at least 32k)", Default: "one:10m"},
			{Name: "key_bytes", Usage: "the key's length in bytes: 4 for $binary_remote_addr over IPv4, 16 over IPv6, up to 39 for $remote_addr", Default: "4"},
		},
		Mapping:     "nginx-limit-req: capacity = burst + 1, rate = rate in whole thousandths per second, delay = delay (burst with nodelay), zone nodes from zone and key_bytes",
		Burst:       "burst=5 lets 6 requests in at once: the one served and 5 queued (delayed 1/rate apart unless nodelay)",
		Example:     "rate=1r/s,burst=5,nodelay",
		Differences: "one limit_req per location (several in one location, and limit_req_dry_run, are not modelled); nginx has no cost: a request of cost c counts as c requests at the same millisecond, all passing or none, and a cost above burst+1 is refused without touching the zone; every key takes a node of key_bytes; nginx reports no retry time: retry_after is ratesim's",
		Ignores:     "limit_req_status and limit_req_log_level (what a refusal returns and logs, not whether it is one); the zone's name, but for its length's one slab slot",
		Time:        "whole milliseconds of the trace's times: nginx's clock is monotonic, and only differences count, so the calendar does not matter; a time earlier than a key's latest is taken as nginx takes it (--clock does not apply)",
		Proven:      NginxVersion + ": a real server started on loopback in CI, several limit_req configurations (nodelay, delayed, delay=N, r/m, a small zone that expires and evicts), decision times from $connection_time over one HTTP/2 connection",
		build:       nginx,
	},
	{
		Name:    "redis-rate",
		Library: "go-redis/redis_rate v10 (GCRA in a Lua script)",
		Reproduces: "the allowN script's float64 arithmetic step by step: emission_interval = period / rate, the script's now = (TIME seconds - 1483228800) + " +
			"microseconds/1e6, tat = max(tat, now), refused when now - (tat + emission_interval*cost - emission_interval*burst) is negative; " +
			"Remaining as it returns it (truncated; 0 on a refusal), retry_after and reset_after as Lua's tostring writes them (14 digits) " +
			"converted to a Duration as redis_rate converts them, a finite retry_after for a cost above the burst; the key's expiry after " +
			"ceil(reset_after) seconds, counted as Redis counts it, which never comes before the key's tat",
		Params: []Param{
			{Name: "rate", Usage: "Limit.Rate: requests per period"},
			{Name: "burst", Usage: "Limit.Burst: requests at once (redis_rate.PerSecond(n) has burst n)"},
			{Name: "period", Usage: "Limit.Period, a Go duration", Default: "1s"},
		},
		Mapping:     "redis-rate-gcra: capacity = burst, rate = rate per period, with rate and period kept apart as the script divides them",
		Burst:       "burst=5 lets 5 requests in at once",
		Example:     "rate=10,burst=10,period=1s",
		Differences: "the script reads Redis's clock three times (TIME, the expiry check, SET's expiry), in microseconds and milliseconds; here once, the request's time, which changes no decision as a key never expires before its tat; AllowAtMost is not modelled",
		Ignores:     "the key's prefix and the Redis deployment (one server, cluster or ring decide alike)",
		Time: "Unix time, read in microseconds and counted in float64 seconds since 2017-01-01T00:00:00Z, whose rounding grows with the date " +
			"(since 2025-07-04T21:24:16Z a 0.1 s step rounds to +23.8 ns): a numeric trace's 0 is 1970-01-01T00:00:00Z, 47 years before that epoch, " +
			"where the steps round differently than today; give RFC 3339 times to replay a trace at its own date; a time earlier than a key's latest is taken as the script takes it (--clock does not apply)",
		Proven: RedisRateVersion + ": its Go code and Lua script on " + RedisVersion + " in CI, the server's TIME read around each call",
		build:  redisRate,
	},
	{
		Name:    "x-time-rate",
		Library: "golang.org/x/time/rate",
		Reproduces: "Limiter.AllowN(t, n) as it computes: float64 tokens, refilled by elapsed.Seconds()*limit and capped at b, the limit as the " +
			"float64 rate.Limit(r) or rate.Every(d) holds; allowed when the tokens left are not negative or the deficit's wait converts to 0 ns; " +
			"remaining as TokensAt truncates, retry_after the reservation's delay (Reservation.DelayFrom), a cost above b refused for ever; " +
			"a time earlier than the last refills nothing and, allowed, moves the limiter's clock back to it",
		Params: []Param{
			{Name: "r", Usage: "tokens per second (rate.Limit), a decimal"},
			{Name: "every", Usage: "one token per this Go duration (rate.Every), instead of r"},
			{Name: "b", Usage: "the bucket size (burst)"},
		},
		Mapping:     "x-time-rate-tokens: capacity = b, rate = r per second (or 1 per every), the float64 limit as the library holds it",
		Burst:       "b=5 lets 5 requests in at once",
		Example:     "r=1,b=3",
		Differences: "AllowN only: Reserve and Wait, which take tokens on credit, are not modelled; reset_after, which the library does not report, is the first nanosecond its tokens are full again",
		Ignores:     "nothing: r (or every) and b are all NewLimiter takes",
		Time:        "nanoseconds, as time.Unix(0, t): only differences count; a time earlier than the last is taken as x/time/rate takes it (--clock does not apply)",
		Proven:      XTimeRateVersion + ": AllowN, TokensAt and the reservation's delay in process, on random traces in CI",
		build:       xTimeRate,
	},
	{
		Name:    "throttled",
		Library: "throttled/throttled v2 (GCRARateLimiterCtx)",
		Reproduces: "RateLimitCtx with RateQuota{MaxRate, MaxBurst}: GCRA in whole nanoseconds, the emission interval the unit divided by the count " +
			"and rounded down as PerSec and the others compute it, MaxBurst+1 requests at once; Remaining, ResetAfter and RetryAfter as it reports them, " +
			"a quantity above MaxBurst+1 leaving its ttl at 0 (Remaining MaxBurst+1, ResetAfter 0); with store=redis, its Redis store's clock " +
			"(Redis TIME, microseconds) and its keys' expiry after the ttl in whole seconds rounded down, at least 1, after which a request finds a fresh key",
		Params: []Param{
			{Name: "per_sec", Usage: "requests per second (throttled.PerSec)"},
			{Name: "per_min", Usage: "requests per minute (throttled.PerMin)"},
			{Name: "per_hour", Usage: "requests per hour (throttled.PerHour)"},
			{Name: "per_day", Usage: "requests per day (throttled.PerDay)"},
			{Name: "max_burst", Usage: "requests beyond the first allowed at once", Default: "0"},
			{Name: "store", Usage: "memory (memstore) or redis (goredisstore)", Default: "memory"},
		},
		Mapping:     "throttled-gcra: capacity = max_burst + 1, rate = 1 per floor(unit / per_*) ns",
		Burst:       "max_burst=5 lets 6 requests in at once; for 5, give max_burst=4",
		Example:     "per_sec=10,max_burst=4",
		Differences: "memstore's maxKeys, which evicts the least recently used keys of a full store, is not modelled: the store is unbounded; with store=redis the store reads Redis's clock once per attempt and sets the expiry a little later, here at the request's time",
		Ignores:     "the store's key prefix",
		Time:        "nanoseconds (memory) or Unix microseconds (redis): only differences count, and expiry in whole seconds from the request; a time earlier than a key's latest is taken as throttled takes it (--clock does not apply)",
		Proven:      ThrottledVersion + ": memstore with SetTimeNow in process, and its Redis store (goredisstore.v9) on " + RedisVersion + ", the time read from the store's own TIME command, in CI",
		build:       throttled,
	},
	{
		Name:    "spring-cloud-gateway",
		Library: "Spring Cloud Gateway RedisRateLimiter (request_rate_limiter.lua)",
		Reproduces: "the script as it runs: tokens in whole numbers, refilled replenishRate per whole second of Redis TIME's seconds up to burstCapacity, " +
			"each request taking requestedTokens; the tokens and the second stored at every request, refused or not, for floor(2*burstCapacity/replenishRate) " +
			"seconds, and nothing stored when that is 0, so every request then finds a full bucket; burstCapacity 1 when not given (its Config's default), " +
			"0 refusing everything; a requestedTokens that does not divide burstCapacity leaving the rest in the bucket; remaining in tokens, as X-RateLimit-Remaining",
		Params: []Param{
			{Name: "replenishRate", Usage: "tokens added per second"},
			{Name: "burstCapacity", Usage: "the bucket size in tokens", Default: "1"},
			{Name: "requestedTokens", Usage: "tokens one request takes", Default: "1"},
		},
		Mapping:     "spring-token-bucket: rate = replenishRate per second, with burstCapacity and requestedTokens as given",
		Burst:       "burstCapacity=5 lets 5 / requestedTokens requests in at once",
		Example:     "replenishRate=1,burstCapacity=5",
		Differences: "a cost c takes c * requestedTokens; Config.setBurstCapacity refuses a burstCapacity below replenishRate when replenishRate was bound first, here any burstCapacity is run as the script runs it; the script reports no retry time: retry_after is ratesim's, the whole second at which the tokens suffice",
		Ignores:     "the keys' expiry, which the script's TTL makes no shorter than the time the bucket takes to fill (an expired key and a kept one decide alike); the header names",
		Time:        "Unix seconds, rounded down: a numeric trace's seconds are counted from its 0; a time earlier than a key's latest refills nothing and is stored, as the script does (--clock does not apply)",
		Proven:      "not run here (a Java gateway): one test per documented fact of " + SpringVersion + ", request_rate_limiter.lua and RedisRateLimiter.java",
		build:       springCloudGateway,
	},
	{
		Name:    "haproxy",
		Library: "HAProxy stick table http_req_rate with track-sc0 and http-request deny",
		Reproduces: "http_req_rate(period) of a stick table, tracked by every request and read by sc_http_req_rate(0) gt limit: the freq_ctr's " +
			"update_freq_ctr_period and read_freq_ctr_period in 32-bit millisecond ticks and integers, the period's start tick kept even (its lock bit), " +
			"(previous * time left + current * period) / period, the flapping correction at low rates; every tracked request counted, denied ones included, " +
			"so a client that keeps sending over the limit stays denied; an entry idle for expire purged",
		Params: []Param{
			{Name: "period", Usage: "http_req_rate's period, a Go duration in whole milliseconds"},
			{Name: "limit", Usage: "deny when sc_http_req_rate(0) is greater than this (gt N)"},
			{Name: "expire", Usage: "the stick table's expire, at least twice the period"},
		},
		Mapping:     "haproxy-http-req-rate: limit = limit, window = period, with expire",
		Burst:       "limit=10 lets 10 requests in at once, and about 20 across a period's edge after a quiet one",
		Example:     "period=10s,limit=10,expire=30s",
		Differences: "HAProxy has no cost: a request of cost c counts as c tracked requests at once, passing when the rate after them is within the limit; HAProxy reports no remaining or retry time: they are ratesim's, from its arithmetic",
		Ignores:     "the table's size: a full table purges its oldest entries, which is not modelled (the table is taken never to fill); the key's type",
		Time:        "HAProxy's now_ms: the trace's millisecond, truncated to 32 bits; a time earlier than a key's latest is counted as HAProxy counts it (--clock does not apply)",
		Proven:      HAProxyVersion + ": a real server started on loopback in CI, several frontends, its internal clock read by a Lua sample fetch in the same rule set",
		build:       haproxy,
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
	v := values{m: map[string]string{}, given: map[string]bool{}}
	for k, val := range params {
		prm := p.param(k)
		if prm == nil {
			return 0, limiters.Policy{}, errorf("%s has no parameter %q (valid: %s)", p.Name, k, strings.Join(p.ParamNames(), ", "))
		}
		v.m[k], v.given[k] = val, true
	}
	for _, prm := range p.Params {
		if _, ok := v.m[prm.Name]; !ok && prm.Default != "" {
			v.m[prm.Name] = prm.Default
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

// count returns v's name as a whole number of at least least.
func (v values) count(name string, least int64) (int64, error) {
	s, ok := v.get(name)
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

// flag returns v's name as a boolean.
func (v values) flag(name string) (bool, error) {
	s, _ := v.get(name)
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", name, s)
	}
	return b, nil
}

// duration returns v's name as a positive Go duration.
func (v values) duration(name string) (time.Duration, error) {
	s, ok := v.get(name)
	if !ok {
		return 0, fmt.Errorf("%s must be given, as a Go duration such as 10s", name)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive Go duration such as 1s or 1m", name, s)
	}
	return d, nil
}

// envoyUnits are the units of Envoy's RateLimit descriptors, as
// utils.UnitToDivider counts them.
var envoyUnits = []struct {
	name string
	secs int64
}{
	{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400},
	{"week", 7 * 86400}, {"month", 30 * 86400}, {"year", 365 * 86400},
}

func envoy(v values) (limiters.Algorithm, limiters.Policy, error) {
	n, err := v.count("requests_per_unit", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	name, _ := v.get("unit")
	var unit time.Duration
	for _, u := range envoyUnits {
		if strings.EqualFold(name, u.name) {
			unit = time.Duration(u.secs) * time.Second
		}
	}
	if unit == 0 {
		return 0, limiters.Policy{}, fmt.Errorf("unit %q: want second, minute, hour, day, week, month or year", name)
	}
	if _, err := v.flag("stop_when_over"); err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.EnvoyRateLimit, limiters.Policy{Limit: n, Window: unit}, nil
}

func nginx(v values) (limiters.Algorithm, limiters.Policy, error) {
	text, _ := v.get("rate")
	if text == "" {
		return 0, limiters.Policy{}, fmt.Errorf("rate must be given, as Nr/s or Nr/m")
	}
	// ngx_http_limit_req_zone: a suffix r/s or r/m, else the whole
	// value read as requests per second; rate = N * 1000 / scale, in
	// whole thousandths of a request per second.
	scale, num := int64(1), text
	switch {
	case strings.HasSuffix(text, "r/s"):
		num = strings.TrimSuffix(text, "r/s")
	case strings.HasSuffix(text, "r/m"):
		scale, num = 60, strings.TrimSuffix(text, "r/m")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, limiters.Policy{}, fmt.Errorf("rate %q: want a positive whole number of requests per second or minute, as 10r/s or 30r/m", text)
	}
	if n > math.MaxInt64/1000 {
		return 0, limiters.Policy{}, fmt.Errorf("rate %q is out of range", text)
	}
	milli := n * 1000 / scale
	if milli == 0 {
		return 0, limiters.Policy{}, fmt.Errorf("rate %q is below one thousandth of a request per second, which nginx keeps as 0", text)
	}
	// ngx_http_limit_req refuses burst=0 and delay=0 as invalid values.
	least := func(name string) int64 {
		if v.given[name] {
			return 1
		}
		return 0
	}
	burst, err := v.count("burst", least("burst"))
	if err != nil {
		if v.given["burst"] {
			err = fmt.Errorf("%w (nginx refuses burst=0: leave burst out for none)", err)
		}
		return 0, limiters.Policy{}, err
	}
	if burst > math.MaxInt64/4000 {
		return 0, limiters.Policy{}, fmt.Errorf("burst %d is out of range", burst)
	}
	delay, err := v.count("delay", least("delay"))
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	nodelay, err := v.flag("nodelay")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if nodelay {
		if v.given["delay"] {
			return 0, limiters.Policy{}, fmt.Errorf("nodelay and delay=%d given together; nginx takes the last of them, give one", delay)
		}
		delay = burst
	}
	zone, _ := v.get("zone")
	keyBytes, err := v.count("key_bytes", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	nodes, err := ZoneNodes(zone, keyBytes)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.NginxLimitReq, limiters.Policy{
		Capacity: burst + 1,
		Rate:     limiters.Rate{N: milli, Per: 1000 * time.Second},
		Delay:    min(delay, burst),
		Library:  limiters.Library{Nginx: limiters.NginxConfig{Nodes: nodes}},
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
	r, err := lowest(rate, period)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.RedisRate, limiters.Policy{
		Capacity: burst,
		Rate:     r,
		Library:  limiters.Library{RedisRate: limiters.RedisRateConfig{Rate: rate, Period: period}},
	}, nil
}

// lowest returns n per d in lowest terms.
func lowest(n int64, d time.Duration) (limiters.Rate, error) {
	r, err := limiters.ParseRate(strconv.FormatInt(n, 10)+"/"+strconv.FormatInt(int64(d), 10)+"ns", time.Second)
	if err != nil {
		return limiters.Rate{}, fmt.Errorf("rate %d per %v is out of range", n, d)
	}
	return r, nil
}

func xTimeRate(v values) (limiters.Algorithm, limiters.Policy, error) {
	b, err := v.count("b", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	rText, hasR := v.get("r")
	_, hasEvery := v.get("every")
	var r limiters.Rate
	var limit float64
	switch {
	case hasR == hasEvery:
		return 0, limiters.Policy{}, fmt.Errorf("give one of r (tokens per second) and every (a Go duration)")
	case hasR:
		bad := fmt.Errorf("r %q: want a positive decimal number of tokens per second", rText)
		if r, err = limiters.ParseRate(rText, time.Second); err != nil || strings.Contains(rText, "/") {
			return 0, limiters.Policy{}, bad
		}
		// rate.Limit(r): the float64 nearest the decimal, as Go reads
		// a constant or strconv.ParseFloat a text.
		if limit, err = strconv.ParseFloat(rText, 64); err != nil || limit <= 0 || math.IsInf(limit, 0) {
			return 0, limiters.Policy{}, bad
		}
	default:
		every, err := v.duration("every")
		if err != nil {
			return 0, limiters.Policy{}, err
		}
		r = limiters.Rate{N: 1, Per: every}
		limit = Every(every)
	}
	return limiters.XTimeRate, limiters.Policy{
		Capacity: b,
		Rate:     r,
		Library:  limiters.Library{XTimeRate: limiters.XTimeRateConfig{Limit: limit}},
	}, nil
}

// Every returns rate.Every(interval) as golang.org/x/time/rate computes
// it, a float64 number of tokens per second: 1 / interval.Seconds(), or
// rate.Inf (math.MaxFloat64) for an interval of 0 or less.
func Every(interval time.Duration) float64 {
	if interval <= 0 {
		return math.MaxFloat64
	}
	return 1 / interval.Seconds()
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
		if _, ok := v.get(u.name); !ok {
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
	var redis bool
	switch s, _ := v.get("store"); s {
	case "memory":
	case "redis":
		redis = true
	default:
		return 0, limiters.Policy{}, fmt.Errorf("store %q: want memory or redis", s)
	}
	return limiters.Throttled, limiters.Policy{
		Capacity: maxBurst + 1,
		Rate:     limiters.Rate{N: 1, Per: period},
		Library:  limiters.Library{Throttled: limiters.ThrottledConfig{Redis: redis}},
	}, nil
}

func springCloudGateway(v values) (limiters.Algorithm, limiters.Policy, error) {
	rate, err := v.count("replenishRate", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if rate > math.MaxInt32 {
		return 0, limiters.Policy{}, fmt.Errorf("replenishRate %d is out of range (a Java int)", rate)
	}
	burst, err := v.count("burstCapacity", 0)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	tokens, err := v.count("requestedTokens", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if tokens > math.MaxInt32 {
		return 0, limiters.Policy{}, fmt.Errorf("requestedTokens %d is out of range (a Java int)", tokens)
	}
	return limiters.SpringGateway, limiters.Policy{
		Capacity: burst, // for reports: the kind reads Library.Spring
		Rate:     limiters.Rate{N: rate, Per: time.Second},
		Library:  limiters.Library{Spring: limiters.SpringConfig{BurstCapacity: burst, RequestedTokens: tokens}},
	}, nil
}

func haproxy(v values) (limiters.Algorithm, limiters.Policy, error) {
	period, err := v.duration("period")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	limit, err := v.count("limit", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if _, ok := v.get("expire"); !ok {
		return 0, limiters.Policy{}, fmt.Errorf("expire must be given: without one HAProxy keeps entries until the table is full, which is not modelled")
	}
	expire, err := v.duration("expire")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.HAProxyRate, limiters.Policy{
		Limit:   limit,
		Window:  period,
		Library: limiters.Library{HAProxy: limiters.HAProxyConfig{Expire: expire}},
	}, nil
}
