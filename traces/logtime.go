package traces

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeIs says what the time a log writes records: when the request
// arrived, or when it completed (nginx's $time_local and $msec, ALB's
// time, CloudFront's time, Caddy's ts: the line is written when the
// response ends). A limiter decides a request when it arrives, so a log
// of completion times is replayed at time − duration, from the format's
// duration field, or at its explicit arrival field where it has one.
type TimeIs uint8

// The values of Options.TimeIs.
const (
	TimeIsDefault    TimeIs = iota // the format's own default (see FormatInfo.TimeIs)
	TimeIsArrival                  // the time is the arrival (or the format's arrival field is)
	TimeIsCompletion               // the time is the completion: arrival = time − duration
)

// String returns "arrival", "completion" or "default".
func (t TimeIs) String() string {
	switch t {
	case TimeIsArrival:
		return "arrival"
	case TimeIsCompletion:
		return "completion"
	}
	return "default"
}

// ParseTimeIs parses "arrival", "completion" or "" (the format's
// default).
func ParseTimeIs(s string) (TimeIs, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if name == "" || name == "default" {
		return TimeIsDefault, nil
	}
	switch TimeIsChoices.Index(name) {
	case 0:
		return TimeIsArrival, nil
	case 1:
		return TimeIsCompletion, nil
	}
	return 0, &ValueError{fmt.Sprintf("invalid time-is %q (valid: %s)", s, TimeIsChoices)}
}

// resolveTimeIs returns the TimeIs a log is read with: given, or the
// format's default. records is what its time field records; fixed means
// that field is the request's start, so completion makes no sense.
func resolveTimeIs(given, records TimeIs, fixed, hasDuration, hasArrival bool, name string) (TimeIs, error) {
	switch given {
	case TimeIsArrival:
		return given, nil
	case TimeIsCompletion:
		if fixed {
			return 0, fmt.Errorf("the time of %s is when the request started: --time-is completion does not apply to it", name)
		}
		if !hasDuration {
			return 0, fmt.Errorf("%s logs no duration, so --time-is completion has nothing to subtract (give a format with one, such as nginx's $request_time, or --time-is arrival)", name)
		}
		return given, nil
	}
	if !hasArrival && records == TimeIsCompletion && hasDuration {
		return TimeIsCompletion, nil
	}
	return TimeIsArrival, nil
}

// timeKind is how a log writes a time.
type timeKind uint8

const (
	timeNone    timeKind = iota
	timeCLF              // 10/Oct/2024:13:55:36 +0200, with an optional fraction of a second
	timeISO              // RFC 3339: 2024-10-10T13:55:36.123+02:00
	timeEpoch            // decimal seconds since the epoch: nginx's $msec, 1728561336.123
	timeHAProxy          // 10/Oct/2024:13:55:36.123, a wall time in --tz
	timeW3C              // 2024-10-10 13:55:36, UTC: a W3C log's date and time
)

// layoutEpoch is common.layout for times written as decimal seconds since
// the epoch: they are shown as such numbers.
const layoutEpoch = "epoch"

// layout is how times of kind k are shown (TimeWriter).
func (k timeKind) layout() string {
	switch k {
	case timeCLF:
		return clfLayout
	case timeEpoch:
		return layoutEpoch
	case timeHAProxy:
		return haproxyLayout
	}
	return time.RFC3339Nano
}

// haproxyLayout is the layout of HAProxy's %tr and %t.
const haproxyLayout = "02/Jan/2006:15:04:05.000"

// durKind is how a log writes a duration.
type durKind uint8

const (
	durNone         durKind = iota
	durSeconds              // decimal seconds: $request_time's 0.003, ALB's processing times
	durMillis               // whole milliseconds: Envoy's %DURATION%, HAProxy's %Ta
	durMillisSuffix         // whole milliseconds and "ms": Traefik's 12ms
	durNanos                // whole nanoseconds: Traefik's JSON Duration
	durFloatSeconds         // seconds written from a float64 (Caddy): rounded to the nanosecond
	durMicros               // whole microseconds: nginx-ingress and others
)

