package limiters

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// A Rate is an exact rate: N tokens per Per nanoseconds. Both must be
// positive. Rates are never held as floating-point numbers, so ten refills
// of a tenth of a token make exactly one token.
type Rate struct {
	N   int64
	Per time.Duration
}

// Valid reports whether both N and Per are positive.
func (r Rate) Valid() bool {
	return r.N > 0 && r.Per > 0
}

// ParseRate parses a rate. The forms are "X", X tokens per unit, and "X/D",
// X tokens per D, where X is a positive decimal ("0.2", "3", "2.5") and D is
// a positive decimal number of units ("5", "2.5") or a Go duration ("10s",
// "1m", "1ms"). Decimal text is converted exactly, never through a
// floating-point number: ParseRate("0.2", time.Second) is 1 token per 5s.
// A unit of 0 or less means time.Second. The result is in lowest terms.
func ParseRate(s string, unit time.Duration) (Rate, error) {
	if unit <= 0 {
		unit = time.Second
	}
	text := strings.TrimSpace(s)
	numText, denText, hasDen := strings.Cut(text, "/")
	num, numScale, err := parseDecimal(numText)
	if err != nil {
		return Rate{}, fmt.Errorf("limiters: bad rate %q: %v", s, err)
	}
	// The rate is num/numScale tokens per period.
	n := num
	per := new(big.Int).Mul(numScale, big.NewInt(int64(unit)))
	if hasDen {
		denText = strings.TrimSpace(denText)
		if denText != "" && isLetter(denText[len(denText)-1]) {
			d, err := time.ParseDuration(denText)
			if err != nil {
				return Rate{}, fmt.Errorf("limiters: bad rate %q: bad period %q: want a number of units or a duration like 10s", s, denText)
			}
			if d <= 0 {
				return Rate{}, fmt.Errorf("limiters: bad rate %q: period must be positive", s)
			}
			per = new(big.Int).Mul(numScale, big.NewInt(int64(d)))
		} else {
			den, denScale, err := parseDecimal(denText)
			if err != nil {
				return Rate{}, fmt.Errorf("limiters: bad rate %q: period: %v", s, err)
			}
			// num/numScale per den/denScale units.
			n = new(big.Int).Mul(num, denScale)
			per = new(big.Int).Mul(numScale, den)
			per.Mul(per, big.NewInt(int64(unit)))
		}
	}
	g := new(big.Int).GCD(nil, nil, n, per)
	n.Quo(n, g)
	per.Quo(per, g)
	if !n.IsInt64() || !per.IsInt64() {
		return Rate{}, fmt.Errorf("limiters: bad rate %q: out of range (it must reduce to N per D nanoseconds with N and D below 2^63)", s)
	}
	return Rate{N: n.Int64(), Per: time.Duration(per.Int64())}, nil
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == 0xb5 // µ
}

// parseDecimal parses a positive decimal "123" or "1.25" into 125 and 100.
func parseDecimal(s string) (num, scale *big.Int, err error) {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return nil, nil, fmt.Errorf("%q is not a finite number", s)
	}
	if s == "" {
		return nil, nil, fmt.Errorf("empty number")
	}
	if s[0] == '-' {
		return nil, nil, fmt.Errorf("must be positive, got %s", s)
	}
	digits := 0
	frac := -1
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return nil, nil, fmt.Errorf("%q is not a decimal number (want digits with an optional fraction, like 0.2 or 3)", s)
		}
	}
	if digits == 0 {
		return nil, nil, fmt.Errorf("%q is not a decimal number", s)
	}
	if digits > 60 {
		return nil, nil, fmt.Errorf("%q has too many digits", s)
	}
	num, _ = new(big.Int).SetString(b.String(), 10)
	if num.Sign() == 0 {
		return nil, nil, fmt.Errorf("must be positive, got %s", s)
	}
	if frac < 0 {
		frac = 0
	}
	scale = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(frac)), nil)
	return num, scale, nil
}

// Format renders the rate in tokens per unit: an exact decimal when one
// exists ("0.2", "3", "0.125"), otherwise a reduced fraction ("1/3"). A
// unit of 0 or less means time.Second.
func (r Rate) Format(unit time.Duration) string {
	if !r.Valid() {
		return fmt.Sprintf("%d/%dns", r.N, int64(r.Per))
	}
	if unit <= 0 {
		unit = time.Second
	}
	v := new(big.Rat).SetFrac(
		new(big.Int).Mul(big.NewInt(r.N), big.NewInt(int64(unit))),
		big.NewInt(int64(r.Per)))
	if v.IsInt() {
		return v.Num().String()
	}
	d := new(big.Int).Set(v.Denom())
	digits := 0
	var m big.Int
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		n := 0
		for {
			q, rem := new(big.Int).QuoRem(d, bp, &m)
			if rem.Sign() != 0 {
				break
			}
			d = q
			n++
		}
		digits = max(digits, n)
	}
	if d.Cmp(big.NewInt(1)) == 0 {
		return v.FloatString(digits)
	}
	return v.Num().String() + "/" + v.Denom().String()
}
