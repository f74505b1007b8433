package presets

import (
	"fmt"
	"math"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// gatewayPresets are API gateways' own limiters that the textbook kinds
// of package limiters express as they are (a fixed window, a token
// bucket, the tick queue), so they need no library kind of their own;
// each reads the gateway's parameter names.
var gatewayPresets = []Preset{
	{
		Name:    "envoy-local",
		Library: "Envoy's local rate limit filter (envoy.filters.http.local_ratelimit), token_bucket",
		Reproduces: "a bucket that starts with max_tokens and gains tokens_per_fill at the end of every fill_interval, up to max_tokens, " +
			"refilled by a timer: a request between two fills finds what the last fill left, never a fraction of a token",
		Params: []Param{
			{Name: "max_tokens", Usage: "the bucket size, also the tokens it starts with"},
			{Name: "tokens_per_fill", Usage: "tokens added at each fill", Default: "1"},
			{Name: "fill_interval", Usage: "time between fills, a Go duration (at least 50ms)"},
		},
		Mapping:     "tick-queue: capacity = max_tokens, rate = tokens_per_fill per fill_interval, tick = fill_interval, parts = 1, delay = capacity (no delays)",
		Burst:       "max_tokens=5 lets 5 requests in at once",
		Example:     "max_tokens=10,tokens_per_fill=10,fill_interval=1s",
		Differences: "Envoy's timer starts when the filter is created; here fills fall on multiples of fill_interval since the epoch",
		Ignores:     "filter_enabled and filter_enforced (read by --policy-from, where 0% enforced is a shadow policy); the bucket is per Envoy process, shared by its workers",
		Time:        "whole fill intervals: a request between two fills finds the tokens of the last; numeric traces count fills from 0",
		Proven:      "not run here: one test of the documented TokenBucket (envoy.type.v3.TokenBucket's max_tokens, tokens_per_fill, fill_interval)",
		build:       envoyLocal,
	},
	{
		Name:    "kong",
		Library: "Kong's rate-limiting plugin (policy local), one of its limits",
		Reproduces: "a fixed window aligned to the UTC calendar second, minute, hour or day; a request over the limit is refused and not counted " +
			"(the plugin increments its counters only for a request it lets through)",
		Params: []Param{
			{Name: "second", Usage: "requests per calendar second", Default: "0"},
			{Name: "minute", Usage: "requests per calendar minute", Default: "0"},
			{Name: "hour", Usage: "requests per calendar hour", Default: "0"},
			{Name: "day", Usage: "requests per calendar day (UTC)", Default: "0"},
		},
		Mapping:     "fixed-window: limit = the count, window = its period",
		Burst:       "no burst parameter: minute=5 allows 5 per calendar minute, up to 10 across a minute's edge",
		Example:     "minute=10",
		Differences: "one limit per preset; a plugin with several (minute and hour) is a stack of them, as --policy-from reads it; month and year follow calendar months and are not reproduced",
		Ignores:     "policy cluster and redis (counters shared between nodes, asynchronously with sync_rate), taken as one node's counters",
		Time:        "exact times; the windows fall on multiples of the period since the epoch, which for an RFC 3339 trace are Kong's UTC calendar seconds, minutes, hours and days",
		Proven:      "not run here (a Lua plugin in OpenResty): one test of the documented fixed, calendar-aligned windows",
		build:       kong,
	},
	{
		Name:    "traefik",
		Library: "Traefik's rateLimit middleware (golang.org/x/time/rate underneath)",
		Reproduces: "the token bucket of rate.NewLimiter(average/period, burst): burst requests at once, then average per period; " +
			"burst below 1 taken as 1, as the middleware does",
		Params: []Param{
			{Name: "average", Usage: "requests per period"},
			{Name: "period", Usage: "a Go duration", Default: "1s"},
			{Name: "burst", Usage: "requests at once", Default: "1"},
		},
		Mapping:     "token-bucket: capacity = max(burst, 1), rate = average per period",
		Burst:       "burst=5 lets 5 requests in at once",
		Example:     "average=10,period=1s,burst=20",
		Differences: "Traefik also admits a request that would find a token within its maximum delay (1/(2*rate) per second, at most 500ms), holding it that long; here that request is refused; x/time/rate's float64 tokens are kept exact",
		Ignores:     "sourceCriterion (read by --policy-from as the key) and the middleware's own bucket expiry",
		Time:        "exact times; a time earlier than a key's latest is judged by the clock rule",
		Proven:      "not run here: one test of the documented average, period and burst",
		build:       traefik,
	},
	{
		Name:    "apigw",
		Library: "Amazon API Gateway throttling (stage, method and usage plan limits)",
		Reproduces: "the token bucket API Gateway documents: burstLimit requests at once (the bucket), refilled at rateLimit requests per second; " +
			"a request that finds no token is refused (429) and takes none",
		Params: []Param{
			{Name: "rateLimit", Usage: "steady-state requests per second, a whole number (a fraction: read the config with --policy-from)"},
			{Name: "burstLimit", Usage: "the bucket: requests at once"},
		},
		Mapping:     "token-bucket: capacity = burstLimit, rate = rateLimit per second",
		Burst:       "burstLimit=5 lets 5 requests in at once",
		Example:     "rateLimit=10,burstLimit=20",
		Differences: "API Gateway's buckets are per Region and spread over its fleet: its limits are targets, not guarantees, and it may let a few more through",
		Ignores:     "the account's Region-wide limit and quotas (requests per day, week or month) of usage plans",
		Time:        "exact times; a time earlier than a key's latest is judged by the clock rule",
		Proven:      "not run here (a managed service): one test of the documented token bucket",
		build:       apigw,
	},
	{
		Name:    "cloudflare",
		Library: "Cloudflare's rate limiting rules (the WAF's http_ratelimit phase), a rule with the block action",
		Reproduces: "a counter per value of the rule's characteristics over period seconds; once the rate is over requests_per_period, " +
			"the client is blocked for mitigation_timeout seconds, every request of it refused whatever its rate",
		Params: []Param{
			{Name: "requests_per_period", Usage: "requests a client may make in a period"},
			{Name: "period", Usage: "the period, in seconds (10, 60, 120, 300, 600, 3600, ...)"},
			{Name: "mitigation_timeout", Usage: "how long a client over the rate is blocked, in seconds (0: only the requests over it)", Default: "0"},
		},
		Mapping:     "blocking-counter: limit = requests_per_period, window = period seconds, block = mitigation_timeout seconds",
		Burst:       "requests_per_period=10,period=60 lets 10 requests in at once, then blocks",
		Example:     "requests_per_period=100,period=60,mitigation_timeout=600",
		Differences: "the rate is the estimate Cloudflare describes for its counters (the previous period's count weighted by its share of the rolling period, plus the current one), computed exactly; requests refused while blocked are not counted",
		Ignores:     "the rule's expression and counting_expression (read by --policy-from only as far as a path the trace has), cf.colo.id (one data center: counters are per data center), the actions other than block (log is a shadow policy) and throttle's requests_to_origin",
		Time:        "exact times; periods fall on multiples of the period since the epoch",
		Proven:      "not run here (a managed service): one test of the documented example (1 request per 10 s, blocked for 10 minutes)",
		build:       cloudflare,
	},
}

// isGateway reports whether the preset named name is a gateway's, on a
// textbook kind.
func isGateway(name string) bool {
	for _, p := range gatewayPresets {
		if p.Name == name {
			return true
		}
	}
	return false
}

func init() {
	// The gateways follow the libraries in every list of presets.
	presets = append(presets, gatewayPresets...)
}

func envoyLocal(v values) (limiters.Algorithm, limiters.Policy, error) {
	maxTokens, err := v.count("max_tokens", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	perFill, err := v.count("tokens_per_fill", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	every, err := v.duration("fill_interval")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	// The filter refuses a config with fill_interval under 50ms.
	if every < 50*time.Millisecond {
		return 0, limiters.Policy{}, fmt.Errorf("fill_interval %s is below 50ms, which Envoy refuses", every)
	}
	return limiters.TickQueue, limiters.Policy{
		Capacity: maxTokens,
		Rate:     limiters.Rate{N: perFill, Per: every},
		Tick:     every,
		Parts:    1,
		Delay:    maxTokens,
	}, nil
}

// kongPeriods are the rate-limiting plugin's windows that are whole
// seconds from the epoch in UTC.
var kongPeriods = []struct {
	name   string
	window time.Duration
}{{"second", time.Second}, {"minute", time.Minute}, {"hour", time.Hour}, {"day", 24 * time.Hour}}

func kong(v values) (limiters.Algorithm, limiters.Policy, error) {
	var pol limiters.Policy
	given := 0
	for _, p := range kongPeriods {
		n, err := v.count(p.name, 0)
		if err != nil {
			return 0, limiters.Policy{}, err
		}
		if n > 0 {
			given++
			pol = limiters.Policy{Limit: n, Window: p.window}
		}
	}
	if given != 1 {
		return 0, limiters.Policy{}, fmt.Errorf("give one of second, minute, hour and day (several limits are a stack: read the plugin with --policy-from)")
	}
	return limiters.FixedWindow, pol, nil
}

func traefik(v values) (limiters.Algorithm, limiters.Policy, error) {
	average, err := v.count("average", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	period, err := v.duration("period")
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	burst, err := v.count("burst", math.MinInt64)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.TokenBucket, limiters.Policy{Capacity: max(burst, 1), Rate: limiters.Rate{N: average, Per: period}}, nil
}

func apigw(v values) (limiters.Algorithm, limiters.Policy, error) {
	rate, err := v.count("rateLimit", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	burst, err := v.count("burstLimit", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	return limiters.TokenBucket, limiters.Policy{Capacity: burst, Rate: limiters.Rate{N: rate, Per: time.Second}}, nil
}

func cloudflare(v values) (limiters.Algorithm, limiters.Policy, error) {
	limit, err := v.count("requests_per_period", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	period, err := v.count("period", 1)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	timeout, err := v.count("mitigation_timeout", 0)
	if err != nil {
		return 0, limiters.Policy{}, err
	}
	if period > math.MaxInt64/int64(time.Second) || timeout > math.MaxInt64/int64(time.Second) {
		return 0, limiters.Policy{}, fmt.Errorf("period and mitigation_timeout must be at most %d seconds", math.MaxInt64/int64(time.Second))
	}
	return limiters.BlockingCounter, limiters.Policy{Limit: limit, Window: time.Duration(period) * time.Second, Block: time.Duration(timeout) * time.Second}, nil
}
