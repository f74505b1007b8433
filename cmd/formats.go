package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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
		Use:   "formats [NAME...]",
		Short: "List the trace formats: logs read as they are, their fields and how their times are read",
		Long: `List the trace formats --format takes, or the fields of those named: how
each is recognized without --format, the field its time is read from and
whether that is when a request arrived or when it completed, its duration
field, the default of --time-is, the default of --observed (the field
that records what a limiter did) and the user.

A limiter decides a request when it arrives, while most servers write the
line when the response ends: with --time-is completion a request is
replayed at its logged time less its duration, exactly. Formats with an
explicit arrival field (ALB's request_creation_time) replay it.`,
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

var formatsColumns = []column{
	{name: "format"},
	{name: "time"},
	{name: "time_records", title: "records"},
	{name: "duration"},
	{name: "arrival", machineOnly: true},
	{name: "time_is", title: "--time-is"},
	{name: "time_note", machineOnly: true},
	{name: "observed", title: "--observed"},
	{name: "resolution", machineOnly: true},
	{name: "user", machineOnly: true},
	{name: "sniffed", machineOnly: true},
	{name: "example", machineOnly: true},
	{name: "aliases", machineOnly: true},
	{name: "fields", machineOnly: true},
	{name: "description", machineOnly: true},
}

var formatFieldColumns = []column{
	{name: "format"},
	{name: "field"},
	{name: "attribute"},
	{name: "meaning"},
}

// timeRecords says what a format's time records: arrival, completion, or
// nothing for traces that are not logs.
func timeRecords(f traces.FormatInfo) cell {
	if f.TimeRecords == traces.TimeIsDefault {
		return nullCell()
	}
	return strCell(f.TimeRecords.String())
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
				return usageErrorf("unknown format %q (valid: %s)", name, strings.Join(traces.FormatNames(), ", "))
			}
			info, _ := f.Info()
			if !slices.ContainsFunc(list, func(g traces.FormatInfo) bool { return g.Format == f }) {
				list = append(list, info)
			}
		}
		return writeFormatFields(list, format, s)
	}
	var rows [][]cell
	for _, f := range list {
		var attrs []string
		for _, fl := range f.Fields {
			attrs = append(attrs, fl.Name)
		}
		orNull := func(v string) cell {
			if v == "" {
				return nullCell()
			}
			return strCell(v)
		}
		res := nullCell()
		if f.Resolution > 0 {
			res = strCell(f.Resolution.String())
		}
		timeIs := nullCell()
		if f.TimeIs != traces.TimeIsDefault {
			timeIs = strCell(f.TimeIs.String())
		}
		rows = append(rows, []cell{strCell(f.Name), orNull(f.Time), timeRecords(f), orNull(f.Duration), orNull(f.Arrival), timeIs, orNull(f.TimeNote),
			orNull(f.Observed), res, orNull(f.User), orNull(f.Sniffed), orNull(f.Example), strCell(strings.Join(f.Aliases, " ")),
			strCell(strings.Join(attrs, " ")), strCell(f.Description)})
	}
	t, err := writeRecords(s.out, format, formatsColumns, rows)
	if err != nil || t == nil {
		return err
	}
	w := &textWriter{w: s.out, format: format}
	w.table(t)
	w.blank()
	w.line(wrapText("ratesim formats NAME lists a format's fields; --time-is completion replays a log's requests at their time less their duration, arrival at their time as logged (or their arrival field). -o json gives every column.", "", 78))
	return w.err
}

// writeFormatFields writes the fields of the formats in list.
func writeFormatFields(list []traces.FormatInfo, format outputFormat, s streams) error {
	if format != outTable && format != outMarkdown {
		var rows [][]cell
		for _, f := range list {
			for _, fl := range f.Fields {
				rows = append(rows, []cell{strCell(f.Name), strCell(fl.Name), strCell(fl.Attr), strCell(fl.Meaning)})
			}
		}
		_, err := writeRecords(s.out, format, formatFieldColumns, rows)
		return err
	}
	w := &textWriter{w: s.out, format: format}
	for i, f := range list {
		if i > 0 {
			w.blank()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Description)
		for _, l := range []struct{ label, text string }{
			{"recognized", orNone(f.Sniffed, "only with --format "+f.Name)},
			{"time", f.Time + recordsText(f)},
			{"duration", orNone(f.Duration, "none")},
			{"arrival", orNone(f.Arrival, "none")},
			{"--time-is", timeIsText(f)},
			{"--observed", orNone(f.Observed, "status=429,503")},
			{"user", f.User},
			{"example", "traces/examples/" + f.Example},
		} {
			writeWrapped(&b, "  "+l.label+":", l.text, 14, 78)
		}
		w.line(strings.TrimSuffix(b.String(), "\n"))
		var rows [][]cell
		for _, fl := range f.Fields {
			rows = append(rows, []cell{strCell(fl.Name), strCell(fl.Attr), strCell(fl.Meaning)})
		}
		t, _ := writeRecords(nil, format, formatFieldColumns[1:], rows)
		w.blank()
		w.table(t)
	}
	return w.err
}

func orNone(v, none string) string {
	if v == "" {
		return none
	}
	return v
}

func recordsText(f traces.FormatInfo) string {
	if f.TimeRecords == traces.TimeIsDefault {
		return ""
	}
	return " (the " + f.TimeRecords.String() + ")"
}

func timeIsText(f traces.FormatInfo) string {
	if f.TimeIs == traces.TimeIsDefault {
		return "does not apply: the trace's times are its own"
	}
	if f.TimeNote != "" {
		return f.TimeIs.String() + "; " + f.TimeNote
	}
	return f.TimeIs.String()
}
