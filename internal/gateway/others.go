package gateway

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/internal/spec"
)

// envoyLocal reads Envoy's local_ratelimit filter: every mapping with a
// token_bucket and a stat_prefix, wherever it is in the YAML (a filter's
// typed_config, an Istio EnvoyFilter's patch value).
func (r *reader) envoyLocal(data []byte) error {
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	var found []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && get(n, "token_bucket") != nil {
			found = append(found, n)
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, d := range docs {
		walk(d)
	}
	r.cfg.File.Stack = "consume"
	for _, n := range found {
		if get(n, "descriptors") != nil {
			return r.errorf(get(n, "descriptors").Line, "local_ratelimit descriptors are not read yet: ratesim replays the filter's token_bucket alone")
		}
		name := "local_ratelimit"
		if sp := get(n, "stat_prefix"); sp != nil && sp.Value != "" {
			name = sp.Value
		}
		tb, err := r.fields(get(n, "token_bucket"), "token_bucket", "max_tokens", "tokens_per_fill", "fill_interval")
		if err != nil {
			return err
		}
		if tb["max_tokens"] == nil || tb["fill_interval"] == nil {
			return r.errorf(get(n, "token_bucket").Line, "token_bucket needs max_tokens and fill_interval")
		}
		maxTokens, err := r.whole(tb["max_tokens"], "max_tokens", 1)
		if err != nil {
			return err
		}
		perFill := int64(1)
		if v := tb["tokens_per_fill"]; v != nil {
			if perFill, err = r.whole(v, "tokens_per_fill", 1); err != nil {
				return err
			}
		}
		every, err := r.protoDuration(tb["fill_interval"], "fill_interval")
		if err != nil {
			return err
		}
		line := get(n, "token_bucket").Line
		l, err := r.preset(line, "envoy-local", [][2]string{{"max_tokens", strconv.FormatInt(maxTokens, 10)}, {"tokens_per_fill", strconv.FormatInt(perFill, 10)}, {"fill_interval", every.String()}})
		if err != nil {
			return err
		}
		l.Name = name
		sp := spec.StackPolicy{Limiter: l, Key: []string{}}
		enabled, err := r.percent(get(n, "filter_enabled"), "filter_enabled")
		if err != nil {
			return err
		}
		enforced, err := r.percent(get(n, "filter_enforced"), "filter_enforced")
		if err != nil {
			return err
		}
		switch {
		case enabled == 0:
			r.warnf(n.Line, "filter_enabled is 0%%: the filter neither counts nor refuses; left out")
			continue
		case enabled < 100 || enforced > 0 && enforced < 100:
			r.warnf(n.Line, "filter_enabled %d%% and filter_enforced %d%% sample requests at random: replayed as 100%%", enabled, enforced)
		}
		if enforced == 0 {
			sp.Shadow = true // counted, never refused
		}
		r.add(sp)
	}
	return nil
}

// percent reads a RuntimeFractionalPercent's default_value as a
// percentage; 100 when n is nil. Without filter_enforced, Envoy enforces
// nothing: the caller passes what is absent accordingly.
func (r *reader) percent(n *yaml.Node, what string) (int64, error) {
	if n == nil {
		if what == "filter_enforced" {
			return 0, nil
		}
		return 100, nil
	}
	dv := get(n, "default_value")
	if dv == nil {
		return 0, r.errorf(n.Line, "%s needs a default_value {numerator, denominator}", what)
	}
	num := int64(0)
	if v := get(dv, "numerator"); v != nil {
		var err error
		if num, err = r.whole(v, what+" numerator", 0); err != nil {
			return 0, err
		}
	}
	den := "HUNDRED"
	if v := get(dv, "denominator"); v != nil {
		den = v.Value
	}
	switch den {
	case "HUNDRED":
	case "TEN_THOUSAND":
		num /= 100
	case "MILLION":
		num /= 10000
	default:
		return 0, r.errorf(dv.Line, "%s denominator %q: want HUNDRED, TEN_THOUSAND or MILLION", what, den)
	}
	return min(num, 100), nil
}

// protoDuration reads a protobuf Duration as YAML writes it: "1s",
// "0.5s", or {seconds, nanos}.
func (r *reader) protoDuration(n *yaml.Node, what string) (time.Duration, error) {
	if n.Kind == yaml.MappingNode {
		f, err := r.fields(n, what, "seconds", "nanos")
		if err != nil {
			return 0, err
		}
		var s, ns int64
		if v := f["seconds"]; v != nil {
			if s, err = r.whole(v, what+" seconds", 0); err != nil {
				return 0, err
			}
		}
		if v := f["nanos"]; v != nil {
			if ns, err = r.whole(v, what+" nanos", 0); err != nil {
				return 0, err
			}
		}
		return time.Duration(s)*time.Second + time.Duration(ns), nil
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d <= 0 {
		return 0, r.errorf(n.Line, "%s %q: want a duration such as 1s or 0.5s", what, n.Value)
	}
	return d, nil
}

// kongKnown are the rate-limiting plugin's config keys.
var kongKnown = []string{"second", "minute", "hour", "day", "month", "year", "limit_by", "header_name", "path", "policy",
	"fault_tolerant", "hide_client_headers", "redis", "redis_host", "redis_port", "redis_password", "redis_timeout", "redis_database",
	"redis_ssl", "redis_ssl_verify", "redis_server_name", "redis_username", "sync_rate", "error_code", "error_message", "consumer_groups"}

// kong reads Kong's rate-limiting plugins: a declarative kong.yml
// (plugins at the top, on services or on routes), one plugin, or one
// plugin's config.
func (r *reader) kong(data []byte) error {
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	if len(docs) != 1 {
		return r.errorf(1, "a Kong config is one YAML document")
	}
	doc := docs[0]
	r.cfg.File.Stack = "refund" // the plugin counts a request in all its limits or none
	var plugins []*yaml.Node
	var scoped func(n *yaml.Node, scope string)
	scoped = func(n *yaml.Node, scope string) {
		for _, list := range []string{"plugins"} {
			if l := get(n, list); l != nil && l.Kind == yaml.SequenceNode {
				for _, p := range l.Content {
					if get(p, "name") != nil && get(p, "name").Value == "rate-limiting" {
						plugins = append(plugins, p)
					}
				}
			}
		}
		for _, sub := range []string{"services", "routes"} {
			if l := get(n, sub); l != nil && l.Kind == yaml.SequenceNode {
				for _, s := range l.Content {
					if get(s, "plugins") != nil && hasRateLimiting(get(s, "plugins")) {
						r.warnf(s.Line, "the plugin is scoped to a %s: ratesim applies it to every request of the trace", strings.TrimSuffix(sub, "s"))
					}
					scoped(s, sub)
				}
			}
		}
	}
	switch {
	case get(doc, "config") != nil && get(doc, "name") == nil:
		plugins = append(plugins, doc) // the plugin's config: alone
	case get(doc, "name") != nil && get(doc, "config") != nil:
		plugins = append(plugins, doc)
	default:
		scoped(doc, "")
	}
	for i, p := range plugins {
		conf := get(p, "config")
		if conf == nil {
			return r.errorf(p.Line, "the rate-limiting plugin needs a config")
		}
		if err := r.kongPlugin(conf, i, len(plugins)); err != nil {
			return err
		}
	}
	return nil
}

func hasRateLimiting(l *yaml.Node) bool {
	for _, p := range l.Content {
		if n := get(p, "name"); n != nil && n.Value == "rate-limiting" {
			return true
		}
	}
	return false
}

// kongPlugin reads one rate-limiting plugin's config.
func (r *reader) kongPlugin(conf *yaml.Node, i, of int) error {
	f, err := r.fields(conf, "rate-limiting config", kongKnown...)
	if err != nil {
		return err
	}
	ip, _ := r.field("ip")
	key := []string{ip}
	limitBy := "consumer"
	if v := f["limit_by"]; v != nil {
		limitBy = v.Value
	}
	switch limitBy {
	case "ip":
	case "consumer", "credential", "consumer-group":
		fld, _ := r.field(limitBy)
		if m, ok := r.opt.Fields[limitBy]; ok {
			fld = m
		}
		key = []string{fld}
	case "service":
		key = []string{}
	case "header":
		h := f["header_name"]
		if h == nil {
			return r.errorf(f["limit_by"].Line, "limit_by header needs header_name")
		}
		fld, _ := r.field(h.Value)
		key = []string{fld}
	case "path":
		return r.errorf(f["limit_by"].Line, "limit_by path is not supported: Kong counts the configured path alone and falls back to the ip for the others")
	default:
		return r.errorf(f["limit_by"].Line, "limit_by %q: want consumer, credential, consumer-group, ip, service, header or path", limitBy)
	}
	if v := f["policy"]; v != nil && v.Value != "local" {
		r.warnf(v.Line, "policy %s shares counters between nodes (asynchronously with sync_rate): replayed as one node's counters", v.Value)
	}
	type lim struct {
		name string
		n    int64
		line int
	}
	var lims []lim
	for _, period := range []string{"second", "minute", "hour", "day", "month", "year"} {
		v := f[period]
		if v == nil || v.Tag == "!!null" {
			continue
		}
		n, err := r.whole(v, period, 0)
		if err != nil {
			return err
		}
		if period == "month" || period == "year" {
			return r.errorf(v.Line, "%s limits follow calendar months, of 28 to 31 days, which ratesim does not replay exactly", period)
		}
		if n == 0 {
			return r.errorf(v.Line, "%s: 0 refuses every request", period)
		}
		for _, o := range lims {
			if o.n >= n {
				r.warnf(v.Line, "%s: %d is not above %s: %d, so the %s limit never refuses a request the %s limit lets through", period, n, o.name, o.n, o.name, period)
			}
		}
		lims = append(lims, lim{period, n, v.Line})
	}
	if len(lims) == 0 {
		return r.errorf(conf.Line, "the rate-limiting config gives no limit (second, minute, hour, day)")
	}
	for _, l := range lims {
		lm, err := r.preset(l.line, "kong", [][2]string{{l.name, strconv.FormatInt(l.n, 10)}})
		if err != nil {
			return err
		}
		lm.Name = l.name
		if of > 1 {
			lm.Name = fmt.Sprintf("%s@%d", l.name, i+1)
		}
		r.add(spec.StackPolicy{Limiter: lm, Key: key})
	}
	return nil
}

// traefik reads Traefik's rateLimit middlewares: the dynamic config's
// http.middlewares, or Middleware resources (spec.rateLimit).
func (r *reader) traefik(data []byte) error {
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	r.cfg.File.Stack = "consume"
	for _, d := range docs {
		if mw := get(get(d, "http"), "middlewares"); mw != nil {
			for i := 0; i+1 < len(mw.Content); i += 2 {
				if rl := get(mw.Content[i+1], "rateLimit"); rl != nil {
					if err := r.traefikMiddleware(mw.Content[i].Value, rl); err != nil {
						return err
					}
				}
			}
		}
		if rl := get(get(d, "spec"), "rateLimit"); rl != nil {
			name := "rateLimit"
			if n := get(get(d, "metadata"), "name"); n != nil {
				name = n.Value
			}
			if err := r.traefikMiddleware(name, rl); err != nil {
				return err
			}
		}
	}
	if len(r.cfg.File.Policies) > 1 {
		r.warnf(1, "several rateLimit middlewares: ratesim applies every one to every request (Traefik applies those of the router that takes it)")
	}
	return nil
}

// traefikMiddleware reads one rateLimit middleware.
func (r *reader) traefikMiddleware(name string, n *yaml.Node) error {
	f, err := r.fields(n, "rateLimit", "average", "period", "burst", "sourceCriterion")
	if err != nil {
		return err
	}
	if f["average"] == nil {
		return r.errorf(n.Line, "rateLimit needs average")
	}
	average, err := r.whole(f["average"], "average", 0)
	if err != nil {
		return err
	}
	if average == 0 {
		r.warnf(f["average"].Line, "average 0 is no limit at all in Traefik: left out")
		return nil
	}
	period := time.Second
	if v := f["period"]; v != nil {
		s := v.Value
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			s += "s" // a bare number is seconds
		}
		if period, err = time.ParseDuration(s); err != nil || period <= 0 {
			return r.errorf(v.Line, "period %q: want a duration such as 1s or 1m", v.Value)
		}
	}
	burst := int64(1)
	if v := f["burst"]; v != nil {
		if burst, err = r.whole(v, "burst", -1<<62); err != nil {
			return err
		}
		if burst < 1 {
			r.warnf(v.Line, "burst %d is below 1: Traefik takes it as 1, so a client gets one request at once", burst)
		}
	}
	ip, _ := r.field("ip")
	key := []string{ip}
	if sc := f["sourceCriterion"]; sc != nil {
		sf, err := r.fields(sc, "sourceCriterion", "ipStrategy", "requestHeaderName", "requestHost")
		if err != nil {
			return err
		}
		switch {
		case sf["requestHeaderName"] != nil:
			fld, _ := r.field(sf["requestHeaderName"].Value)
			key = []string{fld}
		case sf["requestHost"] != nil:
			key = []string{"host"}
		case sf["ipStrategy"] != nil:
			if d := get(sf["ipStrategy"], "depth"); d != nil && d.Value != "0" {
				r.warnf(d.Line, "ipStrategy depth %s reads the client from X-Forwarded-For: keyed on the trace's ip field", d.Value)
			}
		}
	}
	l, err := r.preset(n.Line, "traefik", [][2]string{{"average", strconv.FormatInt(average, 10)}, {"period", period.String()}, {"burst", strconv.FormatInt(burst, 10)}})
	if err != nil {
		return err
	}
	l.Name = name
	r.warnf(n.Line, "Traefik delays a request that finds no token by up to %s instead of refusing it; ratesim refuses it", traefikMaxDelay(average, period))
	r.add(spec.StackPolicy{Limiter: l, Key: key})
	return nil
}

// traefikMaxDelay is the middleware's maxDelay: half a second below one
// request per second, else a second over twice the rate, the rate's
// fraction dropped.
func traefikMaxDelay(average int64, period time.Duration) time.Duration {
	perSecond := average * int64(time.Second) / int64(period)
	if perSecond < 1 {
		return 500 * time.Millisecond
	}
	return time.Second / time.Duration(perSecond*2)
}

var (
	haproxyRateRE = regexp.MustCompile(`http_req_rate\((\w+)\)`)
	haproxyDenyRE = regexp.MustCompile(`sc_?(\d)?_?http_req_rate\((\d)?\)\s+(gt|ge)\s+(\d+)|sc(\d)_http_req_rate\s+(gt|ge)\s+(\d+)`)
)

// haproxy reads haproxy.cfg: per frontend (or listen, or backend), a
// stick-table storing http_req_rate(PERIOD), track-sc0 KEY and
// http-request deny if { sc_http_req_rate(0) gt N }.
func (r *reader) haproxy(data []byte) error {
	r.cfg.File.Stack = "consume"
	type section struct {
		name                    string
		period, expire, tableAt int
		periodText, expireText  string
		track                   string
		trackAt                 int
		limit                   int64
		limitAt                 int
		acls                    map[string]string
	}
	var secs []*section
	var cur *section
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		text := raw
		if h := strings.Index(text, "#"); h >= 0 {
			text = text[:h]
		}
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "frontend", "backend", "listen", "defaults", "global":
			cur = &section{name: words[0], acls: map[string]string{}}
			if len(words) > 1 {
				cur.name = words[1]
			}
			secs = append(secs, cur)
			continue
		}
		if cur == nil {
			return r.errorf(line, "%q outside a section", words[0])
		}
		switch {
		case words[0] == "stick-table":
			m := haproxyRateRE.FindStringSubmatch(text)
			if m == nil {
				continue
			}
			cur.periodText, cur.tableAt = m[1], line
			for j, w := range words {
				if w == "expire" && j+1 < len(words) {
					cur.expireText = words[j+1]
				}
			}
		case words[0] == "acl" && len(words) > 2:
			cur.acls[words[1]] = strings.Join(words[2:], " ")
		case words[0] == "http-request" && len(words) > 1 && strings.HasPrefix(words[1], "track-sc"):
			if words[1] != "track-sc0" {
				return r.errorf(line, "%s: ratesim reads track-sc0 with sc_http_req_rate(0)", words[1])
			}
			if len(words) < 3 {
				return r.errorf(line, "track-sc0 needs a key, such as src")
			}
			if strings.Contains(text, " if ") || strings.Contains(text, " unless ") {
				return r.errorf(line, "a conditional track-sc0 is not supported: ratesim tracks every request")
			}
			cur.track, cur.trackAt = words[2], line
		case words[0] == "http-request" && len(words) > 1 && (words[1] == "deny" || words[1] == "tarpit"):
			cond := text
			if _, after, ok := strings.Cut(text, " if "); ok {
				cond = after
				if acl, ok := cur.acls[strings.TrimSpace(after)]; ok {
					cond = acl
				}
			}
			m := haproxyDenyRE.FindStringSubmatch(cond)
			if m == nil {
				continue
			}
			n, op := m[4], m[3]
			if m[5] != "" {
				n, op = m[7], m[6]
			}
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return r.errorf(line, "deny threshold %q: want a whole number", n)
			}
			if op == "ge" {
				v-- // ge N is gt N-1
			}
			if v < 1 {
				return r.errorf(line, "a threshold below 1 denies every request")
			}
			cur.limit, cur.limitAt = v, line
		}
	}
	for _, s := range secs {
		if s.limitAt == 0 {
			continue
		}
		if s.tableAt == 0 {
			return r.errorf(s.limitAt, "sc_http_req_rate(0) needs a stick-table that stores http_req_rate(PERIOD) in section %s", s.name)
		}
		if s.trackAt == 0 {
			return r.errorf(s.limitAt, "sc_http_req_rate(0) needs http-request track-sc0 KEY in section %s", s.name)
		}
		field, ok := r.field(s.track)
		if strings.HasPrefix(s.track, "req.hdr(") {
			field, ok = headerField(strings.TrimSuffix(strings.TrimPrefix(s.track, "req.hdr("), ")")), true
			if m, given := r.opt.Fields[s.track]; given {
				field = m
			}
		}
		if !ok {
			return r.errorf(s.trackAt, "track-sc0 %s: no trace field is known for it; map it with --policy-map '%s=FIELD'", s.track, s.track)
		}
		period, err := haproxyTime(s.periodText)
		if err != nil {
			return r.errorf(s.tableAt, "http_req_rate(%s): %v", s.periodText, err)
		}
		kvs := [][2]string{{"period", period.String()}, {"limit", strconv.FormatInt(s.limit, 10)}}
		if s.expireText != "" {
			expire, err := haproxyTime(s.expireText)
			if err != nil {
				return r.errorf(s.tableAt, "expire %s: %v", s.expireText, err)
			}
			kvs = append(kvs, [2]string{"expire", expire.String()})
		}
		l, err := r.preset(s.limitAt, "haproxy", kvs)
		if err != nil {
			return err
		}
		l.Name = s.name
		r.add(spec.StackPolicy{Limiter: l, Key: []string{field}})
	}
	return nil
}

// haproxyTime reads an HAProxy time: a number with a unit (us, ms, s, m,
// h, d), milliseconds without one.
func haproxyTime(s string) (time.Duration, error) {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		s += "ms"
	}
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "d"), 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("want a time such as 10s")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a time such as 10s")
	}
	return d, nil
}
