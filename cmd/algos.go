package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

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

var algosColumns = []render.Column{
	{Name: "name"},
	{Name: "summary", MachineOnly: true},
	{Name: "parameters"},
	{Name: "how"},
	{Name: "state"},
	{Name: "bursts"},
	{Name: "choose"},
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
		var rows [][]render.Cell
		for _, a := range algos {
			doc := a.Doc()
			rows = append(rows, []render.Cell{render.Str(a.String()), render.Str(a.Summary()), render.Str(paramFlags(a)),
				render.Str(doc.How), render.Str(doc.State), render.Str(doc.Bursts), render.Str(doc.Choose)})
		}
		t, err := render.WriteRecords(s.out, format, algosColumns, rows)
		if err != nil || t == nil {
			return err
		}
		return t.Render(s.out, format)
	}
	var b strings.Builder
	for i, a := range algos {
		doc := a.Doc()
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %s\n", a, a.Summary())
		for _, l := range []struct{ label, text string }{
			{"how", doc.How}, {"parameters", paramFlags(a)}, {"state", doc.State}, {"bursts", doc.Bursts}, {"choose", doc.Choose},
		} {
			writeWrapped(&b, "  "+l.label+":", l.text, 14, 78)
		}
		if len(o.Names) > 0 && doc.Walkthrough != "" {
			writeWrapped(&b, "  example:", doc.Walkthrough, 14, 78)
			b.WriteString(strings.Repeat(" ", 14) + exampleCommand(a) + "\n")
		}
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

// paramFlags names the flags of the parameters a takes: "--limit,
// --window".
func paramFlags(a limiters.Algorithm) string {
	var flags []string
	for _, name := range a.Params() {
		flags = append(flags, "--"+name)
	}
	return strings.Join(flags, ", ")
}

// exampleCommand is the command that replays a's example trace with the
// parameters its walk-through assumes, as the demo runs it.
func exampleCommand(a limiters.Algorithm) string {
	return "$ ratesim " + strings.Join(exampleArgs(a), " ")
}

// writeWrapped writes label then text, wrapped at width with continuation
// lines indented to indent columns.
func writeWrapped(b *strings.Builder, label, text string, indent, width int) {
	b.WriteString(render.WrapLines(text, label+strings.Repeat(" ", max(1, indent-len(label))), strings.Repeat(" ", indent), width))
	b.WriteByte('\n')
}
