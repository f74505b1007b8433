package traces

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/choice"
)

// ReadFlags are how a program is told to read its traces, as the flags
// AddFlags adds: the unit and format, the fields, how times are written,
// leniency and sorting. SetOptions checks them and gives the options of
// OpenSet.
type ReadFlags struct {
	Unit    string // --unit
	Format  string // --format
	Lenient bool   // --lenient
	// MaxErrors is the most skipped rows a lenient read reports one by
	// one; the rest are counted (--max-errors).
	MaxErrors int
	// UserField, TimeField and CostField name the fields to read the
	// user, the timestamp and the cost from (Options).
	UserField, TimeField, CostField string
	// TimeFormat, TZ and TimeRound say how to read timestamps
	// (Options.TimeFormat, Location, TimeRound).
	TimeFormat, TZ string
	TimeRound      bool
	// Sort replays the traces in time order, sorting in at most SortMem
	// of memory (a size such as 256MiB).
	Sort    bool
	SortMem string
	// LogFormat and EnvoyFormat are a log's line format (nginx's
	// log_format, an Envoy format string); TimeIs what its times record.
	LogFormat, EnvoyFormat, TimeIs string
}

// A FlagError is a flag of ReadFlags or LabelFlags given a value it does
// not take, or flags that exclude each other given together. It is a
// mistake in how the program was called.
type FlagError = choice.UsageError

var flagErrorf = choice.Usagef

// text is err's message without the package's name.
func text(err error) string { return strings.TrimPrefix(err.Error(), "traces: ") }

// AddFlags adds the flags of f to fs.
func (f *ReadFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Unit, "unit", "s", "unit of numeric timestamps: s, ms, us or ns")
	fs.StringVar(&f.Format, "format", "", "trace format: "+ReadFormats.String()+" (see ratesim formats; default: from the extension, else the content)")
	fs.BoolVar(&f.Lenient, "lenient", false, "skip bad rows, report them on stderr and exit with status 3")
	fs.IntVar(&f.MaxErrors, "max-errors", 20, "with --lenient, the most skipped rows reported one by one; the rest are counted")
	fs.StringVar(&f.UserField, "user-field", "", `the column or key to read the user from (default "user"; JSON Lines and YAML take a dotted path such as request.remote_ip)`)
	fs.StringVar(&f.TimeField, "time-field", "", `the column or key to read the timestamp from (default "timestamp")`)
	fs.StringVar(&f.CostField, "cost-field", "", `the column or key to read the cost from (default "cost")`)
	fs.StringVar(&f.TimeFormat, "time-format", "auto", "how timestamps are written: auto (numbers in --unit, or RFC 3339), unix, unix-ms, unix-us, unix-ns, rfc3339, clf, or a Go layout such as '2006-01-02 15:04:05'")
	fs.StringVar(&f.TZ, "tz", "UTC", "time zone of timestamps without an offset: an IANA name such as Europe/Berlin, or Local")
	fs.BoolVar(&f.TimeRound, "time-round", false, "round timestamps finer than a nanosecond to the nearest one instead of refusing them")
	fs.BoolVar(&f.Sort, "sort", false, "replay the trace in time order (stable), sorting it first in bounded memory, spilling to temporary files")
	fs.StringVar(&f.SortMem, "sort-mem", "256MiB", "with --sort, the memory the sort takes, a size such as 64MiB or 2GiB: its buffer of events, taken as the trace needs it (merging adds a fixed 2.3 MiB; the replay's own memory comes on top)")
	fs.StringVar(&f.LogFormat, "log-format", "", "an nginx log_format the log is written in, such as '$remote_addr [$time_local] \"$request\" $status $request_time', or combined, common, main or upstreaminfo (implies --format nginx)")
	fs.StringVar(&f.EnvoyFormat, "envoy-format", "", "the Envoy format string the log is written in, such as '[%START_TIME%] %DOWNSTREAM_REMOTE_ADDRESS% %RESPONSE_CODE%' (implies --format envoy; default: Envoy's default format)")
	fs.StringVar(&f.TimeIs, "time-is", "", "what a log's times record: "+choice.Join(TimeIsChoices.Names(), "or")+" (replayed at time less the duration); default: the format's (see ratesim formats)")
}

// UnitFlag parses a --unit: a *FlagError names the units it takes.
func UnitFlag(s string) (time.Duration, error) {
	u, err := ParseUnit(s)
	if err != nil {
		return 0, flagErrorf("invalid --unit %q (valid: %s)", s, Units)
	}
	return u, nil
}

// formatFlag parses --format, "" for FormatAuto.
func formatFlag(s string) (Format, error) {
	if s == "" {
		return FormatAuto, nil
	}
	f, err := ParseFormat(s)
	if err != nil {
		return 0, flagErrorf("invalid --format %q (valid: %s)", s, ReadFormats)
	}
	return f, nil
}

