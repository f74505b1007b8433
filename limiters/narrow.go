package limiters

import (
	"math"
	"math/bits"
	"time"
)

// A form is a state type a store keeps one rule's states in: the kind's
// own state type, or a narrow one.
//
// A narrow form is a compact encoding of the kind's state type (the wide
// one) that holds every state the wide one can reach under the rules it is
// chosen for; its methods decode the state, let the wide type's method
// decide, and encode the result. So the rule is written once, in the wide
// type, and a narrow state decides exactly as the wide one does: the
// narrow form is chosen only when the bound that makes the encoding
// lossless holds for every time and cost (a bucket whose capacity times
// its rate's denominator fits 63 bits, a window index and count that fit
// one word), and a rule outside it keeps the wide state. Where millions
// of keys are live at once, a state of a word or two instead of four or
// more is most of what a key costs.
type form struct {
	ops  kindOps
	fast fastDecide
	wait fastWait // nil: a refusal's wait takes a full decision
}

// formOf returns the form r's states are kept in: the narrow one the
// kind's narrow picks for r, if any, else the kind's own.
func formOf(r *Rule) form {
	if r.k.narrow != nil {
		if f := r.k.narrow(r); f != nil {
			return *f
		}
	}
	return form{r.k.ops, r.k.fast, r.k.wait}
}

// wide returns a copy of r that keeps its states in the kind's own state
// type, for tests that hold narrow and wide states side by side.
func (r *Rule) wide() *Rule {
	w := *r
	w.form = form{r.k.ops, r.k.fast, r.k.wait}
	return &w
}

// indexBits sets r's window index fields for packing an index k of
// r.window's windows (of any int64 time) with count fields of cbits bits
// each into one word, and reports whether count such fields fit beside it.
func indexBits(r *Rule, count int) bool {
	lo, _ := floorDivMod(math.MinInt64, r.window)
	hi, _ := floorDivMod(math.MaxInt64, r.window)
	kb := bits.Len64(uint64(hi) - uint64(lo)) // the indexes less lo need this many bits
	cb := bits.Len64(uint64(r.limit))         // a count of at most the limit this many
	if kb+count*cb > 64 {
		return false
	}
	r.kmin, r.cbits = lo, uint(cb)
	return true
}

// field returns the cbits-bit field of w at field index i (0 the lowest).
func (r *Rule) field(w uint64, i uint) int64 {
	return int64(w >> (i * r.cbits) & (1<<r.cbits - 1))
}

// windowWord is a FixedWindowState in one word: the window index less
// the lowest one any time has, above the count in the low cbits bits. A
// count of 0 is the fresh state whatever the index, so the fresh state is
// the zero word. It serves rules whose indexes and counts fit (see
// indexBits): a window of 10 s with a limit below 2^33, of 1 ms below 2^19.
type windowWord struct{ w uint64 }

var windowNarrow = form{ops: ops[windowWord, *windowWord]{}, fast: fastOf((*windowWord).decide)}

func narrowWindow(r *Rule) *form {
	if !indexBits(r, 1) {
		return nil
	}
	return &windowNarrow
}

func (s *windowWord) load(r *Rule) FixedWindowState {
	c := r.field(s.w, 0)
	if c == 0 {
		return FixedWindowState{}
	}
	return FixedWindowState{window: int64(uint64(r.kmin) + s.w>>r.cbits), count: c}
}

func (s *windowWord) store(r *Rule, w *FixedWindowState) {
	if w.count == 0 {
		s.w = 0
		return
	}
	s.w = (uint64(w.window)-uint64(r.kmin))<<r.cbits | uint64(w.count) // count <= limit
}

func (s *windowWord) boundary(r *Rule, now int64) (int64, bool) {
	w := s.load(r)
	return w.boundary(r, now)
}

func (s *windowWord) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if out == nil {
		return s.admit(r, now, cost)
	}
	w := s.load(r)
	allowed, back = w.decide(r, now, cost, commit, out, x)
	s.store(r, &w)
	return allowed, back
}

// admit is decide without a Decision, FixedWindowState.decide's worked
// on the word itself: a request in an earlier window than the state's is
// back; one in a later window finds it fresh; it is refused when its cost
// does not fit beside the window's count, and an admission adds it. A
// count of 0 is the zero word.
func (s *windowWord) admit(r *Rule, now, cost int64) (allowed, back bool) {
	k, _ := floorDivMod(now, r.window)
	idx := uint64(k) - uint64(r.kmin) // k's index field
	c := int64(s.w & (1<<r.cbits - 1))
	if c != 0 {
		if cur := s.w >> r.cbits; idx < cur {
			return false, true
		} else if idx > cur {
			c = 0
		}
	}
	if cost > r.limit-c {
		if c == 0 {
			s.w = 0
		}
		return false, false
	}
	if c += cost; c == 0 {
		s.w = 0
	} else {
		s.w = idx<<r.cbits | uint64(c) // c <= limit
	}
	return true, false
}

