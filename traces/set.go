package traces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"
	"time"
)

// SetOptions configure OpenSet.
type SetOptions struct {
	// Options say how each trace is read.
	Options
	// Stdin is what the path "-" reads.
	Stdin io.Reader
	// FS, when not nil, holds the paths, which are then named Display in
	// errors (the examples a program embeds).
	FS      fs.FS
	Display string
	// Sort replays the traces, one after the other, in time order,
	// sorting them in at most Sorting.MaxMemory (see Sort). Without it
	// several traces are merged by time, each in time order already.
	Sort    bool
	Sorting SortOptions
	// Spool, when not nil, is for a caller that reads the traces more
	// than once: a trace that can be read only once (standard input, a
	// pipe, a process substitution) is copied into it whole before it
	// is read, and read from the copy by every set opened with the same
	// Spool.
	Spool *Spool
}

// A Set is the traces of one replay read as one Source: several files
// merged by time, or sorted, with the first event read ahead so that
// whether the timestamps are RFC 3339 times is known before the replay
// starts. It stops with the context's error once the context given to
// OpenSet is done: every event source it reads, a blocked read of a pipe
// or terminal included, and its sort. A Set is not safe for concurrent
// use.
type Set struct {
	ctx     context.Context
	opts    SetOptions
	paths   []string
	names   []string
	readers []*Reader // opened so far, in the order of paths
	files   []io.Closer
	src     Source
	sorted  *Sorted
	first   *Event
	err     error // reading the first event
	peeked  bool
	events  int64
	polled  int
	// read counts the bytes read so far, total is the traces' size, -1
	// when it is not known: for Progress.
	read  atomic.Int64
	total int64
}

// A MixedTimesError reports traces to be merged of which one has RFC 3339
// times and the other numbers.
type MixedTimesError struct {
	First, Other string // the traces' names
}

func (e *MixedTimesError) Error() string {
	return fmt.Sprintf("traces: %s and %s cannot be merged: one has RFC 3339 times, the other numbers", e.First, e.Other)
}

// OpenSet opens the traces at paths ("-" reads opts.Stdin), merges or
// sorts them into one, and reads its first event: an error reading it is
// Next's first. Errors opening a trace, or traces whose kinds of times
// differ (*MixedTimesError), are OpenSet's.
func OpenSet(ctx context.Context, paths []string, opts SetOptions) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("traces: no trace to read")
	}
	s := &Set{ctx: ctx, opts: opts, paths: paths}
	s.sizes()
	for _, p := range paths {
		s.names = append(s.names, s.nameOf(p))
	}
	if opts.Sort {
		// One trace at a time, each closed at its end: the sort reads
		// them all first, and so needs no more than one file open
		// however many it is given.
		s.sorted = SortContext(ctx, &concat{set: s}, opts.Sorting)
		s.src = s.sorted
	} else {
		for i := range paths {
			if _, err := s.open(i); err != nil {
				s.Close()
				return nil, err
			}
		}
		s.src = s.readers[0]
		if len(s.readers) > 1 {
			srcs := make([]Source, len(s.readers))
			for i, r := range s.readers {
				srcs[i] = r
			}
			s.src = Merge(srcs...)
		}
	}
	s.first, s.err = s.src.Next()
	if s.err == nil {
		s.err = s.checkTimes()
	}
	var mixed *MixedTimesError
	var open openError
	switch {
	case errors.As(s.err, &mixed):
		s.Close()
		return nil, s.err
	case errors.As(s.err, &open):
		s.Close()
		return nil, open.err
	}
	return s, nil
}

// openError is an error opening a trace met while sorting: OpenSet's
// error, not the first event's.
type openError struct{ err error }

func (e openError) Error() string { return e.err.Error() }
func (e openError) Unwrap() error { return e.err }

// nameOf is the name errors give the trace at path.
func (s *Set) nameOf(path string) string {
	switch {
	case s.opts.FS != nil:
		return s.opts.Display
	case path == "-":
		return "stdin"
	}
	return path
}

// open opens the i-th trace.
func (s *Set) open(i int) (*Reader, error) {
	path, name := s.paths[i], s.names[i]
	var in io.Reader
	var file io.Closer
	switch {
	case s.opts.FS != nil:
		f, err := s.opts.FS.Open(path)
		if err != nil {
			return nil, err
		}
		in, file = f, f
	case s.opts.Spool != nil && readOnce(path):
		c, err := s.opts.Spool.copyOf(s.ctx, path, name, s.opts.Stdin)
		if err != nil {
			return nil, err
		}
		in = c
	case path == "-":
		if s.opts.Stdin == nil {
			return nil, errors.New("traces: no standard input to read")
		}
		in = interruptible(s.ctx, s.opts.Stdin)
	default:
		f, err := openFile(s.ctx, path)
		if err != nil {
			return nil, fmt.Errorf("traces: %w", err)
		}
		in, file = interruptible(s.ctx, f), f
	}
	r, err := NewReader(s.counted(in), name, s.opts.Options)
	if err != nil {
		if file != nil {
			file.Close()
		}
		return nil, err
	}
	s.readers = append(s.readers, r)
	s.files = append(s.files, file)
	return r, nil
}

