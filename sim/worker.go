package sim

import (
	"github.com/ratesim/ratesim/limiters"
)

// worker owns the state of the keys hashed to it: their ids, every
// algorithm's table, the oracle and the burst rings. Only its goroutine
// touches them, so nothing here is locked.
type worker struct {
	w      int
	cfg    *Config
	tables []*limiters.Table
	keys   *interner
	burst  *burstTracker
	// oracle is the exact rolling policy; when sliding-log runs under the
	// same policy, its decisions are the oracle's and oracle is nil.
	oracle     *limiters.Table
	oracleAlgo int // index of sliding-log in the algorithms, or -1
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
	for a, alg := range cfg.Algorithms {
		t, err := limiters.NewTable(alg, cfg.Policy)
		if err != nil {
			return nil, err
		}
		wk.tables = append(wk.tables, t)
		if alg == limiters.SlidingLog {
			wk.oracleAlgo = a
		}
	}
	if wk.oracleAlgo < 0 && !cfg.DecisionsOnly {
		op := limiters.Policy{Limit: cfg.Policy.Limit, Window: cfg.Policy.Window, Clock: cfg.Policy.Clock}
		o, err := limiters.NewTable(limiters.SlidingLog, op)
		if err != nil {
			return nil, err
		}
		wk.oracle = o
	}
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
		sink += in.touch(b.hashes[i])
	}
	for _, i := range own {
		c, first := in.candidate(b.hashes[i])
		b.cands[i] = c
		sink += uint64(first)
	}
	for _, i := range own {
		b.ids[i] = in.lookup(b.Requests[i].Key, b.hashes[i], b.cands[i])
	}
	for _, i := range own {
		id := b.ids[i]
		for _, t := range wk.tables {
			sink += t.Touch(id)
		}
		if wk.oracle != nil {
			sink += wk.oracle.Touch(id)
		}
		if wk.burst != nil {
			sink += wk.burst.touch(id)
		}
	}
	wk.sink += sink

	n := len(wk.tables)
	explain := wk.cfg.Explain
	var text []byte
	if explain {
		text = b.text[wk.w][:0]
	}
	for _, i := range own {
		r := &b.Requests[i]
		id := b.ids[i]
		ds := b.Decisions[int(i)*n : int(i)*n+n]
		var mask uint8 // the algorithms that allowed r
		for a, t := range wk.tables {
			var d limiters.Decision
			if explain {
				off := uint32(len(text))
				d, text = t.AllowExplain(id, r.Time, r.Cost, wk.cfg.Unit, text)
				b.states[int(i)*n+a] = stateSpan{w: uint32(wk.w), off: off, end: uint32(len(text))}
			} else {
				d = t.Allow(id, r.Time, r.Cost)
			}
			ds[a] = d
			if d.Allowed {
				mask |= 1 << a
			}
		}
		var oracle bool
		switch {
		case wk.oracleAlgo >= 0:
			oracle = mask&(1<<wk.oracleAlgo) != 0
		case wk.oracle != nil:
			oracle = wk.oracle.Allow(id, r.Time, r.Cost).Allowed
		}
		b.Oracle[i] = oracle
		wk.outcomes[outcome(mask, oracle)]++
		if mask != 0 && wk.burst != nil {
			wk.burst.record(id, r.Time, r.Cost, r.Seq, mask)
		}
		if first := ^mask & wk.unrejected; first != 0 {
			wk.firstRejections(r, first)
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

// firstRejections records r as the first rejection of the algorithms in
// set, which had none before.
func (wk *worker) firstRejections(r *Request, set uint8) {
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
