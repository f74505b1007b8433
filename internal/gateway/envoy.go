package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// envoyNode is one descriptor of Envoy's ratelimit service config.
type envoyNode struct {
	key, value string // value "" for any value; a trailing '*' for a prefix
	limit      *envoyLimit
	children   []*envoyNode
	shadow     bool
	line       int
}

// envoyLimit is a descriptor's rate_limit.
type envoyLimit struct {
	unit      string
	n         int64
	unlimited bool
	name      string
	replaces  []string
	line      int
}

// wildcard reports whether the node matches values by prefix.
func (n *envoyNode) wildcard() bool { return strings.HasSuffix(n.value, "*") }

// envoyUnits are the service's units as it counts them: a month is 30
// days, a year 365.
var envoyUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour,
}

// envoy reads the ratelimit service's config: a domain and its
// descriptors.
func (r *reader) envoy(data []byte) error {
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	if len(docs) != 1 {
		return r.errorf(1, "a ratelimit service config is one YAML document")
	}
	top, err := r.fields(docs[0], "the config", "domain", "descriptors")
	if err != nil {
		return err
	}
	if top["domain"] == nil {
		return r.errorf(docs[0].Line, "the config needs a domain")
	}
	if top["descriptors"] == nil {
		return r.errorf(docs[0].Line, "the config needs descriptors")
	}
	nodes, err := r.envoyNodes(top["descriptors"])
	if err != nil {
		return err
	}
	if len(r.opt.Descriptors) == 0 && r.opt.Lint {
		r.envoyTop = nodes
		r.envoyLint(nodes, 1)
		return nil
	}
	if len(r.opt.Descriptors) == 0 {
		return r.errorf(top["descriptors"].Line, "say which trace fields give the descriptors' values: --descriptor KEY=FIELD,... (this config's keys at the top: %s)", strings.Join(topKeys(nodes), ", "))
	}
	r.cfg.File.Stack = "consume" // every descriptor's counter counts every hit
	r.envoyTop = nodes
	r.envoyLint(nodes, 1)
	var policies []*envoyPolicy
	for di, d := range r.opt.Descriptors {
		policies = r.envoyPolicies(policies, d, di, nodes, nil)
	}
	r.envoyReached(nodes, nil)
	return r.envoyAdd(policies)
}

// envoyPolicy is the policy of one config descriptor for one request
// descriptor.
type envoyPolicy struct {
	node  *envoyNode
	desc  []Entry
	name  string
	match *sim.Match
}

