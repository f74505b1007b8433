package sim

import (
	"slices"

	"github.com/ratesim/ratesim/limiters"
)

// worker owns the state of the keys hashed to it: their ids, every
// algorithm's state (one limiters.Group, so a key's states sit together),
// the oracle and the burst rings. Only its goroutine touches them, so
// nothing here is locked.
type worker struct {
	w       int
	cfg     *Config
	group   *limiters.Group
	nalg    int // the run's algorithms: the group's first nalg
	keys    *interner
	burst   *burstTracker
	scratch [maxAlgos + 1]limiters.Decision
	ends    [maxAlgos + 1]int
	// oracleAlgo is the group's sliding-log, the exact rolling policy:
	// the run's own when it has one, else one added after the others.
	// -1 with DecisionsOnly.
	oracleAlgo int
	// outcomes counts requests by outcome(allowed mask, oracle): every
	// count, false allow and agreement derives from it.
	outcomes   [2 << maxAlgos]int64
	first      []*Rejection // per algorithm, the first rejection seen
	unrejected uint8        // algorithms with no rejection yet
	sink       uint64       // keeps the touch pass from being optimised away
}

func newWorker(w int, cfg *Config) (*worker, error) {
	wk := &worker{
		w:          w,
		cfg:        cfg,
		keys:       newInterner(),
		first:      make([]*Rejection, len(cfg.Algorithms)),
		oracleAlgo: -1,
		unrejected: uint8(1<<len(cfg.Algorithms) - 1),
	}
	if !cfg.DecisionsOnly {
		wk.burst = newBurstTracker(int64(cfg.Interval), len(cfg.Algorithms), cfg.Top > 0)
	}
	algs := slices.Clone(cfg.Algorithms)
	wk.nalg = len(algs)
	wk.oracleAlgo = slices.Index(algs, limiters.SlidingLog)
	if wk.oracleAlgo < 0 && !cfg.DecisionsOnly {
		wk.oracleAlgo = len(algs)
		algs = append(algs, limiters.SlidingLog)
	}
	g, err := limiters.NewGroup(algs, cfg.Policy)
	if err != nil {
		return nil, err
	}
	wk.group = g
	return wk, nil
}

// step decides every request of b whose key this worker owns.
func (wk *worker) step(b *batch) {
	own := b.own[wk.w]
	if len(own) == 0 {
		return
	}
	// Interning and the touch pass: passes of independent loads (each
	// row's hash slot, then its key bytes, then its state), so that the CPU
	// overlaps the cache misses of a batch before the dependent work below.
	in := wk.keys
	var sink uint64
	for _, i := range own {
		sink += in.touch(b.rows[i].hash)
	}
	for _, i := range own {
		c, first := in.candidate(b.rows[i].hash)
		b.cands[i] = c
		sink += uint64(first)
	}
	for _, i := range own {
		r := &b.rows[i]
		b.ids[i] = in.lookup(b.slice(r.key), r.hash, b.cands[i])
	}
	for _, i := range own {
		id := b.ids[i]
		sink += wk.group.Touch(id)
		if wk.burst != nil {
			sink += wk.burst.touch(id)
		}
	}
	wk.sink += sink

	n := wk.nalg
	explain := wk.cfg.Explain
	var text []byte
	if explain {
		text = b.text[wk.w][:0]
	}
	for _, i := range own {
		r := &b.rows[i]
		id := b.ids[i]
		var all uint64 // the algorithms that allowed r, the oracle too
		if explain {
			start := len(text)
			text, all = wk.group.AllowExplain(id, r.time, r.cost, wk.cfg.Unit, wk.scratch[:], text, wk.ends[:])
			for a := 0; a < n; a++ {
				b.states[int(i)*n+a] = stateSpan{w: uint32(wk.w), off: uint32(start), end: uint32(wk.ends[a])}
				start = wk.ends[a]
			}
			text = text[:start] // not the oracle's text
		} else if wk.cfg.Detail {
			all = wk.group.Allow(id, r.time, r.cost, wk.scratch[:])
		} else {
			all = wk.group.Admit(id, r.time, r.cost)
		}
		if wk.cfg.Detail && wk.cfg.Rows {
			copy(b.Decisions[int(i)*n:int(i)*n+n], wk.scratch[:n])
		}
		mask := uint8(all) & (1<<n - 1)
		b.masks[i] = mask
		oracle := wk.oracleAlgo >= 0 && all&(1<<wk.oracleAlgo) != 0
		b.Oracle[i] = oracle
		wk.outcomes[outcome(mask, oracle)]++
		if mask != 0 && wk.burst != nil {
			wk.burst.record(id, r.time, r.cost, b.seq0+int64(i), mask)
		}
		if first := ^mask & wk.unrejected; first != 0 {
			wk.firstRejections(b, int(i), first)
		}
	}
	if explain {
		b.text[wk.w] = text
	}
	// Intervals found in this batch need their key names.
	if wk.burst == nil {
		return
	}
	for a := range wk.burst.best {
		if b := &wk.burst.best[a]; b.seq >= 0 && b.Key == "" {
			b.Key = string(wk.keys.key(b.id))
		}
	}
}

// outcome indexes worker.outcomes: the allowed mask and the oracle's word.
func outcome(mask uint8, oracle bool) int {
	o := int(mask) << 1
	if oracle {
		o |= 1
	}
	return o
}

// firstRejections records request i of b as the first rejection of the
// algorithms in set, which had none before.
func (wk *worker) firstRejections(b *batch, i int, set uint8) {
	r := b.request(i)
	rej := &Rejection{
		Seq:      r.Seq,
		Line:     r.Line,
		Key:      string(r.Key),
		Time:     r.Time,
		TimeText: string(r.TimeText),
	}
	for a := range wk.first {
		if set&(1<<a) != 0 {
			wk.first[a] = rej
		}
	}
	wk.unrejected &^= set
}
