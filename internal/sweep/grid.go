package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// MaxCandidates is the most candidates one sweep runs: one replay's lanes,
// less the intent's own sliding log.
const MaxCandidates = spec.MaxLanes - 1

// An Error is a mistake in a sweep's grid or constraints: a usage error.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Usage reports that the error is a mistake in how the sweep was asked
// for.
func (e *Error) Usage() bool { return true }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// An Algo is what a sweep sweeps: an algorithm of the table of kinds, or
// a preset (a real library's limiter, with that library's parameters).
type Algo struct {
	Algorithm limiters.Algorithm
	Preset    *presets.Preset // nil for a plain algorithm
}

// String is the algo's name, as --algos takes it.
func (a Algo) String() string {
	if a.Preset != nil {
		return a.Preset.Name
	}
	return a.Algorithm.String()
}

// Params names the parameters the algo takes: the algorithm's, or the
// preset's own.
func (a Algo) Params() []string {
	if a.Preset != nil {
		return a.Preset.ParamNames()
	}
	return a.Algorithm.Params()
}

// ParseAlgos parses --algos: algorithm and preset names, or "all" for
// every algorithm.
func ParseAlgos(list []string) ([]Algo, error) {
	var out []Algo
	var plain []string
	for _, name := range list {
		name = strings.TrimSpace(name)
		if p, ok := presets.Lookup(name); ok {
			if slices.ContainsFunc(out, func(a Algo) bool { return a.Preset != nil && a.Preset.Name == p.Name }) {
				return nil, errorf("preset %s listed twice in --algos", p.Name)
			}
			out = append(out, Algo{Preset: p})
			continue
		}
		plain = append(plain, name)
	}
	if len(plain) > 0 || len(out) == 0 {
		algos, err := spec.ParseAlgorithms(plain, "--algos")
		if err != nil {
			return nil, errorf("%s; presets: %s", spec.Text(err), strings.Join(presets.Names(), ", "))
		}
		for _, a := range algos {
			out = append(out, Algo{Algorithm: a})
		}
	}
	return out, nil
}

// A Grid is the parameter values of a sweep, per parameter in the order
// they were set.
type Grid struct {
	names  []string
	values map[string][]string
}

// Names lists the parameters given values, in the order they were set.
func (g *Grid) Names() []string { return slices.Clone(g.names) }

// Values returns the values of parameter name, nil when none was given.
func (g *Grid) Values(name string) []string { return g.values[name] }

