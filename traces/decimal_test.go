package traces

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		unit time.Duration
		want int64
		err  numErr
	}{
		{"0", time.Second, 0, numOK},
		{"7", time.Second, 7e9, numOK},
		{"0.4", time.Second, 4e8, numOK},
		{"1.3", time.Second, 13e8, numOK},
		{"1.5", time.Millisecond, 1_500_000, numOK},
		{"-1.5", time.Second, -15e8, numOK},
		{"+2", time.Second, 2e9, numOK},
		{".5", time.Second, 5e8, numOK},
		{"5.", time.Second, 5e9, numOK},
		{"1e3", time.Second, 1e12, numOK},
		{"1.5E-3", time.Second, 1_500_000, numOK},
		{"12000e-3", time.Second, 12e9, numOK},
		{"0.000000001", time.Second, 1, numOK},
		{"0.0000000010000", time.Second, 1, numOK},
		{"000000000000000000000000007", time.Second, 7e9, numOK},
		{"7.000000000000000000000000000", time.Second, 7e9, numOK},
		{"9223372036.854775807", time.Second, math.MaxInt64, numOK},
		{"-9223372036.854775808", time.Second, math.MinInt64, numOK},
		{"9223372036854775807", time.Nanosecond, math.MaxInt64, numOK},
		{"-9223372036854775808", time.Nanosecond, math.MinInt64, numOK},
		{"9223372036854775808", time.Nanosecond, 0, numRange},
		{"9223372036.854775808", time.Second, 0, numRange},
		{"9223372037", time.Second, 0, numRange},
		{"99999999999999999999", time.Second, 0, numRange},
		{"1e19", time.Nanosecond, 0, numRange},
		{"1e1000000", time.Second, 0, numRange},
		{"0e1000000", time.Second, 0, numOK},
		{"1e-1000000", time.Second, 0, numPrecision},
		{"1.0000000001", time.Second, 0, numPrecision},
		{"0.5", time.Nanosecond, 0, numPrecision},
		{"1.00000000000000000000000001", time.Second, 0, numPrecision},
		{"", time.Second, 0, numSyntax},
		{"-", time.Second, 0, numSyntax},
		{".", time.Second, 0, numSyntax},
		{"1e", time.Second, 0, numSyntax},
		{"1e+", time.Second, 0, numSyntax},
		{"1.2.3", time.Second, 0, numSyntax},
		{"0x10", time.Second, 0, numSyntax},
		{"1_000", time.Second, 0, numSyntax},
		{" 1", time.Second, 0, numSyntax},
		{"NaN", time.Second, 0, numSyntax},
		{"Inf", time.Second, 0, numSyntax},
		{"--1", time.Second, 0, numSyntax},
	}
	for _, tt := range tests {
		got, err := parseDecimal([]byte(tt.in), int64(tt.unit), false)
		if err != tt.err || (err == numOK && got != tt.want) {
			t.Errorf("parseDecimal(%q, %v) = %d, %d; want %d, %d", tt.in, tt.unit, got, err, tt.want, tt.err)
		}
	}
}

func TestAppendDecimal(t *testing.T) {
	tests := []struct {
		ns   int64
		unit time.Duration
		want string
	}{
		{12e9, time.Second, "12"},
		{15e8, time.Second, "1.5"},
		{-1e9, time.Second, "-1"},
		{1, time.Second, "0.000000001"},
		{-1, time.Second, "-0.000000001"},
		{0, time.Second, "0"},
		{4e8, time.Second, "0.4"},
		{1_500_000, time.Millisecond, "1.5"},
		{7e9, time.Millisecond, "7000"},
		{math.MaxInt64, time.Second, "9223372036.854775807"},
		{math.MinInt64, time.Second, "-9223372036.854775808"},
		{math.MinInt64, time.Nanosecond, "-9223372036854775808"},
		{90e9, time.Minute, "1.5"},
		{20e9, time.Minute, "0.333333333333333333333333333333"},
		{5e9, 0, "5"},
	}
	for _, tt := range tests {
		if got := string(AppendDecimal(nil, tt.ns, tt.unit)); got != tt.want {
			t.Errorf("AppendDecimal(%d, %v) = %q, want %q", tt.ns, tt.unit, got, tt.want)
		}
	}
}

