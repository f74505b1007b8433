package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/limiters"
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

` + limiterGrammar

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
	// single: the replay is of the one limiter given on the command line;
	// the config file's limiters and algos do not join it.
	single bool
	file   *policyFile // --config, once read

	// set names the flags given explicitly; they override the config file.
	set map[string]bool
}

func addPolicyFlags(fs *pflag.FlagSet, o *policyOptions) {
	fs.Int64Var(&o.Limit, "limit", defaultLimit, "window algorithms: most cost allowed per window")
	fs.StringVar(&o.Window, "window", defaultWindow, "window length: a number in the trace unit or a Go duration (10s, 1m)")
	fs.Int64Var(&o.Capacity, "capacity", 0, "bucket algorithms: bucket size (default: the limit)")
	fs.StringVar(&o.Rate, "rate", "", "bucket algorithms: refill or leak rate, per unit (0.2) or N/D (1/5, 3/10s, 300/1m) (default: limit per window)")
	fs.StringVar(&o.Clock, "clock", "reject", "when time goes backwards for a key: reject, or clamp to the key's last time")
	fs.StringVar(&o.Config, "config", "", "policy file (YAML); flags given explicitly override it")
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

// params is one set of policy parameters as text, from flags or the file.
// Empty fields are unset.
type params struct {
	limit, window, capacity, rate, clock           string
	limitAt, windowAt, capacityAt, rateAt, clockAt string // where each came from, for messages
}

// overlay returns p with the fields set in q replacing p's.
func (p params) overlay(q params) params {
	if q.limit != "" {
		p.limit, p.limitAt = q.limit, q.limitAt
	}
	if q.window != "" {
		p.window, p.windowAt = q.window, q.windowAt
	}
	if q.capacity != "" {
		p.capacity, p.capacityAt = q.capacity, q.capacityAt
	}
	if q.rate != "" {
		p.rate, p.rateAt = q.rate, q.rateAt
	}
	if q.clock != "" {
		p.clock, p.clockAt = q.clock, q.clockAt
	}
	return p
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
		limit: strconv.FormatInt(defaultLimit, 10), limitAt: "default",
		window: defaultWindow, windowAt: "default",
		clock: "reject", clockAt: "default",
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
	add := func(name string, a limiters.Algorithm, p params) error {
		pol, err := p.policy(unit)
		if err != nil {
			return err
		}
		if a.Windowed() || p.capacity == "" || p.rate == "" {
			spec.limitUsed = true
		}
		if a.Windowed() || p.rate == "" {
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
		if err := add(a.String(), a, p.overlay(flags)); err != nil {
			return nil, err
		}
	}
	for _, ls := range specs {
		name := ls.name
		if name == "" {
			name = ls.defaultName()
		}
		if err := add(name, ls.alg, base.overlay(flags).overlay(ls.p)); err != nil {
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
	return spec, nil
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
	p, q := l.Policy, sp.Policy
	if p.Clock != q.Clock {
		return true
	}
	if l.Algorithm.Windowed() {
		return p.Limit != q.Limit || p.Window != q.Window
	}
	return p.Capacity != q.Capacity || !p.Rate.Equal(q.Rate)
}

// flagParams returns the parameters given explicitly as flags.
func (o *policyOptions) flagParams() params {
	var p params
	if o.set["limit"] {
		p.limit, p.limitAt = strconv.FormatInt(o.Limit, 10), "--limit"
	}
	if o.set["window"] {
		p.window, p.windowAt = o.Window, "--window"
	}
	if o.set["capacity"] {
		p.capacity, p.capacityAt = strconv.FormatInt(o.Capacity, 10), "--capacity"
	}
	if o.set["rate"] {
		p.rate, p.rateAt = o.Rate, "--rate"
	}
	if o.set["clock"] {
		p.clock, p.clockAt = o.Clock, "--clock"
	}
	return p
}

// policy parses p into a limiters.Policy. The capacity defaults to the
// limit, the rate to the limit per window.
func (p params) policy(unit time.Duration) (limiters.Policy, error) {
	var pol limiters.Policy
	var err error
	if pol.Limit, err = strconv.ParseInt(p.limit, 10, 64); err != nil {
		return pol, usageErrorf("%s: invalid limit %q: want a whole number", p.limitAt, p.limit)
	}
	if pol.Limit <= 0 {
		return pol, usageErrorf("%s: limit must be positive, got %d", p.limitAt, pol.Limit)
	}
	if pol.Window, err = traces.ParseDuration(p.window, unit); err != nil {
		return pol, usageErrorf("%s: invalid window %q: %s", p.windowAt, p.window, ErrorText(err))
	}
	if pol.Window <= 0 {
		return pol, usageErrorf("%s: window must be positive, got %s", p.windowAt, p.window)
	}
	pol.Capacity = pol.Limit
	if p.capacity != "" {
		if pol.Capacity, err = strconv.ParseInt(p.capacity, 10, 64); err != nil {
			return pol, usageErrorf("%s: invalid capacity %q: want a whole number", p.capacityAt, p.capacity)
		}
		if pol.Capacity <= 0 {
			return pol, usageErrorf("%s: capacity must be positive, got %d", p.capacityAt, pol.Capacity)
		}
	}
	if p.rate != "" {
		if pol.Rate, err = limiters.ParseRate(p.rate, unit); err != nil {
			return pol, usageErrorf("%s: %s", p.rateAt, ErrorText(err)) // the error quotes the rate
		}
	} else {
		pol.Rate = limiters.Rate{N: pol.Limit, Per: pol.Window}
	}
	switch p.clock {
	case "reject":
		pol.Clock = limiters.ClockReject
	case "clamp":
		pol.Clock = limiters.ClockClamp
	default:
		return pol, usageErrorf("%s: invalid clock %q (valid: reject, clamp)", p.clockAt, p.clock)
	}
	return pol, nil
}

// sources names where the parameters that a uses came from, for an error
// about them together: "--capacity and --rate", "--limit and
// policy.yaml:3".
func (p params) sources(a limiters.Algorithm) string {
	var from []string
	add := func(at string) {
		if at != "default" && !slices.Contains(from, at) {
			from = append(from, at)
		}
	}
	switch {
	case a.Windowed():
		add(p.limitAt)
		add(p.windowAt)
	default:
		if p.capacity != "" {
			add(p.capacityAt)
		} else {
			add(p.limitAt) // the capacity defaults to the limit
		}
		if p.rate != "" {
			add(p.rateAt)
		} else {
			add(p.limitAt)
			add(p.windowAt)
		}
	}
	if len(from) == 0 {
		return "the default policy"
	}
	return strings.Join(from, " and ")
}

// maxLanes is the most limiters one replay runs (sim's bound).
const maxLanes = 63

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
}

// The YAML shape of a policy file.
type yamlParams struct {
	Limit    yaml.Node `yaml:"limit"`
	Window   yaml.Node `yaml:"window"`
	Capacity yaml.Node `yaml:"capacity"`
	Rate     yaml.Node `yaml:"rate"`
	Clock    yaml.Node `yaml:"clock"`
}

type yamlPolicy struct {
	yamlParams `yaml:",inline"`
	Algorithms yaml.Node `yaml:"algorithms"`
	Limiters   yaml.Node `yaml:"limiters"`
	Algos      yaml.Node `yaml:"algos"`
	Key        yaml.Node `yaml:"key"`
	Unit       yaml.Node `yaml:"unit"`
	Interval   yaml.Node `yaml:"interval"`
}

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
	if pf.shared, err = doc.yamlParams.params(path); err != nil {
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
		var yp yamlParams
		if err := decodeKnown(path, body, &yp); err != nil {
			return nil, err
		}
		if pf.algos[a], err = yp.params(path); err != nil {
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
			k, v := item.Content[i], item.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return usageErrorf("%s:%d: %s must be a single value", path, v.Line, k.Value)
			}
			switch k.Value {
			case "name":
				ls.name = v.Value
			case "algorithm":
				algo = v.Value
			default:
				if !slices.Contains(limiterKeys, k.Value) {
					return usageErrorf("%s:%d: unknown key %q (valid: name, algorithm, %s)", path, k.Line, k.Value, strings.Join(limiterKeys, ", "))
				}
				args = append(args, k.Value+"="+v.Value)
			}
		}
		a, err := limiters.ParseAlgorithm(algo)
		if err != nil {
			return usageErrorf("%s: a limiter needs an algorithm (valid: %s), got %q", at, algorithmNames(), algo)
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

// decodeKnown decodes n into v, refusing unknown keys with their line as
// the file's decoder does (Node.Decode has no KnownFields).
func decodeKnown(path string, n *yaml.Node, v any) error {
	if n.Kind != yaml.MappingNode {
		return usageErrorf("%s:%d: an algorithm's parameters must be a mapping", path, n.Line)
	}
	known := map[string]bool{"limit": true, "window": true, "capacity": true, "rate": true, "clock": true}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			return usageErrorf("%s:%d: unknown key %q (valid: limit, window, capacity, rate, clock)", path, k.Line, k.Value)
		}
	}
	if err := n.Decode(v); err != nil {
		return yamlError(path, err)
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
			return usageErrorf("%s:%s: unknown key %q (valid: limit, window, capacity, rate, clock, algorithms, limiters, algos, key, unit, interval)", path, m[1], m[2])
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

// params reads the scalar texts of y; numbers keep their exact text.
func (y *yamlParams) params(path string) (params, error) {
	var p params
	for _, f := range []struct {
		name     string
		n        *yaml.Node
		val, loc *string
	}{
		{"limit", &y.Limit, &p.limit, &p.limitAt},
		{"window", &y.Window, &p.window, &p.windowAt},
		{"capacity", &y.Capacity, &p.capacity, &p.capacityAt},
		{"rate", &y.Rate, &p.rate, &p.rateAt},
		{"clock", &y.Clock, &p.clock, &p.clockAt},
	} {
		if f.n.Kind == 0 {
			continue
		}
		if f.n.Kind != yaml.ScalarNode || f.n.Value == "" {
			return p, usageErrorf("%s:%d: %s must be a single value", path, f.n.Line, f.name)
		}
		*f.val = f.n.Value
		*f.loc = fmt.Sprintf("%s:%d", path, f.n.Line)
	}
	return p, nil
}