// ParamNames lists every parameter a sweep may be given values of: those
// of limiters.Params, then the presets' that are not among them.
func ParamNames() []string {
	var names []string
	for _, prm := range limiters.Params() {
		names = append(names, prm.Name)
	}
	for _, p := range presets.All() {
		for _, name := range p.ParamNames() {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// ranged reports whether parameter name takes ranges A..B of whole
// numbers: a count of limiters.Params, or a preset's parameter (which
// checks its values itself).
func ranged(name string) bool {
	for _, prm := range limiters.Params() {
		if prm.Name == name {
			return prm.Kind == limiters.ParamCount
		}
	}
	return true
}

// Set gives parameter name the values of text, a comma-separated list of
// values, and for whole numbers ranges A..B and A..B:STEP. A value given
// twice is an error, as it would make two candidates alike.
func (g *Grid) Set(name, text string) error {
	if g.values == nil {
		g.values = map[string][]string{}
	}
	flag := "--" + name
	bad := func(format string, args ...any) error {
		return errorf("%s %q: %s", flag, text, fmt.Sprintf(format, args...))
	}
	var out []string
	seen := map[string]bool{}
	add := func(v string) error {
		if seen[v] {
			return bad("%s given twice", v)
		}
		seen[v] = true
		out = append(out, v)
		if len(out) > MaxCandidates {
			return bad("more than %d values; use a coarser step", MaxCandidates)
		}
		return nil
	}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return bad("an empty value")
		}
		from, rest, isRange := strings.Cut(item, "..")
		if !isRange {
			if err := add(item); err != nil {
				return err
			}
			continue
		}
		if !ranged(name) {
			return bad("ranges A..B take whole numbers; list the %s values instead", name)
		}
		to, stepText, stepped := strings.Cut(rest, ":")
		lo, err1 := strconv.ParseInt(from, 10, 64)
		hi, err2 := strconv.ParseInt(to, 10, 64)
		switch {
		case from == "" || to == "":
			return bad("range %q needs a start and an end, as in 5..50", item)
		case err1 != nil || err2 != nil:
			return bad("range %q: want whole numbers, as in 5..50", item)
		case hi < lo:
			return bad("range %q is empty: its end is below its start", item)
		}
		step := int64(1)
		if stepped {
			s, err := strconv.ParseInt(stepText, 10, 64)
			switch {
			case err != nil:
				return bad("range %q: the step %q is not a whole number", item, stepText)
			case s <= 0:
				return bad("range %q: the step must be positive, got %d", item, s)
			}
			step = s
		}
		if n := (uint64(hi)-uint64(lo))/uint64(step) + 1; n > MaxCandidates {
			return bad("range %q has %d values, more than the %d candidates a sweep runs; use a coarser step", item, n, MaxCandidates)
		}
		for v := lo; ; v += step {
			if err := add(strconv.FormatInt(v, 10)); err != nil {
				return err
			}
			if hi-v < step {
				break
			}
		}
	}
	if _, ok := g.values[name]; !ok {
		g.names = append(g.names, name)
	}
	g.values[name] = out
	return nil
}

// Unused lists the parameters given values that none of algos takes.
// The limit and window are never unused: they are the intent's, and the
// defaults of a bucket's capacity and rate.
func (g *Grid) Unused(algos []Algo) []string {
	var out []string
	for _, name := range g.names {
		if name == "limit" || name == "window" {
			continue
		}
		if !slices.ContainsFunc(algos, func(a Algo) bool { return slices.Contains(a.Params(), name) }) {
			out = append(out, name)
		}
	}
	return out
}

// A Candidate is one limiter of a sweep: an algo with one combination of
// the grid's values, and, once scored, what the replay found of it.
type Candidate struct {
	// Index is its place in grid order.
	Index int
	Algo  Algo
	// Limiter replays it alone; its Name is its --limiter text
	// ("token-bucket:capacity=5,rate=1/1s").
	Limiter spec.Limiter
	// Values are the grid's values it takes, by parameter.
	Values map[string]string
	// Params lists the parameters its values are of, in grid order.
	Params []string

	score
}

// Candidates are the grid's combinations for each algo, in algo order,
// then by the parameters in grid order, the last varying fastest.
func (g *Grid) Candidates(algos []Algo) ([]*Candidate, error) {
	var out []*Candidate
	total := 0
	for _, a := range algos {
		var names []string
		n := 1
		for _, name := range g.names {
			if slices.Contains(a.Params(), name) {
				names = append(names, name)
				n *= len(g.values[name])
				if n > MaxCandidates {
					break
				}
			}
		}
		total += n
		if n > MaxCandidates || total > MaxCandidates {
			return nil, errorf("the grid has more than %d candidates; give fewer values or a coarser step", MaxCandidates)
		}
		idx := make([]int, len(names))
		for {
			c := &Candidate{Index: len(out), Algo: a, Values: map[string]string{}, Params: names}
			var args []string
			for i, name := range names {
				v := g.values[name][idx[i]]
				c.Values[name] = v
				args = append(args, name+"="+v)
			}
			if err := c.build(args); err != nil {
				return nil, err
			}
			out = append(out, c)
			// The next combination, the last parameter fastest.
			i := len(idx) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(g.values[names[i]]) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	return out, nil
}

// build makes c's limiter from its values, args as KEY=VALUE.
func (c *Candidate) build(args []string) error {
	name := c.Algo.String()
	if len(args) > 0 {
		name += ":" + strings.Join(args, ",")
	}
	if c.Algo.Preset != nil {
		var kvs [][2]string
		for _, p := range c.Params {
			// A value that is the parameter's default is the parameter
			// left out, as the library's configuration leaves it out:
			// nginx's burst=0 is no burst, which nginx takes only unsaid.
			if i := slices.IndexFunc(c.Algo.Preset.Params, func(prm presets.Param) bool { return prm.Name == p }); i >= 0 {
				if prm := c.Algo.Preset.Params[i]; !prm.Flag && prm.Default != "" && prm.Default == c.Values[p] {
					continue
				}
			}
			kvs = append(kvs, [2]string{p, c.Values[p]})
		}
		l, err := spec.PresetLimiter(c.Algo.Preset, kvs, spec.Source(flagsOf(c.Params)))
		if err != nil {
			return errorf("%s: %s", flagsOf(c.Params), spec.Text(err))
		}
		l.Name = name
		c.Limiter = l
		return nil
	}
	c.Limiter = spec.Limiter{Name: name, Algorithm: c.Algo.Algorithm, Args: strings.Join(args, ","), At: spec.Source(flagsOf(c.Params))}
	for _, name := range c.Params {
		if err := c.Limiter.Set(name, c.Values[name], spec.Source("--"+name)); err != nil {
			return errorf("--%s: %s", name, spec.Text(err))
		}
	}
	return c.Limiter.Check()
}

// flagsOf names the flags of params: "--burst and --rate".
func flagsOf(params []string) string {
	flags := make([]string, len(params))
	for i, p := range params {
		flags[i] = "--" + p
	}
	if len(flags) == 0 {
		return "the sweep"
	}
	return strings.Join(flags, " and ")
}

// Describe states the values of the grid per algo, the parameters it
// takes: "token-bucket capacity 1,2,...,64 (64 values) × rate 1/1s".
func (g *Grid) Describe(algos []Algo) string {
	var parts []string
	for _, a := range algos {
		var dims []string
		for _, name := range g.names {
			if !slices.Contains(a.Params(), name) {
				continue
			}
			vals := g.values[name]
			text := strings.Join(vals, ",")
			if len(vals) > 4 {
				text = fmt.Sprintf("%s,%s,...,%s (%d values)", vals[0], vals[1], vals[len(vals)-1], len(vals))
			}
			dims = append(dims, name+" "+text)
		}
		if len(dims) == 0 {
			dims = append(dims, "as the intent")
		}
		parts = append(parts, a.String()+" "+strings.Join(dims, " × "))
	}
	return strings.Join(parts, "; ")
}
