package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/traces"
)

// TestLint: each warning, with its line.
func TestLint(t *testing.T) {
	for _, tc := range []struct {
		name, format, text, want string
		opt                      Options
	}{
		{"nginx r/m not whole thousandths", "nginx", "limit_req_zone $binary_remote_addr zone=one:10m rate=1r/m;\nlimit_req zone=one nodelay;\n",
			"c:1: warning: rate=1r/m is kept in whole thousandths of a request per second: 16/1000 r/s, one request per 62.500 s, not 60.000 s", Options{}},
		{"nginx burst without nodelay", "nginx", "limit_req_zone $binary_remote_addr zone=one:10m rate=2r/s;\nlimit_req zone=one burst=10;\n",
			"c:2: warning: burst=10 without nodelay delays the queued requests: up to 5.000 s of added latency", Options{}},
		{"nginx constant key", "nginx", "limit_req_zone global zone=one:10m rate=2r/s;\nlimit_req zone=one;\n",
			"c:1: warning: zone one keys on the constant \"global\": every client shares one limit", Options{}},
		{"envoy never matches", "envoy", "domain: d\ndescriptors:\n  - key: path\n    value: /a*\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: path\n    value: /ab*\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
			"c:6: warning: descriptor path=/ab* can never match: path=/a* at line 3 comes first", Options{Descriptors: [][]Entry{{{"path", "path"}}}}},
		{"envoy unreachable", "envoy", "domain: d\ndescriptors:\n  - key: user_id\n    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: path\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
			"c:3: warning: descriptor user_id can never match: no --descriptor sends the keys user_id", Options{Descriptors: [][]Entry{{{"path", "path"}}}}},
		{"envoy limits nothing", "envoy", "domain: d\ndescriptors:\n  - key: path\n  - key: ip\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
			"c:3: warning: descriptor path has neither a rate_limit nor descriptors", Options{Descriptors: [][]Entry{{{"ip", "ip"}}}}},
		{"kong longer period lower", "kong", "name: rate-limiting\nconfig:\n  minute: 100\n  hour: 50\n  limit_by: ip\n",
			"c:4: warning: hour: 50 is not above minute: 100, so the minute limit never refuses a request the hour limit lets through", Options{}},
		{"traefik burst below 1", "traefik", "http:\n  middlewares:\n    m:\n      rateLimit:\n        average: 5\n        burst: 0\n",
			"c:6: warning: burst 0 is below 1: Traefik takes it as 1", Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Format = tc.format
			cfg, err := Parse("c", []byte(tc.text), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range cfg.Warnings {
				got = append(got, w.String())
				if strings.HasPrefix(w.String(), tc.want) {
					return
				}
			}
			t.Errorf("warnings:\n%s\nwant one starting %q", strings.Join(got, "\n"), tc.want)
		})
	}
}

// TestLintWithoutDescriptors: lint reads an Envoy config for its
// warnings without the descriptors a replay needs.
func TestLintWithoutDescriptors(t *testing.T) {
	cfg, err := Parse("c", []byte("domain: d\ndescriptors:\n  - key: path\n"), Options{Format: "envoy", Lint: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || cfg.Warnings[0].String() != "c:3: warning: descriptor path has neither a rate_limit nor descriptors: it limits nothing" {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	if _, err := Parse("c", []byte("domain: d\ndescriptors:\n  - key: path\n"), Options{Format: "envoy"}); err == nil {
		t.Error("a replay without --descriptor read the config")
	}
}

// TestLintTrace: a key the same for every request, and a zone too small
// for the trace's keys.
func TestLintTrace(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,timestamp,ip,tenant\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "u,%d,10.0.%d.%d,acme\n", i, i/250, i%250)
	}
	cfg, err := Parse("c", []byte("limit_req_zone $binary_remote_addr zone=small:64k rate=2r/s;\nlimit_req_zone $http_tenant zone=t:10m rate=2r/s;\nlimit_req zone=small nodelay;\nlimit_req zone=t nodelay;\n"), Options{Format: "nginx"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := traces.NewReader(strings.NewReader(b.String()), "trace.csv", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := cfg.LintTrace(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.String())
	}
	want := []string{
		"c:4: warning: policy t keys on tenant, which is the same for every request of the trace: every client shares one limit",
		"c:1: warning: zone small holds about 1024 states of 64 bytes; the trace has 2000 keys for it: nginx forgets the least recently used when it is full, which changes decisions (ratesim keeps every key)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