// TestDecimalRoundTrip checks that parsing what AppendDecimal writes gives
// the same nanoseconds back, in every unit.
func TestDecimalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond, time.Nanosecond} {
		for i := range 20000 {
			ns := int64(rng.Uint64())
			if i%2 == 0 {
				ns >>= rng.IntN(63)
			}
			text := AppendDecimal(nil, ns, unit)
			got, err := parseDecimal(text, int64(unit), false)
			if err != numOK || got != ns {
				t.Fatalf("unit %v: %d -> %q -> %d, %d", unit, ns, text, got, err)
			}
			if i := bytes.IndexByte(text, '.'); i >= 0 && (text[len(text)-1] == '0' || i == len(text)-1) {
				t.Fatalf("unit %v: %d -> %q has a trailing zero or point", unit, ns, text)
			}
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		unit time.Duration
		want time.Duration
		err  string
	}{
		{"10", time.Second, 10 * time.Second, ""},
		{"2.5", time.Second, 2500 * time.Millisecond, ""},
		{"10", time.Millisecond, 10 * time.Millisecond, ""},
		{"10s", time.Millisecond, 10 * time.Second, ""},
		{"1m", time.Second, time.Minute, ""},
		{"1m30.5s", time.Second, 90500 * time.Millisecond, ""},
		{"0", time.Second, 0, ""},
		{"-3", time.Second, -3 * time.Second, ""},
		{" 10 ", 0, 10 * time.Second, ""},
		{"", time.Second, 0, "traces: empty duration"},
		{"abc", time.Second, 0, `traces: invalid duration "abc" (want a number of s or a Go duration such as 10s or 1m)`},
		{"10x", time.Millisecond, 0, `traces: invalid duration "10x" (want a number of ms or a Go duration such as 10s or 1m)`},
		{"1e30", time.Second, 0, `traces: duration "1e30" out of range (at most 2562047h47m16.854775807s)`},
		{"0.0000000001", time.Second, 0, `traces: duration "0.0000000001" is finer than a nanosecond`},
		{"9999999999h", time.Second, 0, `traces: invalid duration "9999999999h" (want a number of s or a Go duration such as 10s or 1m)`},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in, tt.unit)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseDuration(%q, %v) error = %v, want %s", tt.in, tt.unit, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q, %v) = %v, %v; want %v", tt.in, tt.unit, got, err, tt.want)
		}
	}
}

func TestParseRFC3339(t *testing.T) {
	valid := []string{
		"2024-01-01T00:00:07Z",
		"2024-01-01t00:00:07z",
		"2024-01-01 00:00:07Z",
		"2024-02-29T23:59:59.999999999Z",
		"2024-01-01T01:00:07.25+01:00",
		"1970-01-01T00:00:00Z",
		"1969-12-31T23:59:59Z",
		"1900-01-01T00:00:00.000000001Z",
		"1700-03-01T12:00:00Z",
		"1969-12-31T23:59:59.5-00:30",
		"2262-04-11T23:47:16.854775807Z",
		"1677-09-21T00:12:43.145224192Z",
		"2000-01-01T00:00:00.100000000000Z",
	}
	for _, s := range valid {
		got, err, _ := parseRFC3339([]byte(s), nil, false)
		norm := strings.Replace(strings.ToUpper(s), " ", "T", 1)
		want, perr := time.Parse(time.RFC3339Nano, norm)
		if err != numOK || perr != nil || got != want.UnixNano() {
			t.Errorf("parseRFC3339(%q) = %d, %d; time.Parse: %d, %v", s, got, err, want.UnixNano(), perr)
		}
	}
	bad := []struct {
		in  string
		err numErr
	}{
		{"2024-13-01T00:00:00Z", numSyntax},
		{"2023-02-29T00:00:00Z", numSyntax},
		{"2024-01-01T24:00:00Z", numSyntax},
		{"2024-01-01T00:00:60Z", numSyntax},
		{"2016-12-31T23:59:60Z", numLeapSecond},
		{"2016-12-31T23:59:60.999999999Z", numLeapSecond},
		{"2015-07-01T01:59:60+02:00", numLeapSecond},
		{"1972-06-30T23:59:60Z", numLeapSecond},
		{"2016-12-31T23:59:60+00:01", numSyntax},
		{"2016-12-31T22:59:60Z", numSyntax},
		{"2016-12-30T23:59:60Z", numSyntax},
		{"2016-12-31T23:59:61Z", numSyntax},
		{"2016-12-31T23:59:60", numSyntax},
		{"2024-01-01T00:00:00", numSyntax},
		{"2024-01-01", numSyntax},
		{"2024-01-01T00:00:00.Z", numSyntax},
		{"2024-01-01T00:00:00+0100", numSyntax},
		{"2024-01-01T00:00:00Zjunk", numSyntax},
		{"2024-01-01T00:00:00+24:00", numSyntax},
		{"2262-04-11T23:47:16.854775808Z", numRange},
		{"1677-09-21T00:12:43.145224191Z", numRange},
		{"9999-12-31T23:59:59Z", numRange},
		{"0000-01-01T00:00:00Z", numRange},
		{"2024-01-01T00:00:00.0000000001Z", numPrecision},
	}
	for _, tt := range bad {
		if got, err, _ := parseRFC3339([]byte(tt.in), nil, false); err != tt.err {
			t.Errorf("parseRFC3339(%q) = %d, %d; want error %d", tt.in, got, err, tt.err)
		}
	}
}

