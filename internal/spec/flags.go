package spec

import (
	"slices"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// ClockUsage is the help of a --clock flag.
const ClockUsage = "when time goes backwards for a key: reject, or clamp to the key's last time"

// Flags are the policy flags of a command that replays a trace: the
// parameters every limiter shares (--limit, --window, --capacity,
// --rate, --clock, and a flag for each other parameter of the table of
// kinds), --config, --limiter, --stack and --intent. Params gives those
// set on the command line to Resolve.
type Flags struct {
	Limit    int64
	Window   string
	Capacity int64
	Rate     string
	Clock    string
	Config   string   // --config, a policy file
	Limiters []string // --limiter, one spec each
	Stack    string   // --stack: consume or refund
	Intent   string   // --intent: LIMIT/WINDOW

	// extra holds the flags of the parameters beyond CoreParams, by name.
	extra map[string]*string
}

// AddFlags adds the flags of f to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.Int64Var(&f.Limit, "limit", DefaultLimit, "window algorithms: most cost allowed per window")
	fs.StringVar(&f.Window, "window", DefaultWindow, "window length: a number in the trace unit or a Go duration (10s, 1m)")
	fs.Int64Var(&f.Capacity, "capacity", 0, "bucket algorithms: bucket size (default: the limit)")
	fs.StringVar(&f.Rate, "rate", "", "bucket algorithms: refill or leak rate, per unit (0.2) or N/D (1/5, 3/10s, 300/1m) (default: limit per window)")
	fs.StringVar(&f.Clock, "clock", "reject", ClockUsage)
	for _, prm := range limiters.Params() {
		if slices.Contains(CoreParams, prm.Name) {
			continue
		}
		if f.extra == nil {
			f.extra = map[string]*string{}
		}
		v := new(string)
		f.extra[prm.Name] = v
		fs.StringVar(v, prm.Name, prm.Default, Takers(prm.Name)+": "+prm.Usage)
	}
	fs.StringVar(&f.Config, "config", "", "policy file (YAML); flags given explicitly override it")
	fs.StringVar(&f.Stack, "stack", "consume", "with a policies: list in --config, whether policies that allowed a refused request still count it (consume) or not (refund)")
	fs.StringArrayVar(&f.Limiters, "limiter", nil, "a limiter with parameters of its own: [NAME=]ALGORITHM[:KEY=VALUE,...]; repeatable (see LIMITERS)")
	fs.StringVar(&f.Intent, "intent", "", "the policy meant, LIMIT/WINDOW such as 100/1m: the exact rolling limit false allows, false rejects and burst ratios are counted against (default: --limit per --window)")
}

// ParseLimiters parses the --limiter flags.
func (f *Flags) ParseLimiters() ([]Limiter, error) {
	var specs []Limiter
	for _, s := range f.Limiters {
		l, err := ParseLimiter(s)
		if err != nil {
			return nil, err
		}
		specs = append(specs, l)
	}
	return specs, nil
}

// Lanes parses algoList, an --algos (nil when it is not given: the
// default depends on the limiters given), and the --limiter flags.
func (f *Flags) Lanes(algoList []string) ([]limiters.Algorithm, []Limiter, error) {
	var algos []limiters.Algorithm
	if algoList != nil {
		var err error
		if algos, err = ParseAlgorithms(algoList, "--algos"); err != nil {
			return nil, nil, err
		}
	}
	specs, err := f.ParseLimiters()
	return algos, specs, err
}

// Params returns the parameters set names as given on the command line,
// each from its flag, or from where at says when its value came from
// elsewhere (a sweep's --intent sets the limit and window).
func (f *Flags) Params(set map[string]bool, at map[string]Source) Params {
	p := Params{}
	for _, name := range ParamNames() {
		if set[name] {
			src := Source("--" + name)
			if a, ok := at[name]; ok {
				src = a
			}
			p[name] = Setting{Value: f.value(name), At: src}
		}
	}
	return p
}

// value returns the text of the flag of parameter name.
func (f *Flags) value(name string) string {
	switch name {
	case "limit":
		return strconv.FormatInt(f.Limit, 10)
	case "window":
		return f.Window
	case "capacity":
		return strconv.FormatInt(f.Capacity, 10)
	case "rate":
		return f.Rate
	case "clock":
		return f.Clock
	}
	if v := f.extra[name]; v != nil {
		return *v
	}
	return ""
}

// StackMode returns the --stack mode: the file's stack: unless --stack
// is given (given), else --stack's.
func (f *Flags) StackMode(given bool, file *File) (sim.StackMode, error) {
	text := f.Stack
	if !given && file != nil && file.Stack != "" {
		text = file.Stack
	} else if text == "" {
		return sim.StackConsume, nil
	}
	m := sim.StackModes.Index(text)
	if m < 0 {
		return 0, errorf("invalid --stack %q (valid: %s)", text, sim.StackModes)
	}
	return sim.StackMode(m), nil
}