// closeTrace closes the i-th trace. Its Reader stays, for its count of
// skipped records.
func (s *Set) closeTrace(i int) error {
	err := s.readers[i].Close()
	if f := s.files[i]; f != nil {
		if ferr := f.Close(); err == nil {
			err = ferr
		}
		s.files[i] = nil
	}
	return err
}

// checkTimes refuses traces of which some have RFC 3339 times and others
// numbers: they cannot be merged.
func (s *Set) checkTimes() error {
	var first *Reader
	for _, r := range s.readers {
		switch {
		case !r.TimesKnown():
		case first == nil:
			first = r
		case r.RFC3339() != first.RFC3339():
			return &MixedTimesError{First: first.Name(), Other: r.Name()}
		}
	}
	return nil
}

// Next yields the first event, read ahead, then the rest of the traces.
// Once the set's context is done, it returns the context's error.
func (s *Set) Next() (*Event, error) {
	if !s.peeked {
		s.peeked = true
		if s.err != nil {
			return nil, s.err
		}
		s.events++
		return s.first, nil
	}
	if s.polled++; s.polled&1023 == 0 {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
	}
	ev, err := s.src.Next()
	if err == nil {
		s.events++
	}
	return ev, err
}

// Peek returns the first event, read ahead by OpenSet, or the error that
// reading it met, without consuming it.
func (s *Set) Peek() (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.first, nil
}

// Name joins the traces' names: "a.log, b.log".
func (s *Set) Name() string { return strings.Join(s.names, ", ") }

// RFC3339 reports whether the traces' timestamps are RFC 3339 times: as
// the first trace whose kind of times is known says.
func (s *Set) RFC3339() bool {
	for _, r := range s.readers {
		if r.TimesKnown() {
			return r.RFC3339()
		}
	}
	return false
}

// Sorted reports whether the set sorts its traces (Options.Sort).
func (s *Set) Sorted() bool { return s.sorted != nil }

// Events returns how many events Next has yielded so far: after the last,
// the events of the traces (0 for traces of a header alone, or nothing).
func (s *Set) Events() int64 { return s.events }

// Skipped returns how many records lenient reading has skipped so far,
// in all the traces.
func (s *Set) Skipped() int {
	n := 0
	for _, r := range s.readers {
		n += r.Skipped()
	}
	return n
}

// SkipOtherUsers has the traces pass over the plain records of users
// other than users without reading them (see Reader.SkipOtherUsers): for
// a read of traces a first read checked whole. It applies to the traces
// opened so far, which, unless the set sorts, is all of them.
func (s *Set) SkipOtherUsers(users []string) {
	for _, r := range s.readers {
		r.SkipOtherUsers(users)
	}
}

// Close closes the traces and removes the sort's temporary files. A Spool
// outlives the sets that read it: its owner closes it.
func (s *Set) Close() error {
	var first error
	if s.sorted != nil {
		first = s.sorted.Close()
	}
	for i := range s.readers {
		if err := s.closeTrace(i); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// concat is a set's traces one after the other, each opened when the one
// before it has ended and closed then, for sorting together: however many
// traces it is given, no more than one is open at a time.
type concat struct {
	set  *Set
	next int
	cur  *Reader
}

func (c *concat) Next() (*Event, error) {
	for {
		if c.cur == nil {
			if c.next == len(c.set.paths) {
				return nil, io.EOF
			}
			r, err := c.set.open(c.next)
			if err != nil {
				return nil, openError{err}
			}
			c.cur, c.next = r, c.next+1
		}
		ev, err := c.cur.Next()
		if err != io.EOF {
			if err == nil && c.cur.TimesKnown() {
				// Known as soon as each trace starts: before the sort has
				// written gigabytes of one kind to refuse the other.
				if err := c.set.checkTimes(); err != nil {
					return nil, err
				}
			}
			return ev, err
		}
		c.set.closeTrace(c.next - 1)
		c.cur = nil
	}
}

func (c *concat) Name() string { return c.set.Name() }

// Resolution returns the coarsest resolution of the logs among the
// traces read so far (Reader.Resolution), and the name of that trace; 0
// when none of them is a log.
func (s *Set) Resolution() (time.Duration, string) {
	var res time.Duration
	name := ""
	for _, r := range s.readers {
		if v := r.Resolution(); v > res {
			res, name = v, r.Name()
		}
	}
	return res, name
}

// DefaultObserved returns the --observed of the first trace's format
// (Reader.DefaultObserved).
func (s *Set) DefaultObserved() string {
	if len(s.readers) == 0 {
		return "status=429,503"
	}
	return s.readers[0].DefaultObserved()
}
