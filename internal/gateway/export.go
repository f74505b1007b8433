package gateway

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
)

// Targets are the configs Export writes.
var Targets = choice.List{
	{Name: "nginx", Description: "limit_req_zone and limit_req, keyed on $binary_remote_addr"},
	{Name: "envoy", Description: "an Envoy ratelimit service config, keyed on remote_address"},
	{Name: "envoy-local", Description: "an Envoy local_ratelimit filter's token_bucket (one bucket for every request)"},
	{Name: "kong", Description: "a Kong rate-limiting plugin in kong.yml, limit_by ip"},
	{Name: "traefik", Description: "a Traefik rateLimit middleware (YAML dynamic config)"},
	{Name: "haproxy", Description: "a frontend's stick table http_req_rate, track-sc0 src and http-request deny"},
	{Name: "apigw", Description: "an Amazon API Gateway usage plan's Throttle (per API key), in CloudFormation"},
	{Name: "cloudflare", Description: "a Cloudflare rate limiting rule (the API's JSON), counting by ip.src"},
	{Name: "redis-rate", Description: "a go-redis/redis_rate Limit, in Go"},
	{Name: "x-time-rate", Description: "a golang.org/x/time/rate Limiter, in Go"},
}

// An Exported is a limiter written as a gateway's config.
type Exported struct {
	// Text is the config.
	Text string
	// Exact reports whether the config decides as the limiter does.
	Exact bool
	// Notes say what was approximated, and how.
	Notes []string
	// Limiter is, for the Go libraries' targets, the --limiter that
	// replays the config ("redis-rate:rate=10,burst=10,period=1s").
	Limiter string
}