func (s *windowWord) idle(r *Rule, now int64) bool {
	w := s.load(r)
	return w.idle(r, now)
}

func (s *windowWord) appendText(r *Rule, pre *windowWord, at int64, unit time.Duration, dst []byte) []byte {
	w, p := s.load(r), pre.load(r)
	return w.appendText(r, &p, at, unit, dst)
}

func (s *windowWord) gauge(r *Rule, now int64) (float64, int64) {
	w := s.load(r)
	return w.gauge(r, now)
}

// counterWord is a SlidingCounterState in one word: the window index less
// the lowest one any time has, above the previous window's count and,
// lowest, the current one's, cbits bits each. Both counts stay within the
// limit: a request passes only while the estimate, at least the current
// count, leaves room for its cost. Counts of 0 are the fresh state
// whatever the index, so the fresh state is the zero word.
type counterWord struct{ w uint64 }

var counterNarrow = form{ops: ops[counterWord, *counterWord]{}, fast: fastOf((*counterWord).decide)}

func narrowCounter(r *Rule) *form {
	if !indexBits(r, 2) {
		return nil
	}
	return &counterNarrow
}

func (s *counterWord) load(r *Rule) SlidingCounterState {
	cur, prev := r.field(s.w, 0), r.field(s.w, 1)
	if cur == 0 && prev == 0 {
		return SlidingCounterState{}
	}
	return SlidingCounterState{window: int64(uint64(r.kmin) + s.w>>(2*r.cbits)), prev: prev, cur: cur}
}

func (s *counterWord) store(r *Rule, w *SlidingCounterState) {
	if !w.used() {
		s.w = 0
		return
	}
	s.w = (uint64(w.window)-uint64(r.kmin))<<(2*r.cbits) | uint64(w.prev)<<r.cbits | uint64(w.cur)
}

func (s *counterWord) boundary(r *Rule, now int64) (int64, bool) {
	w := s.load(r)
	return w.boundary(r, now)
}

func (s *counterWord) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if out == nil {
		return s.admit(r, now, cost)
	}
	w := s.load(r)
	allowed, back = w.decide(r, now, cost, commit, out, x)
	s.store(r, &w)
	return allowed, back
}

// admit is decide without a Decision, SlidingCounterState's rotate and
// decide worked on the word itself: a request in an earlier window than
// the state's is back; one in the next window finds the current count
// moved to the previous one, and one later finds both 0; it is allowed
// while prev*(W-m) + cur*W, the estimate scaled by W at elapsed time m,
// is below (limit-cost+1)*W, and an admission adds its cost to the
// current count. Counts of 0 are the zero word.
func (s *counterWord) admit(r *Rule, now, cost int64) (allowed, back bool) {
	k, m := floorDivMod(now, r.window)
	idx := uint64(k) - uint64(r.kmin) // k's index field
	cb := r.cbits
	low := uint64(1)<<cb - 1
	cur, prev := s.w&low, s.w>>cb&low
	if cur != 0 || prev != 0 {
		at := s.w >> (2 * cb)
		if idx < at {
			return false, true
		}
		if idx > at {
			if idx-at == 1 {
				prev = cur
			} else {
				prev = 0
			}
			cur = 0
		}
	}
	w := uint64(r.window)
	ph, pl := bits.Mul64(prev, w-uint64(m))
	ch, cl := bits.Mul64(cur, w)
	eh, el := add128(ph, pl, ch, cl)
	kh, kl := bits.Mul64(uint64(r.limit-cost+1), w)
	if allowed = less128(eh, el, kh, kl); allowed {
		cur += uint64(cost) // the estimate, at least cur*W, leaves room: cur+cost <= limit
	}
	if cur == 0 && prev == 0 {
		s.w = 0
	} else {
		s.w = idx<<(2*cb) | prev<<cb | cur
	}
	return allowed, false
}

func (s *counterWord) idle(r *Rule, now int64) bool {
	w := s.load(r)
	return w.idle(r, now)
}

func (s *counterWord) appendText(r *Rule, pre *counterWord, at int64, unit time.Duration, dst []byte) []byte {
	w, p := s.load(r), pre.load(r)
	return w.appendText(r, &p, at, unit, dst)
}

