package report

import (
	"encoding/hex"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Sort keys order the cells of a column of the HTML report when its
// header is clicked. A key is a string whose first character is the
// cell's class, so that within a class plain string comparison puts cells
// in order, and across classes numbers come before times, times before
// addresses, addresses before text and empty cells last:
//
//	1  a number: -12.5 < -0.5 < 0 < 0.05 < 2 < 12.5% < 100; "never" after every number
//	3  a time, chronologically: CLF (10/Oct/2024:13:55:36 +0200) and RFC 3339, time zones applied
//	4  an IP address: IPv4 by its octets, then IPv6 by its bytes
//	5  text, which the page compares as text in the reader's language
//	9  no value ("" or "-")
const (
	classNumber  = '1'
	classTime    = '3'
	classAddress = '4'
	classText    = '5'
	classNone    = '9'
)

// SortKey returns the key the HTML report sorts a cell of text by.
func SortKey(text string) string {
	s := strings.TrimSpace(text)
	switch {
	case s == "" || s == "-":
		return string(classNone)
	case s == "never":
		return string(classNumber) + "2" // after every number, as a wait no retry ends
	}
	if k, ok := numberKey(strings.TrimSuffix(strings.TrimPrefix(s, "~"), "%")); ok {
		return string(classNumber) + k
	}
	if t, ok := parseTime(s); ok {
		ns := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
		ns.Add(ns, big.NewInt(int64(t.Nanosecond())))
		k, _ := numberKey(ns.String())
		return string(classTime) + k
	}
	if k, ok := addressKey(s); ok {
		return string(classAddress) + k
	}
	return string(classText) + text
}

// numberKey returns the key of a decimal number ([-+]digits[.digits]):
// "1" and its digits for one not below zero, "0" and its digits
// complemented for a negative one, the digits led by their count before
// the point so that more digits is larger.
func numberKey(s string) (string, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) {
		return "", false
	}
	whole = strings.TrimLeft(whole, "0")
	all := strings.TrimRight(whole+frac, "0")
	if len(whole) > 9999 {
		return "", false
	}
	if all == "" {
		neg = false // -0 is 0
	}
	if !neg {
		return "1" + pad4(len(whole)) + all, true
	}
	// Negative: the larger the magnitude, the smaller the key; "~" ends
	// the digits above any digit, so -12.5 comes before -12.
	b := []byte(all)
	for i, c := range b {
		b[i] = '9' - c + '0'
	}
	return "0" + pad4(9999-len(whole)) + string(b) + "~", true
}

// digits reports whether s is only ASCII digits (or empty).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pad4 writes n in four digits.
func pad4(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", 4-len(s)) + s
}

// parseTime reads an RFC 3339 time or a CLF one (the access logs':
// 10/Oct/2024:13:55:36 +0200, in brackets or not, with a fraction of a
// second or not).
func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("02/Jan/2006:15:04:05 -0700", strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// addressKey returns the key of an IP address, or of one with a port:
// "4" and the four bytes of an IPv4 address, "6" and the sixteen of an
// IPv6 one, in hex, then its zone and its port.
func addressKey(s string) (string, bool) {
	var port uint16
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return "", false
		}
		a, port = ap.Addr(), ap.Port()
	}
	var k string
	if a.Is4() {
		b := a.As4()
		k = "4" + hex.EncodeToString(b[:])
	} else {
		b := a.As16()
		k = "6" + hex.EncodeToString(b[:])
	}
	return k + "%" + a.Zone() + ":" + strconv.Itoa(100000 + int(port))[1:], true
}
