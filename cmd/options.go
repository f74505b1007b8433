package cmd

import (
	"github.com/ratesim/ratesim/internal/partial"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"

	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	_ "time/tzdata" // --tz works on machines without zoneinfo

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// streams are where a command reads and writes, and the context that an
// interrupt cancels.
type streams struct {
	// part, when set, is the partial result the command's replays write
	// (--shard, -o partial); merge, when set, holds the merged results of
	// the shards that stand in for them (ratesim merge).
	part  *partial.Run
	merge *partial.Merger

	in       io.Reader
	out      io.Writer
	err      io.Writer
	progress bool // stderr is a terminal: show progress on long replays
	ctx      context.Context
	// meter is where progress goes when err does not (a second read,
	// whose warnings the first gave), and stage what the progress line
	// names the replay: "second read: the worst keys' states".
	meter io.Writer
	stage string
}

func streamsOf(c *cobra.Command) streams {
	s := streams{in: c.InOrStdin(), out: c.OutOrStdout(), err: c.ErrOrStderr(), ctx: c.Context()}
	s.progress = isTerminal(s.err)
	return s
}

// quiet is s without diagnostics or progress: for a second pass over a
// trace whose first pass reported them.
func (s streams) quiet() streams {
	s.err, s.progress = io.Discard, false
	return s
}

// again is quiet, for a replay that reads the trace again as the stage
// named: its warnings the first read gave already, and its progress, on
// a terminal, names the stage.
func (s streams) again(stage string) streams {
	if s.progress {
		s.meter = s.err
	}
	s.err, s.stage = io.Discard, stage
	return s
}

// context is the context the command's long operations stop with.
func (s streams) context() context.Context {
	if s.ctx == nil {
		return context.Background()
	}
	return s.ctx
}

// stopWriter writes to w until ctx is done, and fails with ctx's error
// after: a long output stops at an interrupt.
type stopWriter struct {
	ctx context.Context
	w   io.Writer
}

func (s stopWriter) Write(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

// isTerminal reports whether f, a reader or writer, is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	// Not "is a character device": /dev/null is one.
	return isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd())
}

// traceOptions say how to read the trace.
type traceOptions struct {
	// ReadFlags are the flags that say how to read the traces.
	traces.ReadFlags
	Path string
	// More are the traces after Path, merged with it by time.
	More []string
	Key  []string
	// KeepKeys keeps every key's state to the end instead of forgetting
	// idle keys (sim.Config.KeepKeys).
	KeepKeys bool
	// spoolMax bounds the copies readTwice makes; 0 means
	// traces.DefaultSpoolBytes. Tests set it low.
	spoolMax int64

	// fsys, when set, holds Path (the demo reads the embedded examples),
	// and display is the name shown for it.
	fsys    fs.FS
	display string
	// spool, when set, keeps the traces that can be read only once for
	// the reads after the first (see readTwice).
	spool *traces.Spool
	// labels, when the command counts who is legitimate, are its
	// --legit, --abusive and --labels.
	labels *traces.LabelFlags
}

// readTwice says that the command reads the traces more than once, and
// how: standard input, a pipe or a process substitution is then copied
// to a temporary file as the first read opens it, bounded, and read from
// there by every open after it. Every command that reads a trace again
// asks for it this way, before its first open; the returned function
// removes the copies, and the command defers it.
func (o *traceOptions) readTwice() (release func()) {
	if o.spool == nil {
		o.spool = traces.NewSpool("", o.spoolMax)
	}
	sp := o.spool
	return func() {
		sp.Close()
		if o.spool == sp {
			o.spool = nil
		}
	}
}

func addTraceFlags(fs *pflag.FlagSet, o *traceOptions) {
	o.ReadFlags.AddFlags(fs)
	fs.StringSliceVar(&o.Key, "key", nil, "trace attributes that make up the limiter key, e.g. user,endpoint (default: user)")
	fs.BoolVar(&o.KeepKeys, "keep-keys", false, "keep every key's state to the end, for traces that go far back in time (memory grows with the keys)")
}

