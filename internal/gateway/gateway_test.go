package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// testTrace is a trace of a few clients on a few paths, bursts and quiet
// spells, times in milliseconds written as seconds.
func testTrace(paths ...string) string {
	var b strings.Builder
	b.WriteString("user,timestamp,ip,path,x_api_key,method\n")
	ips := []string{"203.0.113.7", "2001:db8::1", "198.51.100.23"}
	t := int64(0)
	x := uint64(42)
	for i := range 400 {
		x = x*6364136223846793005 + 1442695040888963407
		step := int64(x>>33) % 700
		if i%37 == 0 {
			step += 5000 // a quiet spell
		}
		t += step
		ip := ips[(x>>20)%uint64(len(ips))]
		path := paths[(x>>40)%uint64(len(paths))]
		fmt.Fprintf(&b, "u%d,%d.%03d,%s,%s,key%d,%s\n", i%3, t/1000, t%1000, ip, path, (x>>50)%2, []string{"GET", "POST"}[(x>>45)%2])
	}
	return b.String()
}

// decisions replays trace through the stack and returns one line per
// request: whether it passed, which policy refused it, its delay, and
// what each shadow policy would have done.
func decisions(t *testing.T, trace string, pols []sim.StackPolicy, mode sim.StackMode) []string {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_, err = sim.RunStack(r, sim.Config{}, sim.Stack{Policies: pols, Mode: mode}, func(d *sim.StackDecision) error {
		line := fmt.Sprintf("%d allowed=%v delay=%v", d.Line, d.Decision.Allowed, d.Decision.Delay)
		if d.Refused >= 0 {
			line += " by " + pols[d.Refused].Name
		}
		for i, p := range pols {
			if p.Shadow {
				line += fmt.Sprintf(" %s=%v", p.Name, d.Decisions[i].Allowed)
			}
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// policiesStack reads a policy file's policies: and binds them.
func policiesStack(t *testing.T, yaml string) []sim.StackPolicy {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	pf, err := spec.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{File: pf}
	pols, err := cfg.Stack(time.Second, []string{"user"})
	if err != nil {
		t.Fatal(err)
	}
	return pols
}

func read(t *testing.T, name string, opt Options) *Config {
	t.Helper()
	cfg, err := Read(filepath.Join("testdata", name), opt)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func stack(t *testing.T, cfg *Config) ([]sim.StackPolicy, sim.StackMode) {
	t.Helper()
	pols, err := cfg.Stack(time.Second, []string{"user"})
	if err != nil {
		t.Fatal(err)
	}
	mode, err := sim.ParseStackMode(cfg.File.Stack)
	if err != nil {
		t.Fatal(err)
	}
	return pols, mode
}

func same(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d decisions, want %d", len(got), len(want))
	}
	allowed := 0
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("request %d: config decides %q, the policies %q", i, got[i], want[i])
		}
		if !strings.Contains(got[i], "=false") {
			allowed++
		}
	}
	if allowed == 0 || allowed == len(got) {
		t.Fatalf("%d of %d allowed: the trace does not exercise the limits", allowed, len(got))
	}
}

// TestConfigsDecideAsPolicies: each format's config, replayed, decides as
// the same limits written as a policy file's policies: (by presets); for
// nginx, on traces of one location at a time, the location's limits.
func TestConfigsDecideAsPolicies(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		opt        Options
		paths      []string
		policies   string
		refund     bool
	}{
		{name: "nginx /", file: "nginx.conf", paths: []string{"/", "/search", "/api"}, refund: true, policies: `policies:
  - {name: perip, algorithm: tick-queue, capacity: 6, rate: 1000/1000s, tick: 1ms, parts: 1000, delay: 5, clock: clamp, key: [ip]}
`},
		{name: "nginx /api/", file: "nginx.conf", paths: []string{"/api/orders", "/api/users?id=1"}, refund: true, policies: `policies:
  - {name: perip, algorithm: tick-queue, capacity: 6, rate: 1000/1000s, tick: 1ms, parts: 1000, delay: 5, clock: clamp, key: [ip]}
  - {name: api, algorithm: tick-queue, capacity: 3, rate: 500/1000s, tick: 1ms, parts: 1000, delay: 0, clock: clamp, key: [ip]}
`},
		{name: "nginx = /login", file: "nginx.conf", paths: []string{"/login"}, refund: true, policies: `policies:
  - {name: login, algorithm: tick-queue, capacity: 1, rate: 16/1000s, tick: 1ms, parts: 1000, delay: 0, clock: clamp, key: [ip], shadow: true}
`},
		{name: "envoy", file: "envoy.yaml", opt: Options{Descriptors: [][]Entry{{{"remote_address", "ip"}}}}, paths: []string{"/"}, policies: `policies:
  - {name: remote_address, algorithm: envoy, requests_per_unit: 2, unit: second, key: [ip]}
`},
		{name: "envoy /login", file: "envoy.yaml", opt: Options{Descriptors: [][]Entry{{{"path", "path"}}}}, paths: []string{"/login"}, policies: `policies:
  - {name: path_/login, algorithm: envoy, requests_per_unit: 3, unit: minute, key: [path]}
`},
		{name: "envoy /api/ wildcard", file: "envoy.yaml", opt: Options{Descriptors: [][]Entry{{{"path", "path"}}}}, paths: []string{"/api/x"}, policies: `policies:
  - {name: path_/api/*, algorithm: envoy, requests_per_unit: 5, unit: second, key: [path], shadow: true}
`},
		{name: "envoy-local", file: "envoy-local.yaml", paths: []string{"/"}, policies: `policies:
  - {name: http_local_rate_limiter, algorithm: envoy-local, max_tokens: 3, tokens_per_fill: 1, fill_interval: 1s, key: []}
`},
		{name: "kong", file: "kong.yml", paths: []string{"/"}, refund: true, policies: `policies:
  - {name: second, algorithm: kong, second: 2, key: [ip]}
  - {name: minute, algorithm: kong, minute: 5, key: [ip]}
  - {name: hour, algorithm: kong, hour: 1000, key: [ip]}
`},
		{name: "apigw", file: "apigw.yaml", paths: []string{"/"}, policies: `policies:
  - {name: ProdStage, algorithm: token-bucket, capacity: 4, rate: 2.5/1s, key: [path, method]}
  - {name: PartnerPlan, algorithm: apigw, rateLimit: 1, burstLimit: 2, key: [x_api_key]}
`},
		{name: "apigw method", file: "apigw.json", paths: []string{"/other", "/more"}, policies: `policies:
  - {name: prod, algorithm: token-bucket, capacity: 2, rate: 0.5/1s, key: [path, method]}
`},
		{name: "cloudflare /login", file: "cloudflare.json", paths: []string{"/login", "/login?next=/"}, policies: `policies:
  - {name: login, algorithm: cloudflare, requests_per_period: 2, period: 10, mitigation_timeout: 60, key: [ip]}
  - {name: watch, algorithm: blocking-counter, limit: 5, window: 10s, block: 0, key: [ip], shadow: true}
`},
		{name: "cloudflare /api/", file: "cloudflare.json", paths: []string{"/api/orders", "/api/users"}, policies: `policies:
  - {name: api keys, algorithm: blocking-counter, limit: 20, window: 1m, block: 10m, key: [x_api_key]}
  - {name: watch, algorithm: cloudflare, requests_per_period: 5, period: 10, key: [ip], shadow: true}
`},
		{name: "traefik", file: "traefik.yml", paths: []string{"/"}, policies: `policies:
  - {name: api-ratelimit, algorithm: traefik, average: 2, period: 1s, burst: 3, key: [ip]}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := read(t, tc.file, tc.opt)
			pols, mode := stack(t, cfg)
			want := policiesStack(t, tc.policies)
			wantMode := sim.StackConsume
			if tc.refund {
				wantMode = sim.StackRefund
			}
			if mode != wantMode {
				t.Errorf("stack mode %s, want %s", mode, wantMode)
			}
			trace := testTrace(tc.paths...)
			// The policies the config gives that do not apply to these
			// paths pass every request by: the decisions are those of the
			// policies alone.
			got := decisions(t, trace, pols, mode)
			for i := range got {
				got[i] = dropShadows(got[i], want)
			}
			same(t, got, decisions(t, trace, want, wantMode))
		})
	}
}

// dropShadows leaves out of a decision line the shadow policies that are
// not in want (those of other locations).
func dropShadows(line string, want []sim.StackPolicy) string {
	var keep []string
	for _, w := range strings.Fields(line) {
		name, _, ok := strings.Cut(w, "=")
		if ok && name != "allowed" && name != "delay" {
			found := false
			for _, p := range want {
				found = found || p.Name == name
			}
			if !found {
				continue
			}
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}

// TestEnvoyMostSpecific: the service takes the descriptor with the
// request's value over a wildcard, a wildcard over the key's default, and
// the limit at the request's last entry.
func TestEnvoyMostSpecific(t *testing.T) {
	cfg := read(t, "envoy.yaml", Options{Descriptors: [][]Entry{{{"path", "path"}}}})
	applies := map[string][]string{}
	for _, p := range cfg.File.Policies {
		for _, path := range []string{"/login", "/api/orders", "/api", "/search"} {
			if p.Match.Applies([][]byte{[]byte(path)}) {
				applies[path] = append(applies[path], p.Name)
			}
		}
	}
	want := map[string]string{"/login": "path_/login", "/api/orders": "path_/api/*", "/api": "path", "/search": "path"}
	for path, name := range want {
		if got := strings.Join(applies[path], ","); got != name {
			t.Errorf("%s: applies %q, want %q", path, got, name)
		}
	}
}

// TestEnvoyReplaces: a limit another matching one replaces does not
// apply.
func TestEnvoyReplaces(t *testing.T) {
	cfg, err := Parse("rl.yaml", []byte(`domain: d
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 10, name: per-ip}
  - key: path
    value: /bulk
    rate_limit: {unit: second, requests_per_unit: 100, replaces: [{name: per-ip}]}
`), Options{Descriptors: [][]Entry{{{"remote_address", "ip"}}, {{"path", "path"}}}})
	if err != nil {
		t.Fatal(err)
	}
	perIP := cfg.File.Policies[0]
	if perIP.Name != "remote_address" {
		t.Fatalf("first policy %s", perIP.Name)
	}
	if perIP.Match.Applies([][]byte{[]byte("1.2.3.4"), []byte("/bulk")}) {
		t.Error("per-ip applies to /bulk, which replaces it")
	}
	if !perIP.Match.Applies([][]byte{[]byte("1.2.3.4"), []byte("/other")}) {
		t.Error("per-ip does not apply to /other")
	}
}

// TestNginxLocations: = before the longest prefix, the query left out,
// the server's level for a path no location takes.
func TestNginxLocations(t *testing.T) {
	locs := []location{{server: true}, {path: "/"}, {path: "/api/"}, {kind: "=", path: "/login"}, {path: "/login"}}
	for path, want := range map[string]int{"/": 1, "/api/x?y=1": 2, "/login": 3, "/login?next=/": 3, "/login/x": 4, "/apix": 1} {
		if got := selectLocation(locs, []byte(path)); got != want {
			t.Errorf("%s: location %d, want %d", path, got, want)
		}
	}
	if got := selectLocation(locs[2:], []byte("/other")); got != 0 {
		t.Errorf("no location: %d", got)
	}
}

// TestBadConfigs: a bad config of each kind is an *Error naming the file,
// the line and what is wrong.
func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		format, text, want string
		opt                Options
	}{
		{"nginx", "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/h;\nlimit_req zone=one;\n", "c:2: nginx: rate", Options{}},
		{"nginx", "limit_req_zone $cookie_session zone=one:10m rate=1r/s;\n", "c:1: limit_req_zone key $cookie_session: no trace field is known for it; map it with --policy-map '$cookie_session=FIELD'", Options{}},
		{"nginx", "server {\n  location / {\n    limit_req zone=missing;\n  }\n}\n", "c:3: limit_req zone=missing: no limit_req_zone defines it", Options{}},
		{"nginx", "server {\n  location ~ ^/api {\n  }\n}\n", "c:2: regular expression locations (~) are not supported", Options{}},
		{"nginx", "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s\n", "c:1: directive \"limit_req_zone\" is not terminated", Options{}},
		{"envoy", "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n", "c:4: unit \"fortnight\"", Options{Descriptors: [][]Entry{{{"a", "ip"}}}}},
		{"envoy", "domain: d\ndescriptors:\n  - key: a\n  - key: a\n", "c:4: duplicate descriptor a (also at line 3)", Options{Descriptors: [][]Entry{{{"a", "ip"}}}}},
		{"envoy", "domain: d\ndescriptors:\n  - key: a\n    rate_limits: {}\n", "c:4: a descriptor: unknown key \"rate_limits\"", Options{Descriptors: [][]Entry{{{"a", "ip"}}}}},
		{"envoy-local", "token_bucket:\n  max_tokens: 0\n  fill_interval: 1s\n", "c:2: max_tokens must be at least 1", Options{}},
		{"envoy-local", "token_bucket:\n  max_tokens: 5\n  fill_interval: 10ms\n", "c:2: envoy-local: fill_interval 10ms is below 50ms", Options{}},
		{"kong", "name: rate-limiting\nconfig:\n  minute: 5\n  month: 100\n", "c:4: month limits follow calendar months", Options{}},
		{"kong", "name: rate-limiting\nconfig:\n  minute: five\n", "c:3: minute \"five\": want a whole number", Options{}},
		{"traefik", "http:\n  middlewares:\n    m:\n      rateLimit:\n        average: 5\n        period: soon\n", "c:6: period \"soon\"", Options{}},
		{"apigw", "Resources:\n  S:\n    Type: AWS::ApiGateway::Stage\n    Properties:\n      MethodSettings:\n        - ThrottlingRateLimit: fast\n          ThrottlingBurstLimit: 5\n", "c:6: ThrottlingRateLimit \"fast\": want a positive number", Options{}},
		{"apigw", "throttle:\n  rateLimit: 10\n", "c:2: usage-plan: throttling needs both rateLimit and burstLimit", Options{}},
		{"cloudflare", "{\"rules\": [{\"action\": \"block\",\n  \"ratelimit\": {\"characteristics\": [\"cf.colo.id\", \"ip.src\"], \"period\": 60, \"requests_per_period\": \"many\"}}]}\n", "c:2: requests_per_period \"many\": want a whole number", Options{}},
		{"cloudflare", "rules:\n  - action: block\n    expression: http.request.method eq \"POST\"\n    ratelimit: {characteristics: [cf.colo.id, ip.src], period: 10, requests_per_period: 5}\n", "c:3: expression \"http.request.method eq \\\"POST\\\"\": ratesim replays a rule for every request (true) or by path", Options{}},
		{"cloudflare", "rules:\n  - action: block\n    ratelimit:\n      characteristics: [cf.colo.id, ip.geoip.country]\n      period: 10\n      requests_per_period: 5\n", "c:4: characteristic ip.geoip.country: no trace field is known for it; map it with --policy-map 'ip.geoip.country=FIELD'", Options{}},
		{"cloudflare", "resource \"cloudflare_ruleset\" \"rl\" {\n  rules {\n    ratelimit {\n      period = 10\n    }\n  }\n}\n", "c:1: Terraform's HCL is not read", Options{}},
		{"cloudflare", "rules:\n  - action: redirect\n    ratelimit: {characteristics: [ip.src], period: 10, requests_per_period: 5}\n", "c:2: action \"redirect\"", Options{}},
		{"haproxy", "frontend f\n    stick-table type ip size 1k expire 30s store http_req_rate(10s)\n    http-request track-sc1 src\n", "c:3: track-sc1: ratesim reads track-sc0", Options{}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			tc.opt.Format = tc.format
			_, err := Parse("c", []byte(tc.text), tc.opt)
			if err == nil {
				t.Fatalf("no error for\n%s", tc.text)
			}
			if _, ok := err.(*Error); !ok {
				t.Errorf("%T, want *Error", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to start %q", err, tc.want)
			}
		})
	}
}

// TestSniff tells each testdata config's format from its content.
func TestSniff(t *testing.T) {
	for file, want := range map[string]string{"nginx.conf": "nginx", "envoy.yaml": "envoy", "envoy-local.yaml": "envoy-local", "kong.yml": "kong", "traefik.yml": "traefik", "haproxy.cfg": "haproxy", "apigw.yaml": "apigw", "apigw.json": "apigw", "cloudflare.json": "cloudflare"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(data); got != want {
			t.Errorf("%s: sniffed %q, want %q", file, got, want)
		}
	}
}

// TestHAProxy reads the stick table and deny rule as the haproxy preset,
// where this build has it.
func TestHAProxy(t *testing.T) {
	if _, ok := presets.Lookup("haproxy"); !ok {
		_, err := Read("testdata/haproxy.cfg", Options{})
		if err == nil || !strings.Contains(err.Error(), "haproxy.cfg:5: this build has no haproxy preset") {
			t.Fatalf("error %v, want one naming the missing preset at the deny rule", err)
		}
		return
	}
	cfg := read(t, "haproxy.cfg", Options{})
	pols, mode := stack(t, cfg)
	want := policiesStack(t, `policies:
  - {name: web, algorithm: haproxy, period: 10s, limit: 3, expire: 30s, key: [ip]}
`)
	trace := testTrace("/")
	same(t, decisions(t, trace, pols, mode), decisions(t, trace, want, sim.StackConsume))
}

// TestAPIGatewayMethods: a method with settings of its own takes them,
// and the stage's default leaves it alone.
func TestAPIGatewayMethods(t *testing.T) {
	cfg := read(t, "apigw.json", Options{})
	applies := func(p spec.StackPolicy, path, method string) bool {
		if p.Match == nil {
			return true
		}
		return p.Match.Applies([][]byte{[]byte(path), []byte(method)})
	}
	def, post := cfg.File.Policies[0], cfg.File.Policies[1]
	if def.Name != "prod" || post.Name != "prod POST /orders" {
		t.Fatalf("policies %s, %s", def.Name, post.Name)
	}
	for _, c := range []struct {
		path, method string
		def, post    bool
	}{{"/orders", "POST", false, true}, {"/orders?x=1", "post", false, true}, {"/orders", "GET", true, false}, {"/other", "POST", true, false}} {
		if got := applies(def, c.path, c.method); got != c.def {
			t.Errorf("%s %s: default applies %v", c.method, c.path, got)
		}
		if got := applies(post, c.path, c.method); got != c.post {
			t.Errorf("%s %s: POST /orders applies %v", c.method, c.path, got)
		}
	}
}

// TestNginxEmptyKey: "requests with an empty key value are not
// accounted": a zone keyed on a header limits only the requests that
// carry it; $server_name is the same for every request.
func TestNginxEmptyKey(t *testing.T) {
	cfg, err := Parse("c", []byte("limit_req_zone $http_x_api_key zone=k:1m rate=1r/s;\nlimit_req_zone $server_name zone=s:1m rate=100r/s;\nlimit_req zone=k;\nlimit_req zone=s;\n"), Options{Format: "nginx"})
	if err != nil {
		t.Fatal(err)
	}
	k, s := cfg.File.Policies[0], cfg.File.Policies[1]
	if k.Match == nil || k.Match.Applies([][]byte{{}}) || !k.Match.Applies([][]byte{[]byte("key1")}) {
		t.Error("zone k applies to a request without the header, or not to one with it")
	}
	if len(s.Key) != 0 || s.Match != nil {
		t.Errorf("zone s keys on %v (match %v), want one key for the server", s.Key, s.Match != nil)
	}
}
