package limiters

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/decimal"
)

// A Rate is an exact rate: N tokens per Per nanoseconds. Both must be
// positive. Rates are never held as floating-point numbers, so ten refills
// of a tenth of a token make exactly one token.
type Rate struct {
	N   int64
	Per time.Duration
}

// Equal reports whether r and s are the same rate as numbers, r.N/r.Per
// = s.N/s.Per, as 1/5s and 2/10s are. Rates that are not Valid are equal
// only when identical.
func (r Rate) Equal(s Rate) bool {
	if !r.Valid() || !s.Valid() {
		return r == s
	}
	h1, l1 := bits.Mul64(uint64(r.N), uint64(s.Per))
	h2, l2 := bits.Mul64(uint64(s.N), uint64(r.Per))
	return h1 == h2 && l1 == l2
}

// Valid reports whether both N and Per are positive.
func (r Rate) Valid() bool {
	return r.N > 0 && r.Per > 0
}

// ParseRate parses a rate. The forms are "X", X tokens per unit, and "X/D",
// X tokens per D, where X is a positive decimal number ("0.2", "3", "2.5",
// "1e3") and D is a positive decimal number of units ("5", "2.5") or a Go
// duration ("10s", "1m30s", "1ms"). Text is converted exactly, never
// through a floating-point number: ParseRate("0.2", time.Second) is 1 token
// per 5s. A unit of 0 or less means time.Second. The result is in lowest
// terms; a rate that does not reduce to N tokens per D nanoseconds with N
// and D below 2^63 is out of range.
func ParseRate(s string, unit time.Duration) (Rate, error) {
	if unit <= 0 {
		unit = time.Second
	}
	text := strings.TrimSpace(s)
	numText, denText, hasDen := strings.Cut(text, "/")
	num, numScale, err := parseDecimal(numText)
	if err != nil {
		return Rate{}, rateError(s, err)
	}
	// The rate is num/numScale tokens per period: n tokens per "per" ns.
	n := num
	per := new(big.Int).Mul(numScale, big.NewInt(int64(unit)))
	if hasDen {
		denText = strings.TrimSpace(denText)
		if denText != "" && isLetter(denText[len(denText)-1]) {
			// num/numScale per pNum/pScale ns.
			pNum, pScale, err := parsePeriod(denText)
			if err != nil {
				return Rate{}, rateError(s, err)
			}
			n = new(big.Int).Mul(num, pScale)
			per = new(big.Int).Mul(numScale, pNum)
		} else {
			den, denScale, err := parseDecimal(denText)
			if err != nil {
				return Rate{}, rateError(s, fmt.Errorf("period: %w", err))
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
		return Rate{}, rateError(s, errRange)
	}
	return Rate{N: n.Int64(), Per: time.Duration(per.Int64())}, nil
}

// errRange reports a number or rate too large or too small to represent.
var errRange = errors.New("out of range (it must reduce to N per D nanoseconds with N and D below 2^63)")

// rateError is the error of ParseRate for the text s. Every out-of-range
// value, the whole rate's or a part's, gets the same message.
func rateError(s string, err error) error {
	if errors.Is(err, errRange) {
		err = errRange
	}
	return policyErrorf("rate", "bad rate %q: %v", s, err)
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == 0xb5 // µ
}

// parseDecimal parses a positive decimal number ("0.2", "3", "1e3") into
// num/scale, exactly.
func parseDecimal(s string) (num, scale *big.Int, err error) {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return nil, nil, fmt.Errorf("%q is not a finite number", s)
	}
	if s == "" {
		return nil, nil, fmt.Errorf("empty number")
	}
	n, ok := decimal.Parse(s)
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%q is not a decimal number (want digits with an optional fraction and exponent, like 0.2, 3 or 1e3)", s)
	case n.Neg:
		return nil, nil, fmt.Errorf("must be positive, got %s", s)
	case n.Huge:
		return nil, nil, errRange
	case n.Lost:
		return nil, nil, fmt.Errorf("%q has too many digits", s)
	case n.Mant == 0:
		return nil, nil, fmt.Errorf("must be positive, got %s", s)
	}
	num, scale = exactValue(n)
	return num, scale, nil
}

// exactValue returns n as num/scale.
func exactValue(n decimal.Number) (num, scale *big.Int) {
	num, scale = new(big.Int).SetUint64(n.Mant), big.NewInt(1)
	if n.Exp > 0 {
		num.Mul(num, pow10(n.Exp))
	} else if n.Exp < 0 {
		scale = pow10(-n.Exp)
	}
	return num, scale
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// periodUnits are the units of a Go duration, in nanoseconds.
var periodUnits = map[string]int64{
	"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9,
}

// parsePeriod parses a Go duration ("10s", "1m30s", "1.5ms") into
// num/scale nanoseconds. It reads what time.ParseDuration reads, but
// exactly and without its bound of 2^63ns: "1000/1000000000000s" is a
// rate in range, one token per 10^9 s.
func parsePeriod(s string) (num, scale *big.Int, err error) {
	bad := fmt.Errorf("bad period %q: want a number of units or a duration like 10s", s)
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		if t[0] == '-' {
			return nil, nil, fmt.Errorf("period must be positive")
		}
		t = t[1:]
	}
	total := new(big.Rat)
	for t != "" {
		i := 0
		for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
			i++
		}
		j := i
		for j < len(t) && !(t[j] >= '0' && t[j] <= '9' || t[j] == '.') {
			j++
		}
		unit, ok := periodUnits[t[i:j]]
		if i == 0 || !ok {
			return nil, nil, bad
		}
		v, err := parsePeriodNumber(t[:i])
		if err != nil {
			return nil, nil, bad
		}
		total.Add(total, v.Mul(v, new(big.Rat).SetInt64(unit)))
		t = t[j:]
	}
	if total.Sign() == 0 {
		return nil, nil, fmt.Errorf("period must be positive")
	}
	return new(big.Int).Set(total.Num()), new(big.Int).Set(total.Denom()), nil
}

// parsePeriodNumber parses the number of one part of a Go duration: digits
// with an optional fraction, possibly zero ("0s", "1.5h", ".5m").
func parsePeriodNumber(s string) (*big.Rat, error) {
	n, ok := decimal.Parse(s)
	if !ok || n.Lost || s[0] == '+' || s[0] == '-' || strings.ContainsAny(s, "eE") {
		return nil, errors.New("not a number")
	}
	num, scale := exactValue(n)
	return new(big.Rat).SetFrac(num, scale), nil
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
