package traces

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A Source yields the events of a trace in order. The *Event and its
// slices are valid until the next call of Next, as Reader's are; Next
// returns io.EOF after the last event. *Reader, *Sorted and *Merged are
// Sources.
type Source interface {
	Next() (*Event, error)
	Name() string
}

// DefaultSortMemory is the memory a Sort buffers events in when
// SortOptions.MaxMemory is 0.
const DefaultSortMemory = 256 << 20

// SortOptions configure Sort.
type SortOptions struct {
	// MaxMemory bounds the bytes of events held in memory; beyond it,
	// sorted runs are written to temporary files and merged. 0 means
	// DefaultSortMemory.
	MaxMemory int64
	// TempDir is where the runs' directory is made; "" means os.TempDir().
	TempDir string
}

// Sorted yields a Source's events in time order, stable: events of equal
// times keep their order in the source. It reads the whole source on the
// first call of Next, holding at most SortOptions.MaxMemory bytes of
// events in memory and writing the rest, sorted in runs, to temporary
// files that it merges. The files are removed when the last event has been
// read, on any error, and by Close.
type Sorted struct {
	src  Source
	opts SortOptions

	mu     sync.Mutex // guards dir and closed against Close
	dir    string     // the runs' directory, "" until the first spill
	closed bool

	started bool
	err     error // sticky

	// The buffer being filled: encoded events, and an index by time.
	buf   []byte
	index []sortKey
	seq   int64
	runs  int

	// Reading: from memory (the last buffer, when nothing was spilled) or
	// by merging the runs' files.
	mem    []sortKey
	memBuf []byte
	merge  runHeap
	files  []*os.File
	dec    eventDecoder
	ev     Event
}

// sortKey locates an encoded event and orders it.
type sortKey struct {
	time, seq int64
	off       int
}

// Sort returns a Source of src's events in time order.
func Sort(src Source, opts SortOptions) *Sorted {
	if opts.MaxMemory <= 0 {
		opts.MaxMemory = DefaultSortMemory
	}
	return &Sorted{src: src, opts: opts}
}

// Name returns the source's name.
func (s *Sorted) Name() string { return s.src.Name() }

// Runs returns how many sorted runs were written to temporary files (0
// when the events fitted in memory). It is known after the first Next.
func (s *Sorted) Runs() int { return s.runs }

// Next returns the next event in time order.
func (s *Sorted) Next() (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.started {
		s.started = true
		if err := s.load(); err != nil {
			return nil, s.fail(err)
		}
	}
	if s.isClosed() {
		return nil, s.fail(errors.New("traces: sort: closed"))
	}
	if s.files == nil {
		if len(s.mem) == 0 {
			s.err = io.EOF
			return nil, io.EOF
		}
		k := s.mem[0]
		s.mem = s.mem[1:]
		s.dec.decode(s.memBuf[k.off:], &s.ev)
		return &s.ev, nil
	}
	if s.merge.Len() == 0 {
		s.cleanup()
		s.err = io.EOF
		return nil, io.EOF
	}
	r := s.merge.runs[0]
	s.ev = Event{}
	s.dec.decode(r.rec, &s.ev)
	// The event's slices point into r.rec; keep them until the next call
	// by swapping r's buffers.
	r.rec, r.spare = r.spare, r.rec
	if err := r.advance(); err != nil {
		return nil, s.fail(err)
	}
	if r.done {
		heap.Pop(&s.merge)
	} else {
		heap.Fix(&s.merge, 0)
	}
	return &s.ev, nil
}

// fail ends the sort with err, removing its files.
func (s *Sorted) fail(err error) error {
	s.cleanup()
	s.err = err
	return err
}

// load reads the whole source, spilling sorted runs as the buffer fills.
func (s *Sorted) load() error {
	var enc eventEncoder
	for {
		ev, err := s.src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if s.isClosed() {
			return errors.New("traces: sort: closed")
		}
		off := len(s.buf)
		s.buf = enc.encode(s.buf, ev)
		s.index = append(s.index, sortKey{ev.Time, s.seq, off})
		s.seq++
		if int64(len(s.buf))+int64(len(s.index))*int64(sortKeySize) > s.opts.MaxMemory {
			if err := s.spill(); err != nil {
				return err
			}
		}
		s.dec.names = ev.names
	}
	sortIndex(s.index)
	if s.runs == 0 {
		s.mem, s.memBuf = s.index, s.buf
		return nil
	}
	if len(s.index) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf, s.index = nil, nil
	return s.openRuns()
}

// sortKeySize is the memory a sortKey takes.
const sortKeySize = 24

