package cmd

import (
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
	// Flags are the policy's flags, as spec reads them.
	spec.Flags
	gateway gateway.Flags
	// single: the replay is of the one limiter given on the command line;
	// the config file's limiters and algos do not join it.
	single bool
	file   *spec.File // --config, once read

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
	o.Flags.AddFlags(fs)
	o.gateway.AddFlags(fs)
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

// markSet records which policy flags were given on the command line.
func (o *policyOptions) markSet(fs *pflag.FlagSet) {
	o.set = map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
}

// policySpec is the effective policy of a replay, and how the trace
// writes its times.
type policySpec = tables.Policy

// plan resolves the policy of a replay of algos (nil for the five classic
// ones unless limiters are given) and the limiters specs, with the burst
// interval given as interval ("" for the intent's window). Every problem
// is a usage error, found before any replay.
func (o *policyOptions) plan(algos []limiters.Algorithm, specs []limiterSpec, interval spec.Setting) (*spec.Plan, error) {
	in := spec.Inputs{Flags: o.Params(o.set, o.at), Algos: algos, Limiters: specs, Single: o.single, Interval: interval, Inherit: o.inherit}
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

// maxLanes is the most limiters one replay runs (sim's bound).
const maxLanes = spec.MaxLanes
