package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
)

var algosGuide = helpText("algos-guide")

type algosOptions struct {
	Output string
	// Names are the algorithms to describe; none means all of them.
	Names []string
}

func newAlgosCmd() *cobra.Command {
	o := &algosOptions{}
	c := &cobra.Command{
		Use:   "algos [NAME...]",
		Short: "Describe the algorithms and when to choose each",
		Long: `Describe each algorithm, or those named: how it works, its parameters, its
state per key, how it lets bursts through and when to choose it.`,
		Example:     "  ratesim algos\n  ratesim algos token-bucket\n  ratesim algos -o json gcra leaky-queue",
		Annotations: exitStatus("a bad flag, an unknown algorithm name"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, a := range limiters.AllAlgorithms() {
				if !slices.Contains(args, a.String()) {
					out = append(out, cobra.CompletionWithDesc(a.String(), a.Summary()))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Names = args
			return runAlgos(o, streamsOf(c))
		},
	}
	addOutputFlag(c.Flags(), &o.Output)
	registerCompletions(c)
	return c
}

func runAlgos(o *algosOptions, s streams) error {
	algos := limiters.AllAlgorithms()
	if len(o.Names) > 0 {
		algos = nil
		for _, name := range o.Names {
			a, err := limiters.ParseAlgorithm(name)
			if err != nil {
				return usageErrorf("unknown algorithm %q (valid: %s)", name, algorithmNames())
			}
			if !slices.Contains(algos, a) {
				algos = append(algos, a)
			}
		}
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if format != render.FormatTable {
		t, err := render.WriteRecords(s.out, format, tables.AlgosColumns, tables.AlgosRows(algos))
		if err != nil || t == nil {
			return err
		}
		return t.Render(s.out, format)
	}
	var b strings.Builder
	for i, a := range algos {
		if i > 0 {
			b.WriteString("\n")
		}
		title, fields := tables.AlgoCard(a)
		if doc := a.Doc(); len(o.Names) > 0 && doc.Walkthrough != "" {
			fields = append(fields, render.Field{Label: "example", Text: doc.Walkthrough, Then: exampleCommand(a)})
		}
		b.WriteString(render.Card(title, fields))
	}
	if len(o.Names) == 0 {
		b.WriteString("\n" + algosGuide + "\n")
	}
	_, err = fmt.Fprint(s.out, b.String())
	return err
}

// countWord spells n out in words up to twelve: "seven".
func countWord(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// exampleCommand is the command that replays a's example trace with the
// parameters its walk-through assumes, as the demo runs it.
func exampleCommand(a limiters.Algorithm) string {
	return "$ ratesim " + strings.Join(exampleArgs(a), " ")
}
