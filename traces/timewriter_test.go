package traces

import (
	"strings"
	"testing"
	"time"
)

// TestTimeWriter checks that the times a report computes read as the
// trace's own: the first time of each trace written back is its own text,
// and an instant with a fraction the layout has no room for keeps it.
func TestTimeWriter(t *testing.T) {
	tests := []struct {
		name, trace string
		opts        Options
		at          int64 // an instant to write, after the first time's
		want        string
	}{
		{"numbers in seconds", "user,timestamp\nu1,7\n", Options{}, 7_500_000_000, "7.5"},
		{"epoch milliseconds", "user,timestamp\nu1,7000\n", Options{TimeFormat: TimeFormatUnixMs}, 7_500_000_000, "7500"},
		{"RFC 3339 with an offset", "user,timestamp\nu1,2024-03-10T14:00:00+01:00\n", Options{},
			time.Date(2024, 3, 10, 13, 0, 5, 0, time.UTC).UnixNano(), "2024-03-10T14:00:05+01:00"},
		{"an access log", `203.0.113.7 - - [10/Oct/2024:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "-"` + "\n", Options{Format: Combined},
			time.Date(2024, 10, 10, 11, 55, 36, 500_000_000, time.UTC).UnixNano(), "10/Oct/2024:13:55:36.5 +0200"},
		{"a Go layout in a zone", "user,timestamp\nu1,2024-03-10 14:00:00\n", Options{TimeFormat: "2006-01-02 15:04:05", Location: time.FixedZone("CET", 3600)},
			time.Date(2024, 3, 10, 13, 0, 1, 0, time.UTC).UnixNano(), "2024-03-10 14:00:01"},
	}
	for _, tt := range tests {
		r, err := NewReader(strings.NewReader(tt.trace), "t", tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		first := string(ev.TimeText)
		w := r.TimeWriter(ev.TimeText)
		if got := w.Format(ev.Time); got != first {
			t.Errorf("%s: the first time %q is written back as %q", tt.name, first, got)
		}
		if got := w.Format(tt.at); got != tt.want {
			t.Errorf("%s: Format(%d) = %q, want %q", tt.name, tt.at, got, tt.want)
		}
	}
}
