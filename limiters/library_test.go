package limiters_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// libraryCases are presets' configurations of every library kind, quirks
// in reach: float rates, fractional periods, small zones, odd periods.
var libraryCases = []struct{ preset, params string }{
	{"x-time-rate", "r=3,b=2"},
	{"x-time-rate", "every=7ms,b=3"},
	{"x-time-rate", "r=0.3,b=1"},
	{"redis-rate", "rate=10,burst=10,period=1s"},
	{"redis-rate", "rate=3,burst=2,period=300ms"},
	{"throttled", "per_sec=3,max_burst=2"},
	{"throttled", "per_hour=1895,max_burst=1,store=redis"},
	{"envoy", "requests_per_unit=5,unit=second"},
	{"envoy", "requests_per_unit=3,unit=minute"},
	{"nginx", "rate=10r/s,burst=3,nodelay"},
	{"nginx", "rate=2r/m,burst=1,zone=z:32k"},
	{"nginx", "rate=5r/s,burst=4,delay=2,zone=z:32k"},
	{"haproxy", "period=1001ms,limit=4,expire=3s"},
	{"haproxy", "period=10s,limit=10,expire=30s"},
	{"spring-cloud-gateway", "replenishRate=2,burstCapacity=5"},
	{"spring-cloud-gateway", "replenishRate=10,burstCapacity=10,requestedTokens=3"},
	{"spring-cloud-gateway", "replenishRate=3"},
}

// libraryRule returns the algorithm and policy of a case.
func libraryRule(t *testing.T, preset, params string) (limiters.Algorithm, limiters.Policy) {
	t.Helper()
	p, ok := presets.Lookup(preset)
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	m := map[string]string{}
	for _, kv := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = "true"
		}
		m[k] = v
	}
	a, pol, err := p.Limiter(m)
	if err != nil {
		t.Fatal(err)
	}
	return a, pol
}

type libRequest struct {
	key      uint32
	at, cost int64
}

// libraryTrace is a random trace of keys: bursts within a millisecond,
// gaps of milliseconds to minutes, costs up to above the burst, times with
// nanoseconds, now and then a time earlier than the key's last.
func libraryTrace(rng *rand.Rand, n, keys int) []libRequest {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	last := make([]int64, keys)
	for k := range last {
		last[k] = base
	}
	var out []libRequest
	for len(out) < n {
		k := rng.IntN(keys)
		switch r := rng.IntN(20); {
		case r < 8: // a burst
		case r < 15:
			last[k] += rng.Int64N(int64(2 * time.Second))
		case r < 18:
			last[k] += rng.Int64N(int64(3 * time.Minute))
		case r < 19:
			last[k] -= rng.Int64N(int64(90 * time.Second)) // back in time
		default:
			last[k] += rng.Int64N(int64(time.Millisecond))
		}
		for b := 1 + rng.IntN(4); b > 0 && len(out) < n; b-- {
			cost := int64(1)
			if rng.IntN(6) == 0 {
				cost = 1 + rng.Int64N(12)
			}
			out = append(out, libRequest{uint32(k), last[k] + rng.Int64N(1000), cost})
		}
	}
	return out
}

// TestLibraryKindsAreNotAll: AllAlgorithms, and so --algos all, keep
// meaning the exact kinds; LibraryAlgorithms lists the others, which
// ParseAlgorithm does not take by name.
func TestLibraryKindsAreNotAll(t *testing.T) {
	lib := limiters.LibraryAlgorithms()
	if len(lib) == 0 {
		t.Fatal("no library kinds")
	}
	for _, a := range limiters.AllAlgorithms() {
		if a.Library() || slices.Contains(lib, a) {
			t.Errorf("%v is in AllAlgorithms and a library kind", a)
		}
	}
	for _, a := range lib {
		if !a.Library() {
			t.Errorf("%v in LibraryAlgorithms is not a library kind", a)
		}
		if _, err := limiters.ParseAlgorithm(a.String()); err == nil {
			t.Errorf("ParseAlgorithm takes the library kind %v", a)
		}
		if a.Summary() == "" || a.Doc().How == "" || a.Doc().State == "" || a.Doc().Explain == "" {
			t.Errorf("%v: undocumented", a)
		}
	}
	if _, err := limiters.ParseAlgorithm("nosuch"); err == nil || strings.Contains(err.Error(), "nginx-limit-req") {
		t.Errorf("ParseAlgorithm's list of the valid: %v", err)
	}
}

