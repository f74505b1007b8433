package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// batchSize is the number of requests handled together. A worker's
// prefetch pipeline (see worker.step) starts cold on every batch, its first
// rows decided with nothing fetched ahead, so a batch of a few thousand rows
// wastes less of it than one of a few hundred; memory grows with the size.
const batchSize = 4096

// maxBatchBytes ends a batch early when its texts grow this large: a trace
// of long keys (a line may hold a MiB) must not make a batch huge, nor its
// arena offsets, which are 32-bit, overflow.
const maxBatchBytes = 16 << 20

// maxListed bounds Config.Top and Config.MostRejected: more than every
// key of every worker (2^32 ids each, at most 64 workers) under every
// lane (at most maxLanes).
const maxListed = 1 << 50

// defaultWorkers is the number of workers when Config.Workers is 0. It is
// a constant, not the number of CPUs: which keys a worker forgets as idle,
// and so whether a trace that goes far back in time is refused, must not
// depend on the machine.
const defaultWorkers = 2

// inflight is how many batches the pipeline holds at once: one being
// parsed, some being stepped, one being emitted.
const inflight = 8

// batch is a Batch plus the engine's bookkeeping for it. The reader fills
// rows and texts; the workers read rows and write masks and decisions;
// the consumer turns rows and texts into Requests. Rows are kept small
// because the batch moves between cores: every cache line the reader
// writes, a worker must fetch from the reader's core.
type batch struct {
	Batch
	seq0  int64     // Seq of the first request
	seqs  []int64   // of a shard's replay, each request's Seq; else nil
	rows  []row     // what the workers need of each request
	texts []rowText // what only reports need
	arena []byte    // user, key and timestamp texts of all requests
	withs []span    // per request, Config.With's values
	keys  []span    // per request, the keys of Config.keySets
	own   [][]int32 // per worker: the requests whose key it owns
	errs  []error   // per worker: what went wrong in this batch
	left  atomic.Int32
	done  chan struct{}
}

// row is one request as a worker sees it: 32 bytes, two to a cache line.
type row struct {
	hash       uint64
	time, cost int64
	key        span
}

// rowText is the rest of a request: where its texts are, and its line.
type rowText struct {
	line       int
	user, time span
}

// span locates bytes in a batch's arena.
type span struct{ off, end uint32 }

func (b *batch) slice(s span) []byte { return b.arena[s.off:s.end:s.end] }

// request returns request i of the batch.
func (b *batch) request(i int) Request {
	r, t := &b.rows[i], &b.texts[i]
	return Request{
		Seq:      b.seqOf(i),
		Line:     t.line,
		User:     b.slice(t.user),
		Key:      b.slice(r.key),
		Time:     r.time,
		TimeText: b.slice(t.time),
		Cost:     r.cost,
	}
}

// errStopped ends the reader when the consumer has failed.
var errStopped = errors.New("sim: stopped")

// engine is one Run in progress.
type engine struct {
	cfg     Config
	nalg    int
	workers []*worker
	name    string // the source's name, for errors
	stop    atomic.Bool
}

// lanes returns c.Lanes or, when there are none, c.Algorithms as lanes
// under c.Policy.
func (c *Config) lanes() []Lane {
	if len(c.Lanes) > 0 {
		return c.Lanes
	}
	var lanes []Lane
	for _, a := range c.Algorithms {
		lanes = append(lanes, Lane{Name: a.String(), Algorithm: a, Policy: c.Policy})
	}
	return lanes
}