// logClock reads and writes the times of a log: the time of one line
// after another, a minute's lines sharing the work of reading it.
type logClock struct {
	// The last CLF time read, to the minute, and its offset: lines of one
	// minute share them, and only their seconds need reading.
	minute   [17]byte // "10/Oct/2024:13:55"
	offset   [5]byte  // "+0200"
	minuteAt int64    // the minute's start in Unix seconds
	cached   bool

	// The same of the last ISO 8601 time read: its text to the minute
	// ("2024-10-10T13:55"), its zone ("Z", "+02:00") and the minute's
	// start in Unix seconds.
	isoMinute [16]byte
	isoZone   [6]byte
	isoZoneN  int // 0: none cached
	isoAt     int64

	zoneOff int            // the offset of zone, in seconds
	zone    *time.Location // the last zone an arrival was written in
	buf     []byte         // the arrival's text

	// The minute the last arrival was written in, and its text up to
	// the minutes ("10/Oct/2024:13:55", "2024-10-10T13:55"): arrivals of
	// one minute share it, and only their seconds need writing.
	fmtMinute int64
	fmtKind   timeKind
	fmtOff    int
	fmtPrefix []byte
	fmtCut    int // where the zone's 0 byte is in fmtPrefix

	// The whole seconds of the last arrival written as seconds since
	// the epoch, and their digits: arrivals of one second share them.
	epochSec  int64
	epochText []byte
}

// parse reads text, a time of kind k, into Unix nanoseconds.
func (lc *logClock) parse(c *common, k timeKind, text []byte, line, col int) (int64, error) {
	if c.tf.kind != timeAutoKind {
		var ev Event
		if err := c.setTime(&ev, text, line, col); err != nil {
			return 0, err
		}
		return ev.Time, nil
	}
	switch k {
	case timeCLF:
		if lc.cached && len(text) >= 26 && string(text[:17]) == string(lc.minute[:]) && string(text[len(text)-5:]) == string(lc.offset[:]) {
			if sec, frac, ok := clfSeconds(text[17 : len(text)-5]); ok {
				return (lc.minuteAt+sec)*1e9 + frac, nil
			}
		}
		ns, ok := parseCLF(text)
		if !ok {
			return 0, c.errorf(line, col, "invalid time %s (want a time such as 10/Oct/2024:13:55:36 +0200)", quote(text))
		}
		sec, _, _ := clfSeconds(text[17 : len(text)-5])
		copy(lc.minute[:], text[:17])
		copy(lc.offset[:], text[len(text)-5:])
		lc.minuteAt = floorDiv64(ns, 1e9) - sec
		lc.cached = lc.minuteAt < 9223372035-60 && lc.minuteAt > -9223372035
		return ns, nil
	case timeEpoch:
		ns, e := parseDecimal(text, 1e9, c.tf.round)
		switch e {
		case numOK:
			return ns, nil
		case numRange:
			return 0, c.errorf(line, col, "time %s out of range (int64 nanoseconds)", quote(text))
		case numPrecision:
			return 0, c.errorf(line, col, "time %s is finer than a nanosecond", quote(text))
		}
		return 0, c.errorf(line, col, "invalid time %s (want seconds since the epoch, such as 1728561336.123)", quote(text))
	case timeHAProxy:
		// One minute's lines share its start: only their seconds and
		// milliseconds need reading.
		if lc.cached && len(text) >= 20 && string(text[:17]) == string(lc.minute[:]) {
			if sec, frac, ok := wallSeconds(text[17:]); ok {
				return lc.minuteAt*1e9 + sec*1e9 + frac, nil
			}
		}
		ns, ok := parseHAProxyTime(text, c.tf.loc)
		if ok {
			sec, frac, _ := wallSeconds(text[17:])
			copy(lc.minute[:], text[:17])
			start := ns - sec*1e9 - frac
			lc.minuteAt, lc.cached = start/1e9, start%1e9 == 0
		}
		if !ok {
			return 0, c.errorf(line, col, "invalid time %s (want a time such as 10/Oct/2024:13:55:36.123, in --tz)", quote(text))
		}
		return ns, nil
	}
	if lc.isoZoneN > 0 && len(text) >= 20 && string(text[:16]) == string(lc.isoMinute[:]) {
		if sec, frac, z, ok := isoSeconds(text[16:]); ok && string(text[16+z:]) == string(lc.isoZone[:lc.isoZoneN]) {
			return (lc.isoAt+sec)*1e9 + frac, nil
		}
	}
	ns, e, why := parseRFC3339(text, nil, c.tf.round) // with its offset
	switch e {
	case numOK:
		lc.noteISO(text, ns)
		return ns, nil
	case numRange:
		return 0, c.errorf(line, col, "time %s out of range (%s to %s)", quote(text), minRFC3339, maxRFC3339)
	case numPrecision:
		return 0, c.errorf(line, col, "time %s is finer than a nanosecond (--time-round rounds it)", quote(text))
	case numLocal:
		return 0, c.errorf(line, col, "local time %s %s", quote(text), why)
	}
	return 0, c.errorf(line, col, "invalid time %s (want an ISO 8601 time such as 2024-10-10T13:55:36.123Z)", quote(text))
}