func (s *counterWord) gauge(r *Rule, now int64) (float64, int64) {
	w := s.load(r)
	return w.gauge(r, now)
}

// bucketWords is a bucket in two words: the time of the key's last
// request, and level*per in the low 63 bits of the other, whose top bit
// says the bucket has seen a request. It serves rules whose capacity
// times their rate's denominator (in lowest terms) is below 2^63: the
// level never exceeds the capacity. For 10 per second, any capacity below
// 9.2e8.
type bucketWords struct {
	last  int64
	level uint64
}

var bucketNarrow = form{ops[bucketWords, *bucketWords]{}, fastOf((*bucketWords).decide), waitOf((*bucketWords).wait)}

// seenBit marks a bucketWords that has seen a request.
const seenBit = 1 << 63

func narrowBucket(r *Rule) *form {
	if hi, lo := bits.Mul64(uint64(r.limit), r.per); hi != 0 || lo >= seenBit {
		return nil
	}
	return &bucketNarrow
}

func (s *bucketWords) load() bucket {
	return bucket{last: s.last, ll: s.level &^ seenBit, seen: s.level&seenBit != 0}
}

func (s *bucketWords) store(b *bucket) {
	if b.lh != 0 || b.ll >= seenBit {
		panic("limiters: a bucket's level outgrew its narrow state")
	}
	s.last, s.level = b.last, b.ll
	if b.seen {
		s.level |= seenBit
	}
}

func (s *bucketWords) boundary(r *Rule, now int64) (int64, bool) {
	b := s.load()
	return b.boundary(r, now)
}

func (s *bucketWords) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if out == nil {
		return s.admit(r, now, cost)
	}
	b := s.load()
	allowed, back = b.decide(r, now, cost, commit, out, x)
	s.store(&b)
	return allowed, back
}

// drained returns the level at now, drained since the last request, in
// 64 bits; back, when now is before the last request.
func (s *bucketWords) drained(r *Rule, now int64) (level uint64, back bool) {
	if s.level&seenBit != 0 && now < s.last {
		return 0, true
	}
	return s.drainedBy(r.n, now), false
}

// drainedBy is drained for a rule whose rate's numerator is n, at a time
// now not before the last request.
func (s *bucketWords) drainedBy(n uint64, now int64) uint64 {
	level := s.level &^ seenBit
	if s.level&seenBit != 0 && level != 0 {
		if dh, dl := bits.Mul64(since(now, s.last), n); dh == 0 && dl < level {
			return level - dl
		}
		return 0
	}
	return level
}

// admit is decide without a Decision, bucket.decide's drain and fill in
// 64 bits: the level and Capacity, times per, are below 2^63 (see
// narrowBucket), and so is cost*per for 1 <= cost <= Capacity, so their
// sum does not overflow.
func (s *bucketWords) admit(r *Rule, now, cost int64) (allowed, back bool) {
	level, back := s.drained(r, now)
	if back {
		return false, true
	}
	if n := level + uint64(cost)*r.per; n <= uint64(r.limit)*r.per {
		level, allowed = n, true
	}
	s.last, s.level = now, level|seenBit
	return allowed, false
}

// wait is bucket.wait in 64 bits, as admit is decide.
func (s *bucketWords) wait(r *Rule, now, cost int64) (wait Span, refused, back bool) {
	level, back := s.drained(r, now)
	if back {
		return Span{}, false, true
	}
	n, c := level+uint64(cost)*r.per, uint64(r.limit)*r.per
	if n <= c {
		return Span{}, false, false
	}
	return overflowWait(r, 0, n, 0, c), true, false
}

func (s *bucketWords) idle(r *Rule, now int64) bool {
	b := s.load()
	return b.idle(r, now)
}

func (s *bucketWords) appendText(r *Rule, pre *bucketWords, at int64, unit time.Duration, dst []byte) []byte {
	b, p := s.load(), pre.load()
	return b.appendText(r, &p, at, unit, dst)
}

func (s *bucketWords) gauge(r *Rule, now int64) (float64, int64) {
	b := s.load()
	return b.gauge(r, now)
}

// logTimes are the arrays of entry times a shortLog holds: one entry per
// unit of the limit.
type logTimes interface {
	[1]int64 | [2]int64 | [3]int64 | [4]int64
}

// shortLog is a SlidingLogState of a rule whose limit is at most len(A):
// entry i's time in t[i], oldest first, and its cost in byte i of cost. An
// entry's cost is at least 1 and the costs sum to at most the limit, so
// the log never holds more entries than the limit, nor an entry a cost
// above it, and a cost of 0 marks the end of the log. The fresh state is
// the zero value. For the classic limit of 3, 32 bytes, where the wide
// state takes 112.
type shortLog[A logTimes] struct {
	t    A
	cost uint64
}

