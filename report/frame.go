package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// A Frame is what the figures of one replay share: the lines their titles
// state the replay in, how a time of the trace becomes an X, how a
// duration is written, and the policy meant.
type Frame struct {
	// Trace is the trace's name.
	Trace string
	// Lines follow a figure's first title line: the policy, the limiters
	// with a policy of their own, the limiters.
	Lines []string
	// Clock says the trace's times are RFC 3339: X is then Unix seconds,
	// shown as UTC clock times. Otherwise X is a number of Unit.
	Clock bool
	Unit  time.Duration
	// XLabel names the X axis of the figures over the trace's time.
	XLabel string
	// Duration writes a duration as the replay's outputs do ("10s").
	Duration func(time.Duration) string
	// Intent is the policy meant, the exact rolling limit (a sliding log
	// of its Limit per Window): what false allows and false rejects are
	// counted against and bursts are measured against.
	Intent limiters.Policy
	// IntentNamed reports whether anybody gave the intent; without it,
	// nothing is counted against it.
	IntentNamed bool
	// Interval is the burst interval: the length of the closed intervals
	// bursts are counted in.
	Interval time.Duration
}

// NewFrame returns the frame of the figures of a replay of trace under
// sp: the lines their titles state the replay in (the policy, the
// limiters), how times become X and durations are written, the intent
// and the burst interval.
func NewFrame(trace string, sp *tables.Policy) *Frame {
	var names []string
	for _, l := range sp.Lanes {
		names = append(names, l.Name)
	}
	lines := append([]string{"policy: " + sp.Describe(true)}, sp.LaneLines()...)
	xLabel := "time (" + traces.UnitName(sp.Unit) + ")"
	if sp.RFC3339 {
		xLabel = "time (UTC)"
	}
	return &Frame{
		Trace:       trace,
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

// X is the X of a time of the trace, in nanoseconds.
func (fr *Frame) X(ns int64) float64 {
	if fr.Clock || fr.Unit <= 0 {
		return float64(ns) / 1e9
	}
	return float64(ns) / float64(fr.Unit)
}

// title is the title of a figure that shows what of the trace.
func (fr *Frame) title(what string) []string {
	return append([]string{what + " — " + fr.Trace}, fr.Lines...)
}

// duration writes d as the replay's outputs do.
func (fr *Frame) duration(d time.Duration) string {
	if fr.Duration == nil {
		return d.String()
	}
	return fr.Duration(d)
}

// plural is "1 request", "2 requests".
func plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