func (c *Config) normalize() error {
	c.Lanes = c.lanes()
	if len(c.Lanes) == 0 {
		return errors.New("sim: no algorithms selected")
	}
	if len(c.Lanes) > maxLanes {
		return fmt.Errorf("sim: at most %d limiters at once, got %d", maxLanes, len(c.Lanes))
	}
	if c.Explain && len(c.Lanes) > wordLanes {
		return fmt.Errorf("sim: state texts for at most %d limiters at once, got %d", wordLanes, len(c.Lanes))
	}
	names := map[string]bool{}
	for _, l := range c.Lanes {
		if l.Name == "" || names[l.Name] {
			return fmt.Errorf("sim: limiter names must be given and differ, got %q twice or empty", l.Name)
		}
		names[l.Name] = true
		if err := l.Policy.Validate(l.Algorithm); err != nil {
			return fmt.Errorf("%s: %w", l.Name, err)
		}
	}
	if c.Shard.Count < 0 || c.Shard.Sharded() && (c.Shard.Index < 0 || c.Shard.Index >= c.Shard.Count) {
		return errBadShard
	}
	if c.Shard.Sharded() {
		for _, l := range c.Lanes {
			if l.Algorithm.KeysInteract() {
				return fmt.Errorf("sim: %s: its keys share a zone, so a shard of the keys does not decide as the whole trace does", l.Name)
			}
		}
	}
	if c.Shard.Split && c.Every > 0 {
		return errors.New("sim: per-interval counts need the whole trace's order, which a shard split by another tool does not know")
	}
	if c.DecisionsOnly {
		c.Top = 0
	}
	if c.Label != nil && (c.Labels < 1 || c.Labels > MaxLabels) {
		return fmt.Errorf("sim: %d labels, want 1 to %d", c.Labels, MaxLabels)
	}
	// No list is longer than the keys a run can hold (2^32 ids a worker)
	// times its lanes: a longer one asked for lists what there is, and
	// the sums of list lengths stay far from overflowing.
	c.Top, c.MostRejected = min(c.Top, maxListed), min(c.MostRejected, maxListed)
	if c.Explain {
		c.Detail = true
	}
	switch {
	case c.KeepKeys:
		c.sweepAt = 0
	case c.sweepAt <= 0:
		c.sweepAt = minSweep
	}
	if c.Unit <= 0 && c.Unit != limiters.UnitRFC3339 {
		c.Unit = time.Second
	}
	if c.Interval == 0 {
		c.Interval = c.Policy.Window
	}
	if c.Interval <= 0 {
		return fmt.Errorf("sim: burst interval must be positive, got %v", c.Interval)
	}
	if c.Workers <= 0 {
		c.Workers = defaultWorkers
	}
	if c.Workers > 64 {
		c.Workers = 64
	}
	for _, l := range c.Lanes {
		if l.Algorithm.KeysInteract() {
			// One key's decisions depend on the others' requests (nginx's
			// zone): one worker sees every key, in trace order.
			c.Workers = 1
		}
	}
	if c.DecisionsOnly {
		return nil
	}
	// The oracle is a sliding log with the policy's limit and window.
	return c.Policy.Validate(limiters.SlidingLog)
}

func run(src Source, cfg Config, emit func(*Batch) error) (*Report, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	var shard *shardSource
	if cfg.Shard.Sharded() {
		shard = newShardSource(src, &cfg)
		src = shard
	}
	e := newEngine(src, cfg)
	for w := 0; w < cfg.Workers; w++ {
		wk, err := newWorker(w, &e.cfg)
		if err != nil {
			return nil, err
		}
		wk.name = e.name
		e.workers = append(e.workers, wk)
	}

	work := make([]chan *batch, len(e.workers))
	var wg sync.WaitGroup
	for w, wk := range e.workers {
		work[w] = make(chan *batch, inflight)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work[w] {
				wk.stepSafely(b)
				if b.left.Add(-1) == 0 {
					b.done <- struct{}{}
				}
			}
		}()
	}
	order := intervalOrder{every: int64(cfg.Every)}
	requests, err := e.start(src, work).each(func(b *batch) error {
		if cfg.Every > 0 {
			order.check(b)
		}
		// A worker's error stands for its whole batch: the rows of this
		// batch and later ones are not emitted.
		for _, err := range b.errs {
			if err != nil {
				return err
			}
		}
		if cfg.Rows && len(b.rows) > 0 {
			b.expose()
			return emit(&b.Batch)
		}
		return nil
	})
	wg.Wait()
	if err != nil {
		return nil, err
	}
	r := e.report(requests)
	if ranHook != nil {
		ranHook(e)
	}
	if cfg.Every > 0 {
		if r.IntervalsOutOfOrder = order.line; order.line == 0 {
			ivs := make([]*intervals, len(e.workers))
			for w, wk := range e.workers {
				ivs[w] = wk.iv
			}
			r.Intervals = mergeIntervals(ivs, int64(cfg.Every), e.nalg)
		}
		if shard != nil && shard.order.line != 0 {
			// The whole trace's order, not the shard's alone.
			r.IntervalsOutOfOrder, r.Intervals = shard.order.line, nil
		}
	}
	if shard != nil {
		if !shard.sh.Split {
			r.Positions.Events, r.Positions.Sum = shard.next, shard.sum
		}
	}
	return r, nil
}

