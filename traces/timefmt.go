package traces

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The time formats Options.TimeFormat names; anything else is a Go
// reference layout ("2006-01-02 15:04:05").
const (
	TimeFormatAuto    = "auto"    // numbers in Options.Unit, or RFC 3339 times
	TimeFormatUnix    = "unix"    // numbers of seconds since the Unix epoch
	TimeFormatUnixMs  = "unix-ms" // numbers of milliseconds
	TimeFormatUnixUs  = "unix-us" // numbers of microseconds
	TimeFormatUnixNs  = "unix-ns" // numbers of nanoseconds
	TimeFormatRFC3339 = "rfc3339" // RFC 3339 times only
	TimeFormatCLF     = "clf"     // the Common Log Format's 10/Oct/2024:13:55:36 +0200
)

// clfLayout is the layout of the Common Log Format's time.
const clfLayout = "02/Jan/2006:15:04:05 -0700"

// timeFormat is a parsed Options.TimeFormat.
type timeFormat struct {
	kind   uint8 // one of the time* kinds below
	layout string
	// zoned: the layout holds a zone offset, so Location does not apply.
	zoned bool
	loc   *time.Location // for times without an offset; never nil
	round bool           // round sub-nanosecond digits instead of refusing them
}

const (
	timeAutoKind    = iota // numbers or RFC 3339, as the first timestamp says
	timeNumericKind        // numbers only
	timeRFC3339Kind        // RFC 3339 only
	timeLayoutKind         // a Go layout
)

// parseTimeFormat parses opts' time format; it returns the unit numbers
// are in, which a unix-* format sets.
func parseTimeFormat(opts Options) (timeFormat, time.Duration, error) {
	tf := timeFormat{loc: opts.Location, round: opts.TimeRound}
	if tf.loc == nil {
		tf.loc = time.UTC
	}
	unit := opts.Unit
	switch f := strings.TrimSpace(opts.TimeFormat); strings.ToLower(f) {
	case "", TimeFormatAuto:
	case TimeFormatUnix:
		tf.kind, unit = timeNumericKind, time.Second
	case TimeFormatUnixMs:
		tf.kind, unit = timeNumericKind, time.Millisecond
	case TimeFormatUnixUs:
		tf.kind, unit = timeNumericKind, time.Microsecond
	case TimeFormatUnixNs:
		tf.kind, unit = timeNumericKind, time.Nanosecond
	case TimeFormatRFC3339:
		tf.kind = timeRFC3339Kind
	case TimeFormatCLF:
		tf.kind, tf.layout, tf.zoned = timeLayoutKind, clfLayout, true
	default:
		if !strings.ContainsAny(f, "0123456789") {
			return tf, 0, fmt.Errorf("traces: unknown time format %q (valid: %s, or a Go layout such as 2006-01-02 15:04:05)", opts.TimeFormat, TimeFormats)
		}
		// A layout must read back what it writes.
		ref := time.Date(2006, 1, 2, 15, 4, 5, 0, time.FixedZone("", 3*3600+30*60))
		back, err := time.Parse(f, ref.Format(f))
		if err != nil {
			return tf, 0, fmt.Errorf("traces: time format %q is not a layout Go can read back: %v", f, err)
		}
		_, off := back.Zone()
		tf.kind, tf.layout, tf.zoned = timeLayoutKind, f, off != 0
	}
	return tf, unit, nil
}

// localInstant returns the Unix nanoseconds of the wall time y-mo-d
// h:mi:s.ns in loc. A wall time that the zone skips (clocks going
// forward) or repeats (clocks going back) is an error: which instant it
// means cannot be known.
func localInstant(y, mo, d, h, mi, s, ns int, loc *time.Location) (int64, string) {
	t := time.Date(y, time.Month(mo), d, h, mi, s, ns, loc)
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, "is out of range (" + minRFC3339 + " to " + maxRFC3339 + ")"
	}
	if loc == time.UTC {
		return t.UnixNano(), ""
	}
	wall := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Unix()
	// The wall time is an instant at each offset the zone has near it
	// whose instant really has that offset: none in a gap, two in an
	// overlap.
	var found [3]int64
	n := 0
	for _, probe := range []int64{-36 * 3600, 0, 36 * 3600} {
		_, off := time.Unix(wall+probe, 0).In(loc).Zone()
		u := wall - int64(off)
		if _, o := time.Unix(u, 0).In(loc).Zone(); o != off {
			continue
		}
		if n == 0 || found[n-1] != u && (n < 2 || found[0] != u) {
			found[n] = u
			n++
		}
	}
	switch n {
	case 0:
		return 0, "does not exist in " + loc.String() + " (the clocks skip it)"
	case 1:
		return t.UnixNano(), ""
	}
	return 0, "is ambiguous in " + loc.String() + " (it occurs twice when the clocks go back; give times with an offset)"
}

// UnixTimeFormat returns the time format of numbers of unit since the
// Unix epoch (TimeFormatUnixMs for time.Millisecond), or "" for a unit
// that has none.
func UnixTimeFormat(unit time.Duration) string {
	switch unit {
	case time.Second:
		return TimeFormatUnix
	case time.Millisecond:
		return TimeFormatUnixMs
	case time.Microsecond:
		return TimeFormatUnixUs
	case time.Nanosecond:
		return TimeFormatUnixNs
	}
	return ""
}

// CheckTimeFormat reports whether s is a time format Options.TimeFormat
// takes, and if not, why.
func CheckTimeFormat(s string) error {
	_, _, err := parseTimeFormat(Options{TimeFormat: s})
	return err
}
