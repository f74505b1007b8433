package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// smallOutcomes is the most lanes whose outcomes a worker counts in an
// array indexed by the allowed mask; more go to a map.
const smallOutcomes = 7

// worker owns the state of the keys hashed to it: their ids, every lane's
// state (a few limiters.Groups, so a key's states sit together), the
// oracle and the burst rings. Only its goroutine touches them, so nothing
// here is locked.
type worker struct {
	w       int
	cfg     *Config
	lanes   *laneSet
	nalg    int // the run's lanes
	keys    *interner
	burst   *burstTracker
	scratch []limiters.Decision // per lane, then the oracle
	// waits and spans are, with Config.Rejections, per lane the RetryAfter
	// of a refusal, and the Groups' waits, limiters.MaxGroup a mask word.
	waits  []time.Duration
	spans  []limiters.Span
	exact  []limiters.Exact
	starts []int
	ends   []int
	// queue is the set of LeakyQueue lanes, whose bursts are measured
	// at release time: they need each decision's Delay. Word 0 holds the
	// first Group's lanes, word k+1 those of the laneSet's more[k].
	queue []uint64
	// sharing is the set of lanes whose burst ring is another's, by word.
	sharing []uint64
	// library is the set of lanes of library kinds, by word: those may
	// take a request earlier than their key's latest as the library does.
	library []uint64
	// delays says some lane delays what it admits (queue is not empty).
	delays bool
	// moreMasks are, for the request being decided, the masks of the
	// laneSet's Groups after the first.
	moreMasks []uint64
	// counts are the figures of the lanes past the first Group, which
	// outcomes does not count.
	counts []laneCount
	// cands holds, per row of the batch, the interner slot prefetchStates
	// found for its key. It is the worker's own, not the batch's: the
	// other worker writes its rows' entries at the same time, and sharing
	// cache lines between cores that both write them is slow.
	cands [batchSize]*internSlot
	// outcomes counts requests by outcome(allowed mask, oracle): every
	// count, false allow and agreement derives from it. Runs of more than
	// smallOutcomes lanes count in manyOutcomes instead.
	outcomes     [2 << smallOutcomes]int64
	manyOutcomes *outcomeTable
	first        []*Rejection // per lane, the first rejection seen
	unrejected   []uint64     // lanes with no rejection yet, by word
	all          []uint64     // every lane, by word
	rej          *rejections  // with Config.Rejections
	kc           *keyCounts   // with Config.MostRejected
	iv           *intervals   // with Config.Every
	labels       *labelCounts // with Config.Label

	backwards     int64      // requests earlier than their key's latest
	firstBackward *Rejection // the first of them

	// Forgetting idle keys (see sweep).
	latest    int64            // the latest time seen
	disorder  int64            // the most a request came before latest
	sweptAt   int64            // keys were forgotten if idle at this time
	nextSweep int              // sweep when this many keys are held
	seen      *hashSet         // every key's hash, once keys are forgotten
	retired   []scoredInterval // forgotten keys' best intervals, for Top
	name      string           // the source's name, for errors
	peak      int              // the most keys held at once
}

// minSweep is the fewest keys a worker holds before it looks for idle
// ones to forget: smaller traces never pay for it.
const minSweep = 1 << 15

// laneCount is what a worker counts of a lane past the first Group.
type laneCount struct {
	allowed, falseAllows, falseRejects int64
}