// Export writes the limiter l as a config of target (one of Targets):
// the config that decides as l does where the target can say it, else
// the nearest one, with notes saying what differs.
func Export(target string, l sim.Lane) (*Exported, error) {
	p := l.Policy
	ex := &Exported{Exact: true}
	var approxNotes []string
	approx := func(format string, args ...any) {
		ex.Exact = false
		approxNotes = append(approxNotes, fmt.Sprintf(format, args...))
	}
	// The preset the config is read back as, and its parameters: the
	// export is exact when they give the limiter itself.
	var preset string
	var params map[string]string
	// The limiter as a count per time and a size of burst, for targets
	// of another family.
	var n int64
	var per time.Duration
	var burst int64
	if l.Algorithm.Windowed() {
		n, per, burst = p.Limit, p.Window, p.Limit
	} else {
		n, per, burst = p.Rate.N, p.Rate.Per, p.Capacity
	}
	if rr := p.Library.RedisRate; rr.Rate > 0 && rr.Period > 0 {
		n, per = rr.Rate, rr.Period // redis_rate's own Limit, not in lowest terms
	}
	if n <= 0 || per <= 0 || burst <= 0 {
		return nil, fmt.Errorf("gateway: %s has no rate to export", l.Name)
	}
	switch target {
	case "nginx":
		// --policy-from reads an nginx config as nginx's queue in whole
		// milliseconds and thousandths of a request (its zone's
		// evictions aside, which a stack does not replay).
		exact := l.Algorithm == limiters.TickQueue && p.Tick == time.Millisecond && p.Parts == 1000 && p.Clock == limiters.ClockClamp
		switch {
		case l.Algorithm.Library():
			approx("%s is written as its limit_req; read back, it is nginx's queue without the zone's evictions", l.Algorithm)
		case !exact:
			approx("%s is not nginx's leaky queue (whole milliseconds, thousandths of a request): the nearest limit_req is written", l.Algorithm)
		}
		rate, ok := nginxRate(n, per)
		if !ok {
			approx("nginx keeps rates in whole thousandths of a request per second: %d per %s written as %s", n, per, rate)
		}
		args := fmt.Sprintf(" burst=%d", burst-1)
		delay := burst - 1 // token buckets and windows pass their burst at once
		if l.Algorithm == limiters.TickQueue {
			delay = min(p.Delay, burst-1)
		} else if l.Algorithm == limiters.LeakyQueue {
			delay = 0
		}
		switch {
		case burst == 1:
			args = ""
		case delay >= burst-1:
			args += " nodelay"
		case delay > 0:
			args += fmt.Sprintf(" delay=%d", delay)
		}
		ex.Text = fmt.Sprintf("limit_req_zone $binary_remote_addr zone=ratesim:10m rate=%s;\n\nserver {\n    listen 80;\n    location / {\n        limit_req zone=ratesim%s;\n        limit_req_status 429;\n    }\n}\n", rate, args)
	case "envoy":
		unit, un, ok := envoyUnitOf(per)
		count := n
		if !ok {
			count = max(1, int64(new(big.Int).Div(new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(un))), big.NewInt(int64(per))).Int64()))
			approx("Envoy's windows are a second, minute, hour, day, week, month (30 days) or year (365 days): %d per %s written as %d per %s", n, per, count, unit)
		}
		switch {
		case l.Algorithm == limiters.FixedWindowHits:
		case l.Algorithm == limiters.FixedWindow:
			approx("Envoy counts refused requests toward the window too (unless the service runs with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT)")
		default:
			approx("%s is not a fixed window: the service's fixed window of the same rate is written (up to twice the count across a window's edge)", l.Algorithm)
		}
		preset, params = "envoy", map[string]string{"requests_per_unit": fmt.Sprint(count), "unit": unit}
		ex.Text = fmt.Sprintf("domain: ratesim\ndescriptors:\n  - key: remote_address\n    rate_limit:\n      unit: %s\n      requests_per_unit: %d\n", unit, count)
	case "envoy-local":
		fill, perFill := per, n
		exact := l.Algorithm == limiters.TickQueue && p.Parts == 1 && p.Delay >= p.Capacity && p.Tick > 0 && p.Clock == 0
		if exact {
			// tokens_per_fill whole per tick
			num := new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(p.Tick)))
			q, m := new(big.Int).QuoRem(num, big.NewInt(int64(per)), new(big.Int))
			exact = m.Sign() == 0 && q.IsInt64()
			if exact {
				fill, perFill = p.Tick, q.Int64()
			}
		}
		if !exact {
			approx("%s is not a bucket refilled at fixed intervals: max_tokens %d with %d tokens every %s is written", l.Algorithm, burst, perFill, fill)
		}
		if fill < 50*time.Millisecond {
			k := int64((50*time.Millisecond + fill - 1) / fill)
			fill, perFill = fill*time.Duration(k), perFill*k
			approx("Envoy refuses a fill_interval under 50ms: %d tokens every %s", perFill, fill)
		}
		preset, params = "envoy-local", map[string]string{"max_tokens": fmt.Sprint(burst), "tokens_per_fill": fmt.Sprint(perFill), "fill_interval": goDuration(fill)}
		ex.Notes = append(ex.Notes, "local_ratelimit is one bucket for every request the filter sees (per Envoy process), not one per client")
		ex.Text = fmt.Sprintf("name: envoy.filters.http.local_ratelimit\ntyped_config:\n  \"@type\": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit\n  stat_prefix: http_local_rate_limiter\n  token_bucket:\n    max_tokens: %d\n    tokens_per_fill: %d\n    fill_interval: %s\n  filter_enabled:\n    default_value: {numerator: 100, denominator: HUNDRED}\n  filter_enforced:\n    default_value: {numerator: 100, denominator: HUNDRED}\n", burst, perFill, goDuration(fill))
	case "kong":
		period, ok := "", false
		for _, kp := range kongWindows {
			if kp.window == per {
				period, ok = kp.name, true
			}
		}
		count := n
		if !ok {
			period = "second"
			for _, kp := range kongWindows {
				if kp.window <= per {
					period = kp.name
					count = max(1, int64(new(big.Int).Div(new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(kp.window))), big.NewInt(int64(per))).Int64()))
				}
			}
			approx("Kong's windows are the calendar second, minute, hour and day: %d per %s written as %d per %s", n, per, count, period)
		}
		if l.Algorithm != limiters.FixedWindow {
			approx("%s is not a fixed window that leaves refused requests uncounted: Kong's is written", l.Algorithm)
		}
		preset, params = "kong", map[string]string{period: fmt.Sprint(count)}
		ex.Text = fmt.Sprintf("_format_version: \"3.0\"\nplugins:\n  - name: rate-limiting\n    config:\n      %s: %d\n      limit_by: ip\n      policy: local\n", period, count)
	case "traefik":
		if l.Algorithm != limiters.TokenBucket && l.Algorithm != limiters.GCRA {
			approx("%s is not a token bucket: Traefik's of the same rate and burst is written", l.Algorithm)
		}
		preset, params = "traefik", map[string]string{"average": fmt.Sprint(n), "period": goDuration(per), "burst": fmt.Sprint(burst)}
		ex.Notes = append(ex.Notes, "Traefik also delays a request that would find a token within 1/(2*rate) (at most 500ms) instead of refusing it")
		ex.Text = fmt.Sprintf("http:\n  middlewares:\n    ratesim:\n      rateLimit:\n        average: %d\n        period: %s\n        burst: %d\n", n, goDuration(per), burst)
	case "apigw":
		if l.Algorithm != limiters.TokenBucket && l.Algorithm != limiters.GCRA {
			approx("%s is not a token bucket: API Gateway's of the same rate and burst is written", l.Algorithm)
		}
		r, ok := decimalPerSecond(n, per)
		if !ok {
			r = new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(time.Second))), big.NewInt(int64(per))).FloatString(6)
			approx("API Gateway's rateLimit is a decimal per second: %d per %s written as %s", n, per, r)
		}
		ex.Notes = append(ex.Notes, "a usage plan's limits are per API key; a stage's MethodSettings would be one bucket for every client")
		ex.Text = fmt.Sprintf("Resources:\n  RatesimPlan:\n    Type: AWS::ApiGateway::UsagePlan\n    Properties:\n      UsagePlanName: ratesim\n      Throttle:\n        RateLimit: %s\n        BurstLimit: %d\n", r, burst)
	case "haproxy":
		// sc_http_req_rate(0) gt N denies the request that takes the
		// rate above N: N requests per period pass.
		period := per
		if period%time.Millisecond != 0 {
			period = (period/time.Millisecond + 1) * time.Millisecond
			approx("HAProxy's periods are whole milliseconds: %d per %s written as %d per %s", n, per, n, period)
		}
		if l.Algorithm != limiters.HAProxyRate {
			approx("%s is not HAProxy's http_req_rate (a sliding estimate that counts denied requests too): the rate of the same limit and period is written", l.Algorithm)
		}
		params = map[string]string{"period": goDuration(period), "limit": fmt.Sprint(n)}
		expire := ""
		if e := p.Library.HAProxy.Expire; l.Algorithm == limiters.HAProxyRate && e > 0 {
			expire = " expire " + haproxyText(e)
			params["expire"] = goDuration(e)
		}
		preset = "haproxy"
		ex.Text = fmt.Sprintf("frontend ratesim\n    bind :80\n    stick-table type ip size 100k%s store http_req_rate(%s)\n    http-request track-sc0 src\n    http-request deny deny_status 429 if { sc_http_req_rate(0) gt %d }\n    default_backend app\n\nbackend app\n    server app1 127.0.0.1:8080\n", expire, haproxyText(period), n)
	case "cloudflare":
		window, block := per, time.Duration(0)
		if l.Algorithm == limiters.BlockingCounter {
			block = p.Block
		} else {
			approx("%s is not Cloudflare's counter (the estimate of a sliding counter): the rule of the same limit and period is written", l.Algorithm)
		}
		if window%time.Second != 0 || block%time.Second != 0 {
			window = (window + time.Second - 1) / time.Second * time.Second
			block = (block + time.Second - 1) / time.Second * time.Second
			approx("Cloudflare's period and mitigation_timeout are whole seconds: written as %s and %s", window, block)
		}
		count := n
		if l.Algorithm.Windowed() {
			count = p.Limit
		}
		preset, params = "cloudflare", map[string]string{"requests_per_period": fmt.Sprint(count), "period": fmt.Sprint(int64(window / time.Second)), "mitigation_timeout": fmt.Sprint(int64(block / time.Second))}
		ex.Notes = append(ex.Notes, "Cloudflare's counters are per data center (cf.colo.id); its plans allow some periods only (10, 60, 120, 300, 600, 3600 s)")
		ex.Text = fmt.Sprintf("{\n  \"rules\": [\n    {\n      \"description\": \"ratesim\",\n      \"action\": \"block\",\n      \"expression\": \"true\",\n      \"ratelimit\": {\n        \"characteristics\": [\"cf.colo.id\", \"ip.src\"],\n        \"period\": %d,\n        \"requests_per_period\": %d,\n        \"mitigation_timeout\": %d\n      }\n    }\n  ]\n}\n", window/time.Second, count, block/time.Second)
	case "redis-rate":
		if l.Algorithm != limiters.TokenBucket && l.Algorithm != limiters.GCRA {
			approx("%s is not GCRA: redis_rate's of the same rate and burst is written", l.Algorithm)
		}
		preset, params = "redis-rate", map[string]string{"rate": fmt.Sprint(n), "burst": fmt.Sprint(burst), "period": goDuration(per)}
		ex.Limiter = fmt.Sprintf("redis-rate:rate=%d,burst=%d,period=%s", n, burst, goDuration(per))
		ex.Text = fmt.Sprintf("// --limiter %s\nlimit := redis_rate.Limit{Rate: %d, Burst: %d, Period: %s}\nres, err := limiter.Allow(ctx, key, limit)\n", ex.Limiter, n, burst, goExpr(per))
	case "x-time-rate":
		if l.Algorithm != limiters.TokenBucket && l.Algorithm != limiters.GCRA {
			approx("%s is not a token bucket: x/time/rate's of the same rate and burst is written", l.Algorithm)
		}
		r, ok := decimalPerSecond(n, per)
		if ok {
			preset, params = "x-time-rate", map[string]string{"r": r, "b": fmt.Sprint(burst)}
			ex.Limiter = fmt.Sprintf("x-time-rate:r=%s,b=%d", r, burst)
			ex.Text = fmt.Sprintf("// --limiter %s\nlim := rate.NewLimiter(rate.Limit(%s), %d)\n", ex.Limiter, r, burst)
		} else {
			every := per / time.Duration(n)
			if every*time.Duration(n) != per {
				approx("%d per %s is neither a decimal per second nor one per whole nanoseconds: one every %s written", n, per, every)
			}
			preset, params = "x-time-rate", map[string]string{"every": goDuration(every), "b": fmt.Sprint(burst)}
			ex.Limiter = fmt.Sprintf("x-time-rate:every=%s,b=%d", goDuration(every), burst)
			ex.Text = fmt.Sprintf("// --limiter %s\nlim := rate.NewLimiter(rate.Every(%s), %d)\n", ex.Limiter, goExpr(every), burst)
		}
	default:
		return nil, fmt.Errorf("gateway: unknown export target %q (valid: %s)", target, Targets)
	}
	if preset != "" {
		if pr, ok := presets.Lookup(preset); ok {
			if a, pol, err := pr.Limiter(params); err == nil {
				// What the config is read back as decides the question;
				// the notes above only say why.
				same := a == l.Algorithm && pol.SameFor(a, l.Policy)
				switch {
				case same:
					ex.Exact, approxNotes = true, nil
				case len(approxNotes) == 0:
					ex.Exact = false
					approxNotes = append(approxNotes, fmt.Sprintf("read back, the config is %s with other parameters than %s", a, l.Name))
				}
			}
		}
	}
	ex.Notes = append(approxNotes, ex.Notes...)
	return ex, nil
}