func sortIndex(index []sortKey) {
	slices.SortFunc(index, func(a, b sortKey) int {
		switch {
		case a.time != b.time:
			if a.time < b.time {
				return -1
			}
			return 1
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
}

// spill writes the buffer, sorted, as a run file.
func (s *Sorted) spill() error {
	sortIndex(s.index)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("traces: sort: closed")
	}
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.opts.TempDir, "ratesim-sort-")
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("traces: sort: %w", err)
		}
		s.dir = dir
	}
	path := filepath.Join(s.dir, fmt.Sprintf("run-%d", s.runs))
	s.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("traces: sort: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [binary.MaxVarintLen64]byte
	for _, k := range s.index {
		rec := record(s.buf[k.off:])
		n := binary.PutUvarint(hdr[:], uint64(len(rec)))
		w.Write(hdr[:n])
		w.Write(rec)
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("traces: sort: writing a run: %w", err)
	}
	s.runs++
	s.buf, s.index = s.buf[:0], s.index[:0]
	return nil
}

// openRuns opens every run and starts the merge.
func (s *Sorted) openRuns() error {
	for i := range s.runs {
		f, err := os.Open(filepath.Join(s.dir, fmt.Sprintf("run-%d", i)))
		if err != nil {
			return fmt.Errorf("traces: sort: %w", err)
		}
		s.files = append(s.files, f)
		r := &run{r: bufio.NewReaderSize(f, 256<<10), order: i}
		if err := r.advance(); err != nil {
			return err
		}
		if !r.done {
			s.merge.runs = append(s.merge.runs, r)
		}
	}
	heap.Init(&s.merge)
	return nil
}

func (s *Sorted) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// cleanup closes and removes the run files.
func (s *Sorted) cleanup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.Close()
	}
	s.files = nil
	if s.dir != "" {
		os.RemoveAll(s.dir)
		s.dir = ""
	}
	s.merge.runs = nil
}

// Close removes the sort's temporary files; a Next after it returns an
// error. It may be called from another goroutine than Next's (on an
// interrupt), and more than once.
func (s *Sorted) Close() error {
	s.mu.Lock()
	s.closed = true
	dir := s.dir
	s.dir = ""
	s.mu.Unlock()
	if dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}

// run is one sorted run file being merged.
type run struct {
	r          *bufio.Reader
	order      int    // ties between runs go to the earlier one
	rec, spare []byte // the current record; the previous one's storage
	time       int64
	done       bool
}

// advance reads the run's next record.
func (r *run) advance() error {
	n, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		r.done = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("traces: sort: reading a run: %w", err)
	}
	if cap(r.rec) < int(n) {
		r.rec = make([]byte, n)
	}
	r.rec = r.rec[:n]
	if _, err := io.ReadFull(r.r, r.rec); err != nil {
		return fmt.Errorf("traces: sort: reading a run: %w", err)
	}
	r.time = int64(binary.LittleEndian.Uint64(r.rec))
	return nil
}

// runHeap orders runs by their current record's time, then by run: a run
// holds a stretch of the source, sorted stably, and earlier runs hold
// earlier stretches.
type runHeap struct{ runs []*run }

func (h *runHeap) Len() int { return len(h.runs) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.runs[i], h.runs[j]
	if a.time != b.time {
		return a.time < b.time
	}
	return a.order < b.order
}
func (h *runHeap) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap) Push(x any)    { h.runs = append(h.runs, x.(*run)) }
func (h *runHeap) Pop() any {
	x := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return x
}

// The encoding of an event, as the sort buffers and spills it: its length
// (a uvarint, in run files only), then time (8 bytes), the record's length
// (8 bytes), line, cost (uvarints), and user, time text, cost text (+1, 0 for none),
// file, and the attributes' count, names and values, each a uvarint length
// and its bytes.

// eventEncoder appends encoded events.
type eventEncoder struct{}

func (eventEncoder) encode(dst []byte, ev *Event) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, 16)...)
	binary.LittleEndian.PutUint64(dst[start:], uint64(ev.Time))
	dst = binary.AppendUvarint(dst, uint64(ev.Line))
	dst = binary.AppendUvarint(dst, uint64(ev.Cost))
	dst = appendBytes(dst, ev.User)
	dst = appendBytes(dst, ev.TimeText)
	if ev.costText == nil {
		dst = binary.AppendUvarint(dst, 0)
	} else {
		dst = binary.AppendUvarint(dst, uint64(len(ev.costText))+1)
		dst = append(dst, ev.costText...)
	}
	dst = appendBytes(dst, []byte(ev.File))
	dst = binary.AppendUvarint(dst, uint64(len(ev.attrs)))
	for _, a := range ev.attrs {
		dst = appendBytes(dst, []byte(a.name))
		dst = appendBytes(dst, a.value)
	}
	binary.LittleEndian.PutUint64(dst[start+8:], uint64(len(dst)-start))
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// record returns the encoded event at the start of b.
func record(b []byte) []byte {
	return b[:binary.LittleEndian.Uint64(b[8:])]
}

