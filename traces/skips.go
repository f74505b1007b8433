package traces

import (
	"fmt"
	"io"
	"strconv"
)

// A SkipReport tells of the records a lenient read skips: the first Max
// on W one by one, as they are skipped (Skip, Options.OnSkip), the
// others as a count at the end (Finish). Text is a skipped record's
// message.
type SkipReport struct {
	W    io.Writer
	Max  int
	Text func(error) string
	told []string
}

// Skip tells of err, a record skipped, unless Max were told of already.
func (r *SkipReport) Skip(err error) {
	if len(r.told) < r.Max {
		r.Tell(r.Text(err))
	}
}

// Tell tells of a skipped record by its message: one skipped by a read
// of its own (a shard's).
func (r *SkipReport) Tell(msg string) {
	r.told = append(r.told, msg)
	fmt.Fprintf(r.W, "skipped %s\n", msg)
}

// Told returns the messages told one by one so far.
func (r *SkipReport) Told() []string { return r.told }

// Finish tells how many of the n records skipped in all were not told of
// one by one, and returns the *SkippedError of the n; nil when n is 0.
func (r *SkipReport) Finish(n int) error {
	if more := n - len(r.told); more > 0 {
		fmt.Fprintf(r.W, "and %s more skipped\n", strconv.Itoa(more))
	}
	if n > 0 {
		return &SkippedError{N: n}
	}
	return nil
}

// A SkippedError reports that a lenient read skipped N bad records: the
// output is complete for the records it read.
type SkippedError struct{ N int }

func (e *SkippedError) Error() string {
	if e.N == 1 {
		return "skipped 1 bad row"
	}
	return fmt.Sprintf("skipped %d bad rows", e.N)
}
