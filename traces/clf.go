package traces

// clfSeconds reads ":ss[.f] " (the seconds of a time, and the space
// before its offset) into whole seconds and nanoseconds.
func clfSeconds(s []byte) (sec, frac int64, ok bool) {
	if len(s) == 0 || s[len(s)-1] != ' ' {
		return 0, 0, false
	}
	return wallSeconds(s[:len(s)-1])
}

// wallSeconds reads ":ss" with an optional fraction of a second, the
// end of a CLF or HAProxy time after its minutes.
func wallSeconds(s []byte) (sec, frac int64, ok bool) {
	if len(s) < 3 || s[0] != ':' || !isDigits(s[1:3]) {
		return 0, 0, false
	}
	sec = int64(s[1]-'0')*10 + int64(s[2]-'0')
	if sec > 59 {
		return 0, 0, false
	}
	f := s[3:]
	if len(f) == 0 {
		return sec, 0, true
	}
	if f[0] != '.' || len(f) == 1 || len(f) > 10 || !isDigits(f[1:]) {
		return 0, 0, false
	}
	for k, d := range f[1:] {
		frac += int64(d-'0') * int64(pow10[8-k])
	}
	return sec, frac, true
}

// floorDiv64 is a/b rounded down, for b > 0.
func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// months are the month names of the Common Log Format, in order.
var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseCLF converts a Common Log Format time, dd/Mon/yyyy:hh:mm:ss[.f]
// +hhmm, into Unix nanoseconds.
func parseCLF(s []byte) (int64, bool) {
	if len(s) < 26 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' || s[17] != ':' ||
		!isDigits(s[0:2]) || !isDigits(s[7:11]) || !isDigits(s[12:14]) || !isDigits(s[15:17]) || !isDigits(s[18:20]) {
		return 0, false
	}
	month := 0
	for m, name := range months {
		if string(s[3:6]) == name {
			month = m + 1
		}
	}
	if month == 0 {
		return 0, false
	}
	i := 20
	var frac int64
	if s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if k := i - start; k < 9 {
				frac += int64(s[i]-'0') * int64(pow10[8-k])
			} else if s[i] != '0' {
				return 0, false // finer than a nanosecond
			}
		}
		if i == start {
			return 0, false
		}
	}
	// The offset: " +hhmm".
	if len(s)-i != 6 || s[i] != ' ' || (s[i+1] != '+' && s[i+1] != '-') || !isDigits(s[i+2:i+6]) {
		return 0, false
	}
	year, day := digitsVal(s[7:11]), digitsVal(s[0:2])
	hour, minute, sec := digitsVal(s[12:14]), digitsVal(s[15:17]), digitsVal(s[18:20])
	oh, om := digitsVal(s[i+2:i+4]), digitsVal(s[i+4:i+6])
	if day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 || oh > 23 || om > 59 {
		return 0, false
	}
	offset := int64(oh*3600 + om*60)
	if s[i+1] == '-' {
		offset = -offset
	}
	secs := daysFromCivil(int64(year), int64(month), int64(day))*86400 + int64(hour*3600+minute*60+sec) - offset
	// Four-digit years keep secs*1e9 inside the int64 range only from
	// 1678 to 2261.
	const maxSec = 9223372035 // the last whole second int64 nanoseconds hold
	if secs > maxSec || secs < -maxSec {
		return 0, false
	}
	return secs*1e9 + frac, true
}
