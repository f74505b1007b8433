package limiters

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"time"
)

// InfDuration is the largest time.Duration, a little over 292 years. A
// Decision reports a RetryAfter, ResetAfter or Delay that does not fit a
// Duration as InfDuration, and the RetryAfter of a request that can never
// pass (ReasonCost) too: either way, no retry within InfDuration succeeds.
const InfDuration = time.Duration(math.MaxInt64)

// A Span is a length of time in whole nanoseconds, from 0 to 2^128-1: long
// enough for any wait a limiter computes exactly, where a time.Duration
// stops a little over 292 years. Hi and Lo are its high and low 64 bits.
type Span struct{ Hi, Lo uint64 }

// maxSpan is the longest Span; a RetryAfter of maxSpan means never.
var maxSpan = Span{math.MaxUint64, math.MaxUint64}

// span64 returns ns nanoseconds as a Span.
func span64(ns uint64) Span { return Span{Lo: ns} }

// Duration returns s as a time.Duration, or InfDuration when it does not
// fit one.
func (s Span) Duration() time.Duration {
	if s.Hi != 0 || s.Lo > math.MaxInt64 {
		return InfDuration
	}
	return time.Duration(s.Lo)
}

// Never reports whether s is the RetryAfter of a request that can never
// pass (ReasonCost): the longest Span.
func (s Span) Never() bool { return s == maxSpan }

// Big returns s as a big.Int number of nanoseconds.
func (s Span) Big() *big.Int {
	b := new(big.Int).SetUint64(s.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(s.Lo))
}

// add returns s+t, saturating at the longest Span (which no sum of the
// waits here reaches).
func (s Span) add(t Span) Span {
	lo, c := bits.Add64(s.Lo, t.Lo, 0)
	hi, c := bits.Add64(s.Hi, t.Hi, c)
	if c != 0 {
		return maxSpan
	}
	return Span{hi, lo}
}

// divCeilSpan returns ceil((hi<<64|lo)/d) for d > 0, in full.
func divCeilSpan(hi, lo, d uint64) Span {
	var qh uint64
	if hi >= d { // rare: a quotient of more than 64 bits
		qh, hi = hi/d, hi%d
	}
	ql, r := bits.Div64(hi, lo, d)
	if r != 0 {
		ql++
		if ql == 0 {
			qh++
		}
	}
	return Span{qh, ql}
}

// Exact holds a Decision's RetryAfter, ResetAfter and Delay in full, for
// when one of them does not fit a time.Duration and the Decision says
// InfDuration. For a request that can never pass (ReasonCost) RetryAfter
// is the longest Span (see Span.Never).
type Exact struct {
	RetryAfter, ResetAfter, Delay Span
}

// setRetry, setReset and setDelay set a field of d to v, saturating, and
// keep v in full in x unless x is nil.
func setRetry(d *Decision, x *Exact, v Span) {
	d.RetryAfter = v.Duration()
	if x != nil {
		x.RetryAfter = v
	}
}

func setReset(d *Decision, x *Exact, v Span) {
	d.ResetAfter = v.Duration()
	if x != nil {
		x.ResetAfter = v
	}
}

func setDelay(d *Decision, x *Exact, v Span) {
	d.Delay = v.Duration()
	if x != nil {
		x.Delay = v
	}
}

// since returns now-then for now >= then as an unsigned count of
// nanoseconds; the difference of two int64 values always fits in a uint64.
func since(now, then int64) uint64 {
	return uint64(now) - uint64(then)
}

// floorDivMod returns q = floor(t/w) and m = t - q*w in [0, w) for w > 0.
// Computing the window start q*w directly can overflow near MinInt64; the
// window index q and offset m cannot.
func floorDivMod(t, w int64) (q, m int64) {
	q, m = t/w, t%w
	if m < 0 {
		q--
		m += w
	}
	return q, m
}

// divCeil128 returns ceil((hi<<64|lo)/d) for d > 0, saturating at MaxUint64.
func divCeil128(hi, lo, d uint64) uint64 {
	if hi >= d {
		return math.MaxUint64
	}
	q, r := bits.Div64(hi, lo, d)
	if r != 0 {
		if q == math.MaxUint64 {
			return q
		}
		q++
	}
	return q
}

// add128 and sub128 do 128-bit arithmetic on (hi, lo) pairs.
func add128(ahi, alo, bhi, blo uint64) (hi, lo uint64) {
	lo, c := bits.Add64(alo, blo, 0)
	hi, _ = bits.Add64(ahi, bhi, c)
	return hi, lo
}

func sub128(ahi, alo, bhi, blo uint64) (hi, lo uint64) {
	lo, b := bits.Sub64(alo, blo, 0)
	hi, _ = bits.Sub64(ahi, bhi, b)
	return hi, lo
}

