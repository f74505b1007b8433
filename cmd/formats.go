package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/traces"
)

type formatsOptions struct {
	Output string
	// Names are the formats whose fields to list; none: every format,
	// one row each.
	Names []string
}

func newFormatsCmd() *cobra.Command {
	o := &formatsOptions{}
	c := &cobra.Command{
		Use:         "formats [NAME...]",
		Short:       "List the trace formats: logs read as they are, their fields and how their times are read",
		Long:        helpText("formats"),
		Example:     "  ratesim formats\n  ratesim formats nginx alb\n  ratesim formats -o json",
		Annotations: exitStatus("a bad flag, an unknown format name"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, f := range traces.Formats() {
				if !slices.Contains(args, f.Name) {
					out = append(out, cobra.CompletionWithDesc(f.Name, f.Description))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Names = args
			return runFormats(o, streamsOf(c))
		},
	}
	addOutputFlag(c.Flags(), &o.Output)
	registerCompletions(c)
	return c
}

func runFormats(o *formatsOptions, s streams) error {
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	list := traces.Formats()
	if len(o.Names) > 0 {
		list = nil
		for _, name := range o.Names {
			f, err := traces.ParseFormat(name)
			if err != nil || f == traces.FormatAuto {
				return usageErrorf("unknown format %q (valid: %s)", name, traces.ReadFormats)
			}
			info, _ := f.Info()
			if !slices.ContainsFunc(list, func(g traces.FormatInfo) bool { return g.Format == f }) {
				list = append(list, info)
			}
		}
		return writeFormatFields(list, format, s)
	}
	t, err := render.WriteRecords(s.out, format, tables.FormatsColumns, tables.FormatsRows(list))
	if err != nil || t == nil {
		return err
	}
	w := render.NewTextWriter(s.out, format)
	w.Table(t)
	w.Blank()
	w.Line(render.WrapText("ratesim formats NAME lists a format's fields; --time-is completion replays a log's requests at their time less their duration, arrival at their time as logged (or their arrival field). -o json gives every column.", "", 78))
	return w.Err()
}

// writeFormatFields writes the fields of the formats in list.
func writeFormatFields(list []traces.FormatInfo, format render.Format, s streams) error {
	if format.Machine() {
		_, err := render.WriteRecords(s.out, format, tables.FormatFieldColumns, tables.FormatFieldRows(list, true))
		return err
	}
	w := render.NewTextWriter(s.out, format)
	for i, f := range list {
		if i > 0 {
			w.Blank()
		}
		w.Line(strings.TrimSuffix(render.Card(tables.FormatCard(f)), "\n"))
		t, _ := render.WriteRecords(nil, format, tables.FormatFieldColumns[1:], tables.FormatFieldRows([]traces.FormatInfo{f}, false))
		w.Blank()
		w.Table(t)
	}
	return w.Err()
}