// LogOptions resolves --format, --log-format, --envoy-format and
// --time-is: a line format implies the format that takes it.
func (f *ReadFlags) LogOptions() (Format, string, TimeIs, error) {
	format, err := formatFlag(f.Format)
	if err != nil {
		return 0, "", 0, err
	}
	timeIs, err := ParseTimeIs(f.TimeIs)
	if err != nil {
		return 0, "", 0, flagErrorf("invalid --time-is %q (valid: %s)", f.TimeIs, TimeIsChoices)
	}
	switch {
	case f.LogFormat != "" && f.EnvoyFormat != "":
		return 0, "", 0, flagErrorf("--log-format (nginx) and --envoy-format exclude each other")
	case f.LogFormat != "":
		if format == FormatAuto {
			format = Nginx
		}
		if format != Nginx {
			return 0, "", 0, flagErrorf("--log-format is an nginx log_format: it goes with --format nginx, not %s", format)
		}
		return format, f.LogFormat, timeIs, nil
	case f.EnvoyFormat != "":
		if format == FormatAuto {
			format = Envoy
		}
		if format != Envoy {
			return 0, "", 0, flagErrorf("--envoy-format goes with --format envoy, not %s", format)
		}
		return format, f.EnvoyFormat, timeIs, nil
	}
	return format, "", timeIs, nil
}

// SetOptions checks the flags and returns the options of OpenSet they
// give. The caller sets what flags do not say: Stdin, FS and Display,
// Spool, and the Options' OnSkip.
func (f *ReadFlags) SetOptions() (SetOptions, error) {
	unit, err := UnitFlag(f.Unit)
	if err != nil {
		return SetOptions{}, err
	}
	format, logFormat, timeIs, err := f.LogOptions()
	if err != nil {
		return SetOptions{}, err
	}
	if err := CheckTimeFormat(f.TimeFormat); err != nil {
		return SetOptions{}, flagErrorf("invalid --time-format: %s", text(err))
	}
	loc, err := time.LoadLocation(f.TZ)
	if err != nil {
		return SetOptions{}, flagErrorf("invalid --tz %q: want an IANA zone name such as Europe/Berlin, UTC or Local", f.TZ)
	}
	if f.MaxErrors < 0 {
		return SetOptions{}, flagErrorf("invalid --max-errors %d: want 0 or more", f.MaxErrors)
	}
	var sortMem int64 // 0: the default
	if f.SortMem != "" {
		if sortMem, err = ParseSize(f.SortMem); err != nil {
			return SetOptions{}, flagErrorf("invalid --sort-mem %q: %s", f.SortMem, err)
		}
	}
	return SetOptions{
		Options: Options{
			TimeFormat: f.TimeFormat,
			Location:   loc,
			TimeRound:  f.TimeRound,
			Format:     format,
			Unit:       unit,
			Lenient:    f.Lenient,
			UserField:  f.UserField,
			TimeField:  f.TimeField,
			CostField:  f.CostField,
			LogFormat:  logFormat,
			TimeIs:     timeIs,
		},
		Sort:    f.Sort,
		Sorting: SortOptions{MaxMemory: sortMem},
	}, nil
}

// LabelFlags are --legit, --abusive and --labels: who sent a request.
type LabelFlags struct {
	Legit, Abusive, Column string
}

// AddFlags adds the flags that say who is legitimate to fs.
func (f *LabelFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Legit, "legit", "", "the legitimate requests: a condition on their fields, such as 'status<400 and not user_agent~bot' (alone: the others are abusive)")
	fs.StringVar(&f.Abusive, "abusive", "", "the abusive requests: a condition such as 'ip in file:blocklist.txt' or 'user_agent~(?i)scraper' (alone: the others are legitimate)")
	fs.StringVar(&f.Column, "labels", "", "a field that says legit or abusive (anything else: unlabelled), instead of --legit and --abusive")
}

// Given reports whether any of the flags is given.
func (f *LabelFlags) Given() bool { return f != nil && *f != (LabelFlags{}) }

// Labeler returns the labeler the flags give, reading the files their
// conditions name; nil when none is given (or f is nil).
func (f *LabelFlags) Labeler() (*Labeler, error) {
	if f == nil {
		return nil, nil
	}
	l, err := NewLabeler(f.Legit, f.Abusive, f.Column, os.ReadFile)
	if err != nil {
		return nil, &FlagError{Msg: text(err)}
	}
	return l, nil
}

// FlagRemedy says which of the flags of ReadFlags would read a trace
// that e says is missing a field or has epoch times in a finer unit, to
// follow the message; "" for other errors.
func (e *ParseError) FlagRemedy() string {
	switch e.Missing {
	case FieldUser:
		return "; --user-field names the field to read the user from"
	case FieldTime:
		return "; --time-field names the field to read the timestamp from (and --time-format says how it is written)"
	case FieldUser | FieldTime:
		return "; --user-field and --time-field name the fields to read them from (and --time-format says how times are written)"
	}
	unit := UnitName(e.EpochUnit)
	if f, i := UnixTimeFormat(e.EpochUnit), Units.Index(unit); f != "" && i >= 0 {
		// Not --unit: that would turn --window 10 into 10 ms as well.
		return fmt.Sprintf(": read it with --time-format %s, which keeps --window and the other durations in --unit (--unit %s would make them %s too)",
			f, unit, Units[i].Description)
	}
	return ""
}
