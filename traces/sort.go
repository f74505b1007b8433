package traces

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"unsafe"
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

// mergeFanIn is the most runs a sort merges at once, and so about the
// most files it holds open: each read through a mergeBuffer, the merge
// takes a fixed 2 MiB whatever the memory given to the sort.
const (
	mergeFanIn   = 32
	mergeBuffer  = 64 << 10
	runWriteSize = 256 << 10
)

// SortOptions configure Sort.
type SortOptions struct {
	// MaxMemory bounds the memory the sort holds events in: one buffer
	// of that size, taken once, holds the events read (encoded) and
	// their index. When it is full, its events are written in time order
	// as a run to a temporary file, and runs are merged at most 32 at a
	// time, through buffers of a fixed 2.3 MiB in all, so that neither
	// the memory nor the files held open grow with the trace. 0 means
	// DefaultSortMemory.
	MaxMemory int64
	// TempDir is where the runs' files are made; "" means os.TempDir().
	TempDir string

	fanIn int // the most runs merged at once; 0 means mergeFanIn
}

// Sorted yields a Source's events in time order, stable: events of equal
// times keep their order in the source. It reads the whole source on the
// first call of Next, holding at most SortOptions.MaxMemory bytes of
// events in memory and writing the rest, sorted in runs, to temporary
// files that it merges. Where the system allows (Unix), a run's file has
// no name from the moment it is made: nothing of the sort is ever left in
// the temporary directory, however the process ends. Elsewhere the files
// are removed when the last event has been read, on any error, and by
// Close. A Sorted is not safe for concurrent use.
type Sorted struct {
	ctx  context.Context
	src  Source
	opts SortOptions

	started bool
	err     error // sticky

	// The buffer: encoded events from the front of buf, their keys from
	// the back of arena, which is the same memory. One allocation, never
	// grown: a buffer grown by appending holds up to twice what it
	// needs, and three times while it is copied.
	arena   []sortKey
	buf     []byte
	used    int // bytes of encoded events at the front of buf
	nkeys   int // keys at the back of arena
	big     []byte
	spilled int // runs written from the buffer

	runs     []*run // written and not yet merged, oldest first
	mostRuns int    // the most runs there were at once (tests)
	w        *bufio.Writer
	readers  []*bufio.Reader

	// Reading: from memory (when nothing was spilled) or by merging runs.
	inMemory bool
	mem      []sortKey
	merge    runHeap
	dec      eventDecoder
	ev       Event
	polled   int // events since the context was last looked at
}

// sortKey locates an encoded event in the buffer and orders it: by time,
// then by place in the buffer, which is the order of the source.
type sortKey struct {
	time, off int64
}

// sortKeySize is the memory a sortKey takes.
const sortKeySize = int(unsafe.Sizeof(sortKey{}))

// Sort returns a Source of src's events in time order.
func Sort(src Source, opts SortOptions) *Sorted {
	return SortContext(context.Background(), src, opts)
}

// SortContext is Sort whose reading, writing and merging stop with
// ctx's error once ctx is done.
func SortContext(ctx context.Context, src Source, opts SortOptions) *Sorted {
	if opts.MaxMemory <= 0 {
		opts.MaxMemory = DefaultSortMemory
	}
	if opts.fanIn < 2 {
		opts.fanIn = mergeFanIn
	}
	return &Sorted{ctx: ctx, src: src, opts: opts}
}

// Name returns the source's name.
func (s *Sorted) Name() string { return s.src.Name() }

// Runs returns how many sorted runs were written from the buffer to
// temporary files (0 when the events fitted in memory). It is known
// after the first Next.
func (s *Sorted) Runs() int { return s.spilled }

// errSortClosed is Next's error after Close.
var errSortClosed = errors.New("traces: sort: read after Close")

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
	if s.polled++; s.polled&4095 == 0 {
		if err := s.ctx.Err(); err != nil {
			return nil, s.fail(err)
		}
	}
	if s.inMemory {
		if len(s.mem) == 0 {
			s.err = io.EOF
			return nil, io.EOF
		}
		k := s.mem[0]
		s.mem = s.mem[1:]
		s.dec.decode(s.buf[k.off:], &s.ev)
		return &s.ev, nil
	}
	if s.merge.Len() == 0 {
		s.cleanup()
		s.err = io.EOF
		return nil, io.EOF
	}
	r := s.merge.runs[0]
	s.dec.decode(r.rec, &s.ev) // every field, reusing the attributes' slice
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
	if e := s.ctx.Err(); e != nil && !errors.Is(err, e) {
		err = e // what made the sort fail, rather than how
	}
	s.err = err
	return err
}