// ranHook, when set (by tests), sees every engine that has run.
var ranHook func(*engine)

// intervalOrder checks that a trace comes interval by interval.
type intervalOrder struct {
	every int64
	k     int64 // the interval of the request before
	seen  bool
	line  int // the first request out of order; 0: none yet
}

// check checks the requests of b, in order.
func (o *intervalOrder) check(b *batch) {
	for i := 0; i < len(b.rows) && o.line == 0; i++ {
		k := floorDiv(b.rows[i].time, o.every)
		if o.seen && k < o.k {
			o.line = b.texts[i].line
		}
		o.k, o.seen = k, true
	}
}

// internalError turns a panic into an error that says so, with the stack
// of the goroutine that panicked: a bug must end the run with an error,
// never take the whole program down with output half written.
func internalError(p any) error {
	return fmt.Errorf("sim: internal error: %v\n%s", p, debug.Stack())
}

func (e *engine) newBatch() *batch {
	n := e.nalg
	b := &batch{
		arena: make([]byte, 0, batchSize*32),
		rows:  make([]row, 0, batchSize),
		texts: make([]rowText, 0, batchSize),
		own:   make([][]int32, len(e.workers)),
		errs:  make([]error, len(e.workers)),
		done:  make(chan struct{}, 1),
	}
	b.nalg = n
	b.n0 = min(n, wordLanes)
	b.words = 1 + (n-b.n0+wordLanes-1)/wordLanes
	for w := range b.own {
		b.own[w] = make([]int32, 0, batchSize)
	}
	if e.cfg.Explain {
		b.text = make([][]byte, len(e.workers))
	}
	return b
}

// size makes room in b's per-row results for its rows. A batch's results
// grow to the rows it has held, not to batchSize at once: with many lanes
// they take megabytes, which a short trace should not pay for.
func (e *engine) size(b *batch) {
	rows, n := len(b.rows), e.nalg
	if cap(b.masks) >= rows*b.words {
		return
	}
	rows = max(rows, min(2*cap(b.masks)/b.words, batchSize))
	b.Requests = make([]Request, 0, rows)
	b.masks = make([]uint64, rows*b.words)
	b.Oracle = make([]bool, rows)
	if e.cfg.Detail {
		b.Decisions = make([]limiters.Decision, rows*n)
		b.exact = make([]limiters.Exact, rows*n)
	}
	if e.cfg.Explain {
		b.states = make([]stateSpan, rows*n)
	}
}

// read fills batches from src and hands them to the workers and, in
// order, to the emitter. It returns the number of requests read.
func (e *engine) read(src Source, free <-chan *batch, work []chan *batch, ordered chan<- *batch) (int64, error) {
	var seq int64
	for {
		if e.stop.Load() {
			return seq, errStopped
		}
		b := <-free
		b.seq0 = seq
		err := e.fill(b, src)
		e.size(b)
		if len(work) > 0 {
			e.route(b)
			b.left.Store(int32(len(work)))
		}
		seq += int64(len(b.rows))
		ordered <- b
		for _, ch := range work {
			ch <- b
		}
		if err == io.EOF {
			return seq, nil
		}
		if err != nil {
			return seq, err
		}
	}
}

