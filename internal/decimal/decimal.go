// Package decimal reads decimal numbers as written ("12", "-0.4",
// "1.5e3", ".5") exactly, never through a floating-point number. It is the
// one lexer behind the trace reader's timestamps and durations and the
// limiters' rates; each caller converts the Number to what it needs.
package decimal

// MaxSig is the most significant digits a Number's mantissa holds.
const MaxSig = 19

// MaxExp bounds the exponent part of a text ("1e1000"): a larger one
// sets Number.Huge, so that no text makes a caller compute a huge power.
const MaxExp = 1000

// A Number is the value (-1)^Neg × Mant × 10^Exp of a decimal text.
type Number struct {
	Neg  bool
	Mant uint64 // at most MaxSig significant digits
	Exp  int
	// Lost reports non-zero digits beyond the MaxSig significant ones
	// Mant holds: Mant × 10^Exp is then not the exact value.
	Lost bool
	// Huge reports an exponent part beyond MaxExp; Exp then holds it
	// saturated, a little beyond MaxExp.
	Huge bool
}

// Parse reads s: an optional sign, digits with an optional fraction (at
// least one digit in all), and an optional exponent ("e", "E", an
// optional sign, digits). ok is false when s is not such a number.
func Parse[T ~string | ~[]byte](s T) (n Number, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		n.Neg = s[i] == '-'
		i++
	}
	sawDigit := false
	sig := 0 // significant digits in Mant
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		sawDigit = true
		d := uint64(s[i] - '0')
		if sig < MaxSig {
			n.Mant = n.Mant*10 + d
			if n.Mant != 0 {
				sig++
			}
		} else {
			n.Exp++
			n.Lost = n.Lost || d != 0
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			sawDigit = true
			d := uint64(s[i] - '0')
			if sig < MaxSig {
				n.Mant = n.Mant*10 + d
				if n.Mant != 0 {
					sig++
				}
				n.Exp--
			} else {
				n.Lost = n.Lost || d != 0
			}
		}
	}
	if !sawDigit {
		return Number{}, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start := i
		e := 0
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if e <= MaxExp {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return Number{}, false
		}
		if e > MaxExp {
			n.Huge = true
		}
		if neg {
			e = -e
		}
		n.Exp += e
	}
	if i != len(s) {
		return Number{}, false
	}
	return n, true
}
