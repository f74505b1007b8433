package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// policyHelp ends the long help of the commands that replay a trace.
const policyHelp = `

POLICY
  Window algorithms use --limit and --window (default 3 per 10); bucket
  algorithms use --capacity (default: the limit) and --rate (default: the
  limit per window). Every report states the parameters in effect. --config
  reads them from a YAML file, shared or per algorithm; flags given on the
  command line override the file:

    limit: 3
    window: 10s
    algorithms:
      token-bucket: {capacity: 5, rate: 1/2}

  Each algorithm runs with its own parameters. The file may also give
  algos (a list), key, unit, interval and clock. The oracle, against
  which false allows and rejects are counted, is a sliding log with the
  shared limit and window.

` + limiterGrammar + `

TRACES
  Several traces are merged by time (each must be in time order, or give
  --sort, which sorts them in bounded memory). --user-field, --time-field
  and --cost-field name the columns or keys to read (a.b reaches into
  nested JSON); --time-format and --tz say how times are written. Access
  logs in the nginx and Apache combined and common formats are read as
  they are, the user being the client ip.`

// Policy defaults, as in the seed: three requests per ten units.
const (
	defaultLimit  = 3
	defaultWindow = "10"
)

// policyOptions are the policy flags shared by run, compare and burst.
type policyOptions struct {
	Limit    int64
	Window   string
	Capacity int64
	Rate     string
	Clock    string
	Config   string
	Limiters []string // --limiter, one spec each
	Stack    string   // --stack: consume or refund
	// single: the replay is of the one limiter given on the command line;
	// the config file's limiters and algos do not join it.
	single bool
	file   *policyFile // --config, once read

	// extra holds the flags of the parameters beyond coreParams, by name.
	extra map[string]*string

	// set names the flags given explicitly; they override the config file.
	set map[string]bool
}

func addPolicyFlags(fs *pflag.FlagSet, o *policyOptions) {
	fs.Int64Var(&o.Limit, "limit", defaultLimit, "window algorithms: most cost allowed per window")
	fs.StringVar(&o.Window, "window", defaultWindow, "window length: a number in the trace unit or a Go duration (10s, 1m)")
	fs.Int64Var(&o.Capacity, "capacity", 0, "bucket algorithms: bucket size (default: the limit)")
	fs.StringVar(&o.Rate, "rate", "", "bucket algorithms: refill or leak rate, per unit (0.2) or N/D (1/5, 3/10s, 300/1m) (default: limit per window)")
	fs.StringVar(&o.Clock, "clock", "reject", "when time goes backwards for a key: reject, or clamp to the key's last time")
	for _, prm := range limiters.Params() {
		if slices.Contains(coreParams, prm.Name) {
			continue
		}
		if o.extra == nil {
			o.extra = map[string]*string{}
		}
		v := new(string)
		o.extra[prm.Name] = v
		fs.StringVar(v, prm.Name, prm.Default, takers(prm.Name)+": "+prm.Usage)
	}
	fs.StringVar(&o.Config, "config", "", "policy file (YAML); flags given explicitly override it")
	fs.StringVar(&o.Stack, "stack", "consume", "with a policies: list in --config, whether policies that allowed a refused request still count it (consume) or not (refund)")
	fs.StringArrayVar(&o.Limiters, "limiter", nil, "a limiter with parameters of its own: [NAME=]ALGORITHM[:KEY=VALUE,...]; repeatable (see LIMITERS)")
}

// lanesGiven parses --algos (nil when not given: the default depends on
// the limiters given) and the --limiter flags.
func (o *policyOptions) lanesGiven(algoList []string) ([]limiters.Algorithm, []limiterSpec, error) {
	var algos []limiters.Algorithm
	if algoList != nil {
		var err error
		if algos, err = parseAlgorithms(algoList); err != nil {
			return nil, nil, err
		}
	}
	specs, err := o.specs()
	return algos, specs, err
}

// policyFile reads the --config file, once however often it is asked for.
func (o *policyOptions) policyFile() (*policyFile, error) {
	if o.file == nil {
		pf, err := readPolicyFile(o.Config)
		if err != nil {
			return nil, err
		}
		o.file = pf
	}
	return o.file, nil
}