func newWorker(w int, cfg *Config) (*worker, error) {
	n := len(cfg.Lanes)
	n0 := min(n, wordLanes)
	words := 1 + (n-n0+wordLanes-1)/wordLanes
	wk := &worker{
		w:          w,
		cfg:        cfg,
		nalg:       n,
		keys:       newInterner(),
		scratch:    make([]limiters.Decision, n+1),
		exact:      make([]limiters.Exact, n+1),
		starts:     make([]int, n+1),
		ends:       make([]int, n+1),
		first:      make([]*Rejection, n),
		unrejected: make([]uint64, words),
		queue:      make([]uint64, words),
		sharing:    make([]uint64, words),
		library:    make([]uint64, words),
		moreMasks:  make([]uint64, words-1),
		counts:     make([]laneCount, n-n0),
		latest:     math.MinInt64,
		sweptAt:    math.MinInt64,
		nextSweep:  cfg.sweepAt,
	}
	for l := range n {
		word, bit := wordOf(l, n0)
		wk.unrejected[word] |= 1 << bit
		if cfg.Lanes[l].Algorithm.Library() {
			wk.library[word] |= 1 << bit
		}
	}
	wk.all = slices.Clone(wk.unrejected)
	if cfg.Rejections {
		var tailFrom int64
		if cfg.WaitsTail {
			tailFrom = cmp.Or(cfg.tailFrom, 1<<16)
		}
		wk.rej = newRejections(n, words, tailFrom)
		wk.waits, wk.spans = make([]time.Duration, n), make([]limiters.Span, words*limiters.MaxGroup)
	}
	if cfg.MostRejected > 0 {
		wk.kc = newKeyCounts(n)
	}
	if cfg.Every > 0 {
		wk.iv = newIntervals(int64(cfg.Every), n)
	}
	if cfg.Label != nil {
		wk.labels = newLabelCounts(cfg.Labels, n)
	}
	if n0 > smallOutcomes {
		wk.manyOutcomes = newOutcomeTable()
	}
	if !cfg.DecisionsOnly {
		// Lanes that decide alike and take requests at the same times (a
		// token bucket, a leaky bucket and GCRA under one capacity and
		// rate; a lane given twice) share one ring.
		var align, bound []int64
		var delays []bool
		ringOf := make([]int, n)
		for l, lane := range cfg.Lanes {
			word, bit := wordOf(l, n0)
			if k := slices.IndexFunc(cfg.Lanes[:l], func(o Lane) bool { return burstAlike(o, lane) }); k >= 0 {
				ringOf[l] = ringOf[k]
				wk.sharing[word] |= 1 << bit
				continue
			}
			ringOf[l] = len(align)
			bound = append(bound, lane.Algorithm.MaxInInterval(lane.Policy, cfg.Interval))
			// Some admit a request earlier than their newest one as long
			// as it falls in their current aligned span.
			align = append(align, int64(lane.Algorithm.BackWithin(lane.Policy)))
			delays = append(delays, lane.Algorithm.Delays())
			if lane.Algorithm.Delays() {
				wk.queue[word] |= 1 << bit
				wk.delays = true
			}
		}
		wk.burst = newBurstTracker(int64(cfg.Interval), align, bound, ringOf, cfg.Top)
		if cfg.Top == 0 && cfg.Policy.Clock == limiters.ClockReject {
			// Words of many lanes that take requests at their own times
			// keep their rings in a bank.
			plain := make([]uint64, len(wk.sharing))
			for l, lane := range cfg.Lanes {
				word, bit := wordOf(l, n0)
				if wk.sharing[word]&(1<<bit) == 0 && align[ringOf[l]] == 0 && !lane.Algorithm.Delays() && lane.Policy.Clock == limiters.ClockReject && !lane.Algorithm.Library() {
					plain[word] |= 1 << bit
				}
			}
			for word, m := range plain {
				if bits.OnesCount64(m) >= banked {
					base := 0
					if word > 0 {
						base = n0 + (word-1)*wordLanes
					}
					wk.burst.addBank(word, base, m)
				}
			}
		}
		wk.burst.listBits(delays, cfg.noLists, cfg.listsOffAfter)
	}
	ls, err := newLaneSet(cfg.Lanes, cfg.Policy, !cfg.DecisionsOnly)
	if err != nil {
		return nil, err
	}
	wk.lanes = ls
	return wk, nil
}

// wordOf returns the mask word of lane l, when the first Group holds n0
// lanes, and its bit in it; see laneSet.word.
func wordOf(l, n0 int) (word, bit int) {
	if l < n0 {
		return 0, l
	}
	return 1 + (l-n0)/wordLanes, (l - n0) % wordLanes
}

// burstAlike reports whether lanes a and b allow the same requests at the
// same times, so that one burst ring serves both.
func burstAlike(a, b Lane) bool {
	return a.Algorithm.Alike(b.Algorithm) && a.Policy.SameFor(a.Algorithm, b.Policy) && b.Policy.SameFor(b.Algorithm, a.Policy)
}

// stepSafely is step that turns a panic into the batch's error.
func (wk *worker) stepSafely(b *batch) {
	defer func() {
		if p := recover(); p != nil {
			b.errs[wk.w] = internalError(p)
		}
	}()
	wk.step(b)
}