// load reads the whole source, spilling sorted runs as the buffer fills,
// and gets the merge of the runs ready.
func (s *Sorted) load() error {
	n := s.opts.MaxMemory / int64(sortKeySize)
	if n > int64(math.MaxInt/sortKeySize) {
		return fmt.Errorf("traces: sort: %d bytes of memory is more than this machine can address", s.opts.MaxMemory)
	}
	// A short trace needs little: the buffer starts at 1 MiB, and grows
	// once, to the whole, if the trace is longer.
	full := max(int(n), 2)
	s.setArena(make([]sortKey, min(full, firstBuffer/sortKeySize)))
	var enc eventEncoder
	for {
		if s.polled++; s.polled&1023 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		ev, err := s.src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.dec.names = ev.names
		size := encodedSize(ev)
		if !s.fits(size) && len(s.arena) < full {
			s.grow(full)
		}
		if !s.fits(size) && s.nkeys > 0 {
			if err := s.spill(); err != nil {
				return err
			}
		}
		if !s.fits(size) {
			// Larger than the whole buffer: a run of its own.
			s.big = enc.encode(s.big[:0], ev)
			if err := s.writeRun([][]byte{s.big}); err != nil {
				return err
			}
			continue
		}
		if rec := enc.encode(s.buf[s.used:s.used:s.used+size], ev); len(rec) != size {
			// Written elsewhere than in the buffer: a bug, not the trace's.
			return fmt.Errorf("traces: sort: internal error: an event of %d bytes encoded in %d", size, len(rec))
		}
		s.nkeys++
		s.arena[len(s.arena)-s.nkeys] = sortKey{ev.Time, int64(s.used)}
		s.used += size
	}
	if s.spilled == 0 {
		s.inMemory = true
		s.mem = s.keys()
		sortKeys(s.mem)
		return nil
	}
	if s.nkeys > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	// The merge needs only its buffers. The buffer is most of the heap:
	// collect it now, so that what runs after the sort (the replay's
	// state) reuses its memory instead of adding to it, as it would until
	// the collector's next cycle, due only once the heap has doubled.
	s.arena, s.buf, s.big = nil, nil, nil
	runtime.GC()
	for len(s.runs) > s.opts.fanIn {
		k := min(s.opts.fanIn, len(s.runs)-s.opts.fanIn+1)
		if err := s.mergeNewest(k); err != nil {
			return err
		}
	}
	return s.startMerge()
}

// firstBuffer is the size the buffer starts at.
const firstBuffer = 1 << 20

// setArena makes arena the buffer.
func (s *Sorted) setArena(arena []sortKey) {
	s.arena = arena
	// The bytes of the keys' memory: sortKey holds no pointers, so the
	// GC need not know which are keys and which are events.
	s.buf = unsafe.Slice((*byte)(unsafe.Pointer(&arena[0])), len(arena)*sortKeySize)
}

// grow replaces the buffer by one of n keys' size, its events and keys
// moved over.
func (s *Sorted) grow(n int) {
	old, keys, used := s.buf, s.keys(), s.used
	s.setArena(make([]sortKey, n))
	copy(s.buf, old[:used])
	copy(s.arena[len(s.arena)-len(keys):], keys)
}

// fits reports whether an event of size bytes fits in the buffer beside
// the events there and their keys.
func (s *Sorted) fits(size int) bool {
	return s.used+size+(s.nkeys+1)*sortKeySize <= len(s.buf)
}

// keys returns the keys of the events in the buffer.
func (s *Sorted) keys() []sortKey { return s.arena[len(s.arena)-s.nkeys:] }

func sortKeys(keys []sortKey) {
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.time, b.time); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
}

// spill writes the buffer's events, sorted, as a run, and empties it.
func (s *Sorted) spill() error {
	keys := s.keys()
	sortKeys(keys)
	r, err := s.newRun(0)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if i&4095 == 4095 {
			if err := s.ctx.Err(); err != nil {
				r.close()
				return err
			}
		}
		if err := r.write(s.w, record(s.buf[k.off:])); err != nil {
			r.close()
			return err
		}
	}
	if err := s.finishRun(r); err != nil {
		return err
	}
	s.used, s.nkeys = 0, 0
	s.spilled++
	return s.cascade()
}

// writeRun writes recs, in order, as a run.
func (s *Sorted) writeRun(recs [][]byte) error {
	r, err := s.newRun(0)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := r.write(s.w, rec); err != nil {
			r.close()
			return err
		}
	}
	if err := s.finishRun(r); err != nil {
		return err
	}
	s.spilled++
	return s.cascade()
}

// cascade merges the newest runs while fanIn of them are of one level,
// into one of the next: as a counter carries, so that the runs waiting
// stay fewer than fanIn per level, and the files open with them.
func (s *Sorted) cascade() error {
	for {
		n, k := len(s.runs), s.opts.fanIn
		if n < k {
			return nil
		}
		level := s.runs[n-1].level
		for _, r := range s.runs[n-k:] {
			if r.level != level {
				return nil
			}
		}
		if err := s.mergeNewest(k); err != nil {
			return err
		}
	}
}

