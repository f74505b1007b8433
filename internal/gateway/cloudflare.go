package gateway

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
)

// cloudflare reads Cloudflare rate limiting rules as the API gives them
// (developers.cloudflare.com/waf/rate-limiting-rules/parameters/): a
// ruleset ({"rules": [...]}, also inside the API's {"result": ...}), a
// list of rules, or one rule, in JSON or YAML. Each rule with a
// ratelimit is a policy of the cloudflare preset (a blocking counter),
// keyed on its characteristics; every rule applies, each with its own
// counters, as Cloudflare evaluates them.
func (r *reader) cloudflare(data []byte) error {
	if cloudflareHCL.Match(data) {
		return r.errorf(lineOf(data, cloudflareHCL.FindIndex(data)[0]), "Terraform's HCL is not read: give the rules as the API's JSON (the ruleset's rules, as the API or 'terraform show -json' gives them)")
	}
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	r.cfg.File.Stack = "consume" // each rule counts on its own
	for _, d := range docs {
		if res := get(d, "result"); res != nil {
			d = res
		}
		rules := d
		if rs := get(d, "rules"); rs != nil {
			rules = rs
		}
		switch rules.Kind {
		case yaml.SequenceNode:
			for i, rule := range rules.Content {
				if err := r.cloudflareRule(rule, i+1); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			if err := r.cloudflareRule(rules, 1); err != nil {
				return err
			}
		default:
			return r.errorf(rules.Line, "want a ruleset's rules: a list of rules with a ratelimit")
		}
	}
	return nil
}

// cloudflareHCL finds a Terraform resource or block in HCL.
var cloudflareHCL = regexp.MustCompile(`(?m)^\s*(resource\s+"cloudflare_|ratelimit\s*=?\s*\{|rules\s*\{)`)

// lineOf is the line of the byte at offset in data.
func lineOf(data []byte, offset int) int { return 1 + bytes.Count(data[:offset], []byte("\n")) }

// cloudflareActions are the actions of a rate limiting rule ratesim
// replays: block refuses, log only counts (a shadow policy), the
// challenges refuse a client that cannot pass them.
var cloudflareActions = []string{"block", "log", "challenge", "js_challenge", "managed_challenge"}

// cloudflareRule reads the rule n, the i-th of its list.
func (r *reader) cloudflareRule(n *yaml.Node, i int) error {
	if n.Kind != yaml.MappingNode {
		return r.errorf(n.Line, "a rule must be a mapping")
	}
	rl := get(n, "ratelimit")
	if rl == nil {
		return nil // a rule of another phase
	}
	name := "rule#" + strconv.Itoa(i)
	for _, k := range []string{"description", "ref", "id"} {
		if v := get(n, k); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			name = v.Value
			break
		}
	}
	if v := get(n, "enabled"); v != nil {
		on, err := r.boolean(v, "enabled")
		if err != nil {
			return err
		}
		if !on {
			r.warnf(v.Line, "rule %s is disabled: left out", name)
			return nil
		}
	}
	shadow := false
	if v := get(n, "action"); v != nil {
		action, err := r.scalar(v, "action")
		if err != nil {
			return err
		}
		switch action {
		case "block":
		case "log":
			shadow = true
		case "challenge", "js_challenge", "managed_challenge":
			r.warnf(v.Line, "action %s: a client that passes the challenge goes on; ratesim refuses every request the rule acts on", action)
		default:
			return r.errorf(v.Line, "action %q: a rate limiting rule's action is one of %s", action, strings.Join(cloudflareActions, ", "))
		}
	} else {
		return r.errorf(n.Line, "rule %s has no action", name)
	}
	f, err := r.fields(rl, "ratelimit", "characteristics", "period", "requests_per_period", "mitigation_timeout",
		"counting_expression", "requests_to_origin", "score_per_period", "score_response_header_name", "mitigation_expression")
	if err != nil {
		return err
	}
	for _, k := range []string{"score_per_period", "score_response_header_name"} {
		if v := f[k]; v != nil {
			return r.errorf(v.Line, "%s: complexity-based rate limiting (a score per request from the origin's response) is not replayed", k)
		}
	}
	for _, k := range []string{"counting_expression", "mitigation_expression"} {
		if v := f[k]; v != nil && v.Value != "" && v.Value != valueOf(get(n, "expression")) {
			return r.errorf(v.Line, "%s %q: ratesim counts and acts on the requests of the rule's expression alone", k, v.Value)
		}
	}
	if v := f["requests_to_origin"]; v != nil {
		if on, err := r.boolean(v, "requests_to_origin"); err != nil {
			return err
		} else if on {
			r.warnf(v.Line, "requests_to_origin: Cloudflare counts only the requests its cache does not serve; ratesim counts every request of the trace")
		}
	}
	for _, k := range []string{"period", "requests_per_period"} {
		if f[k] == nil {
			return r.errorf(rl.Line, "ratelimit of rule %s needs %s", name, k)
		}
	}
	period, err := r.whole(f["period"], "period", 1)
	if err != nil {
		return err
	}
	switch period {
	case 10, 60, 120, 300, 600, 3600:
	default:
		r.warnf(f["period"].Line, "period %d: Cloudflare's periods are 10, 60, 120, 300, 600 and 3600 seconds (by plan)", period)
	}
	limit, err := r.whole(f["requests_per_period"], "requests_per_period", 1)
	if err != nil {
		return err
	}
	timeout := int64(0)
	if v := f["mitigation_timeout"]; v != nil {
		if timeout, err = r.whole(v, "mitigation_timeout", 0); err != nil {
			return err
		}
	}
	key, err := r.cloudflareKey(f["characteristics"], rl.Line)
	if err != nil {
		return err
	}
	match, err := r.cloudflareExpression(get(n, "expression"))
	if err != nil {
		return err
	}
	l, err := r.preset(rl.Line, "cloudflare", [][2]string{
		{"requests_per_period", strconv.FormatInt(limit, 10)},
		{"period", strconv.FormatInt(period, 10)},
		{"mitigation_timeout", strconv.FormatInt(timeout, 10)},
	})
	if err != nil {
		return err
	}
	l.Name = name
	r.add(spec.StackPolicy{Limiter: l, Key: key, Shadow: shadow, Match: match})
	return nil
}