// step decides every request of b whose key this worker owns.
func (wk *worker) step(b *batch) {
	own := b.own[wk.w]
	if len(own) == 0 {
		return
	}
	// A software pipeline over parts of the batch: while the rows of one
	// part are decided, the key bytes of the next part, the key states
	// and key refs of the one after and the hash slots of the one after
	// that are on their way into the cache. Prefetches do not wait, so
	// these cache misses overlap with the work instead of taking turns
	// with it; each stage needs what the one before loaded.
	explain := wk.cfg.Explain
	var text []byte
	if explain {
		text = b.text[wk.w][:0]
	}
	part := func(k int) []int32 {
		lo := k * pipePart
		if lo >= len(own) {
			return nil
		}
		return own[lo:min(lo+pipePart, len(own))]
	}
	wk.prefetchSlots(b, part(0))
	wk.prefetchSlots(b, part(1))
	wk.prefetchSlots(b, part(2))
	wk.prefetchStates(b, part(0))
	wk.prefetchStates(b, part(1))
	wk.prefetchKeys(b, part(0))
	for k := 0; k*pipePart < len(own); k++ {
		wk.prefetchSlots(b, part(k+3))
		wk.prefetchStates(b, part(k+2))
		wk.prefetchKeys(b, part(k+1))
		text = wk.decide(b, part(k), text)
		wk.peak = max(wk.peak, wk.keys.Len())
		if wk.nextSweep > 0 && wk.keys.Len() >= wk.nextSweep {
			// Between parts, not only between batches, so that the keys
			// held grow by a part at most past the sweep threshold. A
			// sweep can leave the slots found for the next parts out of
			// date; find checks them, so that costs only the prefetches.
			wk.nameBests()
			wk.sweep()
		}
	}
	if explain {
		b.text[wk.w] = text
	}
	wk.nameBests()
}

// nameBests gives the worst intervals found since the last call their key
// names, while their ids still stand for those keys.
func (wk *worker) nameBests() {
	if wk.burst == nil {
		return
	}
	for a := range wk.burst.best {
		if b := &wk.burst.best[a]; b.seq >= 0 && !b.named {
			b.Key, b.named = string(wk.keys.key(b.id)), true
		}
	}
}

// pipePart is the number of rows in a part of the pipeline in step:
// enough that a part's prefetches have arrived by the time it is decided,
// few enough that they are still in the cache then.
const pipePart = 32

// prefetchSlots starts loading the hash slots of the keys of rows.
func (wk *worker) prefetchSlots(b *batch, rows []int32) {
	for _, i := range rows {
		wk.keys.prefetchHome(b.rows[i].hash)
	}
}

// prefetchStates finds the slot that most likely holds each row's key
// (its hash slot, prefetched a part earlier) and starts loading where that
// key's bytes are and its states. decide checks the guess.
func (wk *worker) prefetchStates(b *batch, rows []int32) {
	in := wk.keys
	for _, i := range rows {
		c := in.candidate(b.rows[i].hash)
		wk.cands[i] = c
		if c == nil {
			continue // a new key
		}
		id := c.id1 - 1
		in.prefetchRef(id)
		wk.lanes.prefetch(id)
		if wk.burst != nil {
			wk.burst.prefetch(id)
		}
		if wk.kc != nil {
			wk.kc.prefetch(id)
		}
		if wk.rej != nil {
			wk.rej.prefetchID(id)
		}
	}
}

// prefetchKeys starts loading the key bytes of the slots prefetchStates
// found for rows, whose refs it prefetched, the burst rings a key's
// list, also prefetched, says it has spilled to, and its rejections'
// entry.
func (wk *worker) prefetchKeys(b *batch, rows []int32) {
	for _, i := range rows {
		if c := wk.cands[i]; c != nil {
			if k := b.rows[i].key; k.end-k.off > inlineKey {
				wk.keys.prefetchKey(c.id1 - 1) // a short key is in its ref
			}
			if wk.burst != nil {
				wk.burst.prefetchSpilled(c.id1 - 1)
			}
			if wk.rej != nil {
				wk.rej.prefetchEntry(c.id1 - 1)
			}
		}
	}
}

