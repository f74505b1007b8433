package partial

import (
	"io"

	"github.com/ratesim/ratesim/traces"
)

// A MergedTrace is the trace whose shards a Merger merges, as a command
// that replays it reads it: no event of its own, as the merge of the
// shards' results stands in for the replay, and the trace's kind of
// times, its time writer and whether it was sorted as the partials'
// header says.
type MergedTrace struct{ m *Merger }

// Trace returns the trace the partials are of.
func (m *Merger) Trace() MergedTrace { return MergedTrace{m} }

// Next returns io.EOF: the merge yields the replay's rows and report,
// not the trace's events.
func (MergedTrace) Next() (*traces.Event, error) { return nil, io.EOF }

// RFC3339 reports whether the trace's timestamps are RFC 3339 times.
func (t MergedTrace) RFC3339() bool { return t.m.Header().Trace.RFC3339 }

// TimeWriter writes instants as the trace writes its times.
func (t MergedTrace) TimeWriter() traces.TimeWriter { return t.m.Header().Trace.Times }

// Sorted reports whether the shards replayed the trace sorted.
func (t MergedTrace) Sorted() bool { return t.m.Header().Trace.Sorted }

// SkipOtherUsers does nothing: there are no records to pass over.
func (MergedTrace) SkipOtherUsers([]string) {}

// Close does nothing: the partials' files are their opener's to close.
func (MergedTrace) Close() error { return nil }
