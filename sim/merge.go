package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ratesim/ratesim/limiters"
)

// A Position orders requests of different shards as the whole replay
// orders them: by Major, then Minor. A shard replayed in the trace's
// order gives each request {Seq, 0}; one whose events were sorted by
// time may give {time, a number that orders the request's file and
// line}. Parts of one merge must use one kind.
type Position struct {
	Major, Minor int64
}

// Less reports whether p comes before q.
func (p Position) Less(q Position) bool {
	return p.Major < q.Major || p.Major == q.Major && p.Minor < q.Minor
}

// SeqPosition is the position of the request at Seq in trace order.
func SeqPosition(seq int64) Position { return Position{Major: seq} }

// A Part is a shard's report with the positions of what it found, and the
// lengths its lists were cut to: what Merge needs to join it with the
// parts of the other shards. A merge of parts is a part again, so parts
// merge in any grouping.
type Part struct {
	Report *Report
	// FirstBackwards is the position of Report.FirstBackwards; First,
	// per lane, of its FirstRejection; Burst, per lane, of the request
	// that closed its worst interval; Top, of the request that closed each
	// interval of Report.Top. The position of nothing is zero.
	FirstBackwards Position
	First, Burst   []Position
	Top            []Position
	// TopN and MostRejectedN are Config.Top and Config.MostRejected.
	TopN, MostRejectedN int
	// Events and Sum are Positions.Events and Sum: the parts of one
	// trace agree on them. Zero Events means not known, and is not
	// checked.
	Events int64
	Sum    uint64
}

// PartOf returns the part of rep, the report of a replay of a shard
// (Config.Shard) under cfg, its positions in trace order.
func PartOf(rep *Report, cfg *Config) (*Part, error) {
	if rep.Positions == nil {
		return nil, errors.New("sim: the report is not of a shard's replay")
	}
	p := &Part{Report: rep, TopN: cfg.Top, MostRejectedN: cfg.MostRejected, Events: rep.Positions.Events, Sum: rep.Positions.Sum}
	if cfg.DecisionsOnly {
		p.TopN = 0
	}
	if f := rep.FirstBackwards; f != nil {
		p.FirstBackwards = SeqPosition(f.Seq)
	}
	for a, st := range rep.Algos {
		var first, burst Position
		if f := st.FirstRejection; f != nil {
			first = SeqPosition(f.Seq)
		}
		if a < len(rep.Positions.Burst) && rep.Positions.Burst[a] >= 0 {
			burst = SeqPosition(rep.Positions.Burst[a])
		}
		p.First, p.Burst = append(p.First, first), append(p.Burst, burst)
	}
	for _, seq := range rep.Positions.Top {
		p.Top = append(p.Top, SeqPosition(seq))
	}
	return p, nil
}