// noteISO keeps the minute of text, an ISO 8601 time just read as ns,
// for the lines after it: of the times of that minute and zone, only
// the seconds need reading.
func (lc *logClock) noteISO(text []byte, ns int64) {
	if len(text) < 20 {
		return
	}
	sec, frac, z, ok := isoSeconds(text[16:])
	zone := text[16+z:]
	if !ok || len(zone) == 0 || len(zone) > len(lc.isoZone) {
		return
	}
	at := (ns-frac)/1e9 - sec // exact: ns-frac is whole seconds
	// Far enough from the ends of int64 nanoseconds that any second of
	// the minute is in range, as the full reading would find.
	const maxSec = math.MaxInt64 / int64(time.Second)
	if at <= -maxSec+1 || at >= maxSec-61 {
		return
	}
	copy(lc.isoMinute[:], text[:16])
	lc.isoZoneN = copy(lc.isoZone[:], zone)
	lc.isoAt = at
}

// isoSeconds reads ":ss" and an optional fraction of at most nine
// digits, the end of an ISO 8601 time after its minutes, and returns
// where the zone after them begins. A leap second (60) and a fraction
// finer than a nanosecond are not ok: parseRFC3339 decides them.
func isoSeconds(s []byte) (sec, frac int64, zone int, ok bool) {
	if len(s) < 3 || s[0] != ':' || !isDigits(s[1:3]) {
		return 0, 0, 0, false
	}
	sec = int64(s[1]-'0')*10 + int64(s[2]-'0')
	if sec > 59 {
		return 0, 0, 0, false
	}
	i := 3
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if i-start == 9 {
				return 0, 0, 0, false
			}
			frac += int64(s[i]-'0') * int64(pow10[8-(i-start)])
		}
		if i == start {
			return 0, 0, 0, false
		}
	}
	return sec, frac, i, true
}

// format writes ns as a time of kind k in the zone offset of sample, a
// time of that kind, into lc's buffer, and returns the text.
func (lc *logClock) format(c *common, k timeKind, ns int64, sample []byte) []byte {
	if c.tf.kind == timeLayoutKind {
		loc := c.tf.loc
		if c.tf.zoned {
			if t, err := time.Parse(c.tf.layout, string(sample)); err == nil {
				loc = t.Location()
			}
		}
		lc.buf = time.Unix(0, ns).In(loc).AppendFormat(lc.buf[:0], fractional(c.tf.layout))
		return lc.buf
	}
	switch k {
	case timeEpoch:
		if ns < 0 {
			lc.buf = AppendDecimal(lc.buf[:0], ns, time.Second)
			return lc.buf
		}
		// AppendDecimal's text, the seconds' digits those of the arrival
		// before when it is in the same second.
		if sec := ns / 1e9; sec != lc.epochSec || lc.epochText == nil {
			lc.epochSec, lc.epochText = sec, strconv.AppendInt(lc.epochText[:0], sec, 10)
		}
		lc.buf = appendFraction(append(lc.buf[:0], lc.epochText...), uint64(ns%1e9), 9)
		return lc.buf
	case timeHAProxy:
		lc.buf = time.Unix(0, ns).In(c.tf.loc).AppendFormat(lc.buf[:0], "02/Jan/2006:15:04:05.999999999")
		return lc.buf
	case timeCLF:
		off := 0
		if n := len(sample); n >= 5 {
			o := sample[n-5:]
			off = (digitsVal(o[1:3])*60 + digitsVal(o[3:5])) * 60
			if o[0] == '-' {
				off = -off
			}
		}
		return lc.formatMinute(k, ns, off, "02/Jan/2006:15:04", " -0700")
	}
	off := 0
	if n := len(sample); n >= 6 && (sample[n-6] == '+' || sample[n-6] == '-') && sample[n-3] == ':' {
		off = (digitsVal(sample[n-5:n-3])*60 + digitsVal(sample[n-2:])) * 60
		if sample[n-6] == '-' {
			off = -off
		}
	}
	return lc.formatMinute(k, ns, off, "2006-01-02T15:04", "Z07:00")
}