// TestLibraryStoresAgree: for every library kind, a Table, a Group
// holding it beside other rules, a Keyed (which forgets idle keys) and
// for kinds whose keys do not interact the pure Step decide every request
// of random traces alike, in every field, and explain it alike; Admit then
// Refused gives the decisions Allow gives.
func TestLibraryStoresAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		t.Run(c.preset+":"+c.params, func(t *testing.T) {
			for trial := range 8 {
				trace := libraryTrace(rng, 1500, 1+rng.IntN(300))
				tab, err := limiters.NewTable(a, pol)
				if err != nil {
					t.Fatal(err)
				}
				other, _ := limiters.NewRule(limiters.TokenBucket, limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: time.Second}})
				rule, _ := limiters.NewRule(a, pol)
				g, err := limiters.NewGroupOf([]*limiters.Rule{other, rule, rule})
				if err != nil {
					t.Fatal(err)
				}
				admit, _ := limiters.NewGroupOf([]*limiters.Rule{other, rule})
				keyed, err := limiters.NewKeyed(a, pol)
				if err != nil {
					t.Fatal(err)
				}
				explain, _ := limiters.NewTable(a, pol)
				states := map[uint32]*stepper{}
				out := make([]limiters.Decision, 3)
				got2 := make([]limiters.Decision, 2)
				for i, rq := range trace {
					want := tab.Allow(rq.key, rq.at, rq.cost)
					g.Allow(rq.key, rq.at, rq.cost, out)
					mask := admit.Admit(rq.key, rq.at, rq.cost)
					for j := range got2 {
						got2[j] = limiters.Decision{Reason: "unset"}
					}
					if wrong := admit.Refused(rq.key, rq.at, rq.cost, 3&^mask, got2, nil); wrong != 0 {
						t.Fatalf("trial %d request %d: Refused finds allowed %b", trial, i, wrong)
					}
					kd := keyed.Allow(fmt.Sprint(rq.key), rq.at, rq.cost)
					ed, text := explain.AllowExplain(rq.key, rq.at, rq.cost, time.Second, nil)
					if len(text) == 0 {
						t.Fatalf("trial %d request %d: no state text", trial, i)
					}
					for name, got := range map[string]limiters.Decision{"group": out[1], "face": out[2], "keyed": kd, "explain": ed} {
						if got != want {
							t.Fatalf("trial %d request %d %+v: %s %+v, table %+v", trial, i, rq, name, got, want)
						}
					}
					if mask&2 != 0 != want.Allowed || !want.Allowed && got2[1] != want {
						t.Fatalf("trial %d request %d %+v: admit %b, refused %+v, table %+v", trial, i, rq, mask, got2[1], want)
					}
					if !a.KeysInteract() {
						st := states[rq.key]
						if st == nil {
							st = newStepper(a)
							states[rq.key] = st
						}
						if got := st.step(rule, rq.at, rq.cost); got != want {
							t.Fatalf("trial %d request %d %+v: Step %+v, table %+v", trial, i, rq, got, want)
						}
					}
				}
			}
		})
	}
}

// stepper holds one key's state of a library kind and steps it.
type stepper struct {
	step func(r *limiters.Rule, now, cost int64) limiters.Decision
}

