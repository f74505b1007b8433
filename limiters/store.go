package limiters

import (
	"math/bits"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// member is one rule of a store: its state's place in a key's block.
type member struct {
	rule Rule
	ops  kindOps
	fast fastDecide
	wait fastWait // nil: waits take full decisions
	d    Decision // scratch for decide, on the heap with the store
	x    Exact    // scratch for waits' full decisions
	off  uintptr  // the state's offset in the block
	// lead is the index of the earlier member whose state this one
	// shares, or -1. Sharing members make the same decision but for the
	// name of a plain refusal: an identical rule given twice, or the two
	// faces of one meter (a token bucket and a leaky bucket with the same
	// capacity and rate).
	lead int
	// zone is the member's nginx zone, for a kind whose keys share one
	// (an owner only), else nil.
	zone *nginxZone
}

// store holds the per-key states of a list of rules, for keys interned as
// dense ids: one block per key holding every member's state side by side,
// so a request touches one small piece of memory however many rules judge
// it. With many keys, where a request's first touch of its key is a cache
// miss, that is what makes a replay through many limiters fast. The
// block's type is a struct built from the members' state types, so the
// garbage collector sees the pointers a sliding log holds and scans
// nothing in blocks without one.
type store struct {
	members []member
	blocks  chunk.Blocks
	// owners are the members that own their state (lead < 0), and faces
	// the others: admit decides the owners, then copies to the faces.
	owners, faces []int
	// lean holds, per owner in order, what admit and admitWaits read of
	// it, side by side: they walk 72 bytes an owner instead of the
	// member's hundreds. For one that keeps a two-word bucket and no zone
	// (a sweep's grid of token buckets), admitWaits decides from them
	// alone.
	lean []leanOwner
	// faceLeads holds, per face in order, its member and its lead's, for
	// admit's copy of the lead's bit.
	faceLeads []faceLead
}

// leanOwner is what deciding a request reads of an owner: its member and
// rule, its state's decide, its place in the block and its rule's
// figures, which for a bucketWords (word) are all a decision needs.
type leanOwner struct {
	rule   *Rule
	fast   fastDecide
	off    uintptr
	limit  int64
	n, per uint64
	full   uint64 // limit*per, a full bucket (word only)
	bit    uint64 // 1 << member
	member int32
	word   bool // a bucketWords, with no zone
	zoned  bool // a kind whose keys share an nginx zone
}

// faceLead is a face and the owner whose decision it copies.
type faceLead struct{ face, lead uint8 }

// newStore lays out the blocks of rules.
func newStore(rules []*Rule) store {
	var s store
	var fields []reflect.StructField
	var owner []int // the member of each field
	for i, r := range rules {
		m := member{rule: *r, ops: r.form.ops, fast: r.form.fast, wait: r.form.wait, lead: -1}
		for j := range s.members {
			o := &s.members[j]
			if o.lead < 0 && shareable(r, &o.rule) {
				m.lead = j
				break
			}
		}
		if m.lead < 0 {
			fields = append(fields, reflect.StructField{Name: "S" + strconv.Itoa(i), Type: m.ops.stateType()})
			owner = append(owner, i)
			if r.k.zoned {
				m.zone = newNginxZone(r)
			}
		}
		s.members = append(s.members, m)
	}
	t := reflect.StructOf(fields)
	// Round the block up so that no state straddles a cache line for
	// want of alignment: to a power of two up to 64 bytes, and a whole
	// number of lines beyond.
	size := t.Size()
	want := uintptr(8)
	for want < size && want < 64 {
		want *= 2
	}
	if size > 64 {
		want = (size + 63) &^ 63
	}
	if want > size {
		fields = append(fields, reflect.StructField{Name: "Pad", Type: reflect.ArrayOf(int(want-size), reflect.TypeFor[byte]())})
		t = reflect.StructOf(fields)
	}
	for f, i := range owner {
		s.members[i].off = t.Field(f).Offset
	}
	for i := range s.members {
		if l := s.members[i].lead; l >= 0 {
			s.members[i].off = s.members[l].off
		}
	}
	s.blocks = chunk.NewBlocks(t)
	for i, m := range s.members {
		if m.lead < 0 {
			s.owners = append(s.owners, i)
		} else {
			s.faces = append(s.faces, i)
		}
	}
	for _, i := range s.owners {
		m := &s.members[i]
		b := leanOwner{rule: &m.rule, fast: m.fast, member: int32(i), bit: 1 << i, word: m.ops == bucketNarrow.ops && m.zone == nil,
			zoned: m.zone != nil, off: m.off, limit: m.rule.limit, n: m.rule.n, per: m.rule.per}
		if b.word {
			b.full = uint64(b.limit) * b.per // below 2^63: see narrowBucket
		}
		s.lean = append(s.lean, b)
	}
	for _, i := range s.faces {
		s.faceLeads = append(s.faceLeads, faceLead{face: uint8(i), lead: uint8(s.members[i].lead)})
	}
	return s
}

// shareable reports whether a member of rule r can share the state of a
// member of rule o.
func shareable(r, o *Rule) bool {
	// Rules that share a state keep it in one form.
	if r.form.ops != o.form.ops {
		return false
	}
	if r.same(o) {
		return true
	}
	return r.k.shares != "" && r.k.shares == o.k.shares && r.pol.SameFor(r.alg, o.pol)
}

// face turns the decision of the member lead into that of a member of
// rule r sharing its state: the same in every field but the name of a
// plain refusal.
func face(d Decision, lead, r *Rule) Decision {
	if d.Reason == lead.refusal {
		d.Reason = r.refusal
	}
	return d
}

// allow decides a request under every member, writing member i's decision
// to out[i] and, unless exact is nil, its durations in full to exact[i];
// it returns the allowed mask.
func (s *store) allow(id uint32, now, cost int64, out []Decision, exact []Exact) uint64 {
	base := s.blocks.At(id)
	var mask uint64
	for i := range s.members {
		m := &s.members[i]
		var x *Exact
		if exact != nil {
			x = &exact[i]
		}
		var d Decision
		if m.lead >= 0 {
			d = face(out[m.lead], &s.members[m.lead].rule, &m.rule)
			if x != nil {
				*x = exact[m.lead]
			}
		} else {
			s.enter(m, id, now, cost)
			d = m.allow(unsafe.Add(base, m.off), now, cost, x)
		}
		out[i] = d
		if d.Allowed {
			mask |= 1 << i
		}
	}
	return mask
}

// enter readies member m's zone, if its kind keeps one, for a request of
// cost at now for key id: before the request is decided, as the library
// does it. A cost that can never pass touches nothing.
func (s *store) enter(m *member, id uint32, now, cost int64) {
	// Small enough to be inlined, as most kinds keep no zone.
	if z := m.zone; z != nil {
		z.enter(s, m, id, now, cost)
	}
}

// allow is kindOps.allow, with the common case (a valid cost at a time the
// state accepts) decided by a direct call.
func (m *member) allow(p unsafe.Pointer, now, cost int64, x *Exact) Decision {
	r := &m.rule
	if validCost(r, cost) {
		if x != nil {
			*x = Exact{}
		}
		if _, back := m.fast(p, r, now, cost, true, &m.d, x); !back {
			return m.d
		}
	}
	return m.ops.allow(r, p, now, cost, &m.d, x)
}

// refused is Group.Refused.
func (s *store) refused(id uint32, now, cost int64, mask uint64, out []Decision, exact []Exact) uint64 {
	mask &= 1<<len(s.members) - 1
	if mask == 0 {
		return 0
	}
	base := s.blocks.At(id) // a key never seen: its fresh state
	var wrong uint64
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		var x *Exact
		if exact != nil {
			x = &exact[i]
		}
		d, ok := s.refusal(i, base, now, cost, x)
		if !ok {
			wrong |= 1 << i
			continue
		}
		out[i] = d
	}
	return wrong
}