// decide interns the keys of rows and decides each under every algorithm,
// in order. It returns text extended by the rows' state texts when
// explaining.
func (wk *worker) decide(b *batch, rows []int32, text []byte) []byte {
	in, n, explain := wk.keys, wk.nalg, wk.cfg.Explain
	for _, i := range rows {
		r := &b.rows[i]
		id, e, added := in.find(b.slice(r.key), r.hash, wk.cands[i])
		if added && wk.seen != nil && !wk.seen.add(r.hash) && r.time < wk.sweptAt && b.errs[wk.w] == nil {
			b.errs[wk.w] = wk.cameBack(b, int(i))
		}
		// A request earlier than its key's latest goes back in time.
		last := &e.last
		back := !added && r.time < *last
		if back {
			wk.wentBack(b, int(i))
		} else {
			*last = r.time
		}
		if r.time > wk.latest {
			wk.latest = r.time
		} else if d := int64(uint64(wk.latest) - uint64(r.time)); d > wk.disorder && d > 0 {
			wk.disorder = d
		}
		var all uint64 // the first Group's lanes that allowed r, and the oracle as bit n0
		detail := wk.cfg.Detail || wk.delays
		spans := false // the refusals' waits are in wk.spans, by mask word
		if explain {
			text, all = wk.lanes.allowExplain(id, r.time, r.cost, wk.cfg.Unit, wk.scratch, wk.exact, text, wk.starts, wk.ends)
			for a := 0; a < n; a++ {
				b.states[int(i)*n+a] = stateSpan{w: uint32(wk.w), off: uint32(wk.starts[a]), end: uint32(wk.ends[a])}
			}
		} else if detail {
			all = wk.lanes.allow(id, r.time, r.cost, wk.scratch, wk.exact)
		} else if wk.rej != nil {
			// The waits of the refusals only, each as its lane refuses:
			// the allowed lanes need no arithmetic beyond admit's.
			spans = true
			var ok bool
			if all, ok = wk.lanes.admitWaits(id, r.time, r.cost, wk.all, wk.moreMasks, wk.spans); !ok {
				wk.fail(b, int(i), "a limiter judged this request again and allowed it: an internal error")
			}
		} else {
			all = wk.lanes.admit(id, r.time, r.cost)
		}
		if len(wk.moreMasks) > 0 {
			if detail {
				wk.lanes.allowMore(id, r.time, r.cost, wk.scratch, wk.exact, wk.moreMasks)
			} else if explain || wk.rej == nil {
				wk.lanes.admitMore(id, r.time, r.cost, wk.moreMasks)
			}
		}
		if wk.rej != nil && !detail && explain {
			if !wk.lanes.refusedWaits(id, r.time, r.cost, wk.all[0]&^all, wk.moreMasks, wk.spans, wk.waits) {
				wk.fail(b, int(i), "a limiter judged this request again and allowed it: an internal error")
			}
		}
		if wk.cfg.Detail && wk.cfg.Rows {
			copy(b.Decisions[int(i)*n:int(i)*n+n], wk.scratch[:n])
			copy(b.exact[int(i)*n:int(i)*n+n], wk.exact[:n])
		}
		n0 := wk.lanes.n0
		mask := all & (1<<n0 - 1)
		oracle := all&(1<<n0) != 0
		if wk.cfg.Rows {
			// Only the emitter reads these. Both workers write them, for
			// rows side by side, so a line of them moves between cores.
			words := 1 + len(wk.moreMasks)
			b.masks[int(i)*words] = mask
			copy(b.masks[int(i)*words+1:], wk.moreMasks)
			b.Oracle[i] = oracle
		}
		if wk.iv != nil {
			wk.iv.add(r.time, id, added, oracle, mask, n0, wk.moreMasks)
		}
		if wk.labels != nil {
			wk.labels.add(b.labels[i], mask, n0, wk.moreMasks)
		}
		if wk.manyOutcomes == nil {
			wk.outcomes[outcome(mask, oracle)]++
		} else {
			wk.manyOutcomes.add(mask, oracle)
		}
		if mask != 0 && wk.burst != nil {
			wk.recordBursts(b, int(i), id, mask, back, 0, 0)
		}
		if first := ^mask & wk.unrejected[0]; first != 0 {
			wk.firstRejections(b, int(i), first, 0, 0)
		}
		if wk.rej != nil {
			if m := wk.all[0] &^ mask; m != 0 {
				if spans {
					wk.rej.noteSpans(id, r.hash, 0, 0, m, wk.spans)
				} else {
					wk.rej.note(id, r.hash, 0, 0, m, wk.waitsOf(detail, 0, m))
				}
			}
		}
		var counts []int64 // r's key's, with Config.MostRejected
		if wk.kc != nil {
			if added {
				wk.kc.added(id, b.slice(r.key))
			}
			counts = wk.kc.entry(id)
			counts[0]++
			if m := wk.all[0] &^ mask; m != 0 {
				wk.kc.reject(id, counts, 0, m, oracle, b.slice(b.texts[i].time))
			}
		}
		for k, m := range wk.moreMasks {
			base := n0 + k*wordLanes
			wk.countMore(base, m, oracle)
			if m != 0 && wk.burst != nil {
				wk.recordBursts(b, int(i), id, m, back, k+1, base)
			}
			if first := ^m & wk.unrejected[k+1]; first != 0 {
				wk.firstRejections(b, int(i), first, k+1, base)
			}
			if wk.rej != nil {
				if rm := wk.all[k+1] &^ m; rm != 0 {
					if spans {
						wk.rej.noteSpans(id, r.hash, k+1, base, rm, wk.spans[(k+1)*limiters.MaxGroup:])
					} else {
						wk.rej.note(id, r.hash, k+1, base, rm, wk.waitsOf(detail, base, rm))
					}
				}
			}
			if wk.kc != nil {
				if rm := wk.all[k+1] &^ m; rm != 0 {
					wk.kc.reject(id, counts, base, rm, oracle, b.slice(b.texts[i].time))
				}
			}
		}
	}
	return text
}

