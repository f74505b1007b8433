package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // --tz works on machines without zoneinfo

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// streams are where a command reads and writes.
type streams struct {
	in       io.Reader
	out      io.Writer
	err      io.Writer
	progress bool // stderr is a terminal: show progress on long replays
}

func streamsOf(c *cobra.Command) streams {
	s := streams{in: c.InOrStdin(), out: c.OutOrStdout(), err: c.ErrOrStderr()}
	s.progress = isTerminal(s.err)
	return s
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
	Path string
	// More are the traces after Path, merged with it by time.
	More    []string
	Unit    string
	Format  string
	Lenient bool
	Key     []string
	// KeepKeys keeps every key's state to the end instead of forgetting
	// idle keys (sim.Config.KeepKeys).
	KeepKeys bool
	// UserField, TimeField and CostField name the fields to read the
	// user, the timestamp and the cost from (traces.Options).
	UserField, TimeField, CostField string
	// TimeFormat, TZ and TimeRound say how to read timestamps
	// (traces.Options.TimeFormat, Location, TimeRound).
	TimeFormat, TZ string
	TimeRound      bool
	// MaxErrors is the most skipped rows a lenient read reports one by
	// one; the rest are counted.
	MaxErrors int
	// Sort replays the traces in time order, sorting in at most SortMem
	// of memory (a size such as 256MiB).
	Sort    bool
	SortMem string

	// fsys, when set, holds Path (the demo reads the embedded examples),
	// and display is the name shown for it.
	fsys    fs.FS
	display string
}

func addTraceFlags(fs *pflag.FlagSet, o *traceOptions) {
	fs.StringVar(&o.Unit, "unit", "s", "unit of numeric timestamps: s, ms, us or ns")
	fs.StringVar(&o.Format, "format", "", "trace format: csv, yaml, jsonl, or combined or common (nginx and Apache access logs) (default: from the extension, else the content)")
	fs.BoolVar(&o.Lenient, "lenient", false, "skip bad rows, report them on stderr and exit with status 3")
	fs.IntVar(&o.MaxErrors, "max-errors", 20, "with --lenient, the most skipped rows reported one by one; the rest are counted")
	fs.StringSliceVar(&o.Key, "key", nil, "trace attributes that make up the limiter key, e.g. user,endpoint (default: user)")
	fs.StringVar(&o.UserField, "user-field", "", `the column or key to read the user from (default "user"; JSON Lines and YAML take a dotted path such as request.remote_ip)`)
	fs.StringVar(&o.TimeField, "time-field", "", `the column or key to read the timestamp from (default "timestamp")`)
	fs.StringVar(&o.CostField, "cost-field", "", `the column or key to read the cost from (default "cost")`)
	fs.StringVar(&o.TimeFormat, "time-format", "auto", "how timestamps are written: auto (numbers in --unit, or RFC 3339), unix, unix-ms, unix-us, unix-ns, rfc3339, clf, or a Go layout such as '2006-01-02 15:04:05'")
	fs.StringVar(&o.TZ, "tz", "UTC", "time zone of timestamps without an offset: an IANA name such as Europe/Berlin, or Local")
	fs.BoolVar(&o.TimeRound, "time-round", false, "round timestamps finer than a nanosecond to the nearest one instead of refusing them")
	fs.BoolVar(&o.Sort, "sort", false, "replay the trace in time order (stable), sorting it first in bounded memory, spilling to temporary files")
	fs.StringVar(&o.SortMem, "sort-mem", "256MiB", "with --sort, the most memory the sort holds events in: a size such as 64MiB or 2GiB")
	fs.BoolVar(&o.KeepKeys, "keep-keys", false, "keep every key's state to the end, for traces that go far back in time (memory grows with the keys)")
}

// parseUnit parses --unit; traces.ParseUnit knows the units.
func parseUnit(s string) (time.Duration, error) {
	u, err := traces.ParseUnit(s)
	if err != nil {
		return 0, usageErrorf("invalid --unit %q (valid: s, ms, us, ns)", s)
	}
	return u, nil
}

// unitName is the name of a trace unit, as --unit takes it.
func unitName(d time.Duration) string { return traces.UnitName(d) }

func parseTraceFormat(s string) (traces.Format, error) {
	if s == "" {
		return traces.FormatAuto, nil
	}
	f, err := traces.ParseFormat(s)
	if err != nil {
		return 0, usageErrorf("invalid --format %q (valid: csv, yaml, jsonl, combined, common)", s)
	}
	return f, nil
}