// specs parses the --limiter flags.
func (o *policyOptions) specs() ([]limiterSpec, error) {
	var specs []limiterSpec
	for _, s := range o.Limiters {
		ls, err := parseLimiter(s)
		if err != nil {
			return nil, err
		}
		specs = append(specs, ls)
	}
	return specs, nil
}

// markSet records which policy flags were given on the command line.
func (o *policyOptions) markSet(fs *pflag.FlagSet) {
	o.set = map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
}

// params is one set of policy parameters as text, from flags, the file or
// a --limiter: each parameter given, by name (the names of
// limiters.Params, and clock), with where it came from, for messages.
type params map[string]setting

// setting is one parameter's text and where it came from ("--limit",
// "policy.yaml:3", "default").
type setting struct{ value, at string }

// paramNames are the parameters a policy file, a --limiter or the policy
// flags may give: those of limiters.Params, then clock.
func paramNames() []string {
	var names []string
	for _, prm := range limiters.Params() {
		names = append(names, prm.Name)
	}
	return append(names, "clock")
}

// coreParams are the parameters whose flags have texts of their own; the
// others get theirs from limiters.Params.
var coreParams = []string{"limit", "window", "capacity", "rate", "clock"}

// overlay returns p with the parameters set in q replacing p's.
func (p params) overlay(q params) params {
	out := make(params, len(p)+len(q))
	maps.Copy(out, p)
	maps.Copy(out, q)
	return out
}

// policySpec is the effective policy of a replay.
type policySpec struct {
	// Lanes are the limiters to replay, each with its own policy.
	Lanes []sim.Lane
	// Policy is the policy the report's header states: the shared one,
	// with the limit and window of the first window lane and the capacity
	// and rate of the first bucket lane. Lanes whose own differ are listed
	// beside it.
	Policy limiters.Policy
	// Oracle is the intended policy: the shared limit, window and clock.
	// The oracle (a sliding log) and the burst ratios are against it.
	Oracle limiters.Policy
	Unit   time.Duration // the unit durations are read and written in
	// Interval is the burst interval; 0 means the window.
	Interval time.Duration
	// rfc3339: the trace's timestamps are RFC 3339 times.
	rfc3339 bool
	// limitUsed and windowUsed: the lanes use the limit and the window,
	// directly or as the default of a bucket's capacity or rate. (The
	// oracle and burst figures use them in any case.)
	limitUsed, windowUsed bool
}

