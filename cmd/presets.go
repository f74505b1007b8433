package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters/presets"
)

type presetsOptions struct {
	Output string
	// Names are the presets to describe; none means all of them.
	Names []string
}

func newPresetsCmd() *cobra.Command {
	o := &presetsOptions{}
	c := &cobra.Command{
		Use:         "presets [NAME...]",
		Short:       "List the presets: real libraries' limiters with their own parameters",
		Long:        helpText("presets"),
		Example:     "  ratesim presets\n  ratesim presets nginx envoy\n  ratesim presets -o json",
		Annotations: exitStatus("a bad flag, an unknown preset name"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, p := range presets.All() {
				if !slices.Contains(args, p.Name) {
					out = append(out, cobra.CompletionWithDesc(p.Name, p.Library))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Names = args
			return runPresets(o, streamsOf(c))
		},
	}
	addOutputFlag(c.Flags(), &o.Output)
	registerCompletions(c)
	return c
}

var presetsColumns = []render.Column{
	{Name: "preset"},
	{Name: "library"},
	{Name: "example"},
	{Name: "parameters"},
	{Name: "mapping"},
	{Name: "burst"},
	{Name: "reproduces", MachineOnly: true},
	{Name: "differences", MachineOnly: true},
	{Name: "ignores", MachineOnly: true},
	{Name: "time", MachineOnly: true},
	{Name: "proven", MachineOnly: true},
}

// presetParams lists a preset's parameters with their defaults:
// "rate, burst (0), nodelay".
func presetParams(p presets.Preset) string {
	var out []string
	for _, prm := range p.Params {
		s := prm.Name
		if prm.Default != "" && !prm.Flag {
			s += " (" + prm.Default + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func runPresets(o *presetsOptions, s streams) error {
	list := presets.All()
	if len(o.Names) > 0 {
		list = nil
		for _, name := range o.Names {
			p, ok := presets.Lookup(name)
			if !ok {
				return usageErrorf("unknown preset %q (valid: %s)", name, strings.Join(presets.Names(), ", "))
			}
			if !slices.ContainsFunc(list, func(q presets.Preset) bool { return q.Name == p.Name }) {
				list = append(list, *p)
			}
		}
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if format != render.FormatTable {
		var rows [][]render.Cell
		for _, p := range list {
			rows = append(rows, []render.Cell{render.Str(p.Name), render.Str(p.Library), render.Str(p.Name + ":" + p.Example), render.Str(presetParams(p)),
				render.Str(p.Mapping), render.Str(p.Burst), render.Str(p.Reproduces), render.Str(p.Differences),
				render.Str(p.Ignores), render.Str(p.Time), render.Str(p.Proven)})
		}
		t, err := render.WriteRecords(s.out, format, presetsColumns, rows)
		if err != nil || t == nil {
			return err
		}
		return t.Render(s.out, format)
	}
	var b strings.Builder
	for i, p := range list {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %s\n", p.Name, p.Library)
		for _, l := range []struct{ label, text string }{
			{"example", "--limiter " + p.Name + ":" + p.Example},
			{"parameters", presetParams(p)},
			{"mapping", p.Mapping},
			{"burst", p.Burst},
			{"reproduces", p.Reproduces},
			{"differs", p.Differences},
			{"ignores", p.Ignores},
			{"time", p.Time},
			{"proven", p.Proven},
		} {
			writeWrapped(&b, "  "+l.label+":", l.text, 14, 78)
		}
	}
	_, err = fmt.Fprint(s.out, b.String())
	return err
}
