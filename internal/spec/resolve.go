package spec

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// Policy defaults, as in the seed: three requests per ten units.
const (
	DefaultLimit  = 3
	DefaultWindow = "10"
)

// MaxLanes is the most limiters one replay runs (sim's bound).
const MaxLanes = 4096

// Inputs are everything a replay's policy is resolved from, each as
// given.
type Inputs struct {
	// File is the --config file, nil when none is given.
	File *File
	// Flags are the policy parameters given as flags on the command line,
	// each at its flag ("--limit").
	Flags Params
	// Algos are the algorithms of --algos, nil when it is not given: then
	// the file's algos:, or the classic five unless limiters are given.
	Algos []limiters.Algorithm
	// Limiters are the --limiter flags, after the file's limiters:.
	Limiters []Limiter
	// Single: the replay is of the limiters of Algos and Limiters only;
	// the file's limiters: and algos: do not join them.
	Single bool
	// Intent is --intent LIMIT/WINDOW, Value "" when not given.
	Intent Setting
	// Interval is --interval, Value "" when not given.
	Interval Setting
	// Inherit are parameters resolved by another replay that this one is
	// part of (a report's sweep takes the report's intent), over the
	// defaults and the policy file and under the flags.
	Inherit Params
}

// A Plan is a resolved policy whose durations are not yet in a unit.
type Plan struct {
	lanes    []planLane
	shared   Params // defaults < the file's < the flags
	intent   Setting
	interval Setting
	// sharedGiven: the shared limit or window was given, by a flag or
	// the file's top level.
	sharedGiven bool
	limitUsed   bool
	windowUsed  bool
}

// planLane is one lane of a plan: its name, algorithm and parameters.
type planLane struct {
	name    string
	alg     limiters.Algorithm
	params  Params   // every parameter, the lane's own over the shared
	own     bool     // it has parameters of its own (a limiter, or an algorithms: entry)
	limiter *Limiter // the limiter it comes from, or nil
}

