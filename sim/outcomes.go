package sim

import "math/bits"

// outcomeTable counts requests by outcome (the allowed mask and the
// oracle's word) for a run of more lanes than outcomes' array covers. It
// is an open-addressing table with the mask's own bits as its hash: a
// Go map hashes its key's sixteen bytes on every request, and a run has
// few distinct outcomes, so the table is small and its probes short.
type outcomeTable struct {
	slots []outcomeSlot // a power of two long, at most half full
	shift uint          // 64 - log2(len(slots))
	n     int           // outcomes held
}

// outcomeSlot is one outcome and its count; a count of 0 marks an empty
// slot (an outcome is added with its first request).
type outcomeSlot struct {
	mask   uint64
	oracle bool
	count  int64
}

func newOutcomeTable() *outcomeTable {
	const size = 64
	return &outcomeTable{slots: make([]outcomeSlot, size), shift: 64 - 6}
}

// home is the first slot the outcome probes.
func (t *outcomeTable) home(mask uint64, oracle bool) uint64 {
	h := mask
	if oracle {
		h = ^h
	}
	return (h * 0x9e3779b97f4a7c15) >> t.shift
}

// add counts one request of the outcome (mask, oracle).
func (t *outcomeTable) add(mask uint64, oracle bool) {
	last := uint64(len(t.slots) - 1)
	for p := t.home(mask, oracle); ; p = (p + 1) & last {
		s := &t.slots[p]
		if s.count == 0 {
			*s = outcomeSlot{mask: mask, oracle: oracle, count: 1}
			if t.n++; 2*t.n > len(t.slots) {
				t.grow()
			}
			return
		}
		if s.mask == mask && s.oracle == oracle {
			s.count++
			return
		}
	}
}

// grow doubles the table.
func (t *outcomeTable) grow() {
	old := t.slots
	t.slots = make([]outcomeSlot, 2*len(old))
	t.shift = uint(64 - bits.TrailingZeros(uint(len(t.slots))))
	last := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.count == 0 {
			continue
		}
		p := t.home(s.mask, s.oracle)
		for t.slots[p].count != 0 {
			p = (p + 1) & last
		}
		t.slots[p] = s
	}
}

// each calls f with every outcome counted and its count.
func (t *outcomeTable) each(f func(mask uint64, oracle bool, count int64)) {
	for _, s := range t.slots {
		if s.count != 0 {
			f(s.mask, s.oracle, s.count)
		}
	}
}

// total is the number of requests counted.
func (t *outcomeTable) total() int64 {
	var n int64
	for _, s := range t.slots {
		n += s.count
	}
	return n
}