func newStepper(a limiters.Algorithm) *stepper {
	var st stepper
	switch a {
	case limiters.XTimeRate:
		var s limiters.XTimeRateState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	case limiters.RedisRate:
		var s limiters.RedisRateState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	case limiters.Throttled:
		var s limiters.ThrottledState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	case limiters.EnvoyRateLimit:
		var s limiters.EnvoyState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	case limiters.HAProxyRate:
		var s limiters.HAProxyState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	case limiters.SpringGateway:
		var s limiters.SpringState
		st.step = func(r *limiters.Rule, now, cost int64) (d limiters.Decision) { s, d = s.Step(r, now, cost); return d }
	default:
		panic("no stepper for " + a.String())
	}
	return &st
}

// TestLibraryEncoded: StepEncoded decides as the Table, state bytes in
// and out, for the kinds whose keys do not interact; nginx's, whose do,
// it refuses with an error that says why.
func TestLibraryEncoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		rule, _ := limiters.NewRule(a, pol)
		if a.KeysInteract() {
			if _, _, err := rule.StepEncoded(nil, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "zone") {
				t.Errorf("%s: StepEncoded: %v, want a refusal naming the zone", c.preset, err)
			}
			continue
		}
		tab, _ := limiters.NewTable(a, pol)
		states := map[uint32][]byte{}
		for i, rq := range libraryTrace(rng, 2000, 20) {
			want := tab.Allow(rq.key, rq.at, rq.cost)
			next, got, err := rule.StepEncoded(states[rq.key], rq.at, rq.cost, nil)
			if err != nil {
				t.Fatalf("%s %s request %d: %v", c.preset, c.params, i, err)
			}
			states[rq.key] = next
			if got != want {
				t.Fatalf("%s %s request %d %+v: StepEncoded %+v, table %+v", c.preset, c.params, i, rq, got, want)
			}
		}
	}
}

// TestLibraryIdle: a state the store may forget as idle decides the next
// request as a fresh one does, so forgetting never changes a decision.
// (nginx's state is idle only once out of its zone, which has reset it.)
func TestLibraryIdle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		tab, _ := limiters.NewTable(a, pol)
		idle := 0
		for i, rq := range libraryTrace(rng, 3000, 5) {
			if tab.Idle(rq.key, rq.at) && !a.KeysInteract() {
				idle++
				fresh, _ := limiters.NewTable(a, pol)
				want := fresh.Allow(0, rq.at, rq.cost)
				if got := tab.Allow(rq.key, rq.at, rq.cost); got != want {
					t.Fatalf("%s %s request %d %+v: idle state decides %+v, a fresh one %+v", c.preset, c.params, i, rq, got, want)
				}
				continue
			}
			tab.Allow(rq.key, rq.at, rq.cost)
		}
		if idle == 0 && !a.KeysInteract() {
			t.Errorf("%s %s: no state was ever idle", c.preset, c.params)
		}
	}
}

// TestLibraryAllocateNothing: a library kind's decision in a Table
// allocates nothing, its full fields (the floats' texts included) too.
func TestLibraryAllocateNothing(t *testing.T) {
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		tab, _ := limiters.NewTable(a, pol)
		ts := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		tab.Allow(0, ts, 1)
		tab.Allow(1, ts, 1)
		n := testing.AllocsPerRun(2000, func() {
			ts += 37 * int64(time.Millisecond)
			tab.Allow(uint32(ts/int64(time.Millisecond))%2, ts, 1)
		})
		if n != 0 {
			t.Errorf("%s %s: %v allocations per request", c.preset, c.params, n)
		}
	}
}

// TestZoneSharedByKeyed: nginx's zone makes keys interact, and Keyed
// keeps them in one shard: two keys hashed anywhere share the zone.
func TestZoneSharedByKeyed(t *testing.T) {
	a, pol := libraryRule(t, "nginx", "rate=1r/m")
	if !a.KeysInteract() {
		t.Fatal("nginx's keys do not interact")
	}
	k, _ := limiters.NewKeyed(a, pol)
	k.Allow("A", 0, 1)
	k.Allow("B", 60500*int64(time.Millisecond), 1)
	if d := k.Allow("A", 61*int64(time.Second), 1); !d.Allowed {
		t.Fatalf("A after B expired its node: %+v, want allowed", d)
	}
}