// haproxyText writes d as an HAProxy time: whole seconds, else
// milliseconds (d is a whole number of them).
func haproxyText(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

// kongWindows are Kong's windows that are fixed lengths.
var kongWindows = []struct {
	name   string
	window time.Duration
}{{"second", time.Second}, {"minute", time.Minute}, {"hour", time.Hour}, {"day", 24 * time.Hour}}

// envoyUnitOrder are Envoy's units, shortest first.
var envoyUnitOrder = []string{"second", "minute", "hour", "day", "week", "month", "year"}

// envoyUnitOf returns the unit that is per, and whether there is one;
// else the shortest unit at least per (the longest when none is).
func envoyUnitOf(per time.Duration) (string, time.Duration, bool) {
	for _, u := range envoyUnitOrder {
		if envoyUnits[u] == per {
			return u, per, true
		}
	}
	for _, u := range envoyUnitOrder {
		if envoyUnits[u] > per {
			return u, envoyUnits[u], false
		}
	}
	return "year", envoyUnits["year"], false
}

// nginxRate writes n per per as nginx's rate, and whether nginx keeps it
// exactly: N r/s or N r/m, which nginx keeps as N*1000/60 thousandths per
// second, rounded down.
func nginxRate(n int64, per time.Duration) (string, bool) {
	want := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(n), big.NewInt(1000*int64(time.Second))), big.NewInt(int64(per))) // thousandths per second
	best, bestDiff := "", (*big.Rat)(nil)
	try := func(text string, milli int64) bool {
		if milli <= 0 {
			return false
		}
		d := new(big.Rat).Sub(want, new(big.Rat).SetInt64(milli))
		if d.Sign() == 0 {
			best = text
			return true
		}
		d.Abs(d)
		if bestDiff == nil || d.Cmp(bestDiff) < 0 {
			best, bestDiff = text, d
		}
		return false
	}
	perSec := new(big.Rat).Quo(want, big.NewRat(1000, 1))
	s := roundRat(perSec)
	if try(fmt.Sprintf("%dr/s", s), s*1000) {
		return best, true
	}
	m := roundRat(new(big.Rat).Mul(perSec, big.NewRat(60, 1)))
	for _, c := range []int64{m, m + 1, m - 1} {
		if c > 0 && try(fmt.Sprintf("%dr/m", c), c*1000/60) {
			return best, true
		}
	}
	return best, false
}