// fill reads up to batchSize requests from src into b, fewer once their
// texts take maxBatchBytes. It returns src's error, if it had one; the
// requests before it are in b.
//
// Rows are set field by field through a pointer: appending a composite
// literal builds it on the stack and copies it with wider loads than the
// stores that built it, a stall on every row.
func (e *engine) fill(b *batch, src Source) error {
	rows, texts := b.rows[:0], b.texts[:0]
	b.arena = b.arena[:0]
	if e.cfg.Label != nil {
		b.labels = b.labels[:0]
	}
	b.withs, b.nwith = b.withs[:0], len(e.cfg.With)
	if e.cfg.WithFile {
		b.nwith++
	}
	b.keys = b.keys[:0]
	shard, _ := src.(*shardSource)
	if shard != nil {
		b.seqs = b.seqs[:0]
	}
	defer func() { b.rows, b.texts = rows, texts }()
	for len(rows) < batchSize && len(b.arena) < maxBatchBytes {
		ev, err := src.Next()
		if err != nil {
			return err
		}
		user := e.appendText(b, ev.User)
		key := user
		if len(e.cfg.KeyFields) > 0 {
			if key, err = e.appendKey(b, ev, keySet{fields: e.cfg.KeyFields}); err != nil {
				return err
			}
		}
		if len(e.cfg.keySets) > 0 {
			if err := e.appendKeys(b, ev); err != nil {
				return err
			}
		}
		if err := e.appendWith(b, ev); err != nil {
			return err
		}
		if e.cfg.Label != nil {
			lab, err := e.cfg.Label(ev, b.arena[key.off:key.end])
			if err == nil && int(lab) >= e.cfg.Labels {
				err = &traces.ParseError{File: e.fileOf(ev), Line: ev.Line, Msg: fmt.Sprintf("label %d of %d", lab, e.cfg.Labels)}
			}
			if err != nil {
				b.withs = b.withs[:len(rows)*b.nwith]
				return err
			}
			b.labels = append(b.labels, lab)
		}
		n := len(rows)
		rows, texts = rows[:n+1], texts[:n+1]
		r, t := &rows[n], &texts[n]
		r.time, r.cost, r.key = ev.Time, ev.Cost, key
		t.line, t.user, t.time = ev.Line, user, e.appendText(b, ev.TimeText)
		if shard != nil {
			b.seqs = append(b.seqs, shard.position())
		}
	}
	return nil
}

// fileOf names the trace ev came from: its own file, one of several
// merged, or the source's name.
func (e *engine) fileOf(ev *traces.Event) string {
	if ev.File != "" {
		return ev.File
	}
	return e.name
}

// appendWith copies the values of ev's Config.With attributes into b.
// A missing one is an error, and then b has none of ev's.
func (e *engine) appendWith(b *batch, ev *traces.Event) error {
	start := len(b.withs)
	for _, name := range e.cfg.With {
		v, ok := ev.Attr(name)
		if !ok && name == "file" {
			// The trace's own file, unless it has a field of that name.
			e.appendFile(b, ev)
			continue
		}
		if !ok {
			b.withs = b.withs[:start]
			return &traces.ParseError{File: e.fileOf(ev), Line: ev.Line, Msg: fmt.Sprintf("no %q field to show", name)}
		}
		b.withs = append(b.withs, e.appendText(b, v))
	}
	if e.cfg.WithFile {
		e.appendFile(b, ev)
	}
	return nil
}

// appendFile copies the name of ev's trace file into b as its next value.
func (e *engine) appendFile(b *batch, ev *traces.Event) {
	start := len(b.arena)
	b.arena = append(b.arena, e.fileOf(ev)...)
	b.withs = append(b.withs, span{uint32(start), uint32(len(b.arena))})
}

// appendKey copies the key of ev under ks into b's arena and returns where
// it is; see appendKeyOf.
func (e *engine) appendKey(b *batch, ev *traces.Event, ks keySet) (span, error) {
	start := len(b.arena)
	var missing string
	b.arena, missing = appendKeyOf(b.arena, ev, ks.fields)
	if missing != "" {
		b.arena = b.arena[:start]
		msg := fmt.Sprintf("no %q field to key on", missing)
		if ks.name != "" {
			msg = ks.name + ": " + msg
		}
		return span{}, &traces.ParseError{File: e.fileOf(ev), Line: ev.Line, Msg: msg}
	}
	return span{uint32(start), uint32(len(b.arena))}, nil
}

// appendKeys copies the keys of ev under every one of Config.keySets into
// b's arena. A missing field is an error, and then b has none of ev's.
func (e *engine) appendKeys(b *batch, ev *traces.Event) error {
	start := len(b.keys)
	for _, ks := range e.cfg.keySets {
		k, err := e.appendKey(b, ev, ks)
		if err != nil {
			b.keys = b.keys[:start]
			return err
		}
		b.keys = append(b.keys, k)
	}
	return nil
}