// TestLibraryOwnClock: a library kind that takes earlier times as its
// library does decides alike under either clock rule; Envoy's, whose
// service keeps a key per window, is the one that takes the rule.
func TestLibraryOwnClock(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		if a.OwnClock() == (a == limiters.EnvoyRateLimit) {
			t.Errorf("%v: OwnClock %v", a, a.OwnClock())
		}
		if !a.OwnClock() {
			continue
		}
		reject, clamp := pol, pol
		reject.Clock, clamp.Clock = limiters.ClockReject, limiters.ClockClamp
		tr, _ := limiters.NewTable(a, reject)
		tc, _ := limiters.NewTable(a, clamp)
		for i, rq := range libraryTrace(rng, 2000, 5) {
			if dr, dc := tr.Allow(rq.key, rq.at, rq.cost), tc.Allow(rq.key, rq.at, rq.cost); dr != dc {
				t.Fatalf("%s %s request %d: reject %+v, clamp %+v", c.preset, c.params, i, dr, dc)
			}
		}
	}
}

// FuzzLibraryKinds replays random traces (keys, times going back and
// forth, costs up to far above the limit) through every library kind:
// nothing panics, and a Table, a Group and a Keyed decide every request
// alike, Admit and Refused as Allow.
func FuzzLibraryKinds(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{9, 0x80, 0xff, 0x7f, 1, 0, 0, 3, 200, 9, 9, 9})
	f.Add([]byte{12, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	cases := make([]struct {
		a   limiters.Algorithm
		pol limiters.Policy
	}, len(libraryCases))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		c := libraryCases[int(data[0])%len(libraryCases)]
		i := int(data[0]) % len(libraryCases)
		if cases[i].pol == (limiters.Policy{}) {
			cases[i].a, cases[i].pol = libraryRule(t, c.preset, c.params)
		}
		a, pol := cases[i].a, cases[i].pol
		tab, _ := limiters.NewTable(a, pol)
		rule, _ := limiters.NewRule(a, pol)
		g, _ := limiters.NewGroupOf([]*limiters.Rule{rule})
		keyed, _ := limiters.NewKeyed(a, pol)
		out := make([]limiters.Decision, 1)
		now := int64(1700000000) * int64(time.Second)
		for rest := data[1:]; len(rest) >= 3; rest = rest[3:] {
			key := uint32(rest[0] % 5)
			now += int64(int8(rest[1])) * int64(37*time.Millisecond)
			cost := 1 + int64(rest[2]%16)
			if rest[2] > 250 {
				cost = int64(rest[2]) << 40
			}
			want := tab.Allow(key, now, cost)
			mask := g.Admit(key, now, cost)
			if mask == 0 {
				out[0] = limiters.Decision{}
				g.Refused(key, now, cost, 1, out, nil)
				if out[0] != want {
					t.Fatalf("%s %s: Refused %+v, Allow %+v", c.preset, c.params, out[0], want)
				}
			} else if !want.Allowed {
				t.Fatalf("%s %s: Admit allowed, Allow %+v", c.preset, c.params, want)
			}
			if kd := keyed.Allow(fmt.Sprint(key), now, cost); kd != want {
				t.Fatalf("%s %s: Keyed %+v, Table %+v", c.preset, c.params, kd, want)
			}
		}
	})
}

