package cmd

import (
	"slices"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/gateway"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/limiters"
)

// policyHelp ends the long help of the commands that replay a trace. Its
// lists of names come from the tables that hold them.
var policyHelp = helpText("policy", "LIMITERS", limiterGrammar())

// Policy defaults, as in the seed: three requests per ten units.
const (
	defaultLimit  = spec.DefaultLimit
	defaultWindow = spec.DefaultWindow
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
	Intent   string   // --intent: LIMIT/WINDOW
	gateway  gateway.Flags
	// single: the replay is of the one limiter given on the command line;
	// the config file's limiters and algos do not join it.
	single bool
	file   *spec.File // --config, once read

	// extra holds the flags of the parameters beyond coreParams, by name.
	extra map[string]*string

	// set names the flags given explicitly; they override the config file.
	set map[string]bool
	// at, when it names a parameter, is where its flag's value came from
	// when that is not its own flag (sweep's --intent sets the limit and
	// window).
	at map[string]spec.Source
	// inherit are parameters another replay resolved (a report's, for
	// its sweep), under the flags.
	inherit spec.Params
}

func addPolicyFlags(fs *pflag.FlagSet, o *policyOptions) {
	fs.Int64Var(&o.Limit, "limit", defaultLimit, "window algorithms: most cost allowed per window")
	fs.StringVar(&o.Window, "window", defaultWindow, "window length: a number in the trace unit or a Go duration (10s, 1m)")
	fs.Int64Var(&o.Capacity, "capacity", 0, "bucket algorithms: bucket size (default: the limit)")
	fs.StringVar(&o.Rate, "rate", "", "bucket algorithms: refill or leak rate, per unit (0.2) or N/D (1/5, 3/10s, 300/1m) (default: limit per window)")
	fs.StringVar(&o.Clock, "clock", "reject", "when time goes backwards for a key: "+clockChoices())
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
	o.gateway.AddFlags(fs)
	fs.StringVar(&o.Intent, "intent", "", "the policy meant, LIMIT/WINDOW such as 100/1m: the exact rolling limit false allows, false rejects and burst ratios are counted against (default: --limit per --window)")
}

// clockChoices describes the clock rules for help texts.
func clockChoices() string { return "reject, or clamp to the key's last time" }

// lanesGiven parses --algos (nil when not given: the default depends on
// the limiters given) and the --limiter flags.
func (o *policyOptions) lanesGiven(algoList []string) ([]limiters.Algorithm, []limiterSpec, error) {
	var algos []limiters.Algorithm
	if algoList != nil {
		var err error
		if algos, err = spec.ParseAlgorithms(algoList, "--algos"); err != nil {
			return nil, nil, err
		}
	}
	specs, err := o.specs()
	return algos, specs, err
}

// policyFile reads the --config file, or the --policy-from config, once
// however often it is asked for.
func (o *policyOptions) policyFile() (*spec.File, error) {
	if o.file == nil && o.gateway.From != "" {
		if o.Config != "" {
			return nil, usageErrorf("--config and --policy-from both give the policy: give one")
		}
		pf, err := o.gateway.Read()
		if err != nil {
			return nil, err
		}
		o.file = pf
	}
	if o.file == nil {
		pf, err := spec.ReadFile(o.Config)
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
		ls, err := spec.ParseLimiter(s)
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

// coreParams are the parameters whose flags have texts of their own; the
// others get theirs from limiters.Params.
var coreParams = spec.CoreParams

// paramNames are the parameters a policy file, a --limiter or the policy
// flags may give.
func paramNames() []string { return spec.ParamNames() }

// policySpec is the effective policy of a replay, and how the trace
// writes its times.
type policySpec = tables.Policy

// plan resolves the policy of a replay of algos (nil for the five classic
// ones unless limiters are given) and the limiters specs, with the burst
// interval given as interval ("" for the intent's window). Every problem
// is a usage error, found before any replay.
func (o *policyOptions) plan(algos []limiters.Algorithm, specs []limiterSpec, interval spec.Setting) (*spec.Plan, error) {
	in := spec.Inputs{Flags: o.flagParams(), Algos: algos, Limiters: specs, Single: o.single, Interval: interval, Inherit: o.inherit}
	if o.hasFile() {
		pf, err := o.policyFile()
		if err != nil {
			return nil, err
		}
		in.File = pf
	}
	if o.set["intent"] {
		in.Intent = spec.Setting{Value: o.Intent, At: "--intent"}
	}
	return spec.Resolve(in)
}

// flagParams returns the parameters given explicitly as flags.
func (o *policyOptions) flagParams() spec.Params {
	p := spec.Params{}
	for _, name := range paramNames() {
		if o.set[name] {
			at := spec.Source("--" + name)
			if a, ok := o.at[name]; ok {
				at = a
			}
			p[name] = spec.Setting{Value: o.flagValue(name), At: at}
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

// takers names the algorithms that take parameter name.
func takers(name string) string { return spec.Takers(name) }

// maxLanes is the most limiters one replay runs (sim's bound).
const maxLanes = spec.MaxLanes
