package sim

// burstTracker finds, for one algorithm and the keys of one worker, the
// largest allowed cost inside any closed interval of a fixed length. Each
// key has a ring of the allowed requests of the last interval; rings live
// in a chunked arena of plain values, so the garbage collector has nothing
// to scan and no huge slice is ever copied to grow.
type burstTracker struct {
	interval int64
	slots    chunked[ringSlot]
	arena    [][]ringEntry // chunks of ring storage
	cur      int           // the shared chunk new small rings go to; -1: none
	used     int           // entries used in chunk cur

	best    Interval
	bestSeq int64 // request that closed the best interval; -1: none yet
	bestID  uint32

	perKey bool
	keyBst chunked[keyBest] // with perKey: each key's best interval
}

type ringEntry struct{ time, cost int64 }

// ringSlot is one key's ring: entries arena[chunk][off+(head+i)%cap].
type ringSlot struct {
	chunk, off, cap, head, n uint32
	sum                      int64
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

func newBurstTracker(interval int64, perKey bool) burstTracker {
	return burstTracker{interval: interval, bestSeq: -1, cur: -1, perKey: perKey}
}

// touch loads id's slot and its ring's newest entry so that allow finds
// both in cache.
func (bt *burstTracker) touch(id uint32) uint64 {
	s := bt.slots.peek(id)
	if s == nil || s.n == 0 {
		return 0
	}
	return uint64(bt.entry(s, s.n-1).time)
}

// allow records an allowed request of key id at time t with cost c, the
// seq-th of the trace.
func (bt *burstTracker) allow(id uint32, t, c, seq int64) {
	s := bt.slots.at(id)
	if s.n > 0 {
		// Under the clamp clock policy an allowed time may be earlier than
		// the last one; the limiter treated it as the last.
		if last := bt.entry(s, s.n-1).time; t < last {
			t = last
		}
		// Drop entries older than t - interval (closed interval: an entry
		// exactly at t - interval stays). Unsigned difference: t >= front.
		for s.n > 0 {
			f := bt.entry(s, 0)
			if uint64(t)-uint64(f.time) <= uint64(bt.interval) {
				break
			}
			s.sum -= f.cost
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
	*bt.entry(s, s.n) = ringEntry{time: t, cost: c}
	s.n++
	s.sum += c
	from := bt.entry(s, 0).time
	if s.sum > bt.best.Count {
		bt.best = Interval{Count: s.sum, From: from, To: t}
		bt.bestSeq = seq
		bt.bestID = id // the worker fills in best.Key after the batch
	}
	if bt.perKey {
		k := bt.keyBst.at(id)
		if s.sum > k.count {
			*k = keyBest{count: s.sum, from: from, to: t, seq: seq}
		}
	}
}

func (bt *burstTracker) entry(s *ringSlot, i uint32) *ringEntry {
	j := s.head + i
	if j >= s.cap {
		j -= s.cap
	}
	return &bt.arena[s.chunk][s.off+j]
}

// grow moves s to a region twice its size, entries in order from 0.
func (bt *burstTracker) grow(s *ringSlot) {
	ncap := s.cap * 2
	if ncap < 4 {
		ncap = 4
	}
	var chunk, off uint32
	if ncap > arenaChunk/4 {
		// A large ring gets a chunk of its own.
		bt.arena = append(bt.arena, make([]ringEntry, ncap))
		chunk = uint32(len(bt.arena) - 1)
	} else {
		if bt.cur < 0 || bt.used+int(ncap) > arenaChunk {
			bt.arena = append(bt.arena, make([]ringEntry, arenaChunk))
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

// keyBests lists every key's best interval, for the report's top list.
func (bt *burstTracker) keyBests(names []string, algo int) []scoredInterval {
	var out []scoredInterval
	for id := range names {
		k := bt.keyBst.peek(uint32(id))
		if k == nil || k.count == 0 {
			continue
		}
		out = append(out, scoredInterval{
			Interval: Interval{Key: names[id], From: k.from, To: k.to, Count: k.count},
			seq:      k.seq,
			algo:     algo,
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
