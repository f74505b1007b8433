package sim

// burstTracker finds, for every algorithm and the keys of one worker, the
// largest allowed cost inside any closed interval of a fixed length.
//
// Each key has one ring of the requests that any algorithm allowed within
// the last interval, each entry marked with the algorithms that allowed it,
// and one running sum per algorithm. The interval is the same for every
// algorithm, so one ring serves them all: a request costs one ring write and
// one slot update however many algorithms run. Rings live in a chunked
// arena of plain values, so the garbage collector has nothing to scan and
// no huge slice is ever copied to grow.
type burstTracker struct {
	interval int64
	nalg     int
	slots    chunked[burstSlot]
	arena    [][]burstEntry // chunks of ring storage
	cur      int            // the shared chunk new small rings go to; -1: none
	used     int            // entries used in chunk cur

	best []algoBest // per algorithm

	extra chunked[[maxAlgos - inlineSums]int64] // sums past the slot's, with more algorithms

	perKey bool
	keyBst chunked[[maxAlgos]keyBest] // with perKey: each key's best intervals
}

// maxAlgos bounds the algorithms of one run: each has a bit in an entry's
// mask. There are seven, and a run names each at most once.
const maxAlgos = 7

// maxCost bounds the cost an entry can hold beside its mask. Run refuses
// policies whose limit or capacity could admit more in one request.
const maxCost = 1<<56 - 1

// burstEntry is one allowed request: its time, and its cost with, in the low
// byte, the algorithms that allowed it.
type burstEntry struct {
	time int64
	cm   uint64
}

func (e burstEntry) cost() int64 { return int64(e.cm >> 8) }
func (e burstEntry) mask() uint8 { return uint8(e.cm) }

// burstSlot is one key's ring, entries arena[chunk][off+(head+i)%cap], and
// the cost each of the first algorithms allowed within it: one aligned
// cache line, enough for the seed's five. The sums of further algorithms
// are kept in burstTracker.extra.
type burstSlot struct {
	chunk, off, cap, head, n uint32
	_                        uint32
	sums                     [inlineSums]int64
}

// inlineSums is how many algorithms' sums a burstSlot holds.
const inlineSums = 5

// sum returns the running sum of algorithm a in slot s of key id.
func (bt *burstTracker) sum(s *burstSlot, id uint32, a int) *int64 {
	if a < inlineSums {
		return &s.sums[a]
	}
	return &bt.extra.at(id)[a-inlineSums]
}

// algoBest is an algorithm's worst interval so far.
type algoBest struct {
	Interval
	seq int64 // request that closed it; -1: none yet
	id  uint32
}

type keyBest struct {
	count, from, to, seq int64
}

// scoredInterval is a key's best interval with what orders it.
type scoredInterval struct {
	Interval
	seq  int64
	algo int
}

const arenaChunk = 1 << 16 // entries per arena chunk (1 MiB)

func newBurstTracker(interval int64, nalg int, perKey bool) *burstTracker {
	bt := &burstTracker{interval: interval, nalg: nalg, cur: -1, perKey: perKey, best: make([]algoBest, nalg)}
	for a := range bt.best {
		bt.best[a].seq = -1
	}
	return bt
}

// touch loads id's slot and its ring's newest entry so that record finds
// both in cache.
func (bt *burstTracker) touch(id uint32) uint64 {
	s := bt.slots.peek(id)
	if s == nil || s.n == 0 {
		return 0
	}
	return uint64(bt.entry(s, s.n-1).time)
}