// recordBursts notes request i of b, of key id, in the burst rings of the
// lanes in mask, which allowed it: bit j of mask word word is lane
// base+j. back says it came earlier than its
// key's latest request: a lane under the clamp clock then took it at a
// later time, its boundary.
func (wk *worker) recordBursts(b *batch, i int, id uint32, mask uint64, back bool, word, base int) {
	r := &b.rows[i]
	clamp := back && wk.cfg.Policy.Clock == limiters.ClockClamp
	mask &^= wk.sharing[word]
	// The lanes whose rings have closed need nothing, but a queue's
	// release time, which must still fit.
	mask &= wk.burst.openLanes[word] | wk.queue[word]
	if bk := wk.burst.bankOf(word); bk != nil {
		if m := mask & bk.lanes; m != 0 && !wk.burst.recordBank(bk, id, m, r.time, r.cost, b.seqOf(i)) {
			wk.fail(b, i, "%s allowed this key more than %d units of cost within one burst interval, more than ratesim can add up", wk.cfg.Lanes[bk.base+bits.TrailingZeros64(m)].Name, int64(math.MaxInt64))
			return
		}
		mask &^= bk.lanes
	}
	var list uint64 // the list rings that take the request at its own time
	for m := mask; m != 0; m &= m - 1 {
		bit := bits.TrailingZeros64(m)
		l := base + bit
		t := r.time
		if wk.queue[word]&(1<<bit) != 0 {
			// What a queue admits leaves it at its release time; the
			// delay counts from the request's own time.
			d := wk.scratch[l].Delay
			if d == limiters.InfDuration || t > math.MaxInt64-int64(d) {
				wk.fail(b, i, "its release from the %s queue is later than the latest time ratesim can hold", wk.cfg.Lanes[l].Name)
				return
			}
			t += int64(d)
		} else if clamp {
			t = wk.lanes.decidedAt(id, l, t)
		}
		if back && wk.library[word]&(1<<bit) != 0 {
			// A library kind takes a request earlier than its key's
			// latest as its library does (x/time/rate, nginx, ...): its
			// bursts count it at that latest time, so that no ring needs
			// what it has let go of.
			if latest := *wk.keys.last(id); t < latest {
				t = latest
			}
		}
		ring := wk.burst.ringOf[l]
		if !wk.burst.tracks(ring) {
			continue
		}
		if lb := wk.burst.listOf(ring); lb >= 0 && t == r.time {
			list |= 1 << lb
			continue
		}
		if !wk.burst.record(id, r.hash, ring, t, r.cost, b.seqOf(i)) {
			wk.fail(b, i, "%s allowed this key more than %d units of cost within one burst interval, more than ratesim can add up", wk.cfg.Lanes[l].Name, int64(math.MaxInt64))
			return
		}
	}
	if list == 0 {
		return
	}
	if ring := wk.burst.recordList(id, r.hash, list, r.time, r.cost, b.seqOf(i)); ring >= 0 {
		l := base + bits.TrailingZeros64(mask)
		for wk.burst.ringOf[l] != ring {
			l++
		}
		wk.fail(b, i, "%s allowed this key more than %d units of cost within one burst interval, more than ratesim can add up", wk.cfg.Lanes[l].Name, int64(math.MaxInt64))
	}
}

