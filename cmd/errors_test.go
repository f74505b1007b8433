package cmd

import (
	"fmt"
	"testing"

	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
		code int
	}{
		{&traces.ParseError{File: "t.csv", Line: 4, Column: 2, Msg: "bad"}, "t.csv:4:2: bad", 1},
		{fmt.Errorf("reading: %w", &traces.ParseError{File: "t.csv", Line: 4, Msg: "bad"}), "t.csv:4: bad", 1},
		{&sim.ForgottenKeyError{File: "t.csv", Line: 9, Key: "k3", TimeText: "15"},
			`t.csv:9: key "k3" comes back at 15, earlier than the time from which it was forgotten as idle: the trace goes back in time too far to forget idle keys; rerun with --keep-keys`, 1},
		{usageErrorf("--limit: limit must be positive, got 0"), "--limit: limit must be positive, got 0", 2},
		{fmt.Errorf("limiters: bad"), "bad", 1},
		{&traces.SkippedError{N: 2}, "skipped 2 bad rows", 3},
	}
	for _, tt := range tests {
		if got := ErrorText(tt.err); got != tt.want {
			t.Errorf("ErrorText(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if got := ExitCode(tt.err); got != tt.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}
