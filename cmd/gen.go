package cmd

import (
	"bufio"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/traces"
)

var genLong = helpText("gen")

const genExample = `  ratesim gen --pattern bursty --users 100 --requests 10000 --seed 7 > trace.csv
  ratesim gen --pattern boundary --users 3 --requests 50 --seed 1 -o jsonl`

// genOptions are the options of "ratesim gen".
type genOptions struct {
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
	Output   string

	// set names the flags given on the command line.
	set map[string]bool
}

func newGenCmd() *cobra.Command {
	o := &genOptions{}
	c := &cobra.Command{
		Use:         "gen --pattern steady|bursty|boundary|ramp [flags]",
		Short:       "Generate a synthetic trace",
		Long:        genLong,
		Example:     genExample,
		Annotations: exitStatus("a bad flag or argument, a bad option value"),
		Args:        noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o.set = map[string]bool{}
			c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
			return runGen(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Pattern, "pattern", "steady", "traffic pattern: "+strings.Join(traces.Patterns(), ", "))
	fs.IntVar(&o.Users, "users", 10, "number of users")
	fs.IntVar(&o.Requests, "requests", 1000, "number of requests")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same trace")
	fs.StringVar(&o.Span, "span", "", "about how long the trace lasts: a number in the unit or a Go duration (default: from --rate, else 2s per request per user)")
	fs.Float64Var(&o.Rate, "rate", 0, "mean requests per second over all users, when --span is not given")
	fs.StringVar(&o.Window, "window", "", "window that boundary clusters straddle and bursts scale to (default: 10s)")
	fs.IntVar(&o.Burst, "burst", 0, "requests per burst (bursty) or cluster (boundary) (default: 6)")
	fs.Float64Var(&o.Skew, "skew", 0, "popularity exponent: the k-th user sends about 1/k^skew of the requests (default: 1)")
	fs.BoolVar(&o.Uniform, "uniform", false, "give every user the same share of the requests")
	fs.StringVar(&o.Keys, "keys", "short", "user keys: short (u1, u2, ...) or uuid (36 characters)")
	fs.BoolVar(&o.RFC3339, "rfc3339", false, "write RFC 3339 times instead of numbers")
	fs.StringVar(&o.Unit, "unit", "s", "unit of the timestamps: s, ms, us or ns")
	fs.StringVarP(&o.Output, "output", "o", "csv", "trace format: csv, yaml or jsonl")
	registerCompletions(c)
	return c
}

func runGen(o *genOptions, s streams) error {
	if _, err := choose("--pattern", o.Pattern, traces.PatternChoices); err != nil {
		return err
	}
	if o.Users <= 0 {
		return usageErrorf("--users must be positive, got %d", o.Users)
	}
	if o.Requests <= 0 {
		return usageErrorf("--requests must be positive, got %d", o.Requests)
	}
	unit, err := traces.UnitFlag(o.Unit)
	if err != nil {
		return err
	}
	format, err := traces.ParseFormat(o.Output)
	if err != nil || format == traces.Combined || format == traces.Common {
		// The access log formats are read, not written.
		return usageErrorf("invalid -o %q for gen (valid: %s)", o.Output, traces.WriteFormats)
	}
	var span, window time.Duration
	if o.Span != "" {
		if span, err = traces.ParseDuration(o.Span, unit); err != nil {
			return usageErrorf("invalid --span %q: %s", o.Span, ErrorText(err))
		}
		if span <= 0 {
			return usageErrorf("--span must be positive, got %s", o.Span)
		}
	}
	if o.Window != "" {
		if window, err = traces.ParseDuration(o.Window, unit); err != nil {
			return usageErrorf("invalid --window %q: %s", o.Window, ErrorText(err))
		}
		if window <= 0 {
			return usageErrorf("--window must be positive, got %s", o.Window)
		}
	}
	// Zero stands for the default in traces.GenOptions; given on the
	// command line, it is refused rather than silently replaced.
	if (o.set["rate"] && !(o.Rate > 0)) || math.IsInf(o.Rate, 0) {
		return usageErrorf("--rate must be a positive number, got %v", o.Rate)
	}
	if o.set["skew"] && o.Skew == 0 {
		return usageErrorf("--skew must be a positive number, got 0 (--uniform gives every user the same share)")
	}
	if (o.set["skew"] && !(o.Skew > 0)) || math.IsInf(o.Skew, 0) {
		return usageErrorf("--skew must be a positive number, got %v", o.Skew)
	}
	if o.set["burst"] && o.Burst <= 0 {
		return usageErrorf("--burst must be positive, got %d", o.Burst)
	}
	k, err := choose("--keys", o.Keys, traces.KeyStyles)
	if err != nil {
		return err
	}
	keys := traces.KeyStyle(k)
	warnUnusedGen(o, s.err)
	w := bufio.NewWriterSize(stopWriter{s.context(), s.out}, 1<<20)
	err = traces.Generate(w, traces.GenOptions{
		Pattern:  o.Pattern,
		Users:    o.Users,
		Requests: o.Requests,
		Seed:     o.Seed,
		Span:     span,
		Rate:     o.Rate,
		Window:   window,
		Burst:    o.Burst,
		Skew:     o.Skew,
		Uniform:  o.Uniform,
		Keys:     keys,
		Format:   format,
		Unit:     unit,
		RFC3339:  o.RFC3339,
	})
	if err != nil {
		return asUsageIfOptions(err)
	}
	return w.Flush()
}

// warnUnusedGen says on w, a line each, which flags given have no effect
// on the trace.
func warnUnusedGen(o *genOptions, w io.Writer) {
	if o.set["rate"] && o.set["span"] {
		warnf(w, "--rate has no effect: --span sets the length of the trace")
	}
	if o.set["skew"] && o.Uniform {
		warnf(w, "--skew has no effect: --uniform gives every user the same share")
	}
	if o.Pattern != "bursty" && o.Pattern != "boundary" {
		var flags []string
		for _, f := range []string{"burst", "window"} {
			if o.set[f] {
				flags = append(flags, "--"+f)
			}
		}
		if flags != nil {
			warnf(w, "%s on the %s pattern: only bursty and boundary use them", noEffect(flags), o.Pattern)
		}
	}
}

// asUsageIfOptions reports the generator's refusal of its options (its own
// "traces: " errors, given before anything is written) as a usage error;
// write errors stay errors.
func asUsageIfOptions(err error) error {
	if !strings.HasPrefix(err.Error(), "traces: ") {
		return err
	}
	return usageErrorf("%s", ErrorText(err))
}