// Resolve layers the inputs, defaults < the policy file < the flags <
// each limiter's own, and checks everything that does not depend on the
// trace's unit.
func Resolve(in Inputs) (*Plan, error) {
	base := Params{
		"limit":  {Value: strconv.Itoa(DefaultLimit), At: Default},
		"window": {Value: DefaultWindow, At: Default},
		"clock":  {Value: "reject", At: Default},
	}
	algos, lims := in.Algos, in.Limiters
	pf := in.File
	if pf != nil {
		base = base.overlay(pf.Shared)
		if !in.Single {
			lims = append(slices.Clone(pf.Limiters), lims...)
			if algos == nil {
				algos = pf.AlgoList
			}
		}
	}
	base = base.overlay(in.Inherit)
	if algos == nil && len(lims) == 0 {
		algos = limiters.ClassicAlgorithms()
	}
	if err := in.Flags.check(); err != nil {
		return nil, err
	}
	pl := &Plan{shared: base.overlay(in.Flags), interval: in.Interval}
	for _, name := range []string{"limit", "window"} {
		if pl.shared[name].At != Default {
			pl.sharedGiven = true
		}
	}
	add := func(l planLane, own Params) {
		pl.lanes = append(pl.lanes, l)
		if l.limiter != nil && l.limiter.Preset != "" {
			return // a preset gives every parameter its algorithm takes
		}
		// A window lane takes the shared limit and window unless it has
		// its own; a bucket takes them as the defaults of a capacity or
		// rate given nowhere.
		_, limit := own["limit"]
		_, window := own["window"]
		_, capacity := l.params["capacity"]
		_, rate := l.params["rate"]
		if l.alg.Windowed() {
			pl.limitUsed = pl.limitUsed || !limit
			pl.windowUsed = pl.windowUsed || !window
		} else {
			pl.limitUsed = pl.limitUsed || !capacity || !rate
			pl.windowUsed = pl.windowUsed || !rate
		}
	}
	for _, a := range algos {
		own := Params{}
		if pf != nil {
			for k, s := range pf.Algos[a] {
				if _, overridden := in.Flags[k]; !overridden {
					own[k] = s
				}
			}
		}
		add(planLane{name: a.String(), alg: a, params: pl.shared.overlay(own), own: len(own) > 0}, own)
	}
	for i := range lims {
		l := &lims[i]
		add(planLane{name: l.LaneName(), alg: l.Algorithm, params: pl.shared.overlay(l.Params), own: true, limiter: l}, l.Params)
	}
	if len(pl.lanes) > MaxLanes {
		return nil, errorf("%d limiters given; at most %d run in one replay", len(pl.lanes), MaxLanes)
	}
	named := map[string]bool{}
	for _, l := range pl.lanes {
		if named[l.name] {
			return nil, errorf("two limiters are named %s: name one with --limiter NAME=ALGORITHM:...", l.name)
		}
		named[l.name] = true
	}
	pl.intent = in.Intent
	if pl.intent.Value == "" && pf != nil {
		pl.intent = pf.Intent
	}
	if pl.intent.Value != "" {
		if _, _, err := parseIntent(pl.intent); err != nil {
			return nil, err
		}
	}
	if pl.interval.Value == "" && pf != nil {
		pl.interval = pf.Interval
	}
	if pl.interval.Value != "" {
		if err := checkDuration(pl.interval, "interval"); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// Duration parses s, the text of the duration called name ("interval"),
// in unit: a number of units or a Go duration, positive. Its errors name
// the flag it was given at ("invalid --interval "x": ..."), or the file
// and line and name ("policy.yaml:4: invalid interval "x": ...").
func Duration(s Setting, name string, unit time.Duration) (time.Duration, error) {
	prefix, label := "", string(s.At)
	if !strings.HasPrefix(label, "--") {
		prefix, label = label+": ", name
	}
	d, err := traces.ParseDuration(s.Value, unit)
	if err != nil {
		return 0, errorf("%sinvalid %s %q: %s", prefix, label, s.Value, Text(err))
	}
	if d <= 0 {
		return 0, errorf("%s%s must be positive, got %s", prefix, label, s.Value)
	}
	return d, nil
}

// checkDuration checks s as Duration does, in a way that does not depend
// on the unit: it is an error only if it is one in every unit.
func checkDuration(s Setting, name string) error {
	_, err := Duration(s, name, time.Second)
	if err == nil {
		return nil
	}
	for _, unit := range []time.Duration{time.Nanosecond, time.Hour} {
		if _, e := Duration(s, name, unit); e == nil {
			return nil
		}
	}
	return err
}

// parseIntent parses an intent, LIMIT/WINDOW: its limit and its window's
// text, at the intent's source.
func parseIntent(s Setting) (int64, Setting, error) {
	l, w, ok := strings.Cut(s.Value, "/")
	n, perr := strconv.ParseInt(strings.TrimSpace(l), 10, 64)
	window := Setting{Value: strings.TrimSpace(w), At: s.At}
	switch {
	case !ok || window.Value == "":
		return 0, window, errorf("%s %q: want LIMIT/WINDOW, such as 100/1m", s.At, s.Value)
	case perr != nil:
		return 0, window, errorf("%s %q: the limit %q is not a whole number", s.At, s.Value, l)
	case n <= 0:
		return 0, window, errorf("%s %q: the limit must be positive", s.At, s.Value)
	}
	_, err := intentWindow(s, window, time.Second)
	for _, unit := range []time.Duration{time.Nanosecond, time.Hour} {
		if _, e := intentWindow(s, window, unit); e == nil {
			err = nil
		}
	}
	return n, window, err
}

// intentWindow parses w, the window of the intent s, in unit.
func intentWindow(s, w Setting, unit time.Duration) (time.Duration, error) {
	d, err := traces.ParseDuration(w.Value, unit)
	if err != nil {
		return 0, errorf("%s %q: invalid window %q: %s", s.At, s.Value, w.Value, Text(err))
	}
	if d <= 0 {
		return 0, errorf("%s %q: the window must be positive, got %s", s.At, s.Value, w.Value)
	}
	return d, nil
}

// A Spec is a replay's policy with durations in the trace's unit: the
// lanes, the intent and the burst interval.
type Spec struct {
	// Lanes are the limiters to replay, each with its own policy.
	Lanes []sim.Lane
	// Own reports, per lane, whether it has parameters of its own (a
	// limiter, a preset, an algorithms: entry of the policy file) beside
	// the shared ones.
	Own []bool
	// Shared is the policy lanes take what they do not give themselves
	// from: the defaults, the policy file's top level, the flags.
	Shared limiters.Policy
	// Intent is the policy meant: an exact rolling limit (a sliding log)
	// of Intent.Limit per Intent.Window, with the shared clock. False
	// allows and rejects and burst ratios are counted against it.
	Intent limiters.Policy
	// IntentNamed reports whether anybody gave the intent: --intent, the
	// file's intent:, the shared limit or window, or lanes that take
	// them. Without it the intent is the default policy, which nobody
	// meant, and reports leave out what is counted against it.
	IntentNamed bool
	// IntentFrom says where the intent came from: "--intent",
	// "policy.yaml:3", "--limit and --window", "default".
	IntentFrom Source
	// Interval is the burst interval: --interval, or the intent's window.
	Interval time.Duration
	// IntervalGiven reports whether the interval was given.
	IntervalGiven bool
	// Unit is the unit durations were read in.
	Unit time.Duration
	// LimitUsed and WindowUsed report whether lanes take the shared limit
	// and window, directly or as the default of a bucket's capacity or
	// rate.
	LimitUsed, WindowUsed bool
}

// Bind reads the plan's durations in unit and returns the Spec. Its
// errors are about values that do not fit the unit (a fraction finer
// than a nanosecond, a number of units beyond range) or a policy an
// algorithm refuses.
func (pl *Plan) Bind(unit time.Duration) (*Spec, error) {
	shared, err := pl.shared.policy(unit)
	if err != nil {
		return nil, err
	}
	sp := &Spec{Shared: shared, Unit: unit, LimitUsed: pl.limitUsed, WindowUsed: pl.windowUsed}
	sp.Intent = limiters.Policy{Limit: shared.Limit, Window: shared.Window, Clock: shared.Clock}
	switch {
	case pl.intent.Value != "":
		n, w, _ := parseIntent(pl.intent)
		d, err := intentWindow(pl.intent, w, unit)
		if err != nil {
			return nil, err
		}
		sp.Intent.Limit, sp.Intent.Window = n, d
		sp.IntentNamed, sp.IntentFrom = true, pl.intent.At
	case pl.sharedGiven || pl.limitUsed || pl.windowUsed:
		sp.IntentNamed, sp.IntentFrom = true, pl.sharedFrom()
	default:
		sp.IntentFrom = Default
	}
	if err := sp.Intent.Validate(limiters.SlidingLog); err != nil {
		return nil, errorf("intent: %s", Text(err))
	}
	for _, l := range pl.lanes {
		var pol limiters.Policy
		var err error
		if l.limiter != nil {
			pol, err = l.limiter.policy(l.params, unit)
		} else {
			pol, err = l.params.policy(unit)
		}
		if err != nil {
			return nil, err
		}
		if err := pol.Validate(l.alg); err != nil {
			return nil, errorf("%s: %s: %s", l.params.sources(l.alg), l.name, Text(err))
		}
		sp.Lanes = append(sp.Lanes, sim.Lane{Name: l.name, Algorithm: l.alg, Policy: pol})
		sp.Own = append(sp.Own, l.own && !pol.SameFor(l.alg, shared))
	}
	sp.Interval = sp.Intent.Window
	if pl.interval.Value != "" {
		d, err := Duration(pl.interval, "interval", unit)
		if err != nil {
			return nil, err
		}
		sp.Interval, sp.IntervalGiven = d, true
	}
	return sp, nil
}

// sharedFrom names where the shared limit and window came from: "--limit
// and --window", "policy.yaml:2", "default".
func (pl *Plan) sharedFrom() Source {
	var from []string
	for _, name := range []string{"limit", "window"} {
		if at := pl.shared[name].At; at != Default && !slices.Contains(from, string(at)) {
			from = append(from, string(at))
		}
	}
	if len(from) == 0 {
		return Default
	}
	return Source(strings.Join(from, " and "))
}

// Algos returns the lanes' algorithms, in lane order.
func (sp *Spec) Algos() []limiters.Algorithm {
	algos := make([]limiters.Algorithm, len(sp.Lanes))
	for i, l := range sp.Lanes {
		algos[i] = l.Algorithm
	}
	return algos
}

// ParseAlgorithms parses a list of algorithm names, or "all" for every
// algorithm, given as flag ("--algos", or "algos" in a file). A nil list
// (not given) means the five classic algorithms; a list given with no
// name in it is an error.
func ParseAlgorithms(list []string, flag string) ([]limiters.Algorithm, error) {
	if list == nil {
		return limiters.ClassicAlgorithms(), nil
	}
	var algos []limiters.Algorithm
	for _, name := range list {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			for _, a := range limiters.AllAlgorithms() {
				if !slices.Contains(algos, a) {
					algos = append(algos, a)
				}
			}
			continue
		}
		a, err := limiters.ParseAlgorithm(name)
		if err != nil {
			return nil, errorf("unknown algorithm %q in %s (valid: %s, all)", name, flag, AlgorithmNames())
		}
		if slices.Contains(algos, a) {
			return nil, errorf("algorithm %s listed twice in %s", a, flag)
		}
		algos = append(algos, a)
	}
	if len(algos) == 0 {
		return nil, errorf("%s lists no algorithm (valid: %s, all)", flag, AlgorithmNames())
	}
	return algos, nil
}

// CheckUnit binds the plan in unit as a check before the trace is read,
// whose times may turn out to be RFC 3339 ones, with durations in
// seconds whatever the unit: an error in unit that seconds do not have
// ("1.5" with --unit ns) is deferred, returned to be given only once the
// trace turns out to be numeric; one that seconds have too is err.
func (pl *Plan) CheckUnit(unit time.Duration) (deferred, err error) {
	_, err = pl.Bind(unit)
	switch {
	case err == nil:
		return nil, nil
	case unit == time.Second:
		return nil, err
	}
	if _, errSeconds := pl.Bind(time.Second); errSeconds != nil {
		return nil, err
	}
	return err, nil
}
