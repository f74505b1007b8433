package sim

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// libraryLane returns a lane of preset name with params.
func libraryLane(t *testing.T, lane, name, params string) Lane {
	t.Helper()
	p, ok := presets.Lookup(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	m := map[string]string{}
	for _, kv := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	a, pol, err := p.Limiter(m)
	if err != nil {
		t.Fatal(err)
	}
	return Lane{Name: lane, Algorithm: a, Policy: pol}
}

// TestLibraryLanes: lanes of library kinds, nginx's whose keys share a
// zone among them, decide in a run exactly as one Table each replaying
// the whole trace in order, whatever the workers asked for and whether
// idle keys are forgotten; and a run with them stays whole (bursts, top
// list) when keys go back in time, which the libraries accept.
func TestLibraryLanes(t *testing.T) {
	lanes := []Lane{
		libraryLane(t, "nginx", "nginx", "rate=1r/m,zone=z:32k"),
		libraryLane(t, "nginx-fast", "nginx", "rate=5r/s,burst=3,zone=z:32k"),
		libraryLane(t, "xtime", "x-time-rate", "r=2,b=3"),
		libraryLane(t, "redis", "redis-rate", "rate=3,burst=2,period=1s"),
		libraryLane(t, "envoy", "envoy", "requests_per_unit=3,unit=minute"),
		libraryLane(t, "haproxy", "haproxy", "period=3s,limit=4,expire=10s"),
		libraryLane(t, "spring", "spring-cloud-gateway", "replenishRate=2,burstCapacity=4"),
		{Name: "tb", Algorithm: limiters.TokenBucket, Policy: seedPolicy},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var events []event
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := 0; i < 6000; i++ {
		t0 += rng.Int64N(int64(300 * time.Millisecond))
		at := t0
		if rng.IntN(40) == 0 {
			at -= rng.Int64N(int64(5 * time.Second)) // back in time
		}
		events = append(events, event{user: "u" + strconv.Itoa(rng.IntN(400)), time: at, cost: 1 + rng.Int64N(2)})
	}
	// The reference: a Table per lane, every request in order.
	want := make([][]limiters.Decision, len(lanes))
	ids := map[string]uint32{}
	tabs := make([]*limiters.Table, len(lanes))
	for l, lane := range lanes {
		tab, err := limiters.NewTable(lane.Algorithm, lane.Policy)
		if err != nil {
			t.Fatal(err)
		}
		tabs[l] = tab
	}
	for _, e := range events {
		id, ok := ids[e.user]
		if !ok {
			id = uint32(len(ids))
			ids[e.user] = id
		}
		for l := range lanes {
			want[l] = append(want[l], tabs[l].Allow(id, e.time, e.cost))
		}
	}
	for _, cfg := range []Config{
		{Lanes: lanes, Policy: seedPolicy, Workers: 2, Top: 3},
		{Lanes: lanes, Policy: seedPolicy, Workers: 4, sweepAt: 16},
		{Lanes: lanes, Policy: seedPolicy, Workers: 2, KeepKeys: true, Rejections: true},
	} {
		got, _, rep := collect(t, events, cfg)
		for l, lane := range lanes {
			for i := range events {
				if got[l][i] != want[l][i] {
					t.Fatalf("workers %d, lane %s, request %d %+v: run %+v, table %+v", cfg.Workers, lane.Name, i, events[i], got[l][i], want[l][i])
				}
			}
			if rep.Algos[l].Burst.Count == 0 {
				t.Errorf("lane %s: no burst measured", lane.Name)
			}
		}
	}
}

// TestLibraryReference: a run of library lanes finds every decision and
// every figure of its report, bursts and the top list included, as the
// reference does, keeping keys and forgetting them, on traces whose keys
// go back in time (which the libraries take, and whose bursts count then
// at the key's latest time).
func TestLibraryReference(t *testing.T) {
	lanes := []Lane{
		libraryLane(t, "nginx", "nginx", "rate=2r/s,burst=2,zone=z:32k"),
		libraryLane(t, "xtime", "x-time-rate", "r=1,b=2"),
		libraryLane(t, "throttled", "throttled", "per_sec=1,max_burst=1"),
		libraryLane(t, "envoy", "envoy", "requests_per_unit=2,unit=second"),
		libraryLane(t, "haproxy", "haproxy", "period=2s,limit=3,expire=5s"),
		libraryLane(t, "spring", "spring-cloud-gateway", "replenishRate=1,burstCapacity=2"),
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 40 {
		var events []event
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		for range 150 {
			now += (rng.Int64N(9) - 2) * int64(250*time.Millisecond) // now and then back
			events = append(events, event{user: "u" + strconv.Itoa(rng.IntN(5)), time: now, cost: 1 + rng.Int64N(2)})
		}
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial%2, Top: trial % 4}
		want := reference(t, events, cfg)
		for _, c := range []Config{{KeepKeys: true}, {sweepAt: 2}} {
			run := cfg
			run.KeepKeys, run.sweepAt = c.KeepKeys, c.sweepAt
			decisions, _, rep := collect(t, events, run)
			for l := range lanes {
				for i := range events {
					if decisions[l][i] != want.decisions[l][i] {
						t.Fatalf("trial %d %s request %d: %+v, reference %+v", trial, lanes[l].Name, i, decisions[l][i], want.decisions[l][i])
					}
				}
			}
			rep.KeysHeld = want.report.KeysHeld
			if diff := quickDiff(want.report, rep); diff != "" {
				t.Fatalf("trial %d (keep %v): report (-reference +sim):\n%s", trial, c.KeepKeys, diff)
			}
		}
	}
}

// TestStackRefusesZones: a stack decides each key alone, which nginx's
// zone does not allow: the stack is refused before a request is read,
// naming the policy and its kind. The other library kinds stack, and
// decide in the stack as their Keyed does.
func TestStackRefusesZones(t *testing.T) {
	events := randomTrace(rand.New(rand.NewPCG(61, 62)), 300, 4, true)
	sortEvents(events)
	nginx := StackPolicy{Lane: libraryLane(t, "edge", "nginx", "rate=2r/s,burst=1"), KeyFields: []string{"user"}}
	src := &sliceSource{events: events}
	_, err := RunStack(src, Config{}, Stack{Policies: []StackPolicy{nginx}}, func(*StackDecision) error { return nil })
	want := "sim: policy edge: nginx-limit-req keeps its keys in one zone, where a new key expires others' states, and a stack decides each key alone: it cannot be stacked"
	if err == nil || err.Error() != want || src.next != 0 {
		t.Fatalf("nginx in a stack: %v after %d events, want %q before any", err, src.next, want)
	}
	if err := StackCheck(nginx); err == nil || err.Error() != want {
		t.Errorf("StackCheck: %v", err)
	}
	throttled := StackPolicy{Lane: libraryLane(t, "edge", "throttled", "per_sec=2,max_burst=1"), KeyFields: []string{"user"}}
	if err := StackCheck(throttled); err != nil {
		t.Fatalf("throttled: %v", err)
	}
	keyed, _ := limiters.NewKeyed(throttled.Algorithm, throttled.Policy)
	i := 0
	_, err = RunStack(&sliceSource{events: events}, Config{}, Stack{Policies: []StackPolicy{throttled}}, func(d *StackDecision) error {
		e := events[i]
		i++
		if want := keyed.Allow(e.user, e.time, e.cost); d.Decisions[0] != want {
			t.Fatalf("event %d %+v: the stack decided %+v, its Keyed %+v", i-1, e, d.Decisions[0], want)
		}
		return nil
	})
	if err != nil || i != len(events) {
		t.Fatalf("throttled in a stack: %v after %d of %d", err, i, len(events))
	}
}