// fail stops the run at request i of b, with a message about it, unless
// the batch has failed already.
func (wk *worker) fail(b *batch, i int, format string, args ...any) {
	if b.errs[wk.w] != nil {
		return
	}
	r := b.request(i)
	b.errs[wk.w] = &traces.ParseError{File: wk.name, Line: r.Line, Msg: fmt.Sprintf(format, args...)}
}

// wentBack counts request i of b as earlier than its key's latest one.
func (wk *worker) wentBack(b *batch, i int) {
	wk.backwards++
	if wk.firstBackward == nil {
		r := b.request(i)
		wk.firstBackward = &Rejection{Seq: r.Seq, Line: r.Line, Key: string(r.Key), Time: r.Time, TimeText: string(r.TimeText)}
	}
}

// sweep forgets the keys that are idle: whose states decide every later
// request exactly as fresh states would, and whose burst rings hold nothing
// a later interval can reach. Memory then follows the live keys, not every
// key the trace ever named. "Later" is judged at the latest time seen,
// less twice the most the trace has gone back in time so far. Should a
// forgotten key come back earlier than that, its decision could differ, so
// the run stops with an error instead (see cameBack).
func (wk *worker) sweep() {
	in := wk.keys
	now := wk.latest
	// now - 2*disorder, not below MinInt64; unsigned, as it may not fit.
	above := uint64(now) ^ 1<<63 // now's distance above MinInt64
	if slack := 2 * uint64(wk.disorder); above > slack {
		now = int64(uint64(now) - slack)
	} else {
		now = math.MinInt64
	}
	for id := range uint32(in.ids()) {
		// A key whose latest request is not before now stays: should it
		// come back a little earlier, that is a request going back in
		// time, which only its latest time can tell.
		if !in.held(id) || *wk.keys.last(id) >= now || !wk.lanes.idle(id, now) || (wk.burst != nil && !wk.burst.idle(id, now)) ||
			(wk.iv != nil && wk.iv.current(id, wk.latest)) {
			continue
		}
		if wk.seen == nil {
			// Once a key is forgotten, the keys held no longer say how
			// many the trace named: from now on every key's hash is kept.
			// Not before, so that a trace whose keys are all live pays
			// nothing for it.
			wk.seen = newHashSet()
			for id := range uint32(in.ids()) {
				if in.held(id) {
					wk.seen.add(hashKey(in.key(id)))
				}
			}
		}
		if wk.burst != nil {
			if wk.cfg.Top > 0 {
				wk.retire(id)
			}
			wk.burst.reset(id)
		}
		wk.lanes.reset(id)
		if wk.rej != nil {
			wk.rej.forget(id)
		}
		if wk.kc != nil {
			wk.kc.forget(id, in.key(id))
		}
		in.remove(id)
	}
	wk.sweptAt = max(wk.sweptAt, now)
	wk.nextSweep = max(wk.cfg.sweepAt, 2*in.Len())
}

// retire keeps id's best intervals for the top list before id is
// forgotten, and no more of the kept ones than the list can show. A key
// forgotten more than once has a best interval from each of its lives;
// only the worst of them counts, so they are merged before the list is
// cut: otherwise two lives of one key could push another key out.
func (wk *worker) retire(id uint32) {
	for a := range wk.nalg {
		if k, ok := wk.burst.keyBest(wk.keys, id, a); ok {
			wk.retired = append(wk.retired, k)
		}
	}
	if len(wk.retired) > 2*wk.cfg.Top+2*wk.nalg {
		wk.retired = slices.Clip(topIntervals(wk.retired, wk.cfg.Top))
	}
}

