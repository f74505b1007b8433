package traces

import (
	"errors"
	"strings"
	"testing"
)

// TestSkipReport: the first Max skipped records are told of one by one,
// the others counted at the end, and the error counts them all.
func TestSkipReport(t *testing.T) {
	var b strings.Builder
	r := &SkipReport{W: &b, Max: 2, Text: func(err error) string { return err.Error() }}
	for _, msg := range []string{"a", "b", "c"} {
		r.Skip(errors.New(msg))
	}
	err := r.Finish(3)
	if want := "skipped a\nskipped b\nand 1 more skipped\n"; b.String() != want {
		t.Errorf("told %q, want %q", b.String(), want)
	}
	if se, ok := err.(*SkippedError); !ok || se.N != 3 || err.Error() != "skipped 3 bad rows" {
		t.Errorf("Finish = %v", err)
	}
	if err := (&SkipReport{W: &b}).Finish(0); err != nil {
		t.Errorf("nothing skipped: %v", err)
	}
}