// trace is the open traces of a replay, merged or sorted into one
// (traces.Set, which reads the first event as it opens them, so that
// whether the timestamps are RFC 3339 is known before the replay
// starts), or what stands in for them. Reading it stops with an error
// once the command's context is done.
type trace struct {
	// input is what the replay reads: set, or the merged partials that
	// stand in for it.
	input
	set  *traces.Set
	name string
	// report tells of the rows a lenient read skipped.
	report *traces.SkipReport
	// merged, when set, stands in for the traces: their shards' results
	// are merged from partials.
	merged *partial.Merger
	// split, when set, is the shard of a trace another program split
	// that the trace holds.
	split *partial.Split
}

// input is what a replay reads: the traces (a traces.Set), or, under
// ratesim merge, the shards' partials that stand in for them
// (partial.MergedTrace).
type input interface {
	Next() (*traces.Event, error)
	RFC3339() bool
	TimeWriter() traces.TimeWriter
	Sorted() bool
	SkipOtherUsers(users []string)
	Close() error
}

// moreTraces are the traces named after the first.
func moreTraces(args []string) []string {
	if len(args) < 2 {
		return nil
	}
	return args[1:]
}

// openTrace opens the traces of o (stdin for "-"), merges or sorts them
// into one, and reads its first event. Skipped rows are reported on
// stderr as they happen.
func openTrace(o *traceOptions, s streams) (*trace, error) {
	if o.labelled() {
		if err := refuseShard(s, "the counts of --legit, --abusive and --labels are not carried in a shard's partial result yet"); err != nil {
			return nil, err
		}
	}
	if s.merge != nil {
		h := s.merge.Header()
		return &trace{input: s.merge.Trace(), name: h.Trace.Name, report: &traces.SkipReport{W: prefixWriter{s.err}}, merged: s.merge}, nil
	}
	opts, err := o.SetOptions()
	if err != nil {
		return nil, err
	}
	t := &trace{report: &traces.SkipReport{W: prefixWriter{s.err}, Max: o.MaxErrors, Text: ErrorText}}
	opts.OnSkip = t.report.Skip
	opts.Stdin, opts.FS, opts.Display, opts.Spool = s.in, o.fsys, o.display, o.spool
	set, err := traces.OpenSet(s.context(), append([]string{o.Path}, o.More...), opts)
	var mixed *traces.MixedTimesError
	switch {
	case errors.As(err, &mixed):
		return nil, &usageError{err}
	case err != nil:
		return nil, err
	}
	t.input, t.set, t.name = set, set, set.Name()
	if sp := splitOf(s); sp != nil {
		if err := openSplit(sp, o, t); err != nil {
			set.Close()
			return nil, err
		}
	}
	return t, nil
}

// Next yields the first event, then the rest of the trace.
func (t *trace) Next() (*traces.Event, error) {
	if t.split != nil {
		return t.split.Place(t.set.Next())
	}
	return t.input.Next()
}

// skips returns how many records a lenient read has skipped so far, and
// the messages given of those reported one by one.
func (t *trace) skips() (int, []string) {
	if t.merged != nil {
		return t.merged.Skipped()
	}
	return t.set.Skipped(), t.report.Told()
}

// Name is the trace's name as errors show it: the names of its files.
func (t *trace) Name() string { return t.name }

// finish turns rows skipped by a lenient read into a partial error
// (*traces.SkippedError).
func (t *trace) finish() error {
	n, msgs := t.skips()
	if t.merged != nil && len(t.report.Told()) == 0 {
		// The shards reported these as they read them; the merge reports
		// them once, for the whole.
		for _, m := range msgs {
			t.report.Tell(m)
		}
	}
	return t.report.Finish(n)
}

// parseOutput parses -o.
func parseOutput(s string) (render.Format, error) {
	f, err := render.ParseFormat(s)
	if err != nil {
		return 0, usageErrorf("%s", err)
	}
	return f, nil
}

func addOutputFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "output", "o", "table", "output format: "+render.JoinList(render.FormatNames(), "or"))
}

func parseAlgorithm(name string) (limiters.Algorithm, error) {
	if name == "" {
		return 0, usageErrorf("--algo is required (valid: %s)", algorithmNames())
	}
	a, err := limiters.ParseAlgorithm(name)
	if err != nil {
		return 0, usageErrorf("unknown algorithm %q (valid: %s)", name, algorithmNames())
	}
	return a, nil
}

// algoNames are the names of algos.
func algoNames(algos []limiters.Algorithm) []string {
	names := make([]string, len(algos))
	for i, a := range algos {
		names[i] = a.String()
	}
	return names
}

func algorithmNames() string { return spec.AlgorithmNames() }

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