// appendKeyOf appends the limiter key of ev's attributes fields to dst: a
// single field's value as it is; several joined with ':', a field that
// holds a ':' or starts with '[' in brackets, with any ']' or '\' inside
// them escaped by a '\'. So ("2001:db8::1", "/login") is
// [2001:db8::1]:/login, and ("a:b", "c") and ("a", "b:c") stay two keys,
// [a:b]:c and a:[b:c]: read from the left, a field in brackets ends at
// the first ']' not escaped, any other at the next ':'. No fields make the
// empty key. It returns the name of a field ev does not have, if any.
func appendKeyOf(dst []byte, ev *traces.Event, fields []string) ([]byte, string) {
	for i, name := range fields {
		v, ok := ev.Attr(name)
		if !ok {
			return dst, name
		}
		if len(fields) == 1 {
			return append(dst, v...), ""
		}
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = appendKeyField(dst, v)
	}
	return dst, ""
}

// appendKeyField appends v to dst as one field of a composite key: as it
// is, or in brackets when it holds a ':' or starts with '['.
func appendKeyField(dst, v []byte) []byte {
	if bytes.IndexByte(v, ':') < 0 && (len(v) == 0 || v[0] != '[') {
		return append(dst, v...)
	}
	dst = append(dst, '[')
	for len(v) > 0 {
		i := bytes.IndexAny(v, `]\`)
		if i < 0 {
			dst = append(dst, v...)
			break
		}
		dst = append(dst, v[:i]...)
		dst = append(dst, '\\', v[i])
		v = v[i+1:]
	}
	return append(dst, ']')
}

// route hashes the keys of b's rows and lists each row under the worker
// that owns its key: the one the low half of the hash, scaled to the
// number of workers, picks.
func (e *engine) route(b *batch) {
	own := b.own
	for w := range own {
		own[w] = own[w][:0]
		b.errs[w] = nil
	}
	nw := uint64(len(own))
	for i := range b.rows {
		r := &b.rows[i]
		h := hashKey(b.slice(r.key))
		r.hash = h
		w := (h & 0xffffffff) * nw >> 32
		own[w] = append(own[w], int32(i))
	}
}

// appendText copies s into the batch's arena and returns where it is.
func (e *engine) appendText(b *batch, s []byte) span {
	start := len(b.arena)
	b.arena = append(b.arena, s...)
	return span{uint32(start), uint32(len(b.arena))}
}

// requestsOf is how many requests worker wk decided: the sum of its
// outcomes.
func requestsOf(wk *worker) int64 {
	var total int64
	for _, c := range wk.outcomes {
		total += c
	}
	if wk.manyOutcomes != nil {
		total += wk.manyOutcomes.total()
	}
	return total
}

// report merges the workers' findings.
func (e *engine) report(requests int64) *Report {
	n := e.nalg
	n0 := min(n, wordLanes) // the lanes whose outcomes the workers count
	r := &Report{
		Requests: requests,
		Interval: e.cfg.Interval,
		Algos:    make([]AlgoStats, n),
	}
	if n == n0 {
		r.Agree = make([][]int64, n)
		for a := range r.Agree {
			r.Agree[a] = make([]int64, n)
		}
	}
	bestSeq := make([]int64, n)
	floors := make([]time.Duration, n) // per lane, the highest floor of the workers' waits
	for a := range bestSeq {
		bestSeq[a] = -1
	}
	if e.cfg.Shard.Sharded() {
		r.Positions = &Positions{Burst: bestSeq}
	}
	var top []scoredInterval
	for _, wk := range e.workers {
		r.ClockBackwards += wk.backwards
		if f := wk.firstBackward; f != nil && (r.FirstBackwards == nil || f.Seq < r.FirstBackwards.Seq) {
			r.FirstBackwards = f
		}
		r.Keys += wk.distinct()
		r.KeysHeld += wk.peak
		// tally adds count requests of one outcome to every figure.
		tally := func(mask uint64, oracle bool, count int64) {
			for a := 0; a < n0; a++ {
				s := &r.Algos[a]
				allowed := mask&(1<<a) != 0
				if allowed {
					s.Allowed += count
				} else {
					s.Rejected += count
				}
				if !e.cfg.DecisionsOnly && allowed != oracle {
					if allowed {
						s.FalseAllows += count
					} else {
						s.FalseRejects += count
					}
				}
				for b := a + 1; b < n && r.Agree != nil; b++ {
					if allowed == (mask&(1<<b) != 0) {
						r.Agree[a][b] += count
					}
				}
			}
		}
		for o, c := range wk.outcomes {
			if c != 0 {
				tally(uint64(o>>1), o&1 == 1, c)
			}
		}
		if wk.manyOutcomes != nil {
			wk.manyOutcomes.each(tally)
		}
		for j, c := range wk.counts {
			s := &r.Algos[n0+j]
			s.Allowed += c.allowed
			s.Rejected += requestsOf(wk) - c.allowed
			s.FalseAllows += c.falseAllows
			s.FalseRejects += c.falseRejects
		}
		for a := 0; a < n; a++ {
			s := &r.Algos[a]
			lane := &e.cfg.Lanes[a]
			s.Name, s.Algorithm, s.Policy = lane.Name, lane.Algorithm, lane.Policy
			s.Requests = requests
			if f := wk.first[a]; f != nil && (s.FirstRejection == nil || f.Seq < s.FirstRejection.Seq) {
				s.FirstRejection = f
			}
			if wk.rej != nil {
				s.KeysRejected += wk.rej.keys[a]
				s.Waits, s.WaitsBelow, floors[a] = mergeTail(s.Waits, s.WaitsBelow, floors[a], &wk.rej.waits[a])
			}
			if wk.burst == nil {
				continue
			}
			wb := wk.burst.bestOf(a)
			if wb.seq >= 0 && (wb.Count > s.Burst.Count || (wb.Count == s.Burst.Count && wb.seq < bestSeq[a])) {
				s.Burst = wb.Interval
				bestSeq[a] = wb.seq
			}
		}
		if e.cfg.Top > 0 && wk.burst != nil {
			// Of a worker's live keys, only its Top+len(retired) worst
			// intervals can make the list: a live interval ranked below
			// them has before it, besides those of the list, at most one
			// for each retired interval, the best of a key's earlier life
			// that makes the same key's later one drop out. A key lives
			// in one worker, so nothing else drops out.
			top = append(top, wk.burst.topKeyBests(wk.keys, n, e.cfg.Top+len(wk.retired))...)
			top = append(top, wk.retired...)
		}
	}
	if e.cfg.Label != nil {
		mergeLabels(r.Algos, e.workers, e.cfg.Labels)
	}
	if e.cfg.MostRejected > 0 {
		lists := make([][]KeyRejections, len(e.workers))
		for a := 0; a < n; a++ {
			for w, wk := range e.workers {
				lists[w] = wk.kc.most(wk.keys, a, e.cfg.MostRejected)
			}
			r.Algos[a].MostRejected = mergeMostRejected(lists, e.cfg.MostRejected)
		}
	}
	for a := 0; a < n; a++ {
		r.Algos[a].Burst.Algorithm, r.Algos[a].Burst.Name = e.cfg.Lanes[a].Algorithm, e.cfg.Lanes[a].Name
		if r.Agree == nil {
			continue
		}
		r.Agree[a][a] = requests
		for b := a + 1; b < n; b++ {
			r.Agree[b][a] = r.Agree[a][b]
		}
	}
	if e.cfg.Top > 0 {
		// A key forgotten and seen again has a best interval from each
		// of its lives: topIntervals keeps the worse-ranked ones out.
		top = topIntervals(top, e.cfg.Top)
		r.Top = make([]Interval, len(top))
		if r.Positions != nil {
			r.Positions.Top = make([]int64, len(top))
		}
		for i, t := range top {
			if r.Positions != nil {
				r.Positions.Top[i] = t.seq
			}
			r.Top[i] = t.Interval
			r.Top[i].Algorithm, r.Top[i].Name = e.cfg.Lanes[t.algo].Algorithm, e.cfg.Lanes[t.algo].Name
		}
	}
	return r
}

// sortIntervals orders intervals worst first: most cost, then the one that
// closed earliest in the trace, then by algorithm.
func sortIntervals(top []scoredInterval) {
	sort.Slice(top, func(i, j int) bool {
		x, y := top[i], top[j]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		if x.seq != y.seq {
			return x.seq < y.seq
		}
		return x.algo < y.algo
	})
}
