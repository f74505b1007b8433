package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/report"
)

var plotLong = helpText("plot")

const plotExample = `  ratesim plot state --user u1 traces/examples/boundary.csv -o boundary.svg
  ratesim plot timeline --every 1m --algos all trace.csv -o timeline.png
  ratesim plot burst --term trace.csv
  ratesim plot sweep --capacity 5..40:5 --rate 20/1m,30/1m --intent 20/1m --pick 'ratio<=2.5' trace.csv -o sweep.pdf`

// plotOutput are the flags that say where a plot goes.
type plotOutput struct {
	File  string
	Term  bool
	ASCII bool
}

func addPlotOutputFlags(fs *pflag.FlagSet, o *plotOutput) {
	fs.StringVarP(&o.File, "output", "o", "", "the file to draw to: .svg, .png or .pdf")
	fs.BoolVar(&o.Term, "term", false, "draw in the terminal (Unicode braille), not to a file")
	fs.BoolVar(&o.ASCII, "ascii", false, "draw in the terminal with plain ASCII characters (implies --term)")
}

// format checks where the plot goes before any replay: the extension of
// -o, or the terminal. It returns the file format, "" for the terminal.
func (o *plotOutput) format(cmdName string) (string, error) {
	if o.ASCII {
		o.Term = true
	}
	switch {
	case o.Term && o.File != "":
		return "", usageErrorf("%s: -o and --term exclude each other", cmdName)
	case o.Term:
		return "", nil
	case o.File == "":
		return "", usageErrorf("%s needs -o FILE (%s) or --term", cmdName, render.JoinList(dotted(report.Formats), "or"))
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(o.File), "."))
	if !slices.Contains(report.Formats, ext) {
		return "", usageErrorf("-o %s: unsupported extension %q (valid: %s)", o.File, filepath.Ext(o.File), strings.Join(dotted(report.Formats), ", "))
	}
	return ext, nil
}

// dotted is the extensions exts with their dots: ".svg".
func dotted(exts []string) []string {
	d := make([]string, len(exts))
	for i, e := range exts {
		d[i] = "." + e
	}
	return d
}

// write draws f where o says.
func (o *plotOutput) write(f *report.Figure, format string, s streams) error {
	if format == "" {
		return report.WriteTerm(s.out, f, report.TermOptions{Width: termWidth(s.out), ASCII: o.ASCII})
	}
	return writeFileAtomic(o.File, func(w io.Writer) error { return report.Write(w, f, format) })
}

// termWidth is the width to draw in: $COLUMNS, else the terminal's, else
// 80.
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	return 80
}

// writeFileAtomic writes a file through write, into a temporary file in
// the same directory renamed over path once complete, so that a failure
// leaves no partial file behind (and an older file as it was).
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("cannot write %s: %v", path, pe.Err)
		}
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// newPlotCmd is "ratesim plot KIND", one subcommand per kind.
func newPlotCmd() *cobra.Command {
	// The kinds of plot, in the order the help lists them.
	kinds := []*cobra.Command{newPlotStateCmd(), newPlotTimelineCmd(), newPlotBurstCmd(), newPlotSweepCmd()}
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name())
	}
	valid := strings.Join(names, ", ")
	c := &cobra.Command{
		Use:         "plot KIND [flags] TRACE -o FILE",
		Short:       "Draw a replay: a key's state, the timeline, bursts or a sweep (SVG, PNG, PDF, terminal)",
		Long:        plotLong,
		Example:     plotExample,
		Annotations: map[string]string{exitStatusKey: replayExitStatus},
		// A kind's flags given with an unknown kind: the kind is the
		// mistake to report.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("plot needs a kind (valid: %s)", valid)
			}
			return usageErrorf("unknown plot kind %q (valid: %s)", args[0], valid)
		},
		RunE: func(c *cobra.Command, args []string) error { return nil },
	}
	c.AddCommand(kinds...)
	return c
}

// registerPlotCompletions completes -o with the picture formats, before
// registerCompletions gives the other flags theirs.
func registerPlotCompletions(c *cobra.Command, exts ...string) {
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	})
	registerCompletions(c)
}

// plotReplayOptions are the flags of the plot kinds that replay through
// limiters as compare does.
type plotReplayOptions struct {
	trace    traceOptions
	policy   policyOptions
	Algos    []string
	Interval string
	out      plotOutput
}

// addPlotReplayFlags adds the flags compare takes for its limiters.
func addPlotReplayFlags(fs *pflag.FlagSet, o *plotReplayOptions) {
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms, comma-separated, or all (default: the five classic algorithms)")
	fs.StringVar(&o.Interval, "interval", "", "burst interval (default: the window)")
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	addPlotOutputFlags(fs, &o.out)
}

// prepare checks the flags, then opens the trace, as compare does.
func (o *plotReplayOptions) prepare(c *cobra.Command, s streams) (*replay, string, error) {
	format, err := o.out.format(commandName(c))
	if err != nil {
		return nil, "", err
	}
	algos, specs, err := o.policy.lanesGiven(o.Algos)
	if err != nil {
		return nil, "", err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, o.Interval, s)
	return rp, format, err
}

// frame is what the figures of rp share: the lines their titles state
// the replay in (the policy, the limiters), how times become X and
// durations are written, the intent and the burst interval.
func (rp *replay) frame() *report.Frame {
	sp := rp.spec
	var names []string
	for _, l := range sp.Lanes {
		names = append(names, l.Name)
	}
	lines := append([]string{"policy: " + sp.Describe(true)}, sp.LaneLines()...)
	xLabel := "time (" + unitName(sp.Unit) + ")"
	if sp.RFC3339 {
		xLabel = "time (UTC)"
	}
	return &report.Frame{
		Trace:       rp.trace.name,
		Lines:       append(lines, "limiters: "+strings.Join(names, ", ")),
		Clock:       sp.RFC3339,
		Unit:        sp.Unit,
		XLabel:      xLabel,
		Duration:    sp.Duration,
		Intent:      sp.Intent,
		IntentNamed: sp.IntentNamed,
		Interval:    sp.Interval,
	}
}
