package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/ratesim/ratesim/limiters"
)

// referenceClients is RunClients the slow and obvious way: per lane, one
// list of everything still to decide, the earliest (a retry before a trace
// request at the same time, retries in the order they were scheduled)
// taken by a scan each time.
func referenceClients(events []event, lanes []Lane, c Clients) ([][]Attempt, []ClientStats) {
	out := make([][]Attempt, len(lanes))
	stats := make([]ClientStats, len(lanes))
	for l, lane := range lanes {
		k, _ := limiters.NewKeyed(lane.Algorithm, lane.Policy)
		type item struct {
			a       Attempt
			retries int
			order   int64 // -1 for a trace request
		}
		var retries []item
		var order int64
		lat := map[time.Duration]int64{}
		next := 0
		for next < len(events) || len(retries) > 0 {
			best := -1
			for i, r := range retries {
				if best < 0 || r.a.Time < retries[best].a.Time || r.a.Time == retries[best].a.Time && r.order < retries[best].order {
					best = i
				}
			}
			var it item
			if best >= 0 && (next == len(events) || retries[best].a.Time <= events[next].time) {
				it = retries[best]
				retries = append(retries[:best], retries[best+1:]...)
			} else {
				e := events[next]
				it = item{a: Attempt{Lane: l, Request: Request{Seq: int64(next), Line: next + 2, User: []byte(e.user), Key: []byte(e.user), Cost: e.cost, Time: e.time}, Time: e.time}}
				next++
				stats[l].Unique++
			}
			a := it.a
			a.Decision, a.Exact = k.AllowExact(string(a.Request.Key), a.Time, a.Request.Cost)
			stats[l].Attempts++
			if a.Decision.Allowed {
				stats[l].Allowed++
				stats[l].Goodput++
				// The client has its answer when a queue releases it.
				lat[time.Duration(a.Time-a.Request.Time)+a.Decision.Delay]++
			} else {
				stats[l].Rejected++
				w, ok := c.wait(&a, it.retries)
				if !ok || it.retries >= c.MaxRetries {
					a.GaveUp = true
					stats[l].GaveUp++
				} else {
					order++
					r := a
					r.Time, r.Number = a.Time+int64(w), a.Number+1
					retries = append(retries, item{a: r, retries: it.retries + 1, order: order})
				}
			}
			out[l] = append(out[l], a)
		}
		for w, n := range lat {
			stats[l].Latency = append(stats[l].Latency, DurationCount{w, n})
		}
		stats[l].Latency = mergeWaits(stats[l].Latency, &waitCounts{})
	}
	return out, stats
}

