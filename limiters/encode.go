package limiters

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// StepEncoded judges a request of cost at now for rule r against a key's
// state held as bytes, as a store outside the process may keep it, and
// returns the new state's bytes appended to dst, and the decision. An
// empty state is the fresh state. The decision is the one the state's
// Step makes. The bytes are this package's own encoding, which may change
// between versions; bytes that are no state of r are an error.
func (r *Rule) StepEncoded(state []byte, now, cost int64, dst []byte) ([]byte, Decision, error) {
	if r == nil || r.k == nil {
		return dst, Decision{Reason: ReasonBadRule}, nil
	}
	return r.k.ops.stepEncoded(r, state, now, cost, dst, nil)
}

// StepEncodedExact is StepEncoded that also returns the decision's
// durations in full, as Table.AllowExact does.
func (r *Rule) StepEncodedExact(state []byte, now, cost int64, dst []byte) ([]byte, Decision, Exact, error) {
	if r == nil || r.k == nil {
		return dst, Decision{Reason: ReasonBadRule}, Exact{}, nil
	}
	x := new(Exact)
	dst, d, err := r.k.ops.stepEncoded(r, state, now, cost, dst, x)
	return dst, d, *x, err
}

// DescribeEncoded returns what a key's state held as bytes (see
// StepEncoded) stands at, at now, without judging a request: the
// Remaining and ResetAfter that a refusal at now reports, in a Decision
// that is neither allowed nor refused for a reason, and ResetAfter in full.
// A state that a request at now would find the clock gone backwards for is
// described at its earliest time, with the wait from now added. It is
// what a request the caller decides not to take leaves: a stack of limits
// that refunds a request refused by one of them describes the others'
// states with it.
func (r *Rule) DescribeEncoded(state []byte, now int64) (Decision, Exact, error) {
	if r == nil || r.k == nil {
		return Decision{Reason: ReasonBadRule}, Exact{}, nil
	}
	return r.k.ops.describeEncoded(r, state, now)
}

// DecidedAtEncoded returns the time at which a key's state held as bytes
// (as StepEncoded takes it) takes a request at now, as Table.DecidedAt
// does: now, unless the clock went backwards for the key.
func (r *Rule) DecidedAtEncoded(state []byte, now int64) (int64, error) {
	if r == nil || r.k == nil {
		return now, nil
	}
	return r.k.ops.decidedAtEncoded(r, state, now)
}

// errState is the error of StepEncoded for bytes that are no state.
var errState = errors.New("limiters: StepEncoded: bytes are no state of the rule")

// A codec is a state type that StepEncoded can read and write.
type codec interface {
	appendBinary(dst []byte) []byte
	// readBinary sets the state from b, a state of r, or reports false.
	readBinary(r *Rule, b []byte) bool
}

func (ops[S, P]) stepEncoded(r *Rule, state []byte, now, cost int64, dst []byte, x *Exact) ([]byte, Decision, error) {
	if r.k.zoned {
		return dst, Decision{}, errZoned
	}
	var s S
	c := any(P(&s)).(codec)
	if len(state) > 0 && !c.readBinary(r, state) {
		return dst, Decision{}, errState
	}
	d := applyExact(P(&s), r, now, cost, new(Decision), x)
	return c.appendBinary(dst), d, nil
}

func (ops[S, P]) describeEncoded(r *Rule, state []byte, now int64) (Decision, Exact, error) {
	var s S
	c := any(P(&s)).(codec)
	if len(state) > 0 && !c.readBinary(r, state) {
		return Decision{}, Exact{}, errState
	}
	at := now
	var off Span
	if b, back := P(&s).boundary(r, now); back {
		at, off = b, span64(since(b, now))
	}
	x := new(Exact)
	d := refuse(P(&s), r, at, off, 0, ReasonNone, new(Decision), x)
	return d, *x, nil
}

func (ops[S, P]) decidedAtEncoded(r *Rule, state []byte, now int64) (int64, error) {
	var s S
	if len(state) > 0 && !any(P(&s)).(codec).readBinary(r, state) {
		return now, errState
	}
	return decidedAt(P(&s), r, now), nil
}

// words reads n little-endian 64-bit words from b, which must hold
// exactly that many (and extra more bytes).
func words(b []byte, n, extra int) ([]uint64, bool) {
	if len(b) != 8*n+extra {
		return nil, false
	}
	w := make([]uint64, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return w, true
}

func appendWords(dst []byte, w ...uint64) []byte {
	for _, v := range w {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

func (s *FixedWindowState) appendBinary(dst []byte) []byte {
	return appendWords(dst, uint64(s.window), uint64(s.count))
}

func (s *FixedWindowState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 0)
	if !ok || int64(w[1]) < 0 || int64(w[1]) > r.limit {
		return false
	}
	s.window, s.count = int64(w[0]), int64(w[1])
	return true
}

func (s *SlidingCounterState) appendBinary(dst []byte) []byte {
	return appendWords(dst, uint64(s.window), uint64(s.prev), uint64(s.cur))
}

func (s *SlidingCounterState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 3, 0)
	if !ok || w[1] > uint64(r.limit) || w[2] > uint64(r.limit) {
		return false
	}
	s.window, s.prev, s.cur = int64(w[0]), int64(w[1]), int64(w[2])
	return true
}

func (b *bucket) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(b.last), b.lh, b.ll)
	if b.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (b *bucket) readBinary(r *Rule, src []byte) bool {
	w, ok := words(src, 3, 1)
	if !ok || src[24] > 1 {
		return false
	}
	// The level is at most the capacity: level*per <= Capacity*per.
	ch, cl := bits.Mul64(uint64(r.limit), r.per)
	if less128(ch, cl, w[1], w[2]) {
		return false
	}
	b.last, b.lh, b.ll, b.seen = int64(w[0]), w[1], w[2], src[24] == 1
	return true
}

func (g *debt) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(g.last), g.ns, g.frac)
	if g.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (g *debt) readBinary(r *Rule, src []byte) bool {
	w, ok := words(src, 3, 1)
	if !ok || src[24] > 1 || w[2] >= r.n {
		return false
	}
	// The debt is at most Capacity emission intervals: ns*n + frac <=
	// Capacity*per.
	hi, lo := bits.Mul64(w[1], r.n)
	hi, lo = add128(hi, lo, 0, w[2])
	ch, cl := bits.Mul64(uint64(r.limit), r.per)
	if less128(ch, cl, hi, lo) {
		return false
	}
	g.last, g.ns, g.frac, g.seen = int64(w[0]), w[1], w[2], src[24] == 1
	return true
}

// The logs are their entries, oldest first: time (or sub-window) and cost.

func (s *SlidingLogState) appendBinary(dst []byte) []byte {
	for i := 0; i < s.n; i++ {
		e := s.at(i)
		dst = appendWords(dst, uint64(e.t), uint64(e.cost))
	}
	return dst
}

func (s *SlidingLogState) readBinary(r *Rule, b []byte) bool {
	if len(b)%16 != 0 {
		return false
	}
	w, _ := words(b, len(b)/8, 0)
	var sum int64
	for i := 0; i < len(w); i += 2 {
		t, cost := int64(w[i]), int64(w[i+1])
		if cost < 1 || cost > r.limit-sum || i > 0 && t <= int64(w[i-2]) {
			return false
		}
		sum += cost
		s.push(t, cost)
	}
	return true
}

func (s *SlidingBucketsState) appendBinary(dst []byte) []byte { return s.log.appendBinary(dst) }

func (s *SlidingBucketsState) readBinary(r *Rule, b []byte) bool { return s.log.readBinary(r, b) }