// formatMinute writes ns in the zone offset off seconds east of UTC: the
// minute in the layout minute (the one of the arrival before, when it is
// the same), the seconds with as many fraction digits as they need, then
// the offset in the layout zone.
func (lc *logClock) formatMinute(k timeKind, ns int64, off int, minute, zone string) []byte {
	local := ns + int64(off)*1e9 // no overflow: the time read was in range, and is earlier
	m := floorDiv64(local, 60e9)
	if lc.fmtPrefix == nil || m != lc.fmtMinute || k != lc.fmtKind || off != lc.fmtOff {
		t := time.Unix(0, ns).In(lc.zoneAt(off))
		lc.fmtPrefix = t.AppendFormat(lc.fmtPrefix[:0], minute)
		lc.fmtCut = len(lc.fmtPrefix)
		lc.fmtPrefix = t.AppendFormat(append(lc.fmtPrefix, 0), zone) // the zone after a 0 byte
		lc.fmtMinute, lc.fmtKind, lc.fmtOff = m, k, off
	}
	cut := lc.fmtCut
	b := append(lc.buf[:0], lc.fmtPrefix[:cut]...)
	rest := local - m*60e9 // 0 to 60e9
	sec, frac := rest/1e9, rest%1e9
	b = append(b, ':', byte('0'+sec/10), byte('0'+sec%10))
	b = appendFraction(b, uint64(frac), 9)
	lc.buf = append(b, lc.fmtPrefix[cut+1:]...)
	return lc.buf
}

// zoneAt returns a zone of the offset off seconds east of UTC, the one
// of the line before when it has the same.
func (lc *logClock) zoneAt(off int) *time.Location {
	if lc.zone == nil || lc.zoneOff != off {
		lc.zone, lc.zoneOff = time.FixedZone("", off), off
		if off == 0 {
			lc.zone = time.UTC
		}
	}
	return lc.zone
}

// parseDuration reads text, a duration of kind k, into nanoseconds. ok is
// false for a duration the log did not know ("-", ALB's -1).
func parseLogDuration(c *common, k durKind, text []byte, name string, line, col int) (ns int64, ok bool, err error) {
	if len(text) == 0 || string(text) == "-" || string(text) == "-1" {
		return 0, false, nil
	}
	var unit int64
	switch k {
	case durSeconds, durFloatSeconds:
		ns, e := parseDecimal(text, 1e9, k == durFloatSeconds)
		switch {
		case e == numOK && ns >= 0:
			return ns, true, nil
		case e == numPrecision:
			return 0, false, c.errorf(line, col, "%s %s is finer than a nanosecond", name, quote(text))
		}
		return 0, false, c.errorf(line, col, "invalid %s %s (want a number of seconds such as 0.003)", name, quote(text))
	case durMillisSuffix:
		t, found := bytes.CutSuffix(text, []byte("ms"))
		if !found {
			return 0, false, c.errorf(line, col, "invalid %s %s (want milliseconds such as 12ms)", name, quote(text))
		}
		text, unit = t, 1e6
	case durMillis:
		unit = 1e6
	case durMicros:
		unit = 1e3
	default:
		unit = 1
	}
	if len(text) == 0 || len(text) > 18 || !isDigits(text) {
		return 0, false, c.errorf(line, col, "invalid %s %s (want a whole number)", name, quote(text))
	}
	v := int64(digitsVal64(text))
	if v > math.MaxInt64/unit {
		return 0, false, c.errorf(line, col, "%s %s out of range", name, quote(text))
	}
	return v * unit, true, nil
}