var logNarrow = [...]form{
	{ops: ops[shortLog[[1]int64], *shortLog[[1]int64]]{}, fast: fastOf((*shortLog[[1]int64]).decide)},
	{ops: ops[shortLog[[2]int64], *shortLog[[2]int64]]{}, fast: fastOf((*shortLog[[2]int64]).decide)},
	{ops: ops[shortLog[[3]int64], *shortLog[[3]int64]]{}, fast: fastOf((*shortLog[[3]int64]).decide)},
	{ops: ops[shortLog[[4]int64], *shortLog[[4]int64]]{}, fast: fastOf((*shortLog[[4]int64]).decide)},
}

// narrowLog picks the shortLog of r's limit. The longest is no longer
// than the wide state's inline ring, so the wide state it decodes into
// never needs storage of its own.
func narrowLog(r *Rule) *form {
	if r.limit > int64(len(logNarrow)) || len(logNarrow) > inlineLog {
		return nil
	}
	return &logNarrow[r.limit-1]
}

func (s *shortLog[A]) load() SlidingLogState {
	var w SlidingLogState
	for i := 0; i < len(s.t); i++ {
		c := int64(s.cost >> (8 * i) & 0xff)
		if c == 0 {
			break
		}
		w.inline[i] = logEntry{t: s.t[i], cost: c}
		w.sum += c
		w.n++
	}
	return w
}

func (s *shortLog[A]) store(w *SlidingLogState) {
	if w.n > len(s.t) || w.buf != nil {
		panic("limiters: a sliding log outgrew its narrow state")
	}
	s.cost = 0
	for i := 0; i < len(s.t); i++ {
		if i >= w.n {
			s.t[i] = 0
			continue
		}
		e := w.at(i)
		s.t[i] = e.t
		s.cost |= uint64(e.cost) << (8 * i) // 1 <= cost <= limit <= 4
	}
}

func (s *shortLog[A]) boundary(r *Rule, now int64) (int64, bool) {
	w := s.load()
	return w.boundary(r, now)
}

func (s *shortLog[A]) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if out == nil {
		return s.admit(r, now, cost, commit)
	}
	w := s.load()
	allowed, back = w.decide(r, now, cost, commit, out, x)
	if allowed && commit {
		s.store(&w) // only an admission changes a log
	}
	return allowed, back
}

// admit is decide without a Decision, worked on the narrow log itself
// instead of the wide state it decodes to, as SlidingLogState.decide
// does it: a request before the newest entry is back; an entry at t has
// left the window at now when now-t > W; the request is refused when its
// cost does not fit beside the entries left, and an admission drops the
// entries that left and logs cost at now, added to the newest entry when
// that is at now.
func (s *shortLog[A]) admit(r *Rule, now, cost int64, commit bool) (allowed, back bool) {
	c := s.cost
	n := (bits.Len64(c) + 7) / 8 // the costs are the low n bytes, none 0
	if n > 0 && now < s.t[n-1] {
		return false, true
	}
	w := uint64(r.window)
	first := 0
	for first < n && since(now, s.t[first]) > w {
		first++
	}
	c >>= 8 * first
	// The entries' costs sum to at most the limit, under a byte: the top
	// byte of c times a one in every byte is their sum.
	if cost > r.limit-int64(c*0x0101010101010101>>56) {
		return false, false
	}
	if !commit || cost <= 0 {
		return true, false
	}
	k := n - first // the entries left, now at the front
	if first > 0 {
		for i := range k {
			s.t[i] = s.t[first+i]
		}
	}
	if k > 0 && s.t[k-1] == now {
		c += uint64(cost) << (8 * (k - 1)) // the sum stays within the limit, so within the byte
	} else {
		s.t[k] = now // k < len(t): the entries left cost at least one each and sum to under the limit
		c |= uint64(cost) << (8 * k)
		k++
	}
	for i := k; i < n; i++ {
		s.t[i] = 0
	}
	s.cost = c
	return true, false
}

func (s *shortLog[A]) idle(r *Rule, now int64) bool {
	w := s.load()
	return w.idle(r, now)
}

func (s *shortLog[A]) appendText(r *Rule, pre *shortLog[A], at int64, unit time.Duration, dst []byte) []byte {
	w, p := s.load(), pre.load()
	return w.appendText(r, &p, at, unit, dst)
}

func (s *shortLog[A]) gauge(r *Rule, now int64) (float64, int64) {
	w := s.load()
	return w.gauge(r, now)
}
