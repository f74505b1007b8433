package traces

import (
	"math"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/choice"
)

// GenFlags are the flags of a synthetic trace, as AddFlags adds them;
// Options checks them and gives the GenOptions of Generate.
type GenFlags struct {
	Pattern  string
	Users    int
	Requests int
	Seed     int64
	Span     string
	Rate     float64
	Window   string
	Burst    int
	Skew     float64
	Uniform  bool
	Keys     string
	RFC3339  bool
	Unit     string
	Output   string // -o: the trace's format
}

// AddFlags adds the flags of f to fs.
func (f *GenFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Pattern, "pattern", "steady", "traffic pattern: "+strings.Join(Patterns(), ", "))
	fs.IntVar(&f.Users, "users", 10, "number of users")
	fs.IntVar(&f.Requests, "requests", 1000, "number of requests")
	fs.Int64Var(&f.Seed, "seed", 1, "random seed; the same seed gives the same trace")
	fs.StringVar(&f.Span, "span", "", "about how long the trace lasts: a number in the unit or a Go duration (default: from --rate, else 2s per request per user)")
	fs.Float64Var(&f.Rate, "rate", 0, "mean requests per second over all users, when --span is not given")
	fs.StringVar(&f.Window, "window", "", "window that boundary clusters straddle and bursts scale to (default: 10s)")
	fs.IntVar(&f.Burst, "burst", 0, "requests per burst (bursty) or cluster (boundary) (default: 6)")
	fs.Float64Var(&f.Skew, "skew", 0, "popularity exponent: the k-th user sends about 1/k^skew of the requests (default: 1)")
	fs.BoolVar(&f.Uniform, "uniform", false, "give every user the same share of the requests")
	fs.StringVar(&f.Keys, "keys", "short", "user keys: short (u1, u2, ...) or uuid (36 characters)")
	fs.BoolVar(&f.RFC3339, "rfc3339", false, "write RFC 3339 times instead of numbers")
	fs.StringVar(&f.Unit, "unit", "s", "unit of the timestamps: s, ms, us or ns")
	fs.StringVarP(&f.Output, "output", "o", "csv", "trace format: csv, yaml or jsonl")
}

// Options checks the flags, given says which were given on the command
// line, and returns the options of Generate and the warnings about flags
// given that have no effect. A bad value is a *FlagError; a zero, which
// stands for a default in GenOptions, is refused when given rather than
// silently replaced.
func (f *GenFlags) Options(given func(name string) bool) (GenOptions, []string, error) {
	if PatternChoices.Index(f.Pattern) < 0 {
		return GenOptions{}, nil, flagErrorf("invalid --pattern %q (valid: %s)", f.Pattern, PatternChoices)
	}
	if f.Users <= 0 {
		return GenOptions{}, nil, flagErrorf("--users must be positive, got %d", f.Users)
	}
	if f.Requests <= 0 {
		return GenOptions{}, nil, flagErrorf("--requests must be positive, got %d", f.Requests)
	}
	unit, err := UnitFlag(f.Unit)
	if err != nil {
		return GenOptions{}, nil, err
	}
	format, err := ParseFormat(f.Output)
	if err != nil || format == Combined || format == Common {
		// The access log formats are read, not written.
		return GenOptions{}, nil, flagErrorf("invalid -o %q for gen (valid: %s)", f.Output, WriteFormats)
	}
	span, err := positiveDuration("--span", f.Span, unit)
	if err != nil {
		return GenOptions{}, nil, err
	}
	window, err := positiveDuration("--window", f.Window, unit)
	if err != nil {
		return GenOptions{}, nil, err
	}
	switch {
	case (given("rate") && !(f.Rate > 0)) || math.IsInf(f.Rate, 0):
		return GenOptions{}, nil, flagErrorf("--rate must be a positive number, got %v", f.Rate)
	case given("skew") && f.Skew == 0:
		return GenOptions{}, nil, flagErrorf("--skew must be a positive number, got 0 (--uniform gives every user the same share)")
	case (given("skew") && !(f.Skew > 0)) || math.IsInf(f.Skew, 0):
		return GenOptions{}, nil, flagErrorf("--skew must be a positive number, got %v", f.Skew)
	case given("burst") && f.Burst <= 0:
		return GenOptions{}, nil, flagErrorf("--burst must be positive, got %d", f.Burst)
	}
	k := KeyStyles.Index(f.Keys)
	if k < 0 {
		return GenOptions{}, nil, flagErrorf("invalid --keys %q (valid: %s)", f.Keys, KeyStyles)
	}
	return GenOptions{
		Pattern:  f.Pattern,
		Users:    f.Users,
		Requests: f.Requests,
		Seed:     f.Seed,
		Span:     span,
		Rate:     f.Rate,
		Window:   window,
		Burst:    f.Burst,
		Skew:     f.Skew,
		Uniform:  f.Uniform,
		Keys:     KeyStyle(k),
		Format:   format,
		Unit:     unit,
		RFC3339:  f.RFC3339,
	}, f.unused(given), nil
}

// positiveDuration parses the duration s given at flag, in unit; "" is 0,
// the default.
func positiveDuration(flag, s string, unit time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := ParseDuration(s, unit)
	if err != nil {
		return 0, flagErrorf("invalid %s %q: %s", flag, s, text(err))
	}
	if d <= 0 {
		return 0, flagErrorf("%s must be positive, got %s", flag, s)
	}
	return d, nil
}

// unused says, a line each, which flags given have no effect on the
// trace.
func (f *GenFlags) unused(given func(string) bool) []string {
	var warnings []string
	if given("rate") && given("span") {
		warnings = append(warnings, "--rate has no effect: --span sets the length of the trace")
	}
	if given("skew") && f.Uniform {
		warnings = append(warnings, "--skew has no effect: --uniform gives every user the same share")
	}
	if f.Pattern != "bursty" && f.Pattern != "boundary" {
		var flags []string
		for _, name := range []string{"burst", "window"} {
			if given(name) {
				flags = append(flags, "--"+name)
			}
		}
		if len(flags) == 1 {
			warnings = append(warnings, flags[0]+" has no effect on the "+f.Pattern+" pattern: only bursty and boundary use them")
		} else if flags != nil {
			warnings = append(warnings, choice.Join(flags, "and")+" have no effect on the "+f.Pattern+" pattern: only bursty and boundary use them")
		}
	}
	return warnings
}