// TestClientsMatchReference replays random traces through every
// algorithm with every client model and checks each attempt and figure
// against referenceClients.
func TestClientsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var lanes []Lane
	for _, a := range limiters.AllAlgorithms() {
		lanes = append(lanes, Lane{Name: a.String(), Algorithm: a, Policy: seedPolicy})
	}
	models := []Clients{
		{Model: ClientsNone},
		{Model: ClientsHonour, MaxRetries: 3},
		{Model: ClientsHonour, MaxRetries: 5, RetryAfterExact: true},
		{Model: ClientsImmediate, MaxRetries: 4, RetryDelay: 100 * time.Millisecond},
		{Model: ClientsBackoff, MaxRetries: 6, Base: 500 * time.Millisecond, Max: 4 * time.Second},
		{Model: ClientsBackoff, MaxRetries: 6, Base: 500 * time.Millisecond, Max: 4 * time.Second, Jitter: true, Seed: 9},
	}
	for trial, c := range models {
		events := randomTrace(rng, 600, 4, true)
		sortEvents(events)
		var got [][]Attempt = make([][]Attempt, len(lanes))
		stats, err := RunClients(&sliceSource{events: events}, Config{Lanes: lanes}, c, func(a *Attempt) error {
			b := *a
			b.Request = Request{Seq: a.Request.Seq, Line: a.Request.Line, User: slices.Clone(a.Request.User), Key: slices.Clone(a.Request.Key), Cost: a.Request.Cost, Time: a.Request.Time}
			got[a.Lane] = append(got[a.Lane], b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want, wantStats := referenceClients(events, lanes, c)
		// cmp.Diff takes seconds over this many attempts: only to say
		// where they differ.
		if !slices.EqualFunc(want, got, func(w, g []Attempt) bool { return slices.EqualFunc(w, g, sameAttempt) }) {
			t.Fatalf("trial %d (%v): attempts (-reference +RunClients):\n%s", trial, c.Model, gocmp.Diff(want, got, gocmp.AllowUnexported(Request{})))
		}
		if diff := quickDiff(wantStats, stats); diff != "" {
			t.Fatalf("trial %d (%v): stats (-reference +RunClients):\n%s", trial, c.Model, diff)
		}
		for l, st := range stats {
			if st.Attempts != st.Allowed+st.Rejected || st.Goodput+st.GaveUp != st.Unique || st.Unique != int64(len(events)) {
				t.Errorf("trial %d %s: figures do not add up: %+v", trial, lanes[l].Name, st)
			}
			if c.Model == ClientsNone && st.Attempts != st.Unique {
				t.Errorf("trial %d %s: %d attempts without retries", trial, lanes[l].Name, st.Attempts)
			}
			if c.Model != ClientsNone && st.Attempts == st.Unique {
				t.Errorf("trial %d %s: no retry to test", trial, lanes[l].Name)
			}
		}
	}
}

// sameAttempt reports whether a and b are the same attempt of the same
// request.
func sameAttempt(a, b Attempt) bool {
	q, r := &a.Request, &b.Request
	return a.Lane == b.Lane && a.Time == b.Time && a.Number == b.Number && a.Decision == b.Decision && a.Exact == b.Exact && a.GaveUp == b.GaveUp &&
		q.Seq == r.Seq && q.Line == r.Line && q.Time == r.Time && q.Cost == r.Cost && string(q.User) == string(r.User) && string(q.Key) == string(r.Key) &&
		string(q.TimeText) == string(r.TimeText) && len(q.with) == 0 && len(r.with) == 0
}

// sortEvents puts events in time order, stably.
func sortEvents(events []event) {
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && events[j].time < events[j-1].time; j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
}

// TestClientWaits checks each model's wait on its own.
func TestClientWaits(t *testing.T) {
	refused := func(d time.Duration) *Attempt {
		return &Attempt{Request: Request{Seq: 7}, Decision: limiters.Decision{RetryAfter: d, Reason: limiters.ReasonNoTokens}}
	}
	cases := []struct {
		c       Clients
		a       *Attempt
		retries int
		want    time.Duration
		ok      bool
	}{
		{Clients{Model: ClientsHonour}, refused(3333 * time.Millisecond), 0, 4 * time.Second, true}, // whole seconds, up
		{Clients{Model: ClientsHonour}, refused(3 * time.Second), 0, 3 * time.Second, true},
		{Clients{Model: ClientsHonour, RetryAfterExact: true}, refused(3333 * time.Millisecond), 0, 3333 * time.Millisecond, true},
		{Clients{Model: ClientsHonour}, refused(limiters.InfDuration), 0, 0, false}, // no wait cures it
		{Clients{Model: ClientsImmediate, RetryDelay: time.Millisecond}, refused(time.Hour), 2, time.Millisecond, true},
		{Clients{Model: ClientsBackoff, Base: time.Second, Max: 5 * time.Second}, refused(0), 0, time.Second, true},
		{Clients{Model: ClientsBackoff, Base: time.Second, Max: 5 * time.Second}, refused(0), 2, 4 * time.Second, true},
		{Clients{Model: ClientsBackoff, Base: time.Second, Max: 5 * time.Second}, refused(0), 3, 5 * time.Second, true},
		{Clients{Model: ClientsBackoff, Base: time.Second, Max: 5 * time.Second}, refused(0), 200, 5 * time.Second, true},
	}
	for i, c := range cases {
		if got, ok := c.c.wait(c.a, c.retries); got != c.want || ok != c.ok {
			t.Errorf("case %d: wait %v, %v; want %v, %v", i, got, ok, c.want, c.ok)
		}
	}
	// Full jitter: within the bound, the same for the same seed, request
	// and retry, and spread.
	c := Clients{Model: ClientsBackoff, Base: time.Second, Max: 8 * time.Second, Jitter: true, Seed: 3}
	seen := map[time.Duration]bool{}
	for seq := range int64(200) {
		a := &Attempt{Request: Request{Seq: seq}}
		w, _ := c.wait(a, 2)
		w2, _ := c.wait(a, 2)
		if w != w2 || w < 0 || w > 4*time.Second {
			t.Fatalf("request %d: jittered wait %v then %v, bound 4s", seq, w, w2)
		}
		seen[w/(400*time.Millisecond)] = true
	}
	if len(seen) < 9 {
		t.Errorf("jittered waits fall in %d of 11 tenths of the bound", len(seen))
	}
}

// TestClientsBounded: a request that never passes (its cost above the
// capacity) is offered 1 + MaxRetries times by every model but honour,
// which is told no wait cures it; MaxRetries above MaxClientRetries is
// refused before any request is read.
func TestClientsBounded(t *testing.T) {
	lanes := []Lane{{Name: "gcra", Algorithm: limiters.GCRA, Policy: seedPolicy}}
	never := []event{{user: "u", time: 0, cost: 9}}
	for _, c := range []Clients{
		{Model: ClientsImmediate, MaxRetries: MaxClientRetries, RetryDelay: time.Millisecond},
		{Model: ClientsBackoff, MaxRetries: MaxClientRetries, Base: time.Millisecond, Max: time.Second},
		{Model: ClientsHonour, MaxRetries: MaxClientRetries},
	} {
		stats, err := RunClients(&sliceSource{events: never}, Config{Lanes: lanes}, c, func(*Attempt) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1 + MaxClientRetries)
		if c.Model == ClientsHonour {
			want = 1
		}
		if st := stats[0]; st.Attempts != want || st.GaveUp != 1 || st.Goodput != 0 {
			t.Errorf("%v: %+v, want %d attempts and one given up", c.Model, st, want)
		}
	}
	src := &sliceSource{events: never}
	_, err := RunClients(src, Config{Lanes: lanes}, Clients{Model: ClientsImmediate, MaxRetries: MaxClientRetries + 1}, func(*Attempt) error { return nil })
	if err == nil || src.next != 0 {
		t.Errorf("MaxRetries %d: error %v after %d requests read", MaxClientRetries+1, err, src.next)
	}
}