// resolve computes the lanes of a replay and their policies, with
// durations in unit: one lane per algorithm of algos (nil for the five
// classic ones unless limiters are given), then one per limiter of the
// config file and of specs. Every problem is a usage error, found before
// any replay.
func (o *policyOptions) resolve(algos []limiters.Algorithm, specs []limiterSpec, unit time.Duration) (*policySpec, error) {
	base := params{
		"limit":  {strconv.FormatInt(defaultLimit, 10), "default"},
		"window": {defaultWindow, "default"},
		"clock":  {"reject", "default"},
	}
	var file *policyFile
	if o.Config != "" {
		var err error
		if file, err = o.policyFile(); err != nil {
			return nil, err
		}
		base = base.overlay(file.shared)
		if !o.single {
			specs = append(slices.Clone(file.limiters), specs...)
			if algos == nil {
				algos = file.algoList
			}
		}
	}
	if algos == nil && len(specs) == 0 {
		algos = limiters.ClassicAlgorithms()
	}
	flags := o.flagParams()
	shared, err := base.overlay(flags).policy(unit)
	if err != nil {
		return nil, err
	}
	spec := &policySpec{Unit: unit, Oracle: limiters.Policy{Limit: shared.Limit, Window: shared.Window, Clock: shared.Clock}, Policy: shared}
	if err := spec.Oracle.Validate(limiters.SlidingLog); err != nil {
		return nil, usageErrorf("oracle: %s", ErrorText(err))
	}
	add := func(name string, a limiters.Algorithm, p params, preset *limiters.Policy) error {
		pol, err := p.policy(unit)
		if err != nil {
			return err
		}
		if preset != nil {
			clock := pol.Clock // the preset's own, or the flags'
			pol = *preset
			pol.Clock = clock
		}
		_, capacity := p["capacity"]
		_, rate := p["rate"]
		if a.Windowed() || !capacity || !rate {
			spec.limitUsed = true
		}
		if a.Windowed() || !rate {
			spec.windowUsed = true
		}
		if err := pol.Validate(a); err != nil {
			return usageErrorf("%s: %s: %s", p.sources(a), name, ErrorText(err))
		}
		spec.Lanes = append(spec.Lanes, sim.Lane{Name: name, Algorithm: a, Policy: pol})
		return nil
	}
	for _, a := range algos {
		p := base
		if file != nil {
			p = p.overlay(file.algos[a])
		}
		if err := add(a.String(), a, p.overlay(flags), nil); err != nil {
			return nil, err
		}
	}
	for _, ls := range specs {
		name := ls.name
		if name == "" {
			name = ls.defaultName()
		}
		if err := add(name, ls.alg, base.overlay(flags).overlay(ls.p), ls.pol); err != nil {
			return nil, err
		}
	}
	if len(spec.Lanes) > maxLanes {
		return nil, usageErrorf("%d limiters given; at most %d run in one replay", len(spec.Lanes), maxLanes)
	}
	named := map[string]bool{}
	for _, l := range spec.Lanes {
		if named[l.Name] {
			return nil, usageErrorf("two limiters are named %s: name one with --limiter NAME=ALGORITHM:...", l.Name)
		}
		named[l.Name] = true
	}
	// The header states the first window lane's limit and window and the
	// first bucket lane's capacity and rate (all lanes share them in a
	// plain run), and the clock of the first lane.
	var window, bucket bool
	for i, l := range spec.Lanes {
		if i == 0 {
			spec.Policy.Clock = l.Policy.Clock
		}
		if l.Algorithm.Windowed() && !window {
			spec.Policy.Limit, spec.Policy.Window, window = l.Policy.Limit, l.Policy.Window, true
		}
		if !l.Algorithm.Windowed() && !bucket {
			spec.Policy.Capacity, spec.Policy.Rate, bucket = l.Policy.Capacity, l.Policy.Rate, true
		}
	}
	// And the other parameters as the first lane that takes each has them.
	for _, prm := range limiters.Params() {
		if slices.Contains(coreParams, prm.Name) {
			continue
		}
		for _, l := range spec.Lanes {
			if slices.Contains(l.Algorithm.Params(), prm.Name) {
				copyParam(&spec.Policy, l.Policy, prm.Name)
				break
			}
		}
	}
	return spec, nil
}

// copyParam sets parameter name of dst to its value in src.
func copyParam(dst *limiters.Policy, src limiters.Policy, name string) {
	switch v := dst.Field(name).(type) {
	case *int64:
		*v = *src.Field(name).(*int64)
	case *time.Duration:
		*v = *src.Field(name).(*time.Duration)
	case *limiters.Rate:
		*v = *src.Field(name).(*limiters.Rate)
	}
}

// algos returns the lanes' algorithms, in lane order.
func (sp *policySpec) algos() []limiters.Algorithm {
	algos := make([]limiters.Algorithm, len(sp.Lanes))
	for i, l := range sp.Lanes {
		algos[i] = l.Algorithm
	}
	return algos
}

// own reports whether lane l's policy differs from the one the header
// states, in what its algorithm uses.
func (sp *policySpec) own(l sim.Lane) bool {
	return !l.Policy.SameFor(l.Algorithm, sp.Policy)
}

// flagParams returns the parameters given explicitly as flags.
func (o *policyOptions) flagParams() params {
	p := params{}
	for _, name := range paramNames() {
		if o.set[name] {
			p[name] = setting{o.flagValue(name), "--" + name}
		}
	}
	return p
}

