package sweep

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
)

// Flags are the flags that describe a sweep: the algorithms or presets
// swept, a flag of values for every parameter of the algorithms and of
// the presets, the clock, the intent, --pick and --frontier. Check
// parses them.
type Flags struct {
	Algos    []string
	Clock    string
	Intent   string
	Pick     string
	Frontier bool
	values   map[string]*string // per parameter, its flag's text
	taken    func(string) bool
}

// AddFlags adds the flags of f to fs. taken says which names other flags
// of the command have, which a parameter's flag must not (FlagName).
func (f *Flags) AddFlags(fs *pflag.FlagSet, taken func(name string) bool) {
	f.values, f.taken = map[string]*string{}, taken
	fs.StringSliceVar(&f.Algos, "algos", []string{limiters.TokenBucket.String()}, "algorithms or presets to sweep, comma-separated, or all")
	for _, name := range ParamNames() {
		v := new(string)
		f.values[name] = v
		def, usage := Usage(name)
		fs.StringVar(v, FlagName(name, taken), def, usage)
	}
	fs.StringVar(&f.Clock, "clock", "reject", spec.ClockUsage)
	fs.StringVar(&f.Intent, "intent", "", "the policy meant, LIMIT/WINDOW such as 100/1m: the exact rolling limit candidates are scored against (default: --limit per --window)")
	fs.StringVar(&f.Pick, "pick", "", "constraints a candidate must meet, such as 'false_reject_pct<=1,ratio<=1.2': those that do, best first")
	fs.BoolVar(&f.Frontier, "frontier", false, "only the candidates no other beats on both false allows and false rejects (with --pick, of those that meet it)")
}

// FlagName is the flag of sweep parameter name: its name, or for a
// preset's parameter whose name another flag of the command has (taken:
// envoy's unit, beside the trace's --unit) or that is one letter
// (x/time/rate's r and b, which shells take for short flags), the
// preset's name and its: --envoy-unit, --x-time-rate-b.
func FlagName(name string, taken func(name string) bool) string {
	if _, ok := spec.Param(name); ok {
		return name
	}
	if !taken(name) && len(name) > 1 {
		return name
	}
	return strings.ReplaceAll(spec.PresetsTaking(name), ", ", "-") + "-" + name
}

// Value returns the text of the flag of parameter name, "" for a name
// that is not a parameter.
func (f *Flags) Value(name string) string {
	if v := f.values[name]; v != nil {
		return *v
	}
	return ""
}

// grid parses the value flags given (by flag name). A limit or window
// flag not given is one value, its default, which only matters as the
// default of another parameter (a bucket's capacity is the limit).
func (f *Flags) grid(given map[string]bool) (*Grid, error) {
	g := &Grid{}
	for _, name := range ParamNames() {
		flag := FlagName(name, f.taken)
		if !given[flag] {
			continue
		}
		if err := g.Set(name, f.Value(name)); err != nil {
			if flag != name {
				return nil, errorf("%s", strings.Replace(err.Error(), "--"+name, "--"+flag, 1))
			}
			return nil, err
		}
	}
	return g, nil
}

// Check parses the flags given (by name): the algorithms, the grid and
// --pick, which may name the label columns only when the requests are
// labelled.
func (f *Flags) Check(given map[string]bool, labelled bool) (*Grid, []Algo, Constraints, error) {
	algos, err := ParseAlgos(f.Algos)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := f.grid(given)
	if err != nil {
		return nil, nil, nil, err
	}
	cons, err := ParsePick(f.Pick)
	if err != nil {
		return nil, nil, nil, err
	}
	if !labelled {
		for _, c := range cons {
			if strings.HasPrefix(c.Column, "legit_") || strings.HasPrefix(c.Column, "abusive_") {
				return nil, nil, nil, errorf("--pick %s needs the requests labelled: give --legit, --abusive or --labels", c.Text)
			}
		}
	}
	return g, algos, cons, nil
}

// IntentLane names the sliding log of the intent's own policy that a
// sweep replays beside its candidates: what it allowed, the intent
// allowed.
const IntentLane = "intent"

// Limiters are the limiters a sweep of cands replays, in one pass: each
// candidate's, then the intent's sliding log (IntentLane), which takes
// the shared limit and window.
func Limiters(cands []*Candidate) []spec.Limiter {
	lims := make([]spec.Limiter, 0, len(cands)+1)
	for _, c := range cands {
		lims = append(lims, c.Limiter)
	}
	return append(lims, spec.Limiter{Name: IntentLane, Algorithm: limiters.SlidingLog})
}

// ScoreAll scores each of cands from the replay of Limiters(cands), its
// lanes and stats in their order, against the intent, with durations and
// rates per unit (Candidate.Score), and picks those that meet cs, best
// first (Pick).
func ScoreAll(cands []*Candidate, lanes []sim.Lane, stats []sim.AlgoStats, intent limiters.Policy, unit time.Duration, cs Constraints) []*Candidate {
	for i, c := range cands {
		c.Score(lanes[i], &stats[i], intent, unit)
	}
	return Pick(cands, cs)
}

// Deployed is the candidate of index i that replays l, the limit
// deployed today (a gateway's config), beside a grid's: scored as they
// are, it tells whether a candidate beats what runs now, and by how
// much.
func Deployed(l spec.Limiter, i int) *Candidate {
	a := Algo{Algorithm: l.Algorithm}
	if l.Preset != "" {
		if p, ok := presets.Lookup(l.Preset); ok {
			a.Preset = p
		}
	}
	return &Candidate{Index: i, Algo: a, Limiter: l, Values: map[string]string{}}
}