// valueOf is the text of a scalar, "" for nil.
func valueOf(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// cloudflareHeader finds a characteristic of a header, cookie or query
// argument: http.request.headers["x-api-key"].
var cloudflareHeader = regexp.MustCompile(`^http\.request\.headers\["([^"]+)"\]$`)

// cloudflareKey returns the trace fields of a rule's characteristics:
// the data center (cf.colo.id) is left out, as a trace is of one.
func (r *reader) cloudflareKey(n *yaml.Node, line int) ([]string, error) {
	if n == nil {
		return nil, r.errorf(line, "ratelimit needs characteristics (cf.colo.id and what it counts by, such as ip.src)")
	}
	if n.Kind != yaml.SequenceNode {
		return nil, r.errorf(n.Line, "characteristics must be a list")
	}
	key := []string{}
	for _, c := range n.Content {
		name, err := r.scalar(c, "a characteristic")
		if err != nil {
			return nil, err
		}
		if f, ok := r.opt.Fields[name]; ok {
			key = append(key, f)
			continue
		}
		switch {
		case name == "cf.colo.id":
			continue // counters are per data center; the trace is of one
		case name == "ip.src":
			f, _ := r.field("ip")
			key = append(key, f)
		case name == "cf.unique_visitor_id":
			f, _ := r.field("ip")
			r.warnf(c.Line, "cf.unique_visitor_id (IP with NAT support) is keyed on the trace's %s field", f)
			key = append(key, f)
		case name == "http.host":
			key = append(key, "host")
		case name == "http.request.uri.path":
			key = append(key, "path")
		case cloudflareHeader.MatchString(name):
			key = append(key, headerField(cloudflareHeader.FindStringSubmatch(name)[1]))
		default:
			return nil, r.errorf(c.Line, "characteristic %s: no trace field is known for it; map it with --policy-map '%s=FIELD'", name, name)
		}
	}
	return key, nil
}

// The expressions of a rule ratesim replays: every request, or a path
// equal to, starting with, or containing a text.
var (
	cloudflarePathEq     = regexp.MustCompile(`^\(?\s*http\.request\.uri\.path\s+(?:eq|==)\s+"([^"\\]*)"\s*\)?$`)
	cloudflarePathPrefix = regexp.MustCompile(`^\(?\s*starts_with\(\s*http\.request\.uri\.path\s*,\s*"([^"\\]*)"\s*\)\s*\)?$`)
	cloudflarePathHas    = regexp.MustCompile(`^\(?\s*http\.request\.uri\.path\s+contains\s+"([^"\\]*)"\s*\)?$`)
)

// cloudflareExpression returns the match of a rule's expression, nil
// for every request.
func (r *reader) cloudflareExpression(n *yaml.Node) (*sim.Match, error) {
	if n == nil {
		return nil, nil
	}
	e := strings.TrimSpace(n.Value)
	if e == "" || e == "true" || e == "(true)" {
		return nil, nil
	}
	var test func(path string) bool
	if m := cloudflarePathEq.FindStringSubmatch(e); m != nil {
		test = func(p string) bool { return p == m[1] }
	} else if m := cloudflarePathPrefix.FindStringSubmatch(e); m != nil {
		test = func(p string) bool { return strings.HasPrefix(p, m[1]) }
	} else if m := cloudflarePathHas.FindStringSubmatch(e); m != nil {
		test = func(p string) bool { return strings.Contains(p, m[1]) }
	} else {
		return nil, r.errorf(n.Line, "expression %q: ratesim replays a rule for every request (true) or by path: http.request.uri.path eq \"/login\", starts_with(http.request.uri.path, \"/api/\"), http.request.uri.path contains \"/x\"", e)
	}
	return &sim.Match{Fields: []string{"path"}, Applies: func(v [][]byte) bool {
		p := v[0]
		if q := bytes.IndexByte(p, '?'); q >= 0 {
			p = p[:q] // Cloudflare's path has no query string
		}
		return test(string(p))
	}}, nil
}
