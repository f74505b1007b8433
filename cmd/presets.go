package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

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
		t, err := render.WriteRecords(s.out, format, tables.PresetsColumns, tables.PresetsRows(list))
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
		b.WriteString(render.Card(tables.PresetCard(p)))
	}
	_, err = fmt.Fprint(s.out, b.String())
	return err
}
