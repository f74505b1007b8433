package spec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// A Limiter is one limiter given with --limiter or in a policy file's
// limiters: (or policies:) list: an algorithm with parameters of its own,
// or a preset with the library's.
type Limiter struct {
	// Name names its lane; "" for the default name.
	Name      string
	Algorithm limiters.Algorithm
	// Params are the parameters it gives; the others come from the flags
	// and the policy file.
	Params Params
	// Args is the KEY=VALUE list as given, for the default name.
	Args string
	// Preset is the preset it was given as, or "". A preset's policy is
	// Policy: every parameter its algorithm takes is the library's, and
	// only the clock may come from elsewhere (unless the library has a
	// clock rule of its own, Policy.Clock ClockClamp).
	Preset string
	Policy limiters.Policy
	At     Source
}

// DefaultName is the limiter's name when none is given: its algorithm (or
// preset), with its parameters when it gives any: "token-bucket(capacity=10)".
func (l *Limiter) DefaultName() string {
	name := l.Algorithm.String()
	if l.Preset != "" {
		name = l.Preset
	}
	if l.Args == "" {
		return name
	}
	return name + "(" + l.Args + ")"
}

// LaneName is the limiter's name or, without one, its default name.
func (l *Limiter) LaneName() string {
	if l.Name != "" {
		return l.Name
	}
	return l.DefaultName()
}

// AlgorithmNames lists the algorithms' names, as "(valid: ...)" lists
// them.
func AlgorithmNames() string {
	var names []string
	for _, a := range limiters.AllAlgorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names, ", ")
}

// ParseLimiter parses a --limiter value: [NAME=]ALGORITHM[:KEY=VALUE,...],
// where ALGORITHM may be a preset with its library's parameters.
func ParseLimiter(s string) (Limiter, error) {
	bad := func(format string, args ...any) error {
		return errorf("--limiter %q: %s", s, fmt.Sprintf(format, args...))
	}
	l := Limiter{At: Source("--limiter " + s)}
	head, args, _ := strings.Cut(s, ":")
	if name, algo, ok := strings.Cut(head, "="); ok {
		if name == "" {
			return l, bad("empty name before '='")
		}
		if strings.ContainsAny(name, ",=") {
			return l, bad("name %q holds ',' or '='", name)
		}
		l.Name, head = name, algo
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
			return l, bad("no parameters after ':'")
		}
		if err := l.setPreset(p, kvs); err != nil {
			return l, bad("%s", Text(err))
		}
		l.Args = args
		return l, nil
	}
	a, err := limiters.ParseAlgorithm(head)
	if err != nil {
		return l, bad("unknown algorithm %q (valid: %s; presets: %s)", head, AlgorithmNames(), strings.Join(presets.Names(), ", "))
	}
	l.Algorithm, l.Args = a, args
	if args == "" {
		if strings.Contains(s, ":") {
			return l, bad("no parameters after ':'")
		}
		return l, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return l, bad("%q is not KEY=VALUE (keys: %s)", kv, strings.Join(ParamNames(), ", "))
		case v == "":
			return l, bad("%s has no value", k)
		case seen[k]:
			return l, bad("%s given twice", k)
		}
		seen[k] = true
		if err := l.Set(k, v, l.At); err != nil {
			return l, bad("%s", Text(err))
		}
	}
	if err := l.Params.check(); err != nil {
		return l, err
	}
	return l, nil
}

// Set sets parameter k to v, given at at, checking that the algorithm
// takes it. Every algorithm takes the clock, and the limit and the window,
// which are the defaults of a bucket's capacity and rate.
func (l *Limiter) Set(k, v string, at Source) error {
	if !slices.Contains(ParamNames(), k) {
		return errorf("unknown parameter %q (valid: %s)", k, strings.Join(ParamNames(), ", "))
	}
	takes := l.Algorithm.Params()
	if !slices.Contains(takes, k) && k != "limit" && k != "window" && k != "clock" {
		return errorf("%s takes %s and clock, not %s", l.Algorithm, strings.Join(takes, ", "), k)
	}
	if l.Params == nil {
		l.Params = Params{}
	}
	l.Params[k] = Setting{Value: v, At: at}
	return nil
}

// Check checks the texts of the limiter's parameters in a way that does
// not depend on the trace's unit, as ParseLimiter does.
func (l *Limiter) Check() error { return l.Params.check() }

// PresetLimiter returns the limiter of preset p with the parameters kvs
// (KEY, VALUE), by the library's names; a bare key (empty value) is a
// flag set to true. Its errors name the preset and the parameter.
func PresetLimiter(p *presets.Preset, kvs [][2]string, at Source) (Limiter, error) {
	l := Limiter{At: at}
	var args []string
	for _, kv := range kvs {
		args = append(args, kv[0]+"="+kv[1])
	}
	l.Args = strings.Join(args, ",")
	return l, l.setPreset(p, kvs)
}

// setPreset makes l the limiter of preset p with the parameters kvs, by
// the library's names; a bare key (empty value) is a flag set to true.
func (l *Limiter) setPreset(p *presets.Preset, kvs [][2]string) error {
	given := map[string]string{}
	for _, kv := range kvs {
		k, v := kv[0], kv[1]
		if _, dup := given[k]; dup {
			return errorf("%s given twice", k)
		}
		if v == "" {
			if !slices.ContainsFunc(p.Params, func(prm presets.Param) bool { return prm.Name == k && prm.Flag }) {
				return errorf("%s has no value (%s takes %s)", k, p.Name, strings.Join(p.ParamNames(), ", "))
			}
			v = "true"
		}
		given[k] = v
	}
	a, pol, err := p.Limiter(given)
	if err != nil {
		return err
	}
	l.Algorithm, l.Preset, l.Policy = a, p.Name, pol
	return nil
}

// policy is the limiter's policy under the parameters p (the shared ones
// with the limiter's own over them), with durations in unit.
func (l *Limiter) policy(p Params, unit time.Duration) (limiters.Policy, error) {
	if l.Preset == "" {
		return p.policy(unit)
	}
	pol := l.Policy
	if pol.Clock != limiters.ClockClamp { // the library's own rule; else the clock given
		c, err := Params{"clock": p["clock"]}.clock()
		if err != nil {
			return pol, err
		}
		pol.Clock = c
	}
	return pol, nil
}

// LimiterKeys are the keys a --limiter of algo (an algorithm or a
// preset) takes after its ':', as they are typed: "capacity=", or a
// preset's flag bare ("nodelay").
func LimiterKeys(algo string) []string {
	var keys []string
	if p, ok := presets.Lookup(algo); ok {
		for _, prm := range p.Params {
			if prm.Flag {
				keys = append(keys, prm.Name) // given bare
			} else {
				keys = append(keys, prm.Name+"=")
			}
		}
		return keys
	}
	for _, k := range ParamNames() {
		keys = append(keys, k+"=")
	}
	return keys
}
