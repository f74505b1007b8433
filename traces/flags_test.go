package traces

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestReadFlags: the flags' defaults give OpenSet's defaults, a line
// format implies its format, and a bad value is a *FlagError naming its
// flag.
func TestReadFlags(t *testing.T) {
	var f ReadFlags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--unit", "ms", "--log-format", "combined", "--sort"}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.SetOptions()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Unit != time.Millisecond || opts.Format != Nginx || opts.LogFormat != "combined" || !opts.Sort || opts.Sorting.MaxMemory != 256<<20 || opts.Location != time.UTC {
		t.Errorf("SetOptions = %+v", opts)
	}
	for _, tc := range []struct {
		flags ReadFlags
		want  string
	}{
		{ReadFlags{Unit: "h"}, `invalid --unit "h" (valid: s, ms, us, ns)`},
		{ReadFlags{Unit: "s", Format: "xml"}, `invalid --format "xml" (valid: ` + ReadFormats.String() + `)`},
		{ReadFlags{Unit: "s", LogFormat: "combined", EnvoyFormat: "x"}, "--log-format (nginx) and --envoy-format exclude each other"},
		{ReadFlags{Unit: "s", Format: "csv", EnvoyFormat: "x"}, "--envoy-format goes with --format envoy, not csv"},
		{ReadFlags{Unit: "s", TZ: "Nowhere/Else"}, `invalid --tz "Nowhere/Else": want an IANA zone name such as Europe/Berlin, UTC or Local`},
		{ReadFlags{Unit: "s", MaxErrors: -1}, "invalid --max-errors -1: want 0 or more"},
		{ReadFlags{Unit: "s", SortMem: "lots"}, `invalid --sort-mem "lots": want a positive size such as 64MiB, 512KiB or 2GiB`},
	} {
		_, err := tc.flags.SetOptions()
		fe, ok := err.(*FlagError)
		if !ok || err.Error() != tc.want || !fe.Usage() {
			t.Errorf("%+v: SetOptions = %v, want the *FlagError %q", tc.flags, err, tc.want)
		}
	}
}

// TestFlagRemedy: a trace error that a flag would read names the flag,
// and one about epoch times in a finer unit the time format that reads
// them.
func TestFlagRemedy(t *testing.T) {
	for _, tc := range []struct {
		err  ParseError
		want string
	}{
		{ParseError{Missing: FieldUser}, "; --user-field names the field to read the user from"},
		{ParseError{EpochUnit: time.Microsecond}, ": read it with --time-format unix-us, which keeps --window and the other durations in --unit (--unit us would make them microseconds too)"},
		{ParseError{Msg: "bad cost"}, ""},
	} {
		if got := tc.err.FlagRemedy(); got != tc.want {
			t.Errorf("%+v: FlagRemedy = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestGenFlags: the defaults give a trace, a zero given where zero means
// the default is refused, and a flag given that the pattern does not use
// is warned of.
func TestGenFlags(t *testing.T) {
	var f GenFlags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--burst", "3", "--window", "5"}); err != nil {
		t.Fatal(err)
	}
	opts, warnings, err := f.Options(fs.Changed)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Users != 10 || opts.Requests != 1000 || opts.Window != 5*time.Second || opts.Format != CSV {
		t.Errorf("Options = %+v", opts)
	}
	want := "--burst and --window have no effect on the steady pattern: only bursty and boundary use them"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
	f.Burst = 0
	if _, _, err := f.Options(fs.Changed); err == nil || err.Error() != "--burst must be positive, got 0" {
		t.Errorf("--burst 0: %v", err)
	}
}