func TestParseUnitFormat(t *testing.T) {
	for _, name := range []string{"s", "ms", "us", "ns"} {
		d, err := ParseUnit(name)
		if err != nil || UnitName(d) != name {
			t.Errorf("ParseUnit(%q) = %v, %v; UnitName gives %q", name, d, err, UnitName(d))
		}
	}
	if d, err := ParseUnit("µs"); err != nil || d != time.Microsecond {
		t.Errorf("ParseUnit(µs) = %v, %v", d, err)
	}
	if _, err := ParseUnit("h"); err == nil || err.Error() != `traces: unknown time unit "h" (valid: s, ms, us, ns)` {
		t.Errorf("ParseUnit(h) error = %v", err)
	}
	for _, tt := range []struct {
		in   string
		want Format
	}{{"csv", CSV}, {"YAML", YAML}, {"yml", YAML}, {"jsonl", JSONL}, {"ndjson", JSONL}, {"", FormatAuto}, {"auto", FormatAuto}} {
		if f, err := ParseFormat(tt.in); err != nil || f != tt.want {
			t.Errorf("ParseFormat(%q) = %v, %v", tt.in, f, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || err.Error() != `traces: unknown format "xml" (valid: csv, yaml, jsonl, combined, common, nginx, upstreaminfo, alb, cloudfront, w3c, envoy, haproxy, traefik, caddy)` {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
	for _, info := range Formats() {
		f := info.Format
		if g, err := ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%v.String()) = %v, %v", f, g, err)
		}
	}
	for name, want := range map[string]Format{
		"a.csv": CSV, "a.CSV.gz": CSV, "b.yaml": YAML, "b.yml.gz": YAML, "c.jsonl": JSONL,
		"c.ndjson": JSONL, "-": FormatAuto, "trace": FormatAuto, "x.gz": FormatAuto, "x.txt": FormatAuto,
	} {
		if got := FormatOf(name); got != want {
			t.Errorf("FormatOf(%q) = %v, want %v", name, got, want)
		}
	}
}

// plainSecondsCases are decimals at the edges of plainSeconds' shape.
var plainSecondsCases = []string{
	"0", "0.250", "1728561336.123", "1728561336.123456789", "1728561336.1234567891",
	"9223372035.999999999", "9223372036", "9223372036.854775807", "9223372036.854775808",
	"00000000001", "000000000001", "1.", ".5", "-1", "+1", "1e3", "1.5e3", "", "1.2.3", "12a", "0.000000001",
}

// TestPlainSeconds checks that the reading of plain seconds gives what
// the reading of every decimal does, wherever it takes a text.
func TestPlainSeconds(t *testing.T) {
	for _, s := range plainSecondsCases {
		checkPlainSeconds(t, s)
	}
}

func checkPlainSeconds(t *testing.T, s string) {
	t.Helper()
	ns, ok := plainSeconds([]byte(s))
	if !ok {
		return
	}
	for _, round := range []bool{false, true} {
		if want, e := parseDecimalExact([]byte(s), int64(time.Second), round); e != numOK || want != ns {
			t.Errorf("plainSeconds(%q) = %d, want %d (%v)", s, ns, want, e)
		}
	}
	// And written back, in seconds, it reads as itself.
	text := AppendDecimal(nil, ns, time.Second)
	if back, e := parseDecimalExact(text, int64(time.Second), false); e != numOK || back != ns {
		t.Errorf("AppendDecimal(%d) = %q, which reads as %d (%v)", ns, text, back, e)
	}
}

// FuzzPlainSeconds checks plainSeconds against parseDecimalExact.
func FuzzPlainSeconds(f *testing.F) {
	for _, s := range plainSecondsCases {
		f.Add(s)
	}
	f.Fuzz(checkPlainSeconds)
}