// topIntervals sorts list worst first, keeps the first interval of each
// lane and key, and returns at most n of them.
func topIntervals(list []scoredInterval, n int) []scoredInterval {
	sortIntervals(list)
	type laneKey struct {
		algo int
		key  string
	}
	listed := map[laneKey]bool{}
	list = slices.DeleteFunc(list, func(t scoredInterval) bool {
		k := laneKey{t.algo, t.Key}
		if listed[k] {
			return true
		}
		listed[k] = true
		return false
	})
	return list[:min(n, len(list))]
}

// cameBack is the error for request i of b, whose key was forgotten as
// idle from a time later than the request's.
func (wk *worker) cameBack(b *batch, i int) error {
	r := b.request(i)
	return &ForgottenKeyError{File: wk.name, Line: r.Line, Key: string(r.Key), TimeText: string(r.TimeText)}
}

// distinct returns the number of different keys the worker has seen.
func (wk *worker) distinct() int {
	if wk.seen != nil {
		return wk.seen.len()
	}
	return wk.keys.Len()
}

// hashSet is a set of 64-bit key hashes: open addressing, at most half
// full. Zero stands for an empty slot, so the hash 0 is kept as 1.
type hashSet struct {
	slots []uint64
	n     int
}

func newHashSet() *hashSet { return &hashSet{slots: make([]uint64, 1<<10)} }

func (hs *hashSet) len() int { return hs.n }

// add adds h and reports whether it was new.
func (hs *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	mask := uint64(len(hs.slots) - 1)
	for p := (h >> 32) & mask; ; p = (p + 1) & mask {
		switch hs.slots[p] {
		case h:
			return false
		case 0:
			hs.slots[p] = h
			hs.n++
			if 2*hs.n > len(hs.slots) {
				hs.grow()
			}
			return true
		}
	}
}

func (hs *hashSet) grow() {
	old := hs.slots
	hs.slots = chunk.Written[uint64](2 * len(old)) // probed before written
	hs.n = 0
	for _, h := range old {
		if h != 0 {
			hs.add(h)
		}
	}
}

// outcome indexes worker.outcomes: the allowed mask and the oracle's word.
func outcome(mask uint64, oracle bool) int {
	o := int(mask) << 1
	if oracle {
		o |= 1
	}
	return o
}

// waitsOf returns the per-lane waits holding those of the lanes in mask
// (bit j lane base+j), which refused the request just decided: wk.waits,
// which refusedWaits filled, or into which it copies them from the full
// decisions in scratch when detail. (A decision by admitWaits leaves its
// waits in wk.spans, for noteSpans.)
func (wk *worker) waitsOf(detail bool, base int, mask uint64) []time.Duration {
	if detail {
		for m := mask; m != 0; m &= m - 1 {
			l := base + bits.TrailingZeros64(m)
			wk.waits[l] = wk.scratch[l].RetryAfter
		}
	}
	return wk.waits
}

// firstRejections records request i of b as the first rejection of the
// algorithms in set, which had none before.
func (wk *worker) firstRejections(b *batch, i int, set uint64, word, base int) {
	r := b.request(i)
	rej := &Rejection{
		Seq:      r.Seq,
		Line:     r.Line,
		Key:      string(r.Key),
		Time:     r.Time,
		TimeText: string(r.TimeText),
	}
	for m := set; m != 0; m &= m - 1 {
		wk.first[base+bits.TrailingZeros64(m)] = rej
	}
	wk.unrejected[word] &^= set
}

// countMore counts a request's outcome under the lanes of a mask word past
// the first: bit j of mask is lane base+j; oracle says the oracle allowed
// it.
func (wk *worker) countMore(base int, mask uint64, oracle bool) {
	size := min(wordLanes, wk.nalg-base)
	for j := range size {
		c := &wk.counts[base-wk.lanes.n0+j]
		switch allowed := mask&(1<<j) != 0; {
		case allowed:
			c.allowed++
			if !oracle && !wk.cfg.DecisionsOnly {
				c.falseAllows++
			}
		case oracle && !wk.cfg.DecisionsOnly:
			c.falseRejects++
		}
	}
}