// eventDecoder decodes events, interning attribute names and file names so
// that decoding allocates nothing in the steady state.
type eventDecoder struct {
	strs  map[string]string
	names *fieldNames
}

func (d *eventDecoder) intern(b []byte) string {
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	s := string(b)
	d.strs[s] = s
	return s
}

// decode fills ev from the record at the start of b; its slices point into
// b.
func (d *eventDecoder) decode(b []byte, ev *Event) {
	ev.Time = int64(binary.LittleEndian.Uint64(b))
	i := 16
	uv := func() uint64 {
		v, n := binary.Uvarint(b[i:])
		i += n
		return v
	}
	bytesOf := func() []byte {
		n := int(uv())
		v := b[i : i+n : i+n]
		i += n
		return v
	}
	ev.Line = int(uv())
	ev.Cost = int64(uv())
	ev.User = bytesOf()
	ev.TimeText = bytesOf()
	if n := int(uv()); n == 0 {
		ev.costText = nil
	} else {
		ev.costText = b[i : i+n-1 : i+n-1]
		i += n - 1
	}
	ev.File = d.intern(bytesOf())
	ev.attrs = ev.attrs[:0]
	for range int(uv()) {
		name := d.intern(bytesOf())
		ev.attrs = append(ev.attrs, attr{name: name, value: bytesOf()})
	}
	ev.names = d.names
}

// Merged yields the events of several sources, each in time order, as one
// trace in time order: ties go to the earlier source in the list, and
// within a source keep its order. An event earlier than the one before it
// in its own source is an error naming the source and the line.
type Merged struct {
	srcs  []Source
	heads []mergeHead
	order []int // the sources with an event, as a heap by (time, source)
	cur   int   // the source whose event was returned last, or -1
	err   error
}

// mergeHead is a source's current event, copied so that it outlives the
// source's next call.
type mergeHead struct {
	ev   Event
	buf  []byte
	dec  eventDecoder
	last int64 // the time of the source's previous event
	seen bool  // the source has given an event
	has  bool  // ev holds the source's current event
}

// Merge returns a Source of the events of srcs merged by time.
func Merge(srcs ...Source) *Merged {
	return &Merged{srcs: srcs, heads: make([]mergeHead, len(srcs)), cur: -2}
}

// Name joins the sources' names: "a.log, b.log".
func (m *Merged) Name() string {
	names := make([]string, len(m.srcs))
	for i, s := range m.srcs {
		names[i] = s.Name()
	}
	return strings.Join(names, ", ")
}

// Next returns the next event by time.
func (m *Merged) Next() (*Event, error) {
	if m.err != nil {
		return nil, m.err
	}
	switch {
	case m.cur == -2: // the first call: a head from every source
		for i := range m.srcs {
			if err := m.pull(i); err != nil {
				m.err = err
				return nil, err
			}
		}
	case m.cur >= 0:
		if err := m.pull(m.cur); err != nil {
			m.err = err
			return nil, err
		}
	}
	best := -1
	for i := range m.heads {
		if h := &m.heads[i]; h.has && (best < 0 || h.ev.Time < m.heads[best].ev.Time) {
			best = i
		}
	}
	if best < 0 {
		m.err = io.EOF
		return nil, io.EOF
	}
	m.cur = best
	return &m.heads[best].ev, nil
}

// pull replaces source i's head with its next event.
func (m *Merged) pull(i int) error {
	h := &m.heads[i]
	ev, err := m.srcs[i].Next()
	if err == io.EOF {
		h.has = false
		return nil
	}
	if err != nil {
		return err
	}
	if h.seen && ev.Time < h.last {
		h.has = false
		return &ParseError{File: m.srcs[i].Name(), Line: ev.Line,
			Msg: "earlier than the line before it: merged traces must each be in time order (--sort sorts them)"}
	}
	var enc eventEncoder
	h.buf = enc.encode(h.buf[:0], ev)
	h.dec.names = ev.names
	h.dec.decode(h.buf, &h.ev)
	h.last, h.seen, h.has = ev.Time, true, true
	return nil
}
