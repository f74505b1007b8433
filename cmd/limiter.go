package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// limiterGrammar documents --limiter in help texts.
const limiterGrammar = `LIMITERS
  --limiter adds a limiter of its own, beside or instead of --algos:

    --limiter [NAME=]ALGORITHM[:KEY=VALUE,...]

  KEY is limit, window, capacity, rate or clock, as the flags of the same
  names; what a limiter does not give comes from the flags and --config.
  NAME names its column and summary row; without one, a limiter is named
  by its algorithm, or by its algorithm and parameters
  (token-bucket(capacity=10)), and two limiters of one name must be given
  names. Repeat --limiter for more; up to 4096 run in one pass:

    ratesim compare --limiter tb3=token-bucket:capacity=3,rate=0.3 \
                    --limiter tb10=token-bucket:capacity=10,rate=0.3 trace.csv

  ALGORITHM may also be a preset, a real library's limiter with that
  library's own parameters (see "ratesim presets"):

    --limiter redis-rate:rate=10,burst=10,period=1s
    --limiter nginx:rate=1r/s,burst=5,nodelay
    --limiter x-time-rate:r=1,b=3
    --limiter envoy:requests_per_unit=10,unit=hour

  In --config, a list under limiters: does the same:

    limiters:
      - {name: tb10, algorithm: token-bucket, capacity: 10, rate: 5/1s}
      - {name: edge, algorithm: nginx, rate: 10r/s, burst: 20, nodelay: true}`

// limiterSpec is one limiter given with --limiter or in the config
// file's limiters: list.
type limiterSpec struct {
	name string // "" for the default name
	alg  limiters.Algorithm
	p    params
	args string // the KEY=VALUE list as given, for the default name
	// preset is the preset the limiter was given as, or "".
	preset string
	// pol is a preset's policy: its lane takes it whole (but for the
	// clock, which is the flags' unless the preset sets its own), since
	// a library kind's configuration (limiters.Policy.Library) is more
	// than its parameters' texts hold.
	pol *limiters.Policy
}

// defaultName is the limiter's name when none is given: its algorithm,
// with its parameters when it gives any.
func (ls *limiterSpec) defaultName() string {
	name := ls.alg.String()
	if ls.preset != "" {
		name = ls.preset
	}
	if ls.args == "" {
		return name
	}
	return name + "(" + ls.args + ")"
}

// parseLimiter parses a --limiter value.
func parseLimiter(s string) (limiterSpec, error) {
	bad := func(format string, args ...any) error {
		return usageErrorf("--limiter %q: %s", s, fmt.Sprintf(format, args...))
	}
	var spec limiterSpec
	head, args, _ := strings.Cut(s, ":")
	if name, algo, ok := strings.Cut(head, "="); ok {
		if name == "" {
			return spec, bad("empty name before '='")
		}
		if strings.ContainsAny(name, ",=") {
			return spec, bad("name %q holds ',' or '='", name)
		}
		spec.name, head = name, algo
	}
	if p, ok := presets.Lookup(head); ok {
		var kvs [][2]string
		if args != "" {
			for _, kv := range strings.Split(args, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					v = "" // a bare flag such as nginx's nodelay
				}
				kvs = append(kvs, [2]string{k, v})
			}
		} else if strings.Contains(s, ":") {
			return spec, bad("no parameters after ':'")
		}
		if err := spec.setPreset(p, kvs, "--limiter "+s); err != nil {
			return spec, bad("%s", ErrorText(err))
		}
		spec.args = args
		return spec, nil
	}
	a, err := limiters.ParseAlgorithm(head)
	if err != nil {
		return spec, bad("unknown algorithm %q (valid: %s; presets: %s)", head, algorithmNames(), strings.Join(presets.Names(), ", "))
	}
	spec.alg, spec.args = a, args
	if args == "" {
		if strings.Contains(s, ":") {
			return spec, bad("no parameters after ':'")
		}
		return spec, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return spec, bad("%q is not KEY=VALUE (keys: %s)", kv, strings.Join(paramNames(), ", "))
		case v == "":
			return spec, bad("%s has no value", k)
		case seen[k]:
			return spec, bad("%s given twice", k)
		}
		seen[k] = true
		if err := spec.set(k, v, "--limiter "+s); err != nil {
			return spec, bad("%s", ErrorText(err))
		}
	}
	return spec, nil
}

// set sets parameter k to v, given at at, checking that the algorithm
// takes it. Every algorithm takes the clock, and the limit and the window,
// which are the defaults of a bucket's capacity and rate.
func (ls *limiterSpec) set(k, v, at string) error {
	if !slices.Contains(paramNames(), k) {
		return fmt.Errorf("unknown parameter %q (valid: %s)", k, strings.Join(paramNames(), ", "))
	}
	takes := ls.alg.Params()
	if !slices.Contains(takes, k) && k != "limit" && k != "window" && k != "clock" {
		return fmt.Errorf("%s takes %s and clock, not %s", ls.alg, strings.Join(takes, ", "), k)
	}
	if ls.p == nil {
		ls.p = params{}
	}
	ls.p[k] = setting{v, at}
	return nil
}

// setPreset makes ls the limiter of preset p with the parameters kvs, by
// the library's names; a bare key (empty value) is a flag set to true.
// The preset gives every parameter its algorithm takes, so none comes
// from the flags or the config file; they are recorded as given at at.
func (ls *limiterSpec) setPreset(p *presets.Preset, kvs [][2]string, at string) error {
	given := map[string]string{}
	for _, kv := range kvs {
		k, v := kv[0], kv[1]
		if _, dup := given[k]; dup {
			return fmt.Errorf("%s given twice", k)
		}
		if v == "" {
			if !slices.ContainsFunc(p.Params, func(prm presets.Param) bool { return prm.Name == k && prm.Flag }) {
				return fmt.Errorf("%s has no value (%s takes %s)", k, p.Name, strings.Join(p.ParamNames(), ", "))
			}
			v = "true"
		}
		given[k] = v
	}
	a, pol, err := p.Limiter(given)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "presets: "))
	}
	ls.alg, ls.preset, ls.pol = a, p.Name, &pol
	ls.p = policyParams(a, pol, at)
	return nil
}

// policyParams renders the parameters a takes in pol, and its clock, as
// exact texts that params.policy reads back to the same values.
func policyParams(a limiters.Algorithm, pol limiters.Policy, at string) params {
	p := params{}
	for _, name := range a.Params() {
		var text string
		switch v := pol.Field(name).(type) {
		case *int64:
			text = strconv.FormatInt(*v, 10)
		case *time.Duration:
			text = strconv.FormatInt(int64(*v), 10) + "ns"
		case *limiters.Rate:
			text = strconv.FormatInt(v.N, 10) + "/" + strconv.FormatInt(int64(v.Per), 10) + "ns"
		}
		p[name] = setting{text, at}
	}
	if pol.Clock == limiters.ClockClamp { // the library's own rule; else --clock's
		p["clock"] = setting{"clamp", at}
	}
	return p
}
