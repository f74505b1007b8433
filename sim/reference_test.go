package sim

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

type referenceRun struct {
	decisions [][]limiters.Decision
	oracle    []bool
	report    *Report
}

// reference computes what Run must find, the slow and obvious way: each
// algorithm's decisions from limiters.Keyed, and each burst by a scan of
// every allowed request of the key so far, kept whole and in time order.
// Keys are the events' users.
func reference(t *testing.T, events []event, cfg Config) referenceRun {
	t.Helper()
	lanes := cfg.Lanes
	if len(lanes) == 0 {
		for _, a := range cfg.Algorithms {
			lanes = append(lanes, Lane{Name: a.String(), Algorithm: a, Policy: cfg.Policy})
		}
	}
	n := len(lanes)
	interval := cfg.Interval
	if interval == 0 {
		interval = cfg.Policy.Window
	}
	ref := referenceRun{decisions: make([][]limiters.Decision, n)}
	rep := &Report{Requests: int64(len(events)), Interval: interval, Algos: make([]AlgoStats, n), Agree: make([][]int64, n)}
	keys := map[string]uint32{}
	latest := map[string]int64{}
	// back[i] is the key's latest time before request i, when request i
	// comes earlier: a library kind's burst counts it then.
	back := make([]int64, len(events))
	for i, e := range events {
		back[i] = e.time
		if _, ok := keys[e.user]; ok && e.time < latest[e.user] {
			back[i] = latest[e.user]
		}
		if _, ok := keys[e.user]; !ok {
			keys[e.user] = uint32(len(keys))
		} else if e.time < latest[e.user] {
			rep.ClockBackwards++
			if rep.FirstBackwards == nil {
				rep.FirstBackwards = referenceRequest(i, e)
			}
			continue
		}
		latest[e.user] = e.time
	}
	rep.Keys = len(keys)
	rep.KeysHeld = len(keys) // tests that forget keys compare without it
	op := limiters.Policy{Limit: cfg.Policy.Limit, Window: cfg.Policy.Window, Clock: cfg.Policy.Clock}
	ok, err := limiters.NewKeyed(limiters.SlidingLog, op)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		ref.oracle = append(ref.oracle, ok.Allow(e.user, e.time, e.cost).Allowed)
	}
	var top []scoredInterval
	for a, lane := range lanes {
		alg := lane.Algorithm
		k, err := limiters.NewKeyed(alg, lane.Policy)
		if err != nil {
			t.Fatal(err)
		}
		// A Table beside it tells the time each admitted request was
		// taken at.
		tab, err := limiters.NewTable(alg, lane.Policy)
		if err != nil {
			t.Fatal(err)
		}
		s := &rep.Algos[a]
		s.Name, s.Algorithm, s.Policy, s.Requests = lane.Name, alg, lane.Policy, int64(len(events))
		s.Burst.Algorithm, s.Burst.Name = alg, lane.Name
		bursts := newReferenceBursts(int64(interval))
		for i, e := range events {
			d := k.Allow(e.user, e.time, e.cost)
			id := keys[e.user]
			if td := tab.Allow(id, e.time, e.cost); td != d {
				t.Fatalf("%v, request %d: Table decided %+v, Keyed %+v", alg, i, td, d)
			}
			ref.decisions[a] = append(ref.decisions[a], d)
			if !d.Allowed {
				s.Rejected++
				if ref.oracle[i] {
					s.FalseRejects++
				}
				if s.FirstRejection == nil {
					s.FirstRejection = referenceRequest(i, e)
				}
				continue
			}
			s.Allowed++
			if !ref.oracle[i] {
				s.FalseAllows++
			}
			at := tab.DecidedAt(id, e.time)
			if alg.Delays() {
				at = e.time + int64(d.Delay) // measured as it leaves the queue
			}
			if alg.Library() {
				at = max(at, back[i])
			}
			if iv := bursts.add(e.user, at, e.cost, int64(i)); iv.Count > s.Burst.Count {
				s.Burst = iv
				s.Burst.Algorithm, s.Burst.Name = alg, lane.Name
			}
		}
		if bound := alg.MaxInInterval(lane.Policy, time.Duration(interval)); s.Burst.Count > bound {
			t.Fatalf("%v allowed %d in one interval, above its bound %d", alg, s.Burst.Count, bound)
		}
		for key, b := range bursts.best {
			top = append(top, scoredInterval{Interval: Interval{Algorithm: alg, Name: lane.Name, Key: key, From: b.from, To: b.to, Count: b.count}, seq: b.seq, algo: a})
		}
	}
	for a := range n {
		rep.Agree[a] = make([]int64, n)
		for b := range n {
			for i := range events {
				if ref.decisions[a][i].Allowed == ref.decisions[b][i].Allowed {
					rep.Agree[a][b]++
				}
			}
		}
	}
	sortIntervals(top)
	if cfg.Top > 0 {
		rep.Top = []Interval{}
	}
	for i := 0; i < len(top) && i < cfg.Top; i++ {
		rep.Top = append(rep.Top, top[i].Interval)
	}
	ref.report = rep
	return ref
}

// referenceRequest is request i, event e, as the report names it.
func referenceRequest(i int, e event) *Rejection {
	return &Rejection{Seq: int64(i), Line: i + 2, Key: e.user, Time: e.time, TimeText: string(traces.AppendDecimal(nil, e.time, time.Second))}
}

// referenceBursts keeps every allowed request of one lane, per key, in
// time order (equal times in arrival order), and each key's worst
// interval.
type referenceBursts struct {
	interval int64
	allowed  map[string][]burstEntry
	best     map[string]keyBest
}