// plainDuration reports whether v, a duration of kind k, is plainly
// good: short digits, with one decimal point for seconds, "ms" after
// them for durMillisSuffix.
func plainDuration(k durKind, v []byte) bool {
	if k == durMillisSuffix {
		v, _ = bytes.CutSuffix(v, []byte("ms"))
	}
	if len(v) == 0 || len(v) > 15 {
		return false
	}
	dots := 0
	for _, c := range v {
		switch {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return false
		}
	}
	return dots == 0 || dots == 1 && (k == durSeconds || k == durFloatSeconds) && v[0] != '.' && v[len(v)-1] != '.'
}

func digitsVal64(s []byte) uint64 {
	var v uint64
	for _, c := range s {
		v = v*10 + uint64(c-'0')
	}
	return v
}

// setArrival sets ev's time: the arrival, from times[0] (the logged time)
// and the durations, or from times[1] (an explicit arrival), as p.timeIs
// says.
func (p *tmplParser) setArrival(ev *Event, times [2]fieldText, durs []fieldText, n int) error {
	t := p.t
	logged := times[0]
	tk := t.fields[logged.f].time
	if p.timeIs == TimeIsArrival && t.arrival >= 0 {
		logged, tk = times[1], t.fields[times[1].f].time
	}
	ns, err := p.lc.parse(p.c, tk, logged.v, n, logged.col)
	if err != nil {
		return err
	}
	p.c.noteResolution(ns)
	ev.Time, ev.TimeText = ns, logged.v
	if p.timeIs != TimeIsCompletion {
		// The durations are checked all the same: a malformed line is
		// an error whatever it is read for. Most look like what they
		// are at a glance; the others are read to say why they are not.
		for _, d := range durs {
			f := &p.t.fields[d.f]
			if plainDuration(f.dur, d.v) {
				continue
			}
			if _, _, err := parseLogDuration(p.c, f.dur, d.v, f.name, n, d.col); err != nil {
				return err
			}
		}
		return nil
	}
	return p.subtract(ev, logged, tk, durs, n)
}

// subtract moves ev's time, a completion time, back by the durations.
func (p *tmplParser) subtract(ev *Event, logged fieldText, tk timeKind, durs []fieldText, n int) error {
	var total int64
	for _, d := range durs {
		f := &p.t.fields[d.f]
		ns, ok, err := parseLogDuration(p.c, f.dur, d.v, f.name, n, d.col)
		if err != nil {
			return err
		}
		if !ok {
			return p.c.errorf(n, d.col, "%s is %s: no duration to take from the completion time (--time-is arrival replays the time as logged)", f.name, quote(d.v))
		}
		if total > math.MaxInt64-ns {
			return p.c.errorf(n, d.col, "the duration is out of range")
		}
		total += ns
	}
	if ev.Time < math.MinInt64+total {
		return p.c.errorf(n, logged.col, "the arrival, %s less the duration, is out of range", quote(logged.v))
	}
	ev.Time -= total
	ev.TimeText = p.lc.format(p.c, tk, ev.Time, logged.v)
	return nil
}

// parseHAProxyTime reads dd/Mon/yyyy:hh:mm:ss.mmm, a wall time in loc.
func parseHAProxyTime(s []byte, loc *time.Location) (int64, bool) {
	if len(s) < 20 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' || s[17] != ':' ||
		!isDigits(s[0:2]) || !isDigits(s[7:11]) || !isDigits(s[12:14]) || !isDigits(s[15:17]) || !isDigits(s[18:20]) {
		return 0, false
	}
	month := 0
	for m, name := range months {
		if string(s[3:6]) == name {
			month = m + 1
		}
	}
	frac := 0
	if len(s) > 20 {
		f := s[20:]
		if f[0] != '.' || len(f) < 2 || len(f) > 10 || !isDigits(f[1:]) {
			return 0, false
		}
		for k, d := range f[1:] {
			frac += int(d-'0') * int(pow10[8-k])
		}
	}
	year, day := digitsVal(s[7:11]), digitsVal(s[0:2])
	hour, minute, sec := digitsVal(s[12:14]), digitsVal(s[15:17]), digitsVal(s[18:20])
	if month == 0 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	ns, why := localInstant(year, month, day, hour, minute, sec, frac, loc)
	return ns, why == ""
}
