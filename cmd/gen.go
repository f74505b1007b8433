package cmd

import (
	"bufio"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/traces"
)

var genLong = helpText("gen")

const genExample = `  ratesim gen --pattern bursty --users 100 --requests 10000 --seed 7 > trace.csv
  ratesim gen --pattern boundary --users 3 --requests 50 --seed 1 -o jsonl`

func newGenCmd() *cobra.Command {
	o := &traces.GenFlags{}
	c := &cobra.Command{
		Use:         "gen --pattern steady|bursty|boundary|ramp [flags]",
		Short:       "Generate a synthetic trace",
		Long:        genLong,
		Example:     genExample,
		Annotations: exitStatus("a bad flag or argument, a bad option value"),
		Args:        noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runGen(o, c.Flags().Changed, streamsOf(c))
		},
	}
	o.AddFlags(c.Flags())
	registerCompletions(c)
	return c
}

// runGen writes the trace o describes; given says which flags were
// given on the command line.
func runGen(o *traces.GenFlags, given func(string) bool, s streams) error {
	opts, warnings, err := o.Options(given)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		warnf(s.err, "%s", w)
	}
	w := bufio.NewWriterSize(stopWriter{s.context(), s.out}, 1<<20)
	if err := traces.Generate(w, opts); err != nil {
		return asUsageIfOptions(err)
	}
	return w.Flush()
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