// flagValue returns the text of the flag of parameter name.
func (o *policyOptions) flagValue(name string) string {
	switch name {
	case "limit":
		return strconv.FormatInt(o.Limit, 10)
	case "window":
		return o.Window
	case "capacity":
		return strconv.FormatInt(o.Capacity, 10)
	case "rate":
		return o.Rate
	case "clock":
		return o.Clock
	}
	if v := o.extra[name]; v != nil {
		return *v
	}
	return ""
}

// takers names the algorithms that take parameter name: "fixed-window,
// sliding-log".
func takers(name string) string {
	var names []string
	for _, a := range limiters.AllAlgorithms() {
		if slices.Contains(a.Params(), name) {
			names = append(names, a.String())
		}
	}
	return strings.Join(names, ", ")
}

// policy parses p into a limiters.Policy. The capacity defaults to the
// limit, the rate to the limit per window, the others to their own
// defaults.
func (p params) policy(unit time.Duration) (limiters.Policy, error) {
	var pol limiters.Policy
	for _, prm := range limiters.Params() {
		s, ok := p[prm.Name]
		if !ok {
			switch {
			case prm.Name == "capacity":
				pol.Capacity = pol.Limit
				continue
			case prm.Name == "rate":
				pol.Rate = limiters.Rate{N: pol.Limit, Per: pol.Window}
				continue
			case prm.Default == "":
				continue
			}
			s = setting{prm.Default, "default"}
		}
		if err := parseParam(&pol, prm, s, unit); err != nil {
			return pol, err
		}
	}
	switch c := p["clock"]; c.value {
	case "reject":
		pol.Clock = limiters.ClockReject
	case "clamp":
		pol.Clock = limiters.ClockClamp
	default:
		return pol, usageErrorf("%s: invalid clock %q (valid: reject, clamp)", c.at, c.value)
	}
	return pol, nil
}

// parseParam parses the text of parameter prm into pol.
func parseParam(pol *limiters.Policy, prm limiters.Param, s setting, unit time.Duration) error {
	switch v := pol.Field(prm.Name).(type) {
	case *int64:
		n, err := strconv.ParseInt(s.value, 10, 64)
		if err != nil {
			return usageErrorf("%s: invalid %s %q: want a whole number", s.at, prm.Name, s.value)
		}
		if n < 0 && prm.Default == "0" {
			return usageErrorf("%s: %s must not be negative, got %d", s.at, prm.Name, n)
		}
		if n <= 0 && prm.Default != "0" {
			return usageErrorf("%s: %s must be positive, got %d", s.at, prm.Name, n)
		}
		*v = n
	case *time.Duration:
		d, err := traces.ParseDuration(s.value, unit)
		if err != nil {
			return usageErrorf("%s: invalid %s %q: %s", s.at, prm.Name, s.value, ErrorText(err))
		}
		if d <= 0 {
			return usageErrorf("%s: %s must be positive, got %s", s.at, prm.Name, s.value)
		}
		*v = d
	case *limiters.Rate:
		r, err := limiters.ParseRate(s.value, unit)
		if err != nil {
			return usageErrorf("%s: %s", s.at, ErrorText(err)) // the error quotes the rate
		}
		*v = r
	}
	return nil
}

// sources names where the parameters that a uses came from, for an error
// about them together: "--capacity and --rate", "--limit and
// policy.yaml:3".
func (p params) sources(a limiters.Algorithm) string {
	var from []string
	add := func(name string) {
		if at := p[name].at; at != "" && at != "default" && !slices.Contains(from, at) {
			from = append(from, at)
		}
	}
	for _, name := range a.Params() {
		switch _, given := p[name]; {
		case given:
			add(name)
		case name == "capacity":
			add("limit") // the capacity defaults to the limit
		case name == "rate":
			add("limit")
			add("window")
		}
	}
	if len(from) == 0 {
		return "the default policy"
	}
	return strings.Join(from, " and ")
}

// maxLanes is the most limiters one replay runs (sim's bound).
const maxLanes = 4096

// maxPolicyBytes caps the size of a policy file.
const maxPolicyBytes = 1 << 20

