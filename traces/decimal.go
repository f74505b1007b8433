package traces

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/decimal"
)

// numErr classifies a failed conversion of a timestamp or duration text.
type numErr uint8

const (
	numOK         numErr = iota
	numSyntax            // not a number
	numRange             // outside int64 nanoseconds
	numPrecision         // finer than a nanosecond
	numLeapSecond        // an RFC 3339 leap second (23:59:60 UTC)
	numLocal             // a local time that its zone skips or repeats
)

// The earliest and latest RFC 3339 times int64 nanoseconds hold.
const (
	minRFC3339 = "1677-09-21T00:12:43.145224192Z"
	maxRFC3339 = "2262-04-11T23:47:16.854775807Z"
)

// pow10 holds 10^0 .. 10^19, every power of ten that fits in a uint64.
var pow10 = [20]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// parseDecimal converts the decimal text s (an optional sign, digits with an
// optional fraction, an optional exponent: "12", "-0.4", "1.5e3", ".5")
// times unit nanoseconds into nanoseconds, exactly. It never goes through
// float64: the digits are kept as an integer mantissa and a power of ten.
//
// With round, a value finer than a nanosecond is rounded to the nearest
// one, halves away from zero, instead of being an error.
func parseDecimal(s []byte, unit int64, round bool) (int64, numErr) {
	if unit == int64(time.Second) {
		if ns, ok := plainSeconds(s); ok {
			return ns, numOK
		}
	}
	return parseDecimalExact(s, unit, round)
}

// plainSeconds reads the commonest decimal of a log, seconds as digits
// with at most nine digits of fraction ("1728561336.123", "0.250"), into
// nanoseconds: exact, and in range, so parseDecimalExact, which reads
// every decimal, would find the same. ok is false for any other text.
func plainSeconds(s []byte) (int64, bool) {
	var sec uint64
	i := 0
	for ; i < len(s) && i < 11; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		sec = sec*10 + uint64(d)
	}
	// At most the whole seconds int64 nanoseconds hold with any fraction.
	const maxSec = uint64(math.MaxInt64/int64(time.Second) - 1)
	if i == 0 || sec > maxSec {
		return 0, false
	}
	var frac uint64
	if i < len(s) {
		if s[i] != '.' {
			return 0, false
		}
		digits := s[i+1:]
		if len(digits) == 0 || len(digits) > 9 {
			return 0, false
		}
		for _, c := range digits {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			frac = frac*10 + uint64(d)
		}
		frac *= pow10[9-len(digits)]
	}
	return int64(sec*1e9 + frac), true
}

// parseDecimalExact is parseDecimal for every text.
func parseDecimalExact(s []byte, unit int64, round bool) (int64, numErr) {
	n, ok := decimal.Parse(s)
	if !ok {
		return 0, numSyntax
	}
	// A huge exponent is saturated: the conversion below still finds the
	// value out of range (or finer than a nanosecond) in a few steps.
	mant, exp, lost, neg := n.Mant, n.Exp, n.Lost, n.Neg
	if mant == 0 {
		if lost {
			return 0, numPrecision
		}
		return 0, numOK
	}
	for mant%10 == 0 {
		mant /= 10
		exp++
	}
	var hi, lo uint64
	if exp >= 0 {
		if exp >= len(pow10) {
			return 0, numRange
		}
		hi, lo = bits.Mul64(mant, pow10[exp])
		if hi != 0 {
			return 0, numRange
		}
		hi, lo = bits.Mul64(lo, uint64(unit))
		if hi != 0 {
			return 0, numRange
		}
	} else {
		hi, lo = bits.Mul64(mant, uint64(unit))
		k := -exp
		if round {
			lost = false // the rounding below decides
			if k > 38 {
				// mant*unit < 10^38: far below half a nanosecond.
				hi, lo, k = 0, 0, 0
			} else {
				// Add half of 10^k, then divide rounding down.
				hh, hl := uint64(0), uint64(5)
				for range k - 1 {
					hh, hl = mul128by10(hh, hl)
				}
				hi, lo = add128(hi, lo, hh, hl)
			}
		}
		for k > 0 {
			step := min(k, 19)
			d := pow10[step]
			qhi := hi / d
			qlo, rem := bits.Div64(hi%d, lo, d)
			if rem != 0 && !round {
				// Not a whole number of nanoseconds; report a range
				// error instead when the magnitude is too big anyway.
				if qhi != 0 || (k == step && qlo > 1<<63) {
					return 0, numRange
				}
				return 0, numPrecision
			}
			hi, lo = qhi, qlo
			k -= step
		}
		if hi != 0 {
			return 0, numRange
		}
	}
	if lo > 1<<63 || (lo == 1<<63 && !neg) {
		return 0, numRange
	}
	if lost {
		return 0, numPrecision
	}
	if neg {
		return int64(-lo), numOK // -(1<<63) wraps to math.MinInt64, as wanted
	}
	return int64(lo), numOK
}

