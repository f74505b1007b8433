package progress

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"
)

// TestLine checks the progress line: the share of the bytes read, the
// rate and the time left, the requests and the counts, the stage, and the
// final line with the true counts and no estimate.
func TestLine(t *testing.T) {
	attempts := new(atomic.Int64)
	attempts.Store(12)
	m := &Meter{opts: Options{Name: "t.csv", Bytes: func() (int64, int64) { return 250e6, 1e9 },
		Counts: []Counter{{Noun: "attempts", N: attempts}}}}
	m.events.Store(2100000)
	m.Stage("second read")
	if got, want := m.line(5*time.Second, false), "ratesim: t.csv (second read): 25% of 1.0 GB at 50 MB/s, 15s left; 2100000 requests, 12 attempts (5s)"; got != want {
		t.Errorf("line = %q\nwant   %q", got, want)
	}
	if got, want := m.line(5*time.Second, true), "ratesim: t.csv: 2100000 requests, 12 attempts (5s)"; got != want {
		t.Errorf("final line = %q, want %q", got, want)
	}
	m.opts.Bytes = func() (int64, int64) { return 3000, -1 }
	if got, want := m.line(time.Second, false), "ratesim: t.csv (second read): 3 kB at 3 kB/s; 2100000 requests, 12 attempts (1s)"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
}

// TestQuick checks that a command done within Delay shows nothing.
func TestQuick(t *testing.T) {
	var b bytes.Buffer
	m := Start(&b, Options{Name: "t.csv"})
	m.Stop()
	if b.Len() != 0 {
		t.Errorf("a quick command showed %q", b.String())
	}
}