func newReferenceBursts(interval int64) *referenceBursts {
	return &referenceBursts{interval: interval, allowed: map[string][]burstEntry{}, best: map[string]keyBest{}}
}

// add places a request of key taken at t with cost c, and returns the
// worst interval that contains it: of the closed intervals of the burst
// length that start at an allowed request, the one with the most cost,
// the earliest of equals.
func (rb *referenceBursts) add(key string, t, c, seq int64) Interval {
	list := rb.allowed[key]
	at := len(list)
	for at > 0 && list[at-1].time > t {
		at--
	}
	list = append(list, burstEntry{})
	copy(list[at+1:], list[at:])
	list[at] = burstEntry{time: t, cost: c}
	rb.allowed[key] = list
	// The list is in time order: the intervals to try start at the
	// entries from t-interval to t, and hold the entries from their first
	// up to interval after it.
	lo := sort.Search(len(list), func(i int) bool { return t-list[i].time <= rb.interval })
	var best keyBest
	for i := lo; i < len(list) && list[i].time <= t; i++ {
		first := list[i]
		var sum, last int64
		for _, e := range list[i:] {
			if e.time-first.time > rb.interval {
				break
			}
			sum += e.cost
			last = e.time
		}
		if sum > best.count {
			best = keyBest{count: sum, from: first.time, to: last, seq: seq}
		}
	}
	if best.count > rb.best[key].count {
		rb.best[key] = best
	}
	return Interval{Key: key, From: best.from, To: best.to, Count: best.count}
}

// FuzzReplay replays random traces (out of time order, empty and
// look-alike keys, costs, both clocks, forgetting forced on early) and
// checks every decision and every report figure, bursts and the top list
// included, against reference.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0x1f, 0, 3, 0, 10, 1, 1, 20, 0, 2, 0xf0, 0, 0, 5, 2})
	f.Add([]byte{0x7f, 0x81, 0, 90, 0, 0, 0x80, 0, 0, 5, 0, 1, 0, 0})
	f.Add([]byte{0x24, 0x40, 1, 7, 0, 2, 0xfe, 1, 3, 3, 0, 4, 0x90, 2, 0, 6, 1})
	users := []string{"", "a", "b", ":", "a:b", "\\", "u0", "u1"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		var algos []limiters.Algorithm
		// Bits 0-6 of data[0] pick the first seven algorithms, bit 1 of
		// data[2] the others (bit 7 of data[0] is the clock).
		for a, alg := range limiters.AllAlgorithms() {
			if a < 7 && data[0]&(1<<a) != 0 || a >= 7 && len(data) > 2 && data[2]&2 != 0 {
				algos = append(algos, alg)
			}
		}
		if len(algos) == 0 {
			return
		}
		p := seedPolicy
		if data[0]&0x80 != 0 {
			p.Clock = limiters.ClockClamp
		}
		p.Limit = 1 + int64(data[1]&3)
		p.Capacity = 1 + int64(data[1]>>2&3)
		cfg := Config{Algorithms: algos, Policy: p, Workers: 1 + int(data[1]>>4&1), Top: int(data[1] >> 5)}
		if len(data) > 2 && data[2]&1 == 1 {
			// Lanes: each algorithm twice, the second under a policy of
			// its own, so that lanes of one algorithm split into groups.
			q := p
			q.Limit, q.Capacity = p.Limit+1, p.Capacity+2
			q.Window, q.Rate = 7*time.Second, limiters.Rate{N: 2, Per: 5 * time.Second}
			for _, a := range algos {
				cfg.Lanes = append(cfg.Lanes, Lane{Name: a.String(), Algorithm: a, Policy: p}, Lane{Name: a.String() + "'", Algorithm: a, Policy: q})
			}
		}
		if data[1]&0x40 != 0 {
			cfg.Interval = 3 * time.Second
		}
		var events []event
		now := int64(0)
		for rest := data[2:]; len(rest) >= 3 && len(events) < 200; rest = rest[3:] {
			now += int64(int8(rest[1])) * 250 * int64(time.Millisecond)
			events = append(events, event{user: users[rest[0]%8], time: now, cost: 1 + int64(rest[2]%3)})
		}
		want := reference(t, events, cfg)
		check := func(name string, cfg Config) {
			decisions, oracle, rep := collect(t, events, cfg)
			if diff := quickDiff(want.decisions, decisions); diff != "" {
				t.Fatalf("%s: decisions (-reference +sim):\n%s", name, diff)
			}
			if diff := quickDiff(want.oracle, oracle); diff != "" {
				t.Fatalf("%s: oracle (-reference +sim):\n%s", name, diff)
			}
			rep.KeysHeld = want.report.KeysHeld
			if diff := quickDiff(want.report, rep); diff != "" {
				t.Fatalf("%s: report (-reference +sim):\n%s", name, diff)
			}
			_, lean := collectAllowed(t, events, cfg)
			lean.KeysHeld = want.report.KeysHeld
			if diff := quickDiff(want.report, lean); diff != "" {
				t.Fatalf("%s: report without Detail (-reference +sim):\n%s", name, diff)
			}
		}
		keep := cfg
		keep.KeepKeys = true
		check("keeping keys", keep)
		forget := cfg
		forget.sweepAt = 2
		// Forgetting may refuse a trace that goes back too far; when it
		// replays one, it must find the same.
		var fk *ForgottenKeyError
		if _, err := Run(&sliceSource{events: events}, forget, nil); errors.As(err, &fk) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		check("forgetting keys", forget)
	})
}