// trace is the open traces of a replay, merged or sorted into one, whose
// first event has been read, so that whether its timestamps are RFC 3339
// is known before the replay starts.
type trace struct {
	src     traces.Source // the readers, merged or sorted
	readers []*traces.Reader
	sorted  *traces.Sorted // with --sort
	name    string
	first   *traces.Event
	err     error // from reading the first event
	peeked  bool
	closers []io.Closer
	stop    func()    // stops the interrupt handler, if any
	shown   int       // skipped rows reported one by one
	out     io.Writer // where the count of the others goes
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
	unit, err := parseUnit(o.Unit)
	if err != nil {
		return nil, err
	}
	format, err := parseTraceFormat(o.Format)
	if err != nil {
		return nil, err
	}
	if err := traces.CheckTimeFormat(o.TimeFormat); err != nil {
		return nil, usageErrorf("invalid --time-format: %s", ErrorText(err))
	}
	loc, err := time.LoadLocation(o.TZ)
	if err != nil {
		return nil, usageErrorf("invalid --tz %q: want an IANA zone name such as Europe/Berlin, UTC or Local", o.TZ)
	}
	if o.MaxErrors < 0 {
		return nil, usageErrorf("invalid --max-errors %d: want 0 or more", o.MaxErrors)
	}
	var sortMem int64 // 0: the default
	if o.SortMem != "" {
		if sortMem, err = parseSize(o.SortMem); err != nil {
			return nil, usageErrorf("invalid --sort-mem %q: %s", o.SortMem, err)
		}
	}
	t := &trace{out: s.err}
	opts := traces.Options{
		TimeFormat: o.TimeFormat,
		Location:   loc,
		TimeRound:  o.TimeRound,
		Format:     format,
		Unit:       unit,
		Lenient:    o.Lenient,
		UserField:  o.UserField,
		TimeField:  o.TimeField,
		CostField:  o.CostField,
		OnSkip: func(err error) {
			if t.shown < o.MaxErrors {
				t.shown++
				fmt.Fprintf(s.err, "ratesim: skipped %s\n", ErrorText(err))
			}
		},
	}
	var names []string
	for _, path := range append([]string{o.Path}, o.More...) {
		var r *traces.Reader
		var name string
		if o.fsys != nil {
			name = o.display
			f, err := o.fsys.Open(path)
			if err != nil {
				t.Close()
				return nil, err
			}
			t.closers = append(t.closers, f)
			if r, err = traces.NewReader(f, o.display, opts); err != nil {
				t.Close()
				return nil, err
			}
		} else {
			if r, err = traces.Open(path, s.in, opts); err != nil {
				t.Close()
				return nil, err
			}
			t.closers = append(t.closers, r)
			name = r.Name()
		}
		t.readers = append(t.readers, r)
		names = append(names, name)
	}
	t.name = strings.Join(names, ", ")
	t.src = t.readers[0]
	if len(t.readers) > 1 {
		srcs := make([]traces.Source, len(t.readers))
		for i, r := range t.readers {
			srcs[i] = r
		}
		if o.Sort {
			t.src = &concat{srcs: srcs, name: t.name}
		} else {
			t.src = traces.Merge(srcs...)
		}
	}
	if o.Sort {
		t.sorted = traces.Sort(t.src, traces.SortOptions{MaxMemory: sortMem})
		t.src = t.sorted
		t.stop = onInterrupt(func() {
			t.sorted.Close()
			fmt.Fprintln(s.err, "ratesim: interrupted")
		})
	}
	t.first, t.err = t.src.Next()
	if t.err == nil {
		if err := t.checkTimes(); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// checkTimes refuses traces of which some have RFC 3339 times and others
// numbers: they cannot be merged.
func (t *trace) checkTimes() error {
	var first *traces.Reader
	for _, r := range t.readers {
		switch {
		case !r.TimesKnown():
		case first == nil:
			first = r
		case r.RFC3339() != first.RFC3339():
			return usageErrorf("%s and %s cannot be merged: one has RFC 3339 times, the other numbers", first.Name(), r.Name())
		}
	}
	return nil
}

// concat is several sources one after the other, for sorting together.
type concat struct {
	srcs []traces.Source
	name string
}

func (c *concat) Next() (*traces.Event, error) {
	for len(c.srcs) > 0 {
		ev, err := c.srcs[0].Next()
		if err != io.EOF {
			return ev, err
		}
		c.srcs = c.srcs[1:]
	}
	return nil, io.EOF
}

func (c *concat) Name() string { return c.name }

// onInterrupt runs f and exits with status 130 when the process is
// interrupted (SIGINT, SIGTERM); the returned function stops that.
func onInterrupt(f func()) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			f()
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}

// parseSize parses a size in bytes: a whole number with an optional KiB,
// MiB or GiB (also KB, MB, GB, K, M, G, all powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive size such as 64MiB, 512KiB or 2GiB")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// Next yields the peeked event first, then the rest of the trace.
func (t *trace) Next() (*traces.Event, error) {
	if !t.peeked {
		t.peeked = true
		if t.err != nil {
			return nil, t.err
		}
		return t.first, nil
	}
	return t.src.Next()
}

// RFC3339 reports whether the trace's timestamps are RFC 3339 times: as
// the first of its files whose kind of times is known says.
func (t *trace) RFC3339() bool {
	for _, r := range t.readers {
		if r.TimesKnown() {
			return r.RFC3339()
		}
	}
	return false
}

// timeWriter writes instants as the trace writes its times: as the first
// of its files whose kind of times is known, in the zone of the first
// time read.
func (t *trace) timeWriter() traces.TimeWriter {
	var sample []byte
	if t.first != nil {
		sample = t.first.TimeText
	}
	for _, r := range t.readers {
		if r.TimesKnown() {
			return r.TimeWriter(sample)
		}
	}
	return traces.TimeWriter{}
}

// skipOtherUsers has the readers pass over the plain records of other
// users than users without reading them: for a second read of a trace the
// first read checked whole.
func (t *trace) skipOtherUsers(users []string) {
	for _, r := range t.readers {
		r.SkipOtherUsers(users)
	}
}

// Name is the trace's name as errors show it: the names of its files.
func (t *trace) Name() string { return t.name }

// Close closes the traces' files and removes the sort's temporary files.
func (t *trace) Close() error {
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	var first error
	if t.sorted != nil {
		first = t.sorted.Close()
	}
	for _, c := range t.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	t.closers = nil
	return first
}

// finish turns rows skipped by a lenient read into a partial error.
func (t *trace) finish() error {
	n := 0
	for _, r := range t.readers {
		n += r.Skipped()
	}
	if more := n - t.shown; more > 0 {
		fmt.Fprintf(t.out, "ratesim: and %s more skipped\n", formatInt(int64(more)))
	}
	if n > 0 {
		return &partialError{skipped: n}
	}
	return nil
}

// outputFormat is the -o flag of run, compare and burst.
type outputFormat int

const (
	outTable outputFormat = iota
	outCSV
	outJSON
	outJSONL
	outMarkdown
)

var outputNames = []string{"table", "csv", "json", "jsonl", "markdown"}

func parseOutput(s string) (outputFormat, error) {
	if s == "md" {
		s = "markdown"
	}
	i := slices.Index(outputNames, s)
	if i < 0 {
		return 0, usageErrorf("invalid -o %q (valid: %s)", s, strings.Join(outputNames, ", "))
	}
	return outputFormat(i), nil
}

func addOutputFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "output", "o", "table", "output format: table, csv, json, jsonl or markdown")
}

// parseAlgorithms parses --algos: a comma-separated list of names, or
// "all". A nil list (the flag not given) means the five classic
// algorithms; a list given with no name in it ("", ",") is an error.
func parseAlgorithms(list []string) ([]limiters.Algorithm, error) {
	if list == nil {
		return limiters.ClassicAlgorithms(), nil
	}
	var algos []limiters.Algorithm
	for _, name := range list {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			for _, a := range limiters.AllAlgorithms() {
				if !slices.Contains(algos, a) {
					algos = append(algos, a)
				}
			}
			continue
		}
		a, err := limiters.ParseAlgorithm(name)
		if err != nil {
			return nil, usageErrorf("unknown algorithm %q in --algos (valid: %s, all)", name, algorithmNames())
		}
		if slices.Contains(algos, a) {
			return nil, usageErrorf("algorithm %s listed twice in --algos", a)
		}
		algos = append(algos, a)
	}
	if len(algos) == 0 {
		return nil, usageErrorf("--algos lists no algorithm (valid: %s, all)", algorithmNames())
	}
	return algos, nil
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

func algorithmNames() string {
	var names []string
	for _, a := range limiters.AllAlgorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names, ", ")
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
