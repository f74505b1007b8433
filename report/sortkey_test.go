package report

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortKeys: cells sorted by their keys come in the order a reader
// expects: numbers by value (percentages too, "never" after them), times
// by the instant they name, addresses by their bytes, and each kind
// apart from the others.
func TestSortKeys(t *testing.T) {
	for _, want := range [][]string{
		{"-12.5", "-12", "-5", "-0.5", "-0.05", "0", "0.05", "0.5", "1", "2.5", "9", "10", "10.5", "12", "100", "1234567890123456789012", "never"},
		{"0.5%", "5.0%", "12.5%", "75.0%", "100.0%"},
		// CLF: across days, months and years, and time zones.
		{"09/Nov/2023:23:59:59 +0000", "31/Jan/2024:23:59:59 +0000", "01/Feb/2024:00:00:00 +0000", "10/Oct/2024:13:55:36 +0200",
			"10/Oct/2024:13:55:37 +0200", "[10/Oct/2024:13:55:37.250 +0200]", "10/Oct/2024:12:00:00 +0000", "09/Nov/2024:08:00:00 -0500"},
		// RFC 3339, before 1970 too.
		{"1969-12-31T23:59:59Z", "1969-12-31T23:59:59.5Z", "1970-01-01T00:00:00Z", "2024-10-10T13:00:00+02:00",
			"2024-10-10T11:55:36Z", "2024-10-10T11:55:36.5Z", "2024-10-10T11:55:36.75Z", "2024-10-11T00:00:00Z", "2262-04-12T00:00:00Z"},
		{"9.1.2.3", "10.0.0.2", "10.0.0.10", "10.0.0.10:80", "10.0.0.10:443", "192.168.1.1", "203.0.113.7", "::1", "2001:db8::1", "2001:db8::a", "[2001:db8::a]:8080"},
		// Classes: numbers, times, addresses, text, no value.
		{"-3", "7", "never", "2024-10-10T11:55:36Z", "10.0.0.1", "alice", "u1", "-"},
	} {
		got := slices.Clone(want)
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortStableFunc(got, func(a, b string) int { return strings.Compare(SortKey(a), SortKey(b)) })
		if !slices.Equal(got, want) {
			t.Errorf("sorted by key:\n got %q\nwant %q", got, want)
		}
	}
	// Equal values have equal keys, whatever their text.
	for _, same := range [][2]string{{"1", "1.00"}, {"0", "-0"}, {"007", "7"}, {"2024-10-10T13:55:36+02:00", "10/Oct/2024:11:55:36 +0000"}, {"", "-"}} {
		if a, b := SortKey(same[0]), SortKey(same[1]); a != b {
			t.Errorf("%q and %q: keys %q and %q differ", same[0], same[1], a, b)
		}
	}
	// Text keeps its text, for the page to compare in the reader's
	// language; what only looks like a number is text.
	for _, text := range []string{"alice", "u10", "1.2.3", "12abc", "1,5", "10/Oct/2024", "a b"} {
		if k := SortKey(text); k != string(classText)+text {
			t.Errorf("SortKey(%q) = %q, want text", text, k)
		}
	}
}