// waits is Group.RefusedWaits.
func (s *store) waits(id uint32, now, cost int64, mask uint64, waits []Span) uint64 {
	mask &= 1<<len(s.members) - 1
	if mask == 0 {
		return 0
	}
	base := s.blocks.At(id) // a key never seen: its fresh state
	var wrong uint64
	for m := mask; m != 0; m &= m - 1 {
		wrong |= s.wait(bits.TrailingZeros64(m), base, now, cost, waits)
	}
	return wrong
}

// refusal returns member i's decision on a request of cost at now for the
// key whose block is base, and its durations in full in *x unless x is
// nil, and reports whether it is a refusal: a refused request changes no
// state, so judging it again decides it alike.
func (s *store) refusal(i int, base unsafe.Pointer, now, cost int64, x *Exact) (Decision, bool) {
	mb := &s.members[i]
	src := mb
	if mb.lead >= 0 {
		src = &s.members[mb.lead]
	}
	p := unsafe.Add(base, src.off)
	var d Decision
	if validCost(&src.rule, cost) {
		if x != nil {
			*x = Exact{}
		}
		if ok, back := src.fast(p, &src.rule, now, cost, false, &src.d, x); !back {
			if ok {
				return Decision{}, false
			}
			d = src.d
		} else {
			d = src.ops.allow(&src.rule, p, now, cost, &src.d, x)
		}
	} else {
		d = src.ops.allow(&src.rule, p, now, cost, &src.d, x)
	}
	if d.Allowed {
		return Decision{}, false
	}
	if mb.lead >= 0 {
		d = face(d, &src.rule, &mb.rule)
	}
	return d, true
}