// record notes that the algorithms in mask allowed the seq-th request of
// the trace, by key id at time t with cost c.
func (bt *burstTracker) record(id uint32, t, c, seq int64, mask uint8) {
	s := bt.slots.at(id)
	if s.n > 0 {
		// Under the clamp clock policy a request may be earlier than the
		// last one; the limiters treated it as the last.
		if last := bt.entry(s, s.n-1).time; t < last {
			t = last
		}
		// Drop entries older than t - interval (closed interval: an entry
		// exactly at t - interval stays). Unsigned difference: t >= front.
		for s.n > 0 {
			f := *bt.entry(s, 0)
			if uint64(t)-uint64(f.time) <= uint64(bt.interval) {
				break
			}
			for m, a := f.mask(), 0; m != 0; m, a = m>>1, a+1 {
				if m&1 != 0 {
					*bt.sum(s, id, a) -= f.cost()
				}
			}
			s.head++
			if s.head == s.cap {
				s.head = 0
			}
			s.n--
		}
	}
	if s.n == s.cap {
		bt.grow(s)
	}
	*bt.entry(s, s.n) = burstEntry{time: t, cm: uint64(c)<<8 | uint64(mask)}
	s.n++
	for m, a := mask, 0; m != 0; m, a = m>>1, a+1 {
		if m&1 == 0 {
			continue
		}
		sum := bt.sum(s, id, a)
		*sum += c
		if b := &bt.best[a]; *sum > b.Count {
			b.Interval = Interval{Count: *sum, From: bt.first(s, a), To: t} // Key: filled in by the worker
			b.seq = seq
			b.id = id
		}
		if bt.perKey {
			k := &bt.keyBst.at(id)[a]
			if *sum > k.count {
				*k = keyBest{count: *sum, from: bt.first(s, a), to: t, seq: seq}
			}
		}
	}
}

// first returns the time of the oldest entry in s that algorithm a allowed.
func (bt *burstTracker) first(s *burstSlot, a int) int64 {
	for i := uint32(0); i < s.n; i++ {
		if e := bt.entry(s, i); e.mask()&(1<<a) != 0 {
			return e.time
		}
	}
	return 0 // not reached: a allowed the newest entry
}

func (bt *burstTracker) entry(s *burstSlot, i uint32) *burstEntry {
	j := s.head + i
	if j >= s.cap {
		j -= s.cap
	}
	return &bt.arena[s.chunk][s.off+j]
}

// grow moves s to a region twice its size, entries in order from 0. The
// old region is abandoned: rings only grow to the most a key ever held in
// one interval.
func (bt *burstTracker) grow(s *burstSlot) {
	ncap := s.cap * 2
	if ncap < 4 {
		ncap = 4
	}
	var chunk, off uint32
	if ncap > arenaChunk/4 {
		// A large ring gets a chunk of its own.
		bt.arena = append(bt.arena, make([]burstEntry, ncap))
		chunk = uint32(len(bt.arena) - 1)
	} else {
		if bt.cur < 0 || bt.used+int(ncap) > arenaChunk {
			bt.arena = append(bt.arena, make([]burstEntry, arenaChunk))
			bt.cur = len(bt.arena) - 1
			bt.used = 0
		}
		chunk = uint32(bt.cur)
		off = uint32(bt.used)
		bt.used += int(ncap)
	}
	dst := bt.arena[chunk][off : off+ncap]
	for i := uint32(0); i < s.n; i++ {
		dst[i] = *bt.entry(s, i)
	}
	s.chunk, s.off, s.cap, s.head = chunk, off, ncap, 0
}

// keyBests lists every key's best interval under algorithm a, for the
// report's top list.
func (bt *burstTracker) keyBests(keys *interner, a int) []scoredInterval {
	var out []scoredInterval
	for id := range keys.Len() {
		k := bt.keyBst.peek(uint32(id))
		if k == nil || k[a].count == 0 {
			continue
		}
		out = append(out, scoredInterval{
			Interval: Interval{Key: string(keys.key(uint32(id))), From: k[a].from, To: k[a].to, Count: k[a].count},
			seq:      k[a].seq,
			algo:     a,
		})
	}
	return out
}

// chunked is a slice indexed by key id, grown a chunk at a time so that
// growing never copies what is already there.
type chunked[T any] struct {
	chunks [][]T
}

const chunkBits = 12

// at returns the element for id, growing to include it.
func (c *chunked[T]) at(id uint32) *T {
	ci := int(id >> chunkBits)
	for ci >= len(c.chunks) {
		c.chunks = append(c.chunks, make([]T, 1<<chunkBits))
	}
	return &c.chunks[ci][id&(1<<chunkBits-1)]
}

// peek returns the element for id, or nil when it was never grown to.
func (c *chunked[T]) peek(id uint32) *T {
	ci := int(id >> chunkBits)
	if ci >= len(c.chunks) {
		return nil
	}
	return &c.chunks[ci][id&(1<<chunkBits-1)]
}
