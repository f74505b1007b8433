package traces

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // zones on machines without zoneinfo
)

// times reads a one-column-of-times CSV trace and returns each event's
// time, or the first error.
func times(t *testing.T, opts Options, ts ...string) ([]int64, error) {
	t.Helper()
	text := "user,timestamp\n"
	for _, s := range ts {
		if strings.ContainsAny(s, ",\"") {
			s = `"` + s + `"`
		}
		text += "u," + s + "\n"
	}
	lines, err := readLines(t, "t.csv", text, opts)
	var out []int64
	for _, l := range lines {
		f := strings.Fields(l)
		var v int64
		for _, c := range f[len(f)-2] {
			v = v*10 + int64(c-'0')
		}
		if strings.HasPrefix(f[len(f)-2], "-") {
			t.Fatalf("negative time in %q", l)
		}
		out = append(out, v)
	}
	return out, err
}

func unixNs(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

func TestTimeFormatsAuto(t *testing.T) {
	got, err := times(t, Options{}, "2024-01-01 00:00:07", "2024-01-01T00:00:08.5", "2024-01-01 00:00:09+01:00")
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{unixNs("2024-01-01T00:00:07Z"), unixNs("2024-01-01T00:00:08.5Z"), unixNs("2023-12-31T23:00:09Z")}
	if !equal(got, want) {
		t.Errorf("auto: %v, want %v", got, want)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	got, err = times(t, Options{Location: berlin}, "2024-01-01 00:00:07", "2024-07-01 00:00:07", "2024-07-01T00:00:07Z")
	if err != nil {
		t.Fatal(err)
	}
	want = []int64{unixNs("2023-12-31T23:00:07Z"), unixNs("2024-06-30T22:00:07Z"), unixNs("2024-07-01T00:00:07Z")}
	if !equal(got, want) {
		t.Errorf("auto in Berlin: %v, want %v", got, want)
	}
	if _, err := times(t, Options{TimeFormat: "rfc3339"}, "2024-01-01 00:00:07"); err == nil || !strings.Contains(err.Error(), "invalid RFC 3339 timestamp") {
		t.Errorf("rfc3339 without an offset: %v", err)
	}
}

// TestTimeFormatLayoutBerlinDST reads local times with a layout across
// both daylight saving changes of 2024 in Europe/Berlin.
func TestTimeFormatLayoutBerlinDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{TimeFormat: "2006-01-02 15:04:05", Location: berlin}
	got, err := times(t, opts,
		"2024-03-31 01:59:59", // CET, +01:00
		"2024-03-31 03:00:00", // CEST, +02:00: one second later
		"2024-10-27 01:59:59", // CEST
		"2024-10-27 03:00:00", // CET again: 1 h 1 s later
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{
		unixNs("2024-03-31T00:59:59Z"), unixNs("2024-03-31T01:00:00Z"),
		unixNs("2024-10-26T23:59:59Z"), unixNs("2024-10-27T02:00:00Z"),
	}
	if !equal(got, want) {
		t.Errorf("across the changes: %v, want %v", got, want)
	}
	if _, err := times(t, opts, "2024-03-31 02:30:00"); err == nil || !strings.Contains(err.Error(), `local time "2024-03-31 02:30:00" does not exist in Europe/Berlin`) {
		t.Errorf("a skipped time: %v", err)
	}
	if _, err := times(t, opts, "2024-10-27 02:30:00"); err == nil || !strings.Contains(err.Error(), `local time "2024-10-27 02:30:00" is ambiguous in Europe/Berlin`) {
		t.Errorf("a repeated time: %v", err)
	}
	// The same through auto's RFC 3339 without an offset.
	if _, err := times(t, Options{Location: berlin}, "2024-10-27T02:30:00"); err == nil || !strings.Contains(err.Error(), "is ambiguous") {
		t.Errorf("auto, a repeated time: %v", err)
	}
}

func TestTimeFormatsOther(t *testing.T) {
	got, err := times(t, Options{TimeFormat: "unix-ms"}, "1710064800120", "1710064800121")
	if err != nil || !equal(got, []int64{1710064800120e6, 1710064800121e6}) {
		t.Errorf("unix-ms: %v, %v", got, err)
	}
	got, err = times(t, Options{TimeFormat: "unix", Unit: time.Millisecond}, "1710064800.5")
	if err != nil || !equal(got, []int64{1710064800500e6}) {
		t.Errorf("unix beats --unit: %v, %v", got, err)
	}
	got, err = times(t, Options{TimeFormat: "clf"}, "10/Oct/2024:13:55:36 +0200")
	if err != nil || !equal(got, []int64{unixNs("2024-10-10T11:55:36Z")}) {
		t.Errorf("clf: %v, %v", got, err)
	}
	if _, err := times(t, Options{TimeFormat: "clf"}, "2024-10-10"); err == nil || !strings.Contains(err.Error(), `does not match the time format "02/Jan/2006:15:04:05 -0700"`) {
		t.Errorf("clf mismatch: %v", err)
	}
	// An epoch in a finer unit than the trace's: the error says which, and
	// the time format of that unit reads it.
	for _, c := range []struct {
		unit      time.Duration
		text      string
		epochUnit time.Duration
		name      string
		format    string
	}{
		{0, "1710064800123", time.Millisecond, "milliseconds", TimeFormatUnixMs},
		{time.Millisecond, "1710064800123456", time.Microsecond, "microseconds", TimeFormatUnixUs},
		{0, "1710064800123456789", time.Nanosecond, "nanoseconds", TimeFormatUnixNs},
	} {
		_, err := times(t, Options{Unit: c.unit}, c.text)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.EpochUnit != c.epochUnit || !strings.HasSuffix(pe.Msg, "; it looks like epoch "+c.name) {
			t.Errorf("%s in %v: %#v", c.text, c.unit, err)
		}
		got, err := times(t, Options{Unit: c.unit, TimeFormat: c.format}, c.text)
		if err != nil || len(got) != 1 {
			t.Errorf("%s as %s: %v, %v", c.text, c.format, got, err)
		}
	}
	// A number out of range for other reasons has no such hint.
	for _, text := range []string{"99999999999999999999999", "1710064800123.5"} {
		var pe *ParseError
		if _, err := times(t, Options{}, text); !errors.As(err, &pe) || pe.EpochUnit != 0 || strings.Contains(pe.Msg, "epoch") {
			t.Errorf("%s: %#v", text, err)
		}
	}
	for _, bad := range []string{"nonsense", "yyyy-mm-dd"} {
		if _, err := NewReader(strings.NewReader("user,timestamp\n"), "t.csv", Options{TimeFormat: bad}); err == nil || !strings.Contains(err.Error(), "unknown time format") {
			t.Errorf("time format %q: %v", bad, err)
		}
	}
}

func TestTimeRound(t *testing.T) {
	if _, err := times(t, Options{}, "1.0000000005"); err == nil {
		t.Error("sub-nanosecond digits without rounding: no error")
	}
	got, err := times(t, Options{TimeRound: true}, "1.0000000005", "1.00000000049", "2.99999999999")
	if err != nil || !equal(got, []int64{1000000001, 1000000000, 3000000000}) {
		t.Errorf("round numbers: %v, %v", got, err)
	}
	got, err = times(t, Options{TimeRound: true}, "2024-01-01T00:00:00.0000000005Z", "2024-01-01T00:00:00.9999999996Z")
	if err != nil || !equal(got, []int64{unixNs("2024-01-01T00:00:00.000000001Z"), unixNs("2024-01-01T00:00:01Z")}) {
		t.Errorf("round RFC 3339: %v, %v", got, err)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
