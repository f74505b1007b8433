package cmd

import (
	"bufio"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/traces"
)

const genLong = `Generate a synthetic trace, deterministic for a --seed, on standard output.

Patterns:
  steady    Poisson arrivals per user at a steady rate
  bursty    users alternate between quiet spells and bursts
  boundary  clusters straddling window edges: the fixed window's weak spot
  ramp      load rising, then falling

A few users are heavy and many are light, as in real traffic.`

const genExample = `  ratesim gen --pattern bursty --users 100 --requests 10000 --seed 7 > trace.csv
  ratesim gen --pattern boundary --users 3 --requests 50 --seed 1 -o jsonl`

// genOptions are the options of "ratesim gen".
type genOptions struct {
	Pattern  string
	Users    int
	Requests int
	Seed     int64
	Span     string
	Unit     string
	Output   string
}

func newGenCmd() *cobra.Command {
	o := &genOptions{}
	c := &cobra.Command{
		Use:     "gen --pattern steady|bursty|boundary|ramp [flags]",
		Short:   "Generate a synthetic trace",
		Long:    genLong,
		Example: genExample,
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runGen(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Pattern, "pattern", "steady", "traffic pattern: "+strings.Join(traces.Patterns(), ", "))
	fs.IntVar(&o.Users, "users", 10, "number of users")
	fs.IntVar(&o.Requests, "requests", 1000, "number of requests")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same trace")
	fs.StringVar(&o.Span, "span", "", "time the trace covers: a number in the unit or a Go duration (default: the generator's)")
	fs.StringVar(&o.Unit, "unit", "s", "unit of the timestamps: s, ms, us or ns")
	fs.StringVarP(&o.Output, "output", "o", "csv", "trace format: csv, yaml or jsonl")
	registerCompletions(c)
	return c
}

func runGen(o *genOptions, s streams) error {
	if !slices.Contains(traces.Patterns(), o.Pattern) {
		return usageErrorf("invalid --pattern %q (valid: %s)", o.Pattern, strings.Join(traces.Patterns(), ", "))
	}
	if o.Users <= 0 {
		return usageErrorf("--users must be positive, got %d", o.Users)
	}
	if o.Requests < 0 {
		return usageErrorf("--requests must not be negative, got %d", o.Requests)
	}
	unit, err := parseUnit(o.Unit)
	if err != nil {
		return err
	}
	format, err := traces.ParseFormat(o.Output)
	if err != nil {
		return usageErrorf("invalid -o %q for gen (valid: csv, yaml, jsonl)", o.Output)
	}
	var span time.Duration
	if o.Span != "" {
		if span, err = traces.ParseDuration(o.Span, unit); err != nil {
			return usageErrorf("invalid --span %q: %s", o.Span, ErrorText(err))
		}
		if span <= 0 {
			return usageErrorf("--span must be positive, got %s", o.Span)
		}
	}
	w := bufio.NewWriterSize(s.out, 1<<20)
	err = traces.Generate(w, traces.GenOptions{
		Pattern:  o.Pattern,
		Users:    o.Users,
		Requests: o.Requests,
		Seed:     o.Seed,
		Span:     span,
		Format:   format,
		Unit:     unit,
	})
	if err != nil {
		return err
	}
	return w.Flush()
}