// topKeys lists the keys of the top descriptors.
func topKeys(nodes []*envoyNode) []string {
	var keys []string
	for _, n := range nodes {
		if !containsString(keys, n.key) {
			keys = append(keys, n.key)
		}
	}
	return keys
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// envoyNodes reads a descriptors: list.
func (r *reader) envoyNodes(list *yaml.Node) ([]*envoyNode, error) {
	if list.Kind != yaml.SequenceNode {
		return nil, r.errorf(list.Line, "descriptors must be a list")
	}
	var nodes []*envoyNode
	seen := map[string]int{}
	for _, item := range list.Content {
		f, err := r.fields(item, "a descriptor", "key", "value", "rate_limit", "shadow_mode", "descriptors", "detailed_metric", "value_to_metric")
		if err != nil {
			return nil, err
		}
		n := &envoyNode{line: item.Line}
		if f["key"] == nil {
			return nil, r.errorf(item.Line, "a descriptor needs a key")
		}
		if n.key, err = r.scalar(f["key"], "key"); err != nil {
			return nil, err
		}
		if v := f["value"]; v != nil {
			n.value = v.Value
		}
		composite := n.key + "_" + n.value
		if at, dup := seen[composite]; dup {
			return nil, r.errorf(item.Line, "duplicate descriptor %s (also at line %d): the ratelimit service refuses this config", describe(n), at)
		}
		seen[composite] = item.Line
		if v := f["shadow_mode"]; v != nil {
			if n.shadow, err = r.boolean(v, "shadow_mode"); err != nil {
				return nil, err
			}
		}
		if v := f["rate_limit"]; v != nil {
			if n.limit, err = r.envoyLimit(v); err != nil {
				return nil, err
			}
		}
		if v := f["descriptors"]; v != nil {
			if n.children, err = r.envoyNodes(v); err != nil {
				return nil, err
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// envoyLimit reads a rate_limit.
func (r *reader) envoyLimit(n *yaml.Node) (*envoyLimit, error) {
	f, err := r.fields(n, "rate_limit", "unit", "requests_per_unit", "unlimited", "name", "replaces")
	if err != nil {
		return nil, err
	}
	l := &envoyLimit{line: n.Line}
	if v := f["unlimited"]; v != nil {
		if l.unlimited, err = r.boolean(v, "unlimited"); err != nil {
			return nil, err
		}
	}
	if v := f["name"]; v != nil {
		l.name = v.Value
	}
	if v := f["replaces"]; v != nil {
		if v.Kind != yaml.SequenceNode {
			return nil, r.errorf(v.Line, "replaces must be a list of {name: ...}")
		}
		for _, item := range v.Content {
			rf, err := r.fields(item, "replaces", "name")
			if err != nil {
				return nil, err
			}
			if rf["name"] == nil {
				return nil, r.errorf(item.Line, "replaces needs a name")
			}
			l.replaces = append(l.replaces, rf["name"].Value)
		}
	}
	if l.unlimited {
		return l, nil
	}
	if f["unit"] == nil || f["requests_per_unit"] == nil {
		return nil, r.errorf(n.Line, "rate_limit needs unit and requests_per_unit (or unlimited: true)")
	}
	if l.unit, err = r.scalar(f["unit"], "unit"); err != nil {
		return nil, err
	}
	l.unit = strings.ToLower(l.unit)
	if _, ok := envoyUnits[l.unit]; !ok {
		return nil, r.errorf(f["unit"].Line, "unit %q: want second, minute, hour, day, week, month or year", f["unit"].Value)
	}
	if l.n, err = r.whole(f["requests_per_unit"], "requests_per_unit", 0); err != nil {
		return nil, err
	}
	return l, nil
}

// describe names a descriptor: key, key=value.
func describe(n *envoyNode) string {
	if n.value == "" {
		return n.key
	}
	return n.key + "=" + n.value
}

// envoyLint warns of descriptors that can never limit anything.
func (r *reader) envoyLint(nodes []*envoyNode, depth int) {
	for i, n := range nodes {
		if n.limit == nil && len(n.children) == 0 {
			r.warnf(n.line, "descriptor %s has neither a rate_limit nor descriptors: it limits nothing", describe(n))
		}
		if n.wildcard() {
			for _, o := range nodes[:i] {
				if o.key == n.key && o.wildcard() && strings.HasPrefix(n.value, strings.TrimSuffix(o.value, "*")) {
					r.warnf(n.line, "descriptor %s can never match: %s at line %d comes first and takes every value it would", describe(n), describe(o), o.line)
				}
			}
		}
		r.envoyLint(n.children, depth+1)
	}
}

// envoyReached warns of descriptors no --descriptor can reach.
func (r *reader) envoyReached(nodes []*envoyNode, path []string) {
	for _, n := range nodes {
		p := append(append([]string(nil), path...), n.key)
		reach := false
		for _, d := range r.opt.Descriptors {
			if len(d) >= len(p) {
				ok := true
				for i := range p {
					ok = ok && d[i].Key == p[i]
				}
				reach = reach || ok
			}
		}
		if !reach {
			r.warnf(n.line, "descriptor %s can never match: no --descriptor sends the keys %s", describe(n), strings.Join(p, ", "))
			continue
		}
		r.envoyReached(n.children, p)
	}
}

// envoyPolicies adds to ps the policies of the config descriptors the
// request descriptor d can reach, below the config path path.
func (r *reader) envoyPolicies(ps []*envoyPolicy, d []Entry, di int, nodes []*envoyNode, path []*envoyNode) []*envoyPolicy {
	depth := len(path)
	if depth >= len(d) {
		return ps
	}
	for _, n := range nodes {
		if n.key != d[depth].Key {
			continue
		}
		p := append(append([]*envoyNode(nil), path...), n)
		if depth == len(d)-1 && n.limit != nil && !n.limit.unlimited {
			var names []string
			for _, m := range p {
				names = append(names, strings.ReplaceAll(describe(m), "=", "_"))
			}
			name := strings.Join(names, ".")
			fields := make([]string, len(d))
			for i, e := range d {
				fields[i] = e.Field
			}
			target, top := n, r.envoyTop
			ps = append(ps, &envoyPolicy{node: n, desc: d, name: name, match: &sim.Match{Fields: fields, Applies: func(values [][]byte) bool {
				return envoyWalk(top, d, values) == target
			}}})
		}
		ps = r.envoyPolicies(ps, d, di, n.children, p)
	}
	return ps
}

// envoyWalk returns the config descriptor whose limit the service applies
// to a request descriptor with these values (its keys being those the
// keys), nil for none: at each depth the descriptor
// with the entry's value, else the first wildcard whose prefix it has,
// else the key's default; the limit is the one reached at the request's
// last entry.
func envoyWalk(nodes []*envoyNode, keys []Entry, values [][]byte) *envoyNode {
	var at *envoyNode
	for i, v := range values {
		at = nil
		key := keys[i].Key
		for _, n := range nodes {
			if n.key == key && !n.wildcard() && n.value != "" && n.value == string(v) {
				at = n
				break
			}
		}
		if at == nil {
			for _, n := range nodes {
				if n.key == key && n.wildcard() && strings.HasPrefix(string(v), strings.TrimSuffix(n.value, "*")) {
					at = n
					break
				}
			}
		}
		if at == nil {
			for _, n := range nodes {
				if n.key == key && n.value == "" {
					at = n
					break
				}
			}
		}
		if at == nil {
			return nil
		}
		if i == len(values)-1 {
			return at
		}
		if len(at.children) == 0 {
			return nil
		}
		nodes = at.children
	}
	return at
}

// envoyAdd adds the policies, each limit a name replaces left out where
// the one replacing it applies.
func (r *reader) envoyAdd(ps []*envoyPolicy) error {
	for _, p := range ps {
		l := p.node.limit
		lim, err := r.envoyLimiter(l)
		if err != nil {
			return err
		}
		lim.Name = p.name
		m := p.match
		if l.name != "" {
			var by []*sim.Match
			for _, o := range ps {
				if containsString(o.node.limit.replaces, l.name) {
					by = append(by, o.match)
				}
			}
			m = unless(m, by)
		}
		r.add(spec.StackPolicy{Limiter: lim, Key: m.Fields[:len(p.desc)], Shadow: p.node.shadow, Match: m})
	}
	return nil
}

// envoyLimiter is the limiter of a rate_limit: the envoy preset, or for
// the units it does not take, the same fixed window counting every hit.
func (r *reader) envoyLimiter(l *envoyLimit) (spec.Limiter, error) {
	if l.n == 0 {
		return spec.Limiter{}, r.errorf(l.line, "requests_per_unit 0 refuses every request; write unlimited: true for no limit, or a positive count")
	}
	lim, err := r.preset(l.line, "envoy", [][2]string{{"requests_per_unit", strconv.FormatInt(l.n, 10)}, {"unit", l.unit}})
	if err == nil {
		return lim, nil
	}
	if l.unit == "week" || l.unit == "month" || l.unit == "year" {
		return spec.Limiter{Algorithm: limiters.FixedWindowHits, Preset: "envoy",
			Policy: limiters.Policy{Limit: l.n, Window: envoyUnits[l.unit]},
			Args:   fmt.Sprintf("requests_per_unit=%d,unit=%s", l.n, l.unit), At: r.at(l.line)}, nil
	}
	return lim, err
}

// unless returns m, left out of the requests any of by applies to.
func unless(m *sim.Match, by []*sim.Match) *sim.Match {
	if len(by) == 0 {
		return m
	}
	fields := append([]string(nil), m.Fields...)
	starts := []int{len(fields)}
	for _, b := range by {
		fields = append(fields, b.Fields...)
		starts = append(starts, len(fields))
	}
	return &sim.Match{Fields: fields, Applies: func(values [][]byte) bool {
		if !m.Applies(values[:starts[0]]) {
			return false
		}
		for i, b := range by {
			if b.Applies(values[starts[i]:starts[i+1]]) {
				return false
			}
		}
		return true
	}}
}