// policyFile is a parsed --config file: shared parameters and overrides
// per algorithm.
type policyFile struct {
	shared   params
	algos    map[limiters.Algorithm]params
	limiters []limiterSpec        // the limiters: list
	algoList []limiters.Algorithm // algos:, nil when not given
	key      []string             // key:, nil when not given
	unit     string               // unit:, "" when not given
	interval string               // interval:, "" when not given
	policies []stackSpec          // policies:, a stack
}

// stackSpec is one policy of a stack (the policies: list of a policy
// file): a named limiter, what it keys on, and whether it only watches.
type stackSpec struct {
	limiterSpec
	key    []string // nil: the replay's key; empty: one global key
	shadow bool
}

// The YAML shape of a policy file: the parameters shared by every
// limiter are the keys not named here.
type yamlPolicy struct {
	Algorithms yaml.Node            `yaml:"algorithms"`
	Limiters   yaml.Node            `yaml:"limiters"`
	Algos      yaml.Node            `yaml:"algos"`
	Key        yaml.Node            `yaml:"key"`
	Unit       yaml.Node            `yaml:"unit"`
	Interval   yaml.Node            `yaml:"interval"`
	Policies   yaml.Node            `yaml:"policies"`
	Params     map[string]yaml.Node `yaml:",inline"`
}

// fileKeys are the keys of a policy file beyond the parameters.
var fileKeys = []string{"algorithms", "limiters", "algos", "key", "unit", "interval", "policies"}