// mul128by10 returns (hi, lo) * 10; the product must fit in 128 bits.
func mul128by10(hi, lo uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, 10)
	return hi*10 + h, l
}

// add128 returns (ah, al) + (bh, bl).
func add128(ah, al, bh, bl uint64) (uint64, uint64) {
	l, c := bits.Add64(al, bl, 0)
	h, _ := bits.Add64(ah, bh, c)
	return h, l
}

// unitNanos returns the unit in nanoseconds, seconds when unit is not
// positive.
func unitNanos(unit time.Duration) int64 {
	if unit <= 0 {
		return int64(time.Second)
	}
	return int64(unit)
}

// AppendDecimal appends ns nanoseconds written as an exact decimal number of
// units to dst: 12000000000 in seconds is "12", 1500000000 is "1.5",
// -1000000000 is "-1", 1 is "0.000000001". There are no trailing zeros and
// no exponent. A unit that is not positive means seconds. For a unit that
// is not a power of ten of a nanosecond the fraction may not terminate; it
// is then cut after 30 digits.
func AppendDecimal(dst []byte, ns int64, unit time.Duration) []byte {
	u := uint64(unitNanos(unit))
	var abs uint64
	if ns < 0 {
		dst = append(dst, '-')
		abs = uint64(-(ns + 1)) + 1
	} else {
		abs = uint64(ns)
	}
	if u == uint64(time.Second) {
		// The commonest unit, whose divisions by a constant are
		// multiplications.
		return appendFraction(strconv.AppendUint(dst, abs/1e9, 10), abs%1e9, 9)
	}
	q, r := abs/u, abs%u
	dst = strconv.AppendUint(dst, q, 10)
	if r == 0 {
		return dst
	}
	if width := pow10Digits(u); width > 0 {
		return appendFraction(dst, r, width)
	}
	dst = append(dst, '.')
	for digits := 0; r != 0 && digits < 30; digits++ {
		hi, lo := bits.Mul64(r, 10)
		var d uint64
		d, r = bits.Div64(hi, lo, u)
		dst = append(dst, byte('0'+d))
	}
	return dst
}

// appendFraction appends r, a fraction of 10^width (width at most 19),
// as a point and width digits without their trailing zeros; nothing when
// r is 0.
func appendFraction(dst []byte, r uint64, width int) []byte {
	if r == 0 {
		return dst
	}
	// Trailing zeros three at a time first: times and durations are
	// mostly whole milliseconds or microseconds.
	for r%1000 == 0 {
		r /= 1000
		width -= 3
	}
	for r%10 == 0 {
		r /= 10
		width--
	}
	var digits [20]byte
	digits[0] = '.'
	for i := width; i > 0; i-- {
		digits[i] = byte('0' + r%10)
		r /= 10
	}
	return append(dst, digits[:width+1]...)
}

// pow10Digits returns k when u is 10^k (k >= 1), else 0.
func pow10Digits(u uint64) int {
	k := 0
	for u >= 10 && u%10 == 0 {
		u /= 10
		k++
	}
	if u != 1 {
		return 0
	}
	return k
}

// ParseDuration parses a duration given either as a number of units ("10",
// "2.5", "-1", "1e3") or as a Go duration string ("10s", "1m30s", "250ms").
// Numbers are converted exactly from their text; a unit that is not
// positive means seconds. Zero and negative durations are returned as they
// are, for the caller to judge; text that is neither form, a fraction finer
// than a nanosecond and a value beyond int64 nanoseconds are errors.
func ParseDuration(s string, unit time.Duration) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, &ValueError{"empty duration"}
	}
	ns, e := parseDecimal([]byte(t), unitNanos(unit), false)
	switch e {
	case numOK:
		return time.Duration(ns), nil
	case numRange:
		return 0, &ValueError{fmt.Sprintf("duration %q out of range (at most %v)", s, time.Duration(math.MaxInt64))}
	case numPrecision:
		return 0, &ValueError{fmt.Sprintf("duration %q is finer than a nanosecond", s)}
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, &ValueError{fmt.Sprintf("invalid duration %q (want a number of %s or a Go duration such as 10s or 1m)", s, UnitName(unit))}
	}
	return d, nil
}