// admit decides a request under every member, computing only whether each
// allowed it, and returns the allowed mask.
func (s *store) admit(id uint32, now, cost int64) uint64 {
	base := s.blocks.At(id)
	var mask uint64
	for j := range s.lean {
		b := &s.lean[j]
		if uint64(cost-1) >= uint64(b.limit) { // validCost
			continue
		}
		if b.zoned {
			m := &s.members[b.member]
			m.zone.enter(s, m, id, now, cost)
		}
		p := unsafe.Add(base, b.off)
		ok, back := b.fast(p, b.rule, now, cost, true, nil, nil)
		if back {
			m := &s.members[b.member]
			ok = m.ops.admit(b.rule, p, now, cost, &m.d)
		}
		if ok {
			mask |= b.bit
		}
	}
	for _, f := range s.faceLeads {
		mask |= (mask >> (f.lead & 63) & 1) << (f.face & 63)
	}
	return mask
}

// admitWaits is Group.AdmitWaits.
func (s *store) admitWaits(id uint32, now, cost int64, want uint64, waits []Span) (allowed, wrong uint64) {
	base := s.blocks.At(id)
	allowed, wrong = s.ownerWaits(id, base, now, cost, want, waits)
	for _, i := range s.faces {
		lead := s.members[i].lead
		allowed |= (allowed >> lead & 1) << i
		if want&(1<<i) == 0 || allowed&(1<<i) != 0 {
			continue
		}
		if want&(1<<lead) != 0 {
			waits[i] = waits[lead]
		} else {
			wrong |= s.wait(i, base, now, cost, waits)
		}
	}
	return allowed, wrong
}

// admitWait decides a request of cost at now for key id, whose block is
// base, under owner i, and when it refuses it and want holds i, writes its
// RetryAfter to waits[i]: it returns bit i in ok when the owner allows the
// request, and in wrong when its wait, judged again, would allow it.
func (s *store) admitWait(i int, id uint32, base unsafe.Pointer, now, cost int64, want uint64, waits []Span) (ok, wrong uint64) {
	m := &s.members[i]
	r := &m.rule
	p := unsafe.Add(base, m.off)
	var allowed bool
	if validCost(r, cost) {
		s.enter(m, id, now, cost)
		var back bool
		if allowed, back = m.fast(p, r, now, cost, true, nil, nil); back {
			allowed = m.ops.admit(r, p, now, cost, &m.d)
		}
	}
	if allowed {
		return 1 << i, 0
	}
	if want&(1<<i) != 0 {
		return 0, s.wait(i, base, now, cost, waits)
	}
	return 0, 0
}

// ownerWaits is admitWaits' loop over the owners: leanWaits, then
// admitWait for the owners it leaves. The owners' states are apart, so
// the order they decide in is their own.
func (s *store) ownerWaits(id uint32, base unsafe.Pointer, now, cost int64, want uint64, waits []Span) (allowed, wrong uint64) {
	allowed, slow := leanWaits(s.lean, base, now, cost, want, waits)
	for ; slow != 0; slow &= slow - 1 {
		ok, w := s.admitWait(int(s.lean[bits.TrailingZeros64(slow)].member), id, base, now, cost, want, waits)
		allowed |= ok
		wrong |= w
	}
	return allowed, wrong
}