// roundRat rounds r to the nearest whole number, at least 1.
func roundRat(r *big.Rat) int64 {
	q := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(r.Num(), big.NewInt(2)), r.Denom()), new(big.Int).Mul(r.Denom(), big.NewInt(2)))
	if !q.IsInt64() || q.Int64() < 1 {
		return 1
	}
	return q.Int64()
}

// decimalPerSecond writes n per per as a decimal per second, and whether
// it has one that is exact.
func decimalPerSecond(n int64, per time.Duration) (string, bool) {
	r := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(time.Second))), big.NewInt(int64(per)))
	for digits := 0; digits <= 9; digits++ {
		s := r.FloatString(digits)
		back, _ := new(big.Rat).SetString(s)
		if back.Cmp(r) == 0 {
			return s, true
		}
	}
	return "", false
}

// goDuration writes d as a Go duration a config reads: "1s", "1m", "1h".
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.suffix)
		}
	}
	return d.String()
}

// goExpr writes d as a Go expression.
func goExpr(d time.Duration) string {
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"time.Hour", time.Hour}, {"time.Minute", time.Minute}, {"time.Second", time.Second}, {"time.Millisecond", time.Millisecond}, {"time.Microsecond", time.Microsecond}} {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// ReadBack reads an export of target back as the stack it replays, keyed
// on field where the config keys on the client's address.
func ReadBack(target string, ex *Exported, field string) (*Config, error) {
	if ex.Limiter != "" {
		return nil, fmt.Errorf("gateway: a %s export is Go code: replay it with --limiter %s", target, ex.Limiter)
	}
	opt := Options{Format: target, Fields: map[string]string{"$binary_remote_addr": field, "ip": field, "x-api-key": field},
		Descriptors: [][]Entry{{{Key: "remote_address", Field: field}}}}
	return Parse("export."+target, []byte(ex.Text), opt)
}

// Stack binds the config's policies in unit (the trace's), keyed as they
// say, each policy on key when it names none.
func (c *Config) Stack(unit time.Duration, key []string) ([]sim.StackPolicy, error) {
	lims := make([]spec.Limiter, len(c.File.Policies))
	for i, p := range c.File.Policies {
		lims[i] = p.Limiter
	}
	plan, err := spec.Resolve(spec.Inputs{Limiters: lims, Single: true})
	if err != nil {
		return nil, err
	}
	sp, err := plan.Bind(unit)
	if err != nil {
		return nil, err
	}
	out := make([]sim.StackPolicy, len(lims))
	for i, p := range c.File.Policies {
		k := p.Key
		if k == nil {
			k = key
		}
		out[i] = sim.StackPolicy{Lane: sp.Lanes[i], KeyFields: k, Shadow: p.Shadow, Match: p.Match}
	}
	return out, nil
}

// A Difference is how an exported config decides a trace against the
// limiter it came from.
type Difference struct {
	Requests int64
	// Allowed counts what the limiter allowed, ExportAllowed what the
	// config allowed; Differ the requests they decide apart.
	Allowed, ExportAllowed, Differ int64
}

// Compare replays src through the limiter l, keyed on key, and through
// the config c, and counts where they differ. Both only watch: neither's
// refusals change what the other sees.
func Compare(src sim.Source, l sim.Lane, key []string, c *Config, unit time.Duration) (*Difference, error) {
	pols, err := c.Stack(unit, key)
	if err != nil {
		return nil, err
	}
	l.Name = "ratesim-source-limiter"
	all := append([]sim.StackPolicy{{Lane: l, KeyFields: key, Shadow: true}}, pols...)
	for i := range all {
		all[i].Shadow = true
	}
	d := &Difference{}
	_, err = sim.RunStack(src, sim.Config{}, sim.Stack{Policies: all, Mode: sim.StackConsume}, func(sd *sim.StackDecision) error {
		d.Requests++
		a := sd.Decisions[0].Allowed
		b := true
		for _, x := range sd.Decisions[1:] {
			b = b && x.Allowed
		}
		if a {
			d.Allowed++
		}
		if b {
			d.ExportAllowed++
		}
		if a != b {
			d.Differ++
		}
		return nil
	})
	return d, err
}
