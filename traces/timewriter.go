package traces

import (
	"strings"
	"time"
)

// A TimeWriter writes instants the way a trace writes its times, so that a
// time a report computes (the start of an interval, the edges of a burst)
// reads as the trace's own do: a number in the trace's unit, an RFC 3339
// time, or a time in the trace's layout (the access logs' 10/Oct/2024:
// 13:55:36 +0200), in the zone offset of the trace's first time. A
// fraction of a second the layout has no room for is written after its
// seconds, so that no instant is shown rounded. The zero TimeWriter
// writes numbers of seconds.
type TimeWriter struct {
	unit   time.Duration // numbers: their unit
	layout string        // "" for numbers
	loc    *time.Location
}

// TimeWriter returns the writer of the trace's times, given one of its
// timestamps as the trace wrote it (its first), whose zone offset the
// times are written in; nil sample, or one without an offset, writes them
// in UTC, or for a layout without a zone in its --tz zone.
func (r *Reader) TimeWriter(sample []byte) TimeWriter {
	c := &r.c
	w := TimeWriter{unit: time.Duration(c.unit)}
	switch {
	case c.mode != modeRFC3339:
		return w
	case c.tf.kind == timeLayoutKind:
		w.layout, w.loc = fractional(c.tf.layout), c.tf.loc
		if c.tf.zoned {
			w.loc = time.UTC
			if t, err := time.Parse(c.tf.layout, string(sample)); err == nil {
				w.loc = t.Location()
			}
		}
	case c.layout == layoutEpoch:
		w.unit = time.Second
	case c.layout == clfLayout:
		w.layout, w.loc = fractional(clfLayout), time.UTC
		if t, err := time.Parse("02/Jan/2006:15:04:05.999999999 -0700", string(sample)); err == nil {
			w.loc = t.Location()
		}
	case c.layout == haproxyLayout:
		w.layout, w.loc = "02/Jan/2006:15:04:05.999999999", c.tf.loc
	case c.layout == w3cLayout:
		w.layout, w.loc = fractional(w3cLayout), time.UTC
	default:
		w.layout, w.loc = time.RFC3339Nano, time.UTC
		if t, err := time.Parse(time.RFC3339Nano, string(sample)); err == nil {
			w.loc = t.Location()
		}
	}
	return w
}

// fractional is layout with an optional fraction of a second after its
// seconds ("05" becomes "05.999999999"), unless it has one already.
func fractional(layout string) string {
	if strings.Contains(layout, "05.") || strings.Contains(layout, "05,") {
		return layout
	}
	if i := strings.LastIndex(layout, "05"); i >= 0 {
		return layout[:i+2] + ".999999999" + layout[i+2:]
	}
	return layout
}

// Numeric reports whether the times are numbers (JSON writes them as
// numbers) rather than texts.
func (w TimeWriter) Numeric() bool { return w.layout == "" }

// Append appends the instant ns (Unix nanoseconds, or nanoseconds of the
// trace's unit for a numeric trace) to dst.
func (w TimeWriter) Append(dst []byte, ns int64) []byte {
	if w.layout == "" {
		return AppendDecimal(dst, ns, w.unit)
	}
	return time.Unix(0, ns).In(w.loc).AppendFormat(dst, w.layout)
}

// Format returns the instant ns as Append writes it.
func (w TimeWriter) Format(ns int64) string { return string(w.Append(nil, ns)) }

// TimeWriter returns the writer of the traces' times: as the first trace
// whose kind of times is known writes them, in the zone of the first
// event's time.
func (s *Set) TimeWriter() TimeWriter {
	var sample []byte
	if s.first != nil {
		sample = s.first.TimeText
	}
	for _, r := range s.readers {
		if r.TimesKnown() {
			return r.TimeWriter(sample)
		}
	}
	return TimeWriter{}
}