// TestZoneReset: Table.Reset takes a key out of nginx's zone, so that the
// zone counts the nodes it holds: with one reset, a full zone takes a new
// key without deleting another.
func TestZoneReset(t *testing.T) {
	a, pol := libraryRule(t, "nginx", "rate=1r/m,zone=z:32k") // 191 nodes
	tab, _ := limiters.NewTable(a, pol)
	for k := uint32(0); k < 191; k++ {
		tab.Allow(k, int64(k)*int64(time.Millisecond), 1)
	}
	tab.Reset(5)
	tab.Allow(500, int64(time.Second), 1) // fills the zone again, deleting none
	if d := tab.Allow(0, int64(2*time.Second), 1); d.Allowed {
		t.Fatalf("key 0 lost its node to a zone that had room: %+v", d)
	}
	tab.Allow(501, int64(3*time.Second), 1) // full: deletes the least recently used, key 1
	if d := tab.Allow(1, int64(4*time.Second), 1); !d.Allowed {
		t.Fatalf("key 1 kept its node in a full zone: %+v", d)
	}
}

// TestLibraryGauges: every library kind but nginx's has a gauge, drawn
// against its limit; reading it changes no decision; between requests it
// moves on straight lines (standing still within a millisecond or a
// microsecond where the library reads its clock so), each up to the time
// Gauge says it stops, the same read from anywhere on the line, and never
// turns back. nginx's declares none, and says why.
func TestLibraryGauges(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) }
	for _, c := range libraryCases {
		a, pol := libraryRule(t, c.preset, c.params)
		g := a.Gauge()
		if a.KeysInteract() {
			if g.None == "" || g.Quantity != "" {
				t.Errorf("%s: gauge %+v, want none declared", a, g)
			}
			continue
		}
		if g.Quantity == "" || g.None != "" || g.Limit == "" || a.Limit(pol) <= 0 && c.params != "replenishRate=3" {
			t.Errorf("%s %s: gauge %+v against limit %d", a, c.params, g, a.Limit(pol))
		}
		limit := float64(a.Limit(pol))
		plain, _ := limiters.NewTable(a, pol)
		tab, _ := limiters.NewTable(a, pol)
		trace := libraryTrace(rng, 400, 1)
		for i, rq := range trace {
			where := fmt.Sprintf("%s %s request %d %+v", a, c.params, i, rq)
			if d1, d2 := plain.Allow(0, rq.at, rq.cost), tab.Allow(0, rq.at, rq.cost); d1 != d2 {
				t.Fatalf("%s: %+v without reading the gauge, %+v with", where, d1, d2)
			}
			if v, _ := tab.Gauge(0, rq.at); v < 0 || g.Left && v > limit {
				t.Fatalf("%s: gauge %v against limit %v", where, v, limit)
			}
			end := rq.at + int64(10*time.Second)
			if i+1 < len(trace) {
				end = max(trace[i+1].at, rq.at+1)
			}
			dir := 0
			move := func(x, y float64) {
				if near(x, y) {
					return
				}
				d := 1
				if y < x {
					d = -1
				}
				if dir != 0 && d != dir {
					t.Fatalf("%s: the gauge turns back at %v -> %v", where, x, y)
				}
				dir = d
			}
			cur := rq.at
			for pieces := 0; cur < end && pieces < 3000; pieces++ {
				v, until := tab.Gauge(0, cur)
				if until <= cur {
					t.Fatalf("%s: Gauge(%d) stops being linear at %d, not after it", where, cur, until)
				}
				last := min(until-1, end)
				vl, ul := tab.Gauge(0, last)
				if ul != until {
					t.Fatalf("%s: Gauge(%d) says the line ends at %d, Gauge(%d) at %d", where, cur, until, last, ul)
				}
				if last > cur {
					s := cur + rng.Int64N(last-cur)
					vs, us := tab.Gauge(0, s)
					want := v + (vl-v)*float64(s-cur)/float64(last-cur)
					if math.Abs(vs-want) > 1e-6*math.Max(1, limit) || us != until {
						t.Fatalf("%s: Gauge(%d) = %v until %d, want %v on the line from (%d, %v) to (%d, %v) until %d", where, s, vs, us, want, cur, v, last, vl, until)
					}
				}
				move(v, vl)
				if until > end {
					break
				}
				vu, _ := tab.Gauge(0, until)
				move(vl, vu)
				cur = until
			}
		}
	}
}