// isRFC3339 reports whether s looks like an RFC 3339 date-time ("2024-"):
// four digits and a dash, which no number has.
func isRFC3339(s []byte) bool {
	return len(s) >= 5 && s[4] == '-' && isDigits(s[:4])
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func digitsVal(s []byte) int {
	v := 0
	for _, c := range s {
		v = v*10 + int(c-'0')
	}
	return v
}

// parseRFC3339 converts an RFC 3339 date-time ("2024-01-01T00:00:07Z",
// "2024-01-01T01:00:07.25+01:00"; a lower-case t or z, or a space for the
// T, are accepted as RFC 3339 allows) into Unix nanoseconds, exactly. A
// fraction finer than a nanosecond is numPrecision; a time outside the
// int64 nanosecond range (minRFC3339 to maxRFC3339) is numRange. A second
// of 60 in the last minute of a month in UTC is numLeapSecond: a Unix time
// has no place for it. A second of 60 anywhere else is numSyntax.
//
// A time without an offset is a wall time in loc (an error when loc is
// nil); why then says what is wrong with a wall time loc skips or
// repeats (numLocal). With round, digits beyond nanoseconds round to the
// nearest one, halves up.
func parseRFC3339(s []byte, loc *time.Location, round bool) (ns int64, e numErr, why string) {
	// YYYY-MM-DDTHH:MM:SS
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' ||
		!(s[10] == 'T' || s[10] == 't' || s[10] == ' ') ||
		!isDigits(s[0:4]) || !isDigits(s[5:7]) || !isDigits(s[8:10]) ||
		!isDigits(s[11:13]) || !isDigits(s[14:16]) || !isDigits(s[17:19]) {
		return 0, numSyntax, ""
	}
	year, month, day := digitsVal(s[0:4]), digitsVal(s[5:7]), digitsVal(s[8:10])
	hour, minute, sec := digitsVal(s[11:13]), digitsVal(s[14:16]), digitsVal(s[17:19])
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || sec > 60 {
		return 0, numSyntax, ""
	}
	i := 19
	var frac int64
	lost, up := false, false // digits beyond nanoseconds; they round up
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			switch n := i - start; {
			case n < 9:
				frac += int64(s[i]-'0') * int64(pow10[8-n])
			case s[i] != '0':
				lost = true
				up = up || n == 9 && s[i] >= '5'
			}
		}
		if i == start {
			return 0, numSyntax, ""
		}
	}
	if i == len(s) {
		if loc == nil || sec == 60 {
			return 0, numSyntax, ""
		}
		// A wall time in loc.
		ns, why := localInstant(year, month, day, hour, minute, sec, int(frac), loc)
		if why != "" {
			return 0, numLocal, why
		}
		ns, e = subNanos(ns, lost, up, round)
		return ns, e, ""
	}
	var offset int64
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(s)-i != 6 || s[i+3] != ':' || !isDigits(s[i+1:i+3]) || !isDigits(s[i+4:i+6]) {
			return 0, numSyntax, ""
		}
		oh, om := digitsVal(s[i+1:i+3]), digitsVal(s[i+4:i+6])
		if oh > 23 || om > 59 {
			return 0, numSyntax, ""
		}
		offset = int64(oh*3600 + om*60)
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return 0, numSyntax, ""
	}
	if i != len(s) {
		return 0, numSyntax, ""
	}
	secs := daysFromCivil(int64(year), int64(month), int64(day))*86400 +
		int64(hour*3600+minute*60+sec) - offset
	if sec == 60 {
		// Counted as the next second, a leap second falls on midnight
		// UTC at the start of a month.
		if secs%86400 == 0 && time.Unix(secs, 0).UTC().Day() == 1 {
			return 0, numLeapSecond, ""
		}
		return 0, numSyntax, ""
	}
	const maxSec = math.MaxInt64 / int64(time.Second) // 9223372036
	if secs > maxSec || secs < -maxSec-1 {
		return 0, numRange, ""
	}
	if secs >= -maxSec {
		ns = secs * 1e9
		if ns > 0 && frac > math.MaxInt64-ns {
			return 0, numRange, ""
		}
		ns += frac
	} else {
		// secs*1e9 alone would overflow; add the fraction first.
		ns = (secs + 1) * 1e9
		f := frac - 1e9
		if f < math.MinInt64-ns {
			return 0, numRange, ""
		}
		ns += f
	}
	ns, e = subNanos(ns, lost, up, round)
	return ns, e, ""
}

// subNanos applies digits finer than a nanosecond to ns: an error unless
// round, else one more nanosecond when they round up.
func subNanos(ns int64, lost, up, round bool) (int64, numErr) {
	switch {
	case lost && !round:
		return 0, numPrecision
	case lost && up:
		if ns == math.MaxInt64 {
			return 0, numRange
		}
		ns++
	}
	return ns, numOK
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(year, month int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to the given
// proleptic Gregorian date (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// appendRFC3339 appends ns (Unix nanoseconds) as an RFC 3339 UTC time with
// as many fraction digits as needed.
func appendRFC3339(dst []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(dst, time.RFC3339Nano)
}
