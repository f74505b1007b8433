package gateway

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// apigw reads Amazon API Gateway's throttling: a CloudFormation (or SAM)
// template's stages' MethodSettings and usage plans' Throttle, or the
// API's own JSON (get-stage's methodSettings, get-usage-plan's throttle).
// A stage's and a method's limits are one bucket for every client; a
// usage plan's, one per API key.
func (r *reader) apigw(data []byte) error {
	docs, err := r.yamlDocs(data)
	if err != nil {
		return err
	}
	r.cfg.File.Stack = "consume"
	for _, doc := range docs {
		if res := get(doc, "Resources"); res != nil && res.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(res.Content); i += 2 {
				name, body := res.Content[i].Value, res.Content[i+1]
				props := get(body, "Properties")
				switch t := get(body, "Type"); {
				case t == nil || props == nil:
				case t.Value == "AWS::ApiGateway::Stage" || t.Value == "AWS::Serverless::Api":
					if err := r.apigwMethods(name, get(props, "MethodSettings"), "ResourcePath", "HttpMethod", "ThrottlingRateLimit", "ThrottlingBurstLimit"); err != nil {
						return err
					}
				case t.Value == "AWS::ApiGateway::UsagePlan":
					if th := get(props, "Throttle"); th != nil {
						if err := r.apigwLimit(name, th, "RateLimit", "BurstLimit", r.apiKey(), nil); err != nil {
							return err
						}
					}
				}
			}
			continue
		}
		if ms := get(doc, "methodSettings"); ms != nil {
			name := "stage"
			if n := get(doc, "stageName"); n != nil {
				name = n.Value
			}
			if ms.Kind != yaml.MappingNode {
				return r.errorf(ms.Line, "methodSettings must map RESOURCE/METHOD to settings")
			}
			var settings []methodSetting
			for i := 0; i+1 < len(ms.Content); i += 2 {
				// RESOURCE/METHOD, the resource's slashes written ~1: "~1orders/GET", "*/*".
				setting := ms.Content[i].Value
				j := strings.LastIndex(setting, "/")
				if j < 0 {
					return r.errorf(ms.Content[i].Line, "methodSettings key %q: want RESOURCE/METHOD, such as */* or ~1orders/GET", setting)
				}
				path, method := setting[:j], setting[j+1:]
				path = "/" + strings.TrimPrefix(strings.ReplaceAll(path, "~1", "/"), "/")
				settings = append(settings, methodSetting{path: path, method: method, n: ms.Content[i+1]})
			}
			if err := r.apigwStage(name, settings, "throttlingRateLimit", "throttlingBurstLimit"); err != nil {
				return err
			}
		}
		if th := get(doc, "throttle"); th != nil {
			name := "usage-plan"
			if n := get(doc, "name"); n != nil {
				name = n.Value
			}
			if err := r.apigwLimit(name, th, "rateLimit", "burstLimit", r.apiKey(), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// apiKey is the key of a usage plan's limits: the client's API key.
func (r *reader) apiKey() []string {
	f, _ := r.field("x-api-key")
	return []string{f}
}

// methodSetting is one method's throttling in a stage.
type methodSetting struct {
	path, method string
	n            *yaml.Node
}

// apigwMethods reads a stage's MethodSettings list.
func (r *reader) apigwMethods(stage string, list *yaml.Node, pathKey, methodKey, rateKey, burstKey string) error {
	if list == nil {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		return r.errorf(list.Line, "MethodSettings must be a list")
	}
	var settings []methodSetting
	for _, m := range list.Content {
		ms := methodSetting{path: "/*", method: "*", n: m}
		if v := get(m, pathKey); v != nil {
			ms.path = strings.ReplaceAll(v.Value, "~1", "/")
		}
		if v := get(m, methodKey); v != nil {
			ms.method = v.Value
		}
		if get(m, rateKey) == nil && get(m, burstKey) == nil {
			continue
		}
		settings = append(settings, ms)
	}
	return r.apigwStage(stage, settings, rateKey, burstKey)
}

// apigwStage adds a stage's method throttling: the default (*/*) applies
// to each method on its own, one bucket per method, except the methods
// with settings of their own, each one bucket.
func (r *reader) apigwStage(stage string, settings []methodSetting, rateKey, burstKey string) error {
	var own []*sim.Match
	for _, ms := range settings {
		if m := methodMatch(ms.path, ms.method); m != nil {
			own = append(own, m)
		}
	}
	for _, ms := range settings {
		m := methodMatch(ms.path, ms.method)
		if m != nil {
			if err := r.apigwLimit(stage+" "+ms.method+" "+ms.path, ms.n, rateKey, burstKey, []string{}, m); err != nil {
				return err
			}
			continue
		}
		var def *sim.Match
		if len(own) > 0 {
			def = unless(&sim.Match{Fields: nil, Applies: func([][]byte) bool { return true }}, own)
		}
		r.warnf(ms.n.Line, "the stage's default throttling applies to each method on its own: ratesim tells methods apart by the trace's path and method, so /orders/1 and /orders/2 are two (API Gateway's resource /orders/{id} is one)")
		if err := r.apigwLimit(stage, ms.n, rateKey, burstKey, []string{"path", "method"}, def); err != nil {
			return err
		}
	}
	return nil
}

// methodMatch is the match of the requests of a resource path and HTTP
// method ("/*" and "*" for every one); nil when it takes every request.
func methodMatch(path, method string) *sim.Match {
	anyPath, anyMethod := path == "/*" || path == "*", method == "*"
	if anyPath && anyMethod {
		return nil
	}
	return &sim.Match{Fields: []string{"path", "method"}, Applies: func(v [][]byte) bool {
		p := v[0]
		if q := strings.IndexByte(string(p), '?'); q >= 0 {
			p = p[:q]
		}
		return (anyPath || string(p) == path) && (anyMethod || strings.EqualFold(string(v[1]), method))
	}}
}

// apigwLimit adds the token bucket of a rate and burst limit.
func (r *reader) apigwLimit(name string, n *yaml.Node, rateKey, burstKey string, key []string, m *sim.Match) error {
	rate, burst := get(n, rateKey), get(n, burstKey)
	if rate == nil || burst == nil {
		return r.errorf(n.Line, "%s: throttling needs both %s and %s", name, rateKey, burstKey)
	}
	b, err := r.whole(burst, burstKey, 0)
	if err != nil {
		return err
	}
	if b == 0 {
		return r.errorf(burst.Line, "%s 0 refuses every request", burstKey)
	}
	if _, err := limiters.ParseRate(rate.Value, 1e9); err != nil || strings.Contains(rate.Value, "/") {
		return r.errorf(rate.Line, "%s %q: want a positive number of requests per second", rateKey, rate.Value)
	}
	at := r.at(rate.Line)
	l := spec.Limiter{Name: name, Algorithm: limiters.TokenBucket, At: at, Args: "capacity=" + burst.Value + ",rate=" + rate.Value + "/1s"}
	if err := l.Set("capacity", burst.Value, r.at(burst.Line)); err != nil {
		return r.errorf(burst.Line, "%s", spec.Text(err))
	}
	if err := l.Set("rate", rate.Value+"/1s", at); err != nil {
		return r.errorf(rate.Line, "%s", spec.Text(err))
	}
	if err := l.Check(); err != nil {
		return r.errorf(rate.Line, "%s", spec.Text(err))
	}
	r.add(spec.StackPolicy{Limiter: l, Key: key, Match: m})
	return nil
}