// leanWaits decides a request of cost at now under each owner in lean
// that keeps a two-word bucket, in the block at base: bucketWords.admit
// written out over the figures in lean, with a refusal's wait, where want
// holds it, from the overflow admit found, as bucketWords.wait would work
// it out just after. It returns the mask of those that allowed it, and in
// slow, bit j for lean[j], the owners it left for admitWait: the others,
// and any for a request out of order or of a cost past the bucket's
// capacity. It is a function of its own, with no call in its loop, so
// that what it keeps in registers is only what the loop needs.
func leanWaits(lean []leanOwner, base unsafe.Pointer, now, cost int64, want uint64, waits []Span) (allowed, slow uint64) {
	for j := range lean {
		b := &lean[j]
		st := (*bucketWords)(unsafe.Add(base, b.off))
		if !b.word || uint64(cost-1) >= uint64(b.limit) || st.level&seenBit != 0 && now < st.last {
			slow |= 1 << (j & 63)
			continue
		}
		// drainedBy, with no multiply at a rate of one unit a tick.
		level := st.level &^ seenBit
		if st.level&seenBit != 0 && level != 0 {
			d := since(now, st.last)
			if b.n != 1 {
				var hi uint64
				if hi, d = bits.Mul64(d, b.n); hi != 0 {
					d = level
				}
			}
			if d < level {
				level -= d
			} else {
				level = 0
			}
		}
		n, c := level+uint64(cost)*b.per, b.full
		st.last = now
		if n <= c {
			st.level = n | seenBit
			allowed |= b.bit
			continue
		}
		st.level = level | seenBit
		if want&b.bit != 0 {
			if o := n - c; b.n == 1 {
				waits[b.member] = span64(o)
			} else {
				waits[b.member] = divCeilSpan(0, o, b.n)
			}
		}
	}
	return allowed, slow
}

// wait writes the RetryAfter of member i, which has just refused a request
// of cost at now for the key whose block is base, to waits[i]: from its
// state's wait where it has one, else from the full decision. It returns
// bit i when the member would allow the request, which would be a bug,
// else 0.
func (s *store) wait(i int, base unsafe.Pointer, now, cost int64, waits []Span) uint64 {
	src := &s.members[i]
	if src.lead >= 0 {
		src = &s.members[src.lead]
	}
	if src.wait != nil && validCost(&src.rule, cost) {
		w, refused, back := src.wait(unsafe.Add(base, src.off), &src.rule, now, cost)
		if !back {
			waits[i] = w
			if !refused {
				return 1 << i
			}
			return 0
		}
	}
	if _, ok := s.refusal(i, base, now, cost, &src.x); !ok {
		return 1 << i
	}
	waits[i] = src.x.RetryAfter
	return 0
}

// explain is allow that also appends each member's state text to dst and
// sets ends[i] to the length of dst after member i's.
func (s *store) explain(id uint32, now, cost int64, unit time.Duration, out []Decision, exact []Exact, dst []byte, ends []int) ([]byte, uint64) {
	base := s.blocks.At(id)
	var mask uint64
	for i := range s.members {
		m := &s.members[i]
		var x *Exact
		if exact != nil {
			x = &exact[i]
		}
		p := unsafe.Add(base, m.off)
		var d Decision
		if m.lead >= 0 {
			d = face(out[m.lead], &s.members[m.lead].rule, &m.rule)
			if x != nil {
				*x = exact[m.lead]
			}
			dst = m.ops.text(&m.rule, p, now, unit, dst)
		} else {
			s.enter(m, id, now, cost)
			d, dst = m.ops.explain(&m.rule, p, now, cost, unit, dst, &m.d, x)
		}
		out[i] = d
		ends[i] = len(dst)
		if d.Allowed {
			mask |= 1 << i
		}
	}
	return dst, mask
}

// idle reports whether id's states decide every request at or after now
// as fresh states would, under every member.
func (s *store) idle(id uint32, now int64) bool {
	base := s.blocks.Get(id)
	if base == nil {
		return true
	}
	for i := range s.members {
		m := &s.members[i]
		if m.lead < 0 && !m.ops.idle(&m.rule, unsafe.Add(base, m.off), now) {
			return false
		}
	}
	return true
}

// decidedAt returns the time at which member i's state of id takes a
// request at now; see Table.DecidedAt.
func (s *store) decidedAt(id uint32, i int, now int64) int64 {
	base := s.blocks.Get(id)
	if base == nil {
		return now
	}
	m := &s.members[i]
	return m.ops.decidedAt(&m.rule, unsafe.Add(base, m.off), now)
}

// reset puts id's states back in the fresh state, releasing any storage.
func (s *store) reset(id uint32) {
	base := s.blocks.Get(id)
	if base == nil {
		return
	}
	for i := range s.members {
		if m := &s.members[i]; m.lead < 0 {
			if m.zone != nil {
				m.zone.forget(s, m, id)
			}
			m.ops.reset(unsafe.Add(base, m.off))
		}
	}
}

// prefetch asks the CPU to start loading id's block; see Table.Prefetch.
func (s *store) prefetch(id uint32) {
	if base := s.blocks.Get(id); base != nil {
		prefetch.Range(base, s.blocks.Size())
	}
}
