package partial

import (
	"fmt"
	"strings"

	"github.com/ratesim/ratesim/sim"
)

// batchRows is how many rows a merge hands on at once.
const batchRows = 4096

// A Merger merges the partials of every shard of one replay, stream by
// stream: the rows of each shard back in the order of the whole trace,
// and their reports into one.
type Merger struct {
	readers []*Reader
	stream  int // the streams merged so far
	skipped int
	shown   []string
}

// Skipped returns how many records the lenient read of the trace had
// skipped by the end of the stream merged last, and the messages it gave
// of the first of them.
func (m *Merger) Skipped() (int, []string) { return m.skipped, m.shown }

// NewMerger checks that readers are the partials of every shard of one
// replay, each once, written by this version of ratesim, and returns
// their merger.
func NewMerger(version string, readers []*Reader) (*Merger, error) {
	if len(readers) == 0 {
		return nil, fmt.Errorf("partial: no partial to merge")
	}
	first := readers[0]
	h0 := &first.Header
	for _, r := range readers {
		h := &r.Header
		switch {
		case h.Ratesim != version:
			return nil, fmt.Errorf("partial: %s was written by ratesim %s, and this is ratesim %s: merge partials with the version that wrote them", r.Name, h.Ratesim, version)
		case h.Fingerprint != h0.Fingerprint:
			return nil, fmt.Errorf("partial: %s and %s are of different replays, whose results do not merge: %s is of %s, %s of %s",
				first.Name, r.Name, first.Name, describe(h0), r.Name, describe(h))
		case h.Shard.Count != h0.Shard.Count:
			return nil, fmt.Errorf("partial: %s is a shard of %d, %s of %d: merge the shards of one split", first.Name, h0.Shard.Count, r.Name, h.Shard.Count)
		case h.Order != h0.Order:
			return nil, fmt.Errorf("partial: %s is in %s order, %s in %s order", first.Name, h0.Order, r.Name, h.Order)
		case h.Trace.Name != h0.Trace.Name || h.Trace.RFC3339 != h0.Trace.RFC3339 || h.Trace.Sorted != h0.Trace.Sorted:
			return nil, fmt.Errorf("partial: %s and %s read the trace %s differently: it changed between the shards' reads", first.Name, r.Name, h0.Trace.Name)
		}
	}
	n := h0.Shard.Count
	byIndex := make([]*Reader, n)
	for _, r := range readers {
		i := r.Header.Shard.Index
		if i < 0 || i >= n {
			return nil, fmt.Errorf("partial: %s says it is shard %d of %d", r.Name, i, n)
		}
		if byIndex[i] != nil {
			return nil, fmt.Errorf("partial: %s and %s are both shard %d/%d", byIndex[i].Name, r.Name, i, n)
		}
		byIndex[i] = r
	}
	var missing []string
	for i, r := range byIndex {
		if r == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("partial: shard %s missing: a merge needs every shard of the split (%d)", strings.Join(missing, ", "), n)
	}
	return &Merger{readers: byIndex}, nil
}

// describe says in a few words what replay h is of.
func describe(h *Header) string {
	s := "ratesim " + h.Command + " " + strings.Join(h.Args, " ")
	if h.Config != nil {
		s += fmt.Sprintf(" (with %s as it was then)", h.Config.Path)
	}
	return strings.TrimSpace(s)
}

// Header returns the header the partials share.
func (m *Merger) Header() *Header { return &m.readers[0].Header }

// Next merges the next stream: it calls emit with the rows of every
// shard in the order of the whole trace, in batches of a replay of lanes
// lanes whose rows carry with attributes, and returns the merged report.
func (m *Merger) Next(lanes, with int, emit func(*sim.Batch) error) (*sim.Part, error) {
	stream := m.stream
	m.stream++
	// The rows of a stream come before its report in each partial: merge
	// them by position, one row ahead of each partial.
	heads := make([]*rowJSON, len(m.readers))
	advance := func(i int) error {
		heads[i] = nil
		rec, err := m.readers[i].peek()
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("partial: %s ends before the report of its replay %d: it was not written whole", m.readers[i].Name, stream+1)
		}
		if rec.Row != nil {
			if rec.Row.Stream != stream {
				return fmt.Errorf("partial: %s:%d: a row of replay %d where replay %d's are", m.readers[i].Name, m.readers[i].line, rec.Row.Stream+1, stream+1)
			}
			heads[i] = rec.Row
			m.readers[i].take()
		}
		return nil
	}
	for i := range m.readers {
		if err := advance(i); err != nil {
			return nil, err
		}
	}
	var rows []sim.Row
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		b, err := sim.NewBatch(lanes, with, rows)
		if err != nil {
			return fmt.Errorf("partial: %w", err)
		}
		rows = rows[:0]
		return emit(b)
	}
	for {
		best := -1
		for i, h := range heads {
			if h != nil && (best < 0 || h.Pos.Less(heads[best].Pos)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		rows = append(rows, heads[best].row())
		if len(rows) == batchRows {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if err := advance(best); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	parts := make([]*sim.Part, len(m.readers))
	for i, r := range m.readers {
		rec, err := r.peek()
		if err != nil {
			return nil, err
		}
		if rec == nil || rec.Part == nil || rec.Part.Stream != stream {
			return nil, fmt.Errorf("partial: %s:%d: no report of replay %d", r.Name, r.line, stream+1)
		}
		r.take()
		if i == 0 {
			m.skipped, m.shown = rec.Part.Skipped, rec.Part.Shown
		} else if rec.Part.Skipped != m.skipped {
			return nil, fmt.Errorf("partial: %s skipped %d records of the trace, %s %d: the trace changed between the shards' reads", m.readers[0].Name, m.skipped, r.Name, rec.Part.Skipped)
		}
		if parts[i], err = rec.Part.part(); err != nil {
			return nil, fmt.Errorf("partial: %s:%d: %w", r.Name, r.line, err)
		}
	}
	merged, err := sim.Merge(parts)
	if err != nil {
		return nil, fmt.Errorf("partial: %w", err)
	}
	return merged, nil
}

// Done checks that every partial has been read to its end.
func (m *Merger) Done() error {
	for _, r := range m.readers {
		rec, err := r.peek()
		if err != nil {
			return err
		}
		if rec != nil {
			return fmt.Errorf("partial: %s:%d: more replays than the command made: the partial is not of it", r.Name, r.line)
		}
	}
	return nil
}