// Merge joins the parts of the shards of one replay, each of different
// keys, into the part of all of them: exactly the report a replay of the
// whole would give. Counts add; a first is the earliest by position; a
// worst interval is the one with the most cost, of equals the one closed
// first; lists of disjoint keys merge and are cut to their length again;
// per-interval counts add; waits add by value. KeysHeld, which sums the
// peaks of the workers of each replay, is the sum of the parts'.
func Merge(parts []*Part) (*Part, error) {
	if len(parts) == 0 {
		return nil, errors.New("sim: no part to merge")
	}
	first := parts[0]
	n := len(first.Report.Algos)
	for i, p := range parts {
		r := p.Report
		switch {
		case len(r.Algos) != n || len(p.First) != n || len(p.Burst) != n || len(p.Top) != len(r.Top):
			return nil, fmt.Errorf("sim: part %d has %d lanes, part 1 %d", i+1, len(r.Algos), n)
		case r.Interval != first.Report.Interval:
			return nil, fmt.Errorf("sim: part %d has a burst interval of %v, part 1 of %v", i+1, r.Interval, first.Report.Interval)
		case p.Events != 0 && first.Events != 0 && (p.Events != first.Events || p.Sum != first.Sum):
			return nil, fmt.Errorf("sim: part %d read a trace of %d events, part 1 one of %d (or their keys and times differ): the shards read different traces", i+1, p.Events, first.Events)
		case p.TopN != first.TopN || p.MostRejectedN != first.MostRejectedN:
			return nil, fmt.Errorf("sim: part %d lists %d and %d, part 1 %d and %d", i+1, p.TopN, p.MostRejectedN, first.TopN, first.MostRejectedN)
		}
		for a := range r.Algos {
			if r.Algos[a].Name != first.Report.Algos[a].Name {
				return nil, fmt.Errorf("sim: part %d's lane %d is %s, part 1's %s", i+1, a+1, r.Algos[a].Name, first.Report.Algos[a].Name)
			}
		}
	}
	out := &Part{TopN: first.TopN, MostRejectedN: first.MostRejectedN, Events: first.Events, Sum: first.Sum,
		First: make([]Position, n), Burst: make([]Position, n)}
	r := &Report{Interval: first.Report.Interval, Algos: make([]AlgoStats, n)}
	out.Report = r
	agree := true
	intervals := true
	for _, p := range parts {
		agree = agree && p.Report.Agree != nil
		intervals = intervals && p.Report.Intervals != nil
	}
	if agree {
		r.Agree = make([][]int64, n)
		for a := range r.Agree {
			r.Agree[a] = make([]int64, n)
		}
	}
	type topEntry struct {
		iv   Interval
		pos  Position
		lane int
	}
	var top []topEntry
	ivs := map[int64]*IntervalCounts{}
	hasBurst := make([]bool, n)
	for _, p := range parts {
		pr := p.Report
		r.Requests += pr.Requests
		r.Keys += pr.Keys
		r.KeysHeld += pr.KeysHeld
		r.ClockBackwards += pr.ClockBackwards
		if f := pr.FirstBackwards; f != nil && (r.FirstBackwards == nil || p.FirstBackwards.Less(out.FirstBackwards)) {
			r.FirstBackwards, out.FirstBackwards = f, p.FirstBackwards
		}
		for a := range pr.Algos {
			s, ps := &r.Algos[a], &pr.Algos[a]
			s.Name, s.Algorithm, s.Policy = ps.Name, ps.Algorithm, ps.Policy
			s.Allowed += ps.Allowed
			s.Rejected += ps.Rejected
			s.FalseAllows += ps.FalseAllows
			s.FalseRejects += ps.FalseRejects
			s.KeysRejected += ps.KeysRejected
			if f := ps.FirstRejection; f != nil && (s.FirstRejection == nil || p.First[a].Less(out.First[a])) {
				s.FirstRejection, out.First[a] = f, p.First[a]
			}
			if b := ps.Burst; b.Count > 0 && (!hasBurst[a] || b.Count > s.Burst.Count || b.Count == s.Burst.Count && p.Burst[a].Less(out.Burst[a])) {
				s.Burst, out.Burst[a], hasBurst[a] = b, p.Burst[a], true
			} else if !hasBurst[a] {
				s.Burst = Interval{Algorithm: b.Algorithm, Name: b.Name}
			}
			s.MostRejected = append(s.MostRejected, ps.MostRejected...)
			s.Waits = addWaits(s.Waits, ps.Waits)
			if agree {
				for b := range pr.Agree[a] {
					r.Agree[a][b] += pr.Agree[a][b]
				}
			}
		}
		for i, iv := range pr.Top {
			lane := slices.IndexFunc(r.Algos, func(s AlgoStats) bool { return s.Name == iv.Name })
			top = append(top, topEntry{iv, p.Top[i], lane})
		}
		if intervals {
			for _, ic := range pr.Intervals {
				m := ivs[ic.Start]
				if m == nil {
					m = &IntervalCounts{Start: ic.Start, Lanes: make([]LaneCounts, len(ic.Lanes))}
					ivs[ic.Start] = m
				}
				m.Requests += ic.Requests
				m.Keys += ic.Keys
				for l, lc := range ic.Lanes {
					m.Lanes[l].Allowed += lc.Allowed
					m.Lanes[l].FalseAllows += lc.FalseAllows
					m.Lanes[l].FalseRejects += lc.FalseRejects
				}
			}
		}
		if o := pr.IntervalsOutOfOrder; o != 0 && (r.IntervalsOutOfOrder == 0 || o < r.IntervalsOutOfOrder) {
			r.IntervalsOutOfOrder = o
		}
	}
	for a := range r.Algos {
		s := &r.Algos[a]
		s.Requests = r.Requests
		if out.MostRejectedN > 0 {
			slices.SortFunc(s.MostRejected, func(x, y KeyRejections) int {
				if moreRejected(x, y) {
					return -1
				}
				if moreRejected(y, x) {
					return 1
				}
				return 0
			})
			s.MostRejected = s.MostRejected[:min(len(s.MostRejected), out.MostRejectedN)]
		}
	}
	if r.IntervalsOutOfOrder == 0 && intervals {
		r.Intervals = make([]IntervalCounts, 0, len(ivs))
		for _, ic := range ivs {
			r.Intervals = append(r.Intervals, *ic)
		}
		slices.SortFunc(r.Intervals, func(x, y IntervalCounts) int { return cmpInt(x.Start, y.Start) })
	}
	if out.TopN > 0 {
		// As the engine orders them: most cost, then closed first, then
		// by lane.
		slices.SortStableFunc(top, func(x, y topEntry) int {
			switch {
			case x.iv.Count != y.iv.Count:
				return cmpInt(y.iv.Count, x.iv.Count)
			case x.pos != y.pos:
				if x.pos.Less(y.pos) {
					return -1
				}
				return 1
			}
			return x.lane - y.lane
		})
		top = top[:min(len(top), out.TopN)]
		r.Top = make([]Interval, len(top))
		out.Top = make([]Position, len(top))
		for i, t := range top {
			r.Top[i], out.Top[i] = t.iv, t.pos
		}
	}
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// addWaits adds the counts of b to a, both by value, shortest first.
func addWaits(a, b []DurationCount) []DurationCount {
	if len(b) == 0 {
		return a
	}
	out := make([]DurationCount, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Wait < b[j].Wait:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Wait < a[i].Wait:
			out = append(out, b[j])
			j++
		default:
			out = append(out, DurationCount{Wait: a[i].Wait, Count: a[i].Count + b[j].Count})
			i, j = i+1, j+1
		}
	}
	return out
}