// mergeNewest merges the k newest runs into one, a level above the
// highest of them. They hold consecutive stretches of the source, so ties
// go to the older.
func (s *Sorted) mergeNewest(k int) error {
	in := s.runs[len(s.runs)-k:]
	level := 0
	for _, r := range in {
		level = max(level, r.level+1)
	}
	out, err := s.newRun(level)
	if err != nil {
		return err
	}
	// The inputs stay in s.runs until merged, so that an error closes
	// them with the rest.
	var h runHeap
	if err := s.open(in, &h); err != nil {
		out.close()
		return err
	}
	for n := 0; h.Len() > 0; n++ {
		if n&4095 == 4095 {
			if err := s.ctx.Err(); err != nil {
				out.close()
				return err
			}
		}
		r := h.runs[0]
		if err := out.write(s.w, r.rec); err != nil {
			out.close()
			return err
		}
		if err := r.advance(); err != nil {
			out.close()
			return err
		}
		if r.done {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	for _, r := range in {
		r.close()
	}
	s.runs = s.runs[:len(s.runs)-k]
	return s.finishRun(out)
}

// open starts reading runs, each through one of the sort's readers, into
// the heap h.
func (s *Sorted) open(runs []*run, h *runHeap) error {
	for len(s.readers) < len(runs) {
		s.readers = append(s.readers, bufio.NewReaderSize(nil, mergeBuffer))
	}
	h.runs = h.runs[:0]
	for i, r := range runs {
		rd := s.readers[i]
		rd.Reset(io.NewSectionReader(r.f, 0, r.size))
		r.r, r.order, r.done = rd, i, false
		if err := r.advance(); err != nil {
			return err
		}
		if !r.done {
			h.runs = append(h.runs, r)
		}
	}
	heap.Init(h)
	return nil
}

// startMerge starts the merge of the runs that Next reads.
func (s *Sorted) startMerge() error { return s.open(s.runs, &s.merge) }

// newRun makes a run's file. Where the system lets an open file lose its
// name (Unix), it has none from the start: its space is the process's
// alone and goes with it, however the process ends. Elsewhere the name
// goes when the run is closed.
func (s *Sorted) newRun(level int) (*run, error) {
	f, err := os.CreateTemp(s.opts.TempDir, "ratesim-sort-")
	if err != nil {
		return nil, fmt.Errorf("traces: sort: %w", err)
	}
	r := &run{f: f, name: f.Name(), level: level}
	if os.Remove(r.name) == nil {
		r.name = ""
	}
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, runWriteSize)
	} else {
		s.w.Reset(f)
	}
	return r, nil
}

// finishRun flushes the run being written and adds it to the runs.
func (s *Sorted) finishRun(r *run) error {
	if err := s.w.Flush(); err != nil {
		r.close()
		return fmt.Errorf("traces: sort: writing a run: %w", err)
	}
	s.runs = append(s.runs, r)
	s.mostRuns = max(s.mostRuns, len(s.runs))
	return nil
}

// cleanup closes and removes the runs' files and lets the buffer go.
func (s *Sorted) cleanup() {
	for _, r := range s.runs {
		r.close()
	}
	s.runs, s.merge.runs = nil, nil
	s.arena, s.buf, s.big, s.mem = nil, nil, nil, nil
}

// Close removes the sort's temporary files and lets its memory go; a
// Next after it returns an error. It may be called more than once.
func (s *Sorted) Close() error {
	s.cleanup()
	if s.err == nil || s.err == io.EOF {
		s.err = errSortClosed
	}
	return nil
}

// run is one sorted run file: written, then read to be merged.
type run struct {
	f     *os.File
	name  string // the file's name until removed, "" after
	size  int64  // bytes written
	level int    // 0 for a run of the buffer, n+1 for a merge of level n's

	r          *bufio.Reader
	order      int    // ties between runs go to the earlier one
	rec, spare []byte // the current record; the previous one's storage
	time       int64
	done       bool
}

// write appends the record rec, with its length before it.
func (r *run) write(w *bufio.Writer, rec []byte) error {
	hdr := binary.AppendUvarint(w.AvailableBuffer(), uint64(len(rec)))
	w.Write(hdr)
	if _, err := w.Write(rec); err != nil {
		return fmt.Errorf("traces: sort: writing a run: %w", err)
	}
	r.size += int64(len(hdr) + len(rec))
	return nil
}

// close closes the run's file and removes its name if it has one.
func (r *run) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if r.name != "" {
		os.Remove(r.name)
		r.name = ""
	}
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

// encodedSize returns the length of ev's encoding.
func encodedSize(ev *Event) int {
	n := 16 + uvarintLen(uint64(ev.Line)) + uvarintLen(uint64(ev.Cost)) +
		bytesLen(len(ev.User)) + bytesLen(len(ev.TimeText)) + bytesLen(len(ev.File)) +
		uvarintLen(uint64(len(ev.attrs)))
	if ev.costText == nil {
		n++
	} else {
		n += uvarintLen(uint64(len(ev.costText))+1) + len(ev.costText)
	}
	for _, a := range ev.attrs {
		n += bytesLen(len(a.name)) + bytesLen(len(a.value))
	}
	return n
}

// bytesLen is the length of the encoding of n bytes: theirs and their
// count's.
func bytesLen(n int) int { return uvarintLen(uint64(n)) + n }

// uvarintLen is the length of v as a uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
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