// less128 reports whether a < b.
func less128(ahi, alo, bhi, blo uint64) bool {
	return ahi < bhi || ahi == bhi && alo < blo
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// State texts render numbers as decimals. A value whose decimal expansion
// ends within maxExactDigits fractional digits is written exactly ("2.4",
// "0.125", and any time in ns, µs, ms or s); any other value is rounded to
// roundDigits fractional digits and marked with a leading "~" ("~0.333").
const (
	maxExactDigits = 9
	roundDigits    = 3
)

// appendRat appends the decimal form of ±(hi<<64|lo)/den, den > 0.
func appendRat(dst []byte, neg bool, hi, lo, den uint64) []byte {
	if hi >= den {
		return appendBigRat(dst, neg, hi, lo, den)
	}
	q, r := bits.Div64(hi, lo, den)
	// Try the exact form first.
	var frac [maxExactDigits]byte
	n := 0
	rem := r
	for rem != 0 && n < maxExactDigits {
		h, l := bits.Mul64(rem, 10)
		var d uint64
		d, rem = bits.Div64(h, l, den)
		frac[n] = byte('0' + d)
		n++
	}
	if rem == 0 {
		if neg && (q != 0 || n > 0) {
			dst = append(dst, '-')
		}
		dst = strconv.AppendUint(dst, q, 10)
		if n > 0 {
			dst = append(dst, '.')
			dst = append(dst, frac[:n]...)
		}
		return dst
	}
	// Round to roundDigits digits, half away from zero.
	const scale = 1000
	h, l := bits.Mul64(r, scale)
	f, fr := bits.Div64(h, l, den)
	if h2, l2 := bits.Mul64(fr, 2); h2 > 0 || l2 >= den {
		f++
	}
	if f == scale {
		if q == math.MaxUint64 {
			return appendBigRat(dst, neg, hi, lo, den)
		}
		q, f = q+1, 0
	}
	dst = append(dst, '~')
	if neg && (q != 0 || f != 0) {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, q, 10)
	dst = append(dst, '.')
	dst = append(dst, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	return dst
}

// appendBigRat is the slow path of appendRat for quotients beyond 64 bits.
func appendBigRat(dst []byte, neg bool, hi, lo, den uint64) []byte {
	num := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	num.Or(num, new(big.Int).SetUint64(lo))
	d := new(big.Int).SetUint64(den)
	v := new(big.Rat).SetFrac(num, d)
	if neg {
		v.Neg(v)
	}
	if v.IsInt() {
		return v.Num().Append(dst, 10)
	}
	// Quotients this large never need more than the rounded form.
	dst = append(dst, '~')
	return append(dst, v.FloatString(roundDigits)...)
}

// UnitRFC3339, given as the unit of a state text (Table.AllowExplain),
// writes its times as RFC 3339 UTC times ("2024-03-10T14:00:00.12Z")
// rather than as numbers of a unit.
const UnitRFC3339 time.Duration = math.MinInt64

// appendTime appends the time ns: a decimal number of units, or an RFC 3339
// time for UnitRFC3339.
func appendTime(dst []byte, ns int64, unit time.Duration) []byte {
	if ns < 0 {
		return appendPoint(dst, true, 0, -uint64(ns), unit)
	}
	return appendPoint(dst, false, 0, uint64(ns), unit)
}

// appendPoint appends the time ±(hi, lo) ns as appendTime does. A time
// beyond the int64 range (a window's end) is written as a number of
// seconds even for UnitRFC3339.
func appendPoint(dst []byte, neg bool, hi, lo uint64, unit time.Duration) []byte {
	if unit == UnitRFC3339 {
		if hi == 0 && (lo <= math.MaxInt64 || neg && lo == 1<<63) {
			v := int64(lo)
			if neg {
				v = -v
			}
			return time.Unix(0, v).UTC().AppendFormat(dst, time.RFC3339Nano)
		}
		unit = time.Second
	}
	if unit <= 0 {
		unit = time.Second
	}
	return appendRat(dst, neg, hi, lo, uint64(unit))
}

// appendWindowSpan appends "start,end" for the window [k*w, (k+1)*w) as
// decimal numbers of units; the bounds may lie outside the int64 range by
// less than one window.
func appendWindowSpan(dst []byte, k, w int64, unit time.Duration) []byte {
	neg := k < 0
	a := uint64(k)
	if neg {
		a = -a
	}
	hi, lo := bits.Mul64(a, uint64(w))
	dst = appendPoint(dst, neg, hi, lo, unit)
	dst = append(dst, ',')
	// end = start + w
	if !neg {
		hi, lo = add128(hi, lo, 0, uint64(w))
	} else if less128(hi, lo, 0, uint64(w)) {
		hi, lo = sub128(0, uint64(w), hi, lo)
		neg = false
	} else {
		hi, lo = sub128(hi, lo, 0, uint64(w))
	}
	return appendPoint(dst, neg, hi, lo, unit)
}