// A Row is one request of a Batch with every result the batch holds of
// it, in plain values that outlive the batch: what a shard's replay
// carries to a merge, which puts the rows of its shards back in trace
// order and hands them on as batches (NewBatch) to the code that writes
// them.
type Row struct {
	Seq      int64
	Line     int
	User     []byte
	Key      []byte
	Time     int64
	TimeText []byte
	Cost     int64
	// With are the values of Config.With.
	With [][]byte
	// Allowed is, per lane, whether it allowed the request; Oracle
	// whether the oracle did.
	Allowed []bool
	Oracle  bool
	// Decisions and Exact are, with Config.Detail, each lane's decision;
	// States, with Config.Explain, its state text.
	Decisions []limiters.Decision
	Exact     []limiters.Exact
	States    [][]byte
}

// Row returns request i of b as a Row, its bytes copied.
func (b *Batch) Row(i int) Row {
	q := &b.Requests[i]
	r := Row{Seq: q.Seq, Line: q.Line, User: slices.Clone(q.User), Key: slices.Clone(q.Key), Time: q.Time,
		TimeText: slices.Clone(q.TimeText), Cost: q.Cost, Oracle: b.Oracle[i], Allowed: make([]bool, b.nalg)}
	for j := range b.nwith {
		r.With = append(r.With, slices.Clone(b.With(i, j)))
	}
	for a := range b.nalg {
		r.Allowed[a] = b.Allowed(i, a)
	}
	if len(b.Decisions) > 0 {
		r.Decisions = slices.Clone(b.Decisions[i*b.nalg : (i+1)*b.nalg])
		r.Exact = slices.Clone(b.exact[i*b.nalg : (i+1)*b.nalg])
	}
	if len(b.states) > 0 {
		for a := range b.nalg {
			r.States = append(r.States, slices.Clone(b.State(i, a)))
		}
	}
	return r
}

// NewBatch returns a batch of rows, of a replay of lanes lanes whose
// requests carry with attributes, as the replay would have emitted them:
// it answers every question of Batch as the replay's batch did.
func NewBatch(lanes, with int, rows []Row) (*Batch, error) {
	b := &Batch{nalg: lanes, nwith: with}
	b.n0 = min(lanes, wordLanes)
	b.words = 1 + (lanes-b.n0+wordLanes-1)/wordLanes
	b.masks = make([]uint64, len(rows)*b.words)
	b.Oracle = make([]bool, len(rows))
	detail := len(rows) > 0 && rows[0].Decisions != nil
	explain := len(rows) > 0 && rows[0].States != nil
	if explain {
		b.text = make([][]byte, 1)
	}
	for i := range rows {
		r := &rows[i]
		switch {
		case len(r.Allowed) != lanes:
			return nil, fmt.Errorf("sim: row at %d has %d lanes' decisions, want %d", r.Seq, len(r.Allowed), lanes)
		case len(r.With) != with:
			return nil, fmt.Errorf("sim: row at %d has %d attributes, want %d", r.Seq, len(r.With), with)
		case detail != (r.Decisions != nil) || detail && (len(r.Decisions) != lanes || len(r.Exact) != lanes):
			return nil, fmt.Errorf("sim: row at %d has %d decisions, want %d", r.Seq, len(r.Decisions), lanes)
		case explain != (r.States != nil) || explain && len(r.States) != lanes:
			return nil, fmt.Errorf("sim: row at %d has %d state texts, want %d", r.Seq, len(r.States), lanes)
		}
		b.Requests = append(b.Requests, Request{Seq: r.Seq, Line: r.Line, User: r.User, Key: r.Key, Time: r.Time, TimeText: r.TimeText, Cost: r.Cost, with: r.With})
		b.withVals = append(b.withVals, r.With...)
		for a, ok := range r.Allowed {
			if ok {
				word, bit := wordOf(a, b.n0)
				b.masks[i*b.words+word] |= 1 << bit
			}
		}
		b.Oracle[i] = r.Oracle
		if detail {
			b.Decisions = append(b.Decisions, r.Decisions...)
			b.exact = append(b.exact, r.Exact...)
		}
		for _, st := range r.States {
			off := len(b.text[0])
			b.text[0] = append(b.text[0], st...)
			b.states = append(b.states, stateSpan{off: uint32(off), end: uint32(len(b.text[0]))})
		}
	}
	return b, nil
}
