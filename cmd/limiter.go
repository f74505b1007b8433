package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/limiters"
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

  In --config, a list under limiters: does the same:

    limiters:
      - {name: tb10, algorithm: token-bucket, capacity: 10, rate: 5/1s}`

// limiterSpec is one limiter given with --limiter or in the config
// file's limiters: list.
type limiterSpec struct {
	name string // "" for the default name
	alg  limiters.Algorithm
	p    params
	args string // the KEY=VALUE list as given, for the default name
}

// defaultName is the limiter's name when none is given: its algorithm,
// with its parameters when it gives any.
func (ls *limiterSpec) defaultName() string {
	if ls.args == "" {
		return ls.alg.String()
	}
	return ls.alg.String() + "(" + ls.args + ")"
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
	a, err := limiters.ParseAlgorithm(head)
	if err != nil {
		return spec, bad("unknown algorithm %q (valid: %s)", head, algorithmNames())
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