var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type \S+$`)

func readPolicyFile(path string) (*policyFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPolicyBytes {
		return nil, usageErrorf("%s: policy file larger than %d bytes", path, maxPolicyBytes)
	}
	var doc yamlPolicy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &policyFile{}, nil
		}
		return nil, yamlError(path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, usageErrorf("%s:%d: a policy file holds one YAML document", path, extra.Line)
	}
	pf := &policyFile{algos: map[limiters.Algorithm]params{}}
	if pf.shared, err = sharedParams(path, doc.Params); err != nil {
		return nil, err
	}
	if err := pf.readLists(path, &doc); err != nil {
		return nil, err
	}
	if doc.Algorithms.Kind == 0 {
		return pf, nil
	}
	if doc.Algorithms.Kind != yaml.MappingNode {
		return nil, usageErrorf("%s:%d: algorithms must map algorithm names to parameters", path, doc.Algorithms.Line)
	}
	content := doc.Algorithms.Content
	for i := 0; i+1 < len(content); i += 2 {
		name, body := content[i], content[i+1]
		a, err := limiters.ParseAlgorithm(name.Value)
		if err != nil {
			return nil, usageErrorf("%s:%d: unknown algorithm %q (valid: %s)", path, name.Line, name.Value, algorithmNames())
		}
		if _, dup := pf.algos[a]; dup {
			return nil, usageErrorf("%s:%d: algorithm %s given twice", path, name.Line, a)
		}
		if pf.algos[a], err = mappingParams(path, body); err != nil {
			return nil, err
		}
	}
	return pf, nil
}

// list returns the values of n, a sequence of scalars or one scalar of
// comma-separated values.
func list(path, name string, n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.Split(n.Value, ","), nil
	case yaml.SequenceNode:
		var out []string
		for _, v := range n.Content {
			if v.Kind != yaml.ScalarNode {
				return nil, usageErrorf("%s:%d: %s must list names", path, v.Line, name)
			}
			out = append(out, v.Value)
		}
		return out, nil
	}
	return nil, usageErrorf("%s:%d: %s must list names", path, n.Line, name)
}

// readLists reads the keys of a policy file beyond the parameters:
// limiters, algos, key, unit and interval.
func (pf *policyFile) readLists(path string, doc *yamlPolicy) error {
	if n := &doc.Algos; n.Kind != 0 {
		names, err := list(path, "algos", n)
		if err != nil {
			return err
		}
		algos, err := parseAlgorithms(names)
		if err != nil {
			return usageErrorf("%s:%d: algos: %s", path, n.Line, ErrorText(err))
		}
		pf.algoList = algos
	}
	if n := &doc.Key; n.Kind != 0 {
		keys, err := list(path, "key", n)
		if err != nil {
			return err
		}
		pf.key = keys
	}
	for _, f := range []struct {
		name string
		n    *yaml.Node
		val  *string
	}{{"unit", &doc.Unit, &pf.unit}, {"interval", &doc.Interval, &pf.interval}} {
		if f.n.Kind == 0 {
			continue
		}
		if f.n.Kind != yaml.ScalarNode || f.n.Value == "" {
			return usageErrorf("%s:%d: %s must be a single value", path, f.n.Line, f.name)
		}
		*f.val = f.n.Value
	}
	if err := pf.readPolicies(path, &doc.Policies); err != nil {
		return err
	}
	n := &doc.Limiters
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return usageErrorf("%s:%d: limiters must be a list of {name, algorithm, parameters...}", path, n.Line)
	}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return usageErrorf("%s:%d: a limiter must be a mapping of name, algorithm and parameters", path, item.Line)
		}
		at := fmt.Sprintf("%s:%d", path, item.Line)
		var ls limiterSpec
		var algo string
		var args []string
		for i := 0; i+1 < len(item.Content); i += 2 {
			if k, v := item.Content[i], item.Content[i+1]; k.Value == "algorithm" && v.Kind == yaml.ScalarNode {
				algo = v.Value
			}
		}
		preset, isPreset := presets.Lookup(algo)
		var kvs [][2]string
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return usageErrorf("%s:%d: %s must be a single value", path, v.Line, k.Value)
			}
			switch k.Value {
			case "name":
				ls.name = v.Value
			case "algorithm":
			default:
				if isPreset {
					if !slices.Contains(preset.ParamNames(), k.Value) {
						return usageErrorf("%s:%d: unknown key %q (valid: name, algorithm, %s)", path, k.Line, k.Value, strings.Join(preset.ParamNames(), ", "))
					}
					kvs = append(kvs, [2]string{k.Value, v.Value})
					args = append(args, k.Value+"="+v.Value)
					continue
				}
				if !slices.Contains(paramNames(), k.Value) {
					return usageErrorf("%s:%d: unknown key %q (valid: name, algorithm, %s)", path, k.Line, k.Value, strings.Join(paramNames(), ", "))
				}
				args = append(args, k.Value+"="+v.Value)
			}
		}
		if isPreset {
			if err := ls.setPreset(preset, kvs, at); err != nil {
				return usageErrorf("%s: %s", at, ErrorText(err))
			}
			ls.args = strings.Join(args, ",")
			pf.limiters = append(pf.limiters, ls)
			continue
		}
		a, err := limiters.ParseAlgorithm(algo)
		if err != nil {
			return usageErrorf("%s: a limiter needs an algorithm (valid: %s; presets: %s), got %q", at, algorithmNames(), strings.Join(presets.Names(), ", "), algo)
		}
		ls.alg, ls.args = a, strings.Join(args, ",")
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if k.Value == "name" || k.Value == "algorithm" {
				continue
			}
			if err := ls.set(k.Value, v.Value, fmt.Sprintf("%s:%d", path, v.Line)); err != nil {
				return usageErrorf("%s:%d: %s", path, k.Line, ErrorText(err))
			}
		}
		pf.limiters = append(pf.limiters, ls)
	}
	return nil
}

// readPolicies reads a stack of policies: a list of mappings with a name,
// an algorithm and its parameters, a key (a list of trace attributes; []
// for one global limit) and shadow.
func (pf *policyFile) readPolicies(path string, n *yaml.Node) error {
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return usageErrorf("%s:%d: policies must be a list of {name, algorithm, key, shadow, parameters...}", path, n.Line)
	}
	names := map[string]bool{}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return usageErrorf("%s:%d: a policy must be a mapping of name, algorithm, key, shadow and parameters", path, item.Line)
		}
		var sp stackSpec
		var algo string
		var params [][2]*yaml.Node
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "key":
				if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
					sp.key = []string{}
					continue
				}
				keys, err := list(path, "key", v)
				if err != nil {
					return err
				}
				for _, key := range keys {
					if strings.TrimSpace(key) == "" {
						return usageErrorf("%s:%d: key has an empty attribute name", path, v.Line)
					}
				}
				sp.key = keys
				continue
			case "shadow":
				var b bool
				if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
					return usageErrorf("%s:%d: shadow must be true or false", path, v.Line)
				}
				sp.shadow = b
				continue
			}
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return usageErrorf("%s:%d: %s must be a single value", path, v.Line, k.Value)
			}
			switch k.Value {
			case "name":
				sp.name = v.Value
			case "algorithm":
				algo = v.Value
			default:
				if !slices.Contains(paramNames(), k.Value) {
					return usageErrorf("%s:%d: unknown key %q (valid: name, algorithm, key, shadow, %s)", path, k.Line, k.Value, strings.Join(paramNames(), ", "))
				}
				params = append(params, [2]*yaml.Node{k, v})
			}
		}
		at := fmt.Sprintf("%s:%d", path, item.Line)
		if sp.name == "" {
			return usageErrorf("%s: a policy needs a name", at)
		}
		if names[sp.name] {
			return usageErrorf("%s: two policies are named %s", at, sp.name)
		}
		names[sp.name] = true
		a, err := limiters.ParseAlgorithm(algo)
		if err != nil {
			return usageErrorf("%s: policy %s needs an algorithm (valid: %s), got %q", at, sp.name, algorithmNames(), algo)
		}
		sp.alg = a
		var args []string
		for _, kv := range params {
			k, v := kv[0], kv[1]
			args = append(args, k.Value+"="+v.Value)
			if err := sp.set(k.Value, v.Value, fmt.Sprintf("%s:%d", path, v.Line)); err != nil {
				return usageErrorf("%s:%d: %s", path, k.Line, ErrorText(err))
			}
		}
		sp.args = strings.Join(args, ",")
		pf.policies = append(pf.policies, sp)
	}
	return nil
}

// yamlError turns a YAML decoding error into a usage error naming the file
// and line.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
			return usageErrorf("%s:%s: unknown key %q (valid: %s)", path, m[1], m[2], strings.Join(append(paramNames(), fileKeys...), ", "))
		}
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			return usageErrorf("%s:%s", path, rest)
		}
		return usageErrorf("%s: %s", path, msg)
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		return usageErrorf("%s:%s", path, rest)
	}
	return usageErrorf("%s: %s", path, msg)
}

// sharedParams reads the parameters of a policy file's top level, m:
// every key that is not one of fileKeys.
func sharedParams(path string, m map[string]yaml.Node) (params, error) {
	names := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(names, func(a, b string) int { return m[a].Line - m[b].Line })
	p := params{}
	for _, name := range names {
		n := m[name]
		if !slices.Contains(paramNames(), name) {
			return nil, usageErrorf("%s:%d: unknown key %q (valid: %s)", path, n.Line, name, strings.Join(append(paramNames(), fileKeys...), ", "))
		}
		if err := p.setNode(path, name, &n); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// mappingParams reads the parameters of one algorithm in a policy file.
func mappingParams(path string, n *yaml.Node) (params, error) {
	if n.Kind != yaml.MappingNode {
		return nil, usageErrorf("%s:%d: an algorithm's parameters must be a mapping", path, n.Line)
	}
	p := params{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(paramNames(), k.Value) {
			return nil, usageErrorf("%s:%d: unknown key %q (valid: %s)", path, k.Line, k.Value, strings.Join(paramNames(), ", "))
		}
		if _, dup := p[k.Value]; dup {
			return nil, usageErrorf("%s:%d: %s given twice", path, k.Line, k.Value)
		}
		if err := p.setNode(path, k.Value, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// setNode sets parameter name to the text of n, which must be one scalar;
// numbers keep their exact text.
func (p params) setNode(path, name string, n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return usageErrorf("%s:%d: %s must be a single value", path, n.Line, name)
	}
	p[name] = setting{n.Value, fmt.Sprintf("%s:%d", path, n.Line)}
	return nil
}
