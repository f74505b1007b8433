package limiters

import (
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The seed's five limiters, ported as they are (float64 arithmetic, a map
// per user) with the one correction the library makes to their rules:
// window starts by floor division. They are the oracle for the
// differential test, on traces where float64 arithmetic is exact.

type seedLimiter interface {
	Allow(user int, timestamp int64) bool
}

func floorStart(ts, w int64) int64 {
	k, _ := floorDivMod(ts, w)
	return k * w
}

type seedFixed struct {
	limit int
	w     int64
	users map[int]*struct {
		count int
		start int64
	}
}

func (f *seedFixed) Allow(u int, ts int64) bool {
	ws := floorStart(ts, f.w)
	st, ok := f.users[u]
	if !ok {
		f.users[u] = &struct {
			count int
			start int64
		}{1, ws}
		return true
	}
	if ws < st.start {
		return false
	}
	if ws > st.start {
		st.start, st.count = ws, 1
		return true
	}
	if st.count >= f.limit {
		return false
	}
	st.count++
	return true
}

type seedLog struct {
	limit int
	w     int64
	users map[int][]int64
}

func (l *seedLog) Allow(u int, ts int64) bool {
	log, ok := l.users[u]
	if !ok {
		l.users[u] = []int64{ts}
		return true
	}
	if len(log) > 0 && ts < log[len(log)-1] {
		return false
	}
	cutoff := ts - l.w
	first := 0
	for first < len(log) && log[first] < cutoff {
		first++
	}
	log = log[first:]
	l.users[u] = log
	if len(log) >= l.limit {
		return false
	}
	l.users[u] = append(log, ts)
	return true
}

type seedCounter struct {
	limit int
	w     int64
	users map[int]*struct {
		prevStart, curStart int64
		prev, cur           int
	}
}

func (c *seedCounter) Allow(u int, ts int64) bool {
	ws := floorStart(ts, c.w)
	st, ok := c.users[u]
	if !ok {
		st = &struct {
			prevStart, curStart int64
			prev, cur           int
		}{curStart: ws}
		c.users[u] = st
	}
	if ws < st.curStart {
		return false
	}
	if ws > st.curStart {
		if ws == st.curStart+c.w {
			st.prevStart, st.prev = st.curStart, st.cur
		} else {
			st.prevStart, st.prev = ws-c.w, 0
		}
		st.curStart, st.cur = ws, 0
	}
	elapsed := ts - st.curStart
	weight := float64(c.w-elapsed) / float64(c.w)
	if float64(st.prev)*weight+float64(st.cur) >= float64(c.limit) {
		return false
	}
	st.cur++
	return true
}

type seedToken struct {
	capacity, rate float64
	users          map[int]*struct {
		tokens float64
		last   int64
	}
}

func (b *seedToken) Allow(u int, ts int64) bool {
	st, ok := b.users[u]
	if !ok {
		st = &struct {
			tokens float64
			last   int64
		}{b.capacity, ts}
		b.users[u] = st
	}
	if ts < st.last {
		return false
	}
	st.tokens += float64(ts-st.last) * b.rate
	if st.tokens > b.capacity {
		st.tokens = b.capacity
	}
	st.last = ts
	if st.tokens < 1 {
		return false
	}
	st.tokens--
	return true
}

type seedLeaky struct {
	capacity, rate float64
	users          map[int]*struct {
		level float64
		last  int64
	}
}

func (b *seedLeaky) Allow(u int, ts int64) bool {
	st, ok := b.users[u]
	if !ok {
		st = &struct {
			level float64
			last  int64
		}{0, ts}
		b.users[u] = st
	}
	if ts < st.last {
		return false
	}
	st.level -= float64(ts-st.last) * b.rate
	if st.level < 0 {
		st.level = 0
	}
	st.last = ts
	if st.level+1 > b.capacity {
		return false
	}
	st.level++
	return true
}

func newSeedLimiter(a Algorithm, limit int, w int64, rate float64) seedLimiter {
	switch a {
	case FixedWindow:
		return &seedFixed{limit: limit, w: w, users: map[int]*struct {
			count int
			start int64
		}{}}
	case SlidingLog:
		return &seedLog{limit: limit, w: w, users: map[int][]int64{}}
	case SlidingCounter:
		return &seedCounter{limit: limit, w: w, users: map[int]*struct {
			prevStart, curStart int64
			prev, cur           int
		}{}}
	case TokenBucket:
		return &seedToken{capacity: float64(limit), rate: rate, users: map[int]*struct {
			tokens float64
			last   int64
		}{}}
	default:
		return &seedLeaky{capacity: float64(limit), rate: rate, users: map[int]*struct {
			level float64
			last  int64
		}{}}
	}
}

// TestDifferentialSeed: on random traces in whole seconds, with windows of
// a power of two seconds and rates of a power of two per second, where the
// seed's float64 arithmetic is exact, every decision equals the seed's.
// The traces go backwards in time now and then.
func TestDifferentialSeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []struct {
		f float64
		r Rate
	}{{0.25, Rate{1, 4 * time.Second}}, {0.5, Rate{1, 2 * time.Second}}, {1, Rate{1, time.Second}}, {2, Rate{2, time.Second}}}
	for trial := 0; trial < 300; trial++ {
		limit := 1 + rng.IntN(5)
		w := int64(1) << rng.IntN(5)
		rt := rates[rng.IntN(len(rates))]
		p := Policy{Limit: int64(limit), Window: time.Duration(w * sec), Capacity: int64(limit), Rate: rt.r}
		users := 1 + rng.IntN(3)
		n := 50 + rng.IntN(100)
		trace := make([][2]int64, n)
		ts := int64(rng.IntN(41)) - 20
		for i := range trace {
			switch x := rng.IntN(20); {
			case x == 0:
				ts -= int64(rng.IntN(int(2 * w))) // backwards
			case x < 8:
				// same instant
			default:
				ts += int64(rng.IntN(int(w) + 1))
			}
			trace[i] = [2]int64{int64(rng.IntN(users)), ts}
		}
		for _, alg := range ClassicAlgorithms() {
			oracle := newSeedLimiter(alg, limit, w, rt.f)
			tab, err := NewTable(alg, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, ev := range trace {
				want := oracle.Allow(int(ev[0]), ev[1])
				got := tab.Allow(uint32(ev[0]), ev[1]*sec, 1)
				if got.Allowed != want {
					t.Fatalf("trial %d %s limit %d window %d rate %v: request %d (u%d at %d): allowed %v, seed %v",
						trial, alg, limit, w, rt.f, i, ev[0], ev[1], got.Allowed, want)
				}
			}
		}
	}
}

// TestDifferentialXTimeRate: the token bucket decides as x/time/rate's
// AllowN on traces that never go backwards (x/time/rate mints tokens when
// they do, golang/go#56287), with costs, on a quarter-second grid.
func TestDifferentialXTimeRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Unix(1_000_000, 0)
	for trial := 0; trial < 300; trial++ {
		c := 1 + rng.IntN(6)
		perSec := []float64{0.25, 0.5, 1, 2, 4}[rng.IntN(5)]
		r := Rate{N: int64(perSec * 4), Per: 4 * time.Second}
		tab, err := NewTable(TokenBucket, Policy{Capacity: int64(c), Rate: r})
		if err != nil {
			t.Fatal(err)
		}
		lim := rate.NewLimiter(rate.Limit(perSec), c)
		ts := int64(rng.IntN(100)-50) * sec / 4
		for i := 0; i < 200; i++ {
			if rng.IntN(3) > 0 {
				ts += int64(rng.IntN(12)) * sec / 4
			}
			cost := 1 + rng.IntN(c+1)
			want := lim.AllowN(base.Add(time.Duration(ts)), cost)
			got := tab.Allow(0, ts, int64(cost))
			if got.Allowed != want {
				t.Fatalf("trial %d capacity %d rate %v: request %d (t=%dns cost %d): allowed %v, x/time/rate %v",
					trial, c, perSec, i, ts, cost, got.Allowed, want)
			}
		}
	}
}

// TestNoMinting: the alternating times of golang/go#56287 mint no tokens.
func TestNoMinting(t *testing.T) {
	for _, clock := range []Clock{ClockReject, ClockClamp} {
		for _, alg := range []Algorithm{TokenBucket, LeakyBucket, GCRA, LeakyQueue} {
			tab, _ := NewTable(alg, Policy{Capacity: 1, Rate: Rate{1, time.Second}, Clock: clock})
			allowed := 0
			for i := 0; i < 100; i++ {
				ts := int64(10 * time.Second)
				if i%2 == 1 {
					ts = int64(9 * time.Second)
				}
				if tab.Allow(0, ts, 1).Allowed {
					allowed++
				}
			}
			if allowed != 1 {
				t.Errorf("%s clock %d: %d allowed between 9s and 10s, want 1", alg, clock, allowed)
			}
		}
	}
}

// TestSlidingLogBackwardsAfterRefusal: a refusal leaves the log as it was
// (see SlidingLogState). For cost-1 requests a refusal never finds expired
// entries, so this matters only with costs: dropping 1 at the refusal at 9
// would admit a request at 6 with 1 and 5 (cost 2) in [-1, 6].
func TestSlidingLogBackwardsAfterRefusal(t *testing.T) {
	tab, _ := NewTable(SlidingLog, Policy{Limit: 3, Window: 7 * time.Second})
	for _, s := range []struct {
		t, cost int64
		want    bool
	}{{1, 1, true}, {5, 2, true}, {9, 3, false}, {6, 1, false}} {
		if got := tab.Allow(0, s.t*sec, s.cost).Allowed; got != s.want {
			t.Errorf("t=%d cost %d: allowed %v, want %v", s.t, s.cost, got, s.want)
		}
	}
}

// envoyWindow is a port of what Envoy's ratelimit service does per
// descriptor (src/redis/fixed_cache_impl.go, DoLimit: INCRBY the window's
// key by the hits, then compare the result with requests_per_unit in
// src/limiter/base_limiter.go, GetResponseDescriptorStatus): the counter
// grows for every hit, allowed or not.
type envoyWindow struct {
	limit, window int64
	counts        map[int64]int64
}

func (e *envoyWindow) hit(ts, cost int64) bool {
	k, _ := floorDivMod(ts, e.window)
	e.counts[k] += cost
	return e.counts[k] <= e.limit
}

// TestDifferentialEnvoy: FixedWindowHits decides as the port of Envoy's
// counter on random traces in time order with costs within the limit.
func TestDifferentialEnvoy(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := 0; trial < 200; trial++ {
		limit := 1 + rng.Int64N(8)
		window := (1 + rng.Int64N(5)) * sec
		ref := &envoyWindow{limit: limit, window: window, counts: map[int64]int64{}}
		tab, err := NewTable(FixedWindowHits, Policy{Limit: limit, Window: time.Duration(window)})
		if err != nil {
			t.Fatal(err)
		}
		ts := (rng.Int64N(40) - 20) * sec / 4
		for i := 0; i < 150; i++ {
			ts += rng.Int64N(3) * sec / 4
			cost := 1 + rng.Int64N(limit)
			want := ref.hit(ts, cost)
			if got := tab.Allow(0, ts, cost); got.Allowed != want {
				t.Fatalf("trial %d limit %d window %d: request %d (t=%d cost %d): %+v, Envoy allowed %v", trial, limit, window, i, ts, cost, got, want)
			}
		}
	}
}

// nginxLimitReq is a port of ngx_http_limit_req_lookup's arithmetic
// (nginx src/http/modules/ngx_http_limit_req_module.c): excess in
// thousandths of a request, time in milliseconds, rate in thousandths
// of a request per second, burst*1000 the most excess allowed, and the
// delay (excess - delay*1000) * 1000 / rate ms.
type nginxLimitReq struct {
	rate, burst, delay int64 // rate as ctx->rate: requests per second * 1000
	seen               bool
	excess, last       int64
}

func (n *nginxLimitReq) request(nowMs int64) (ok bool, delayMs int64) {
	var excess int64
	if n.seen {
		ms := max(0, nowMs-n.last) // within nginx's 60 s of leeway backwards
		excess = max(0, n.excess-n.rate*ms/1000+1000)
		if excess > n.burst*1000 {
			return false, 0
		}
		if ms != 0 {
			n.last = nowMs
		}
	} else {
		n.seen, n.last = true, nowMs
	}
	n.excess = excess
	if excess <= n.delay*1000 {
		return true, 0
	}
	return true, (excess - n.delay*1000) * 1000 / n.rate
}

// TestDifferentialNginx: TickQueue with nginx's tick and parts decides as
// the port of limit_req, delays included, for rates in r/s and r/m (whose
// thousandths per second nginx rounds down: 1r/m is 16).
func TestDifferentialNginx(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for trial := 0; trial < 300; trial++ {
		perMin := rng.IntN(2) == 0
		n := 1 + rng.Int64N(20)
		ctxRate := n * 1000
		if perMin {
			ctxRate = n * 1000 / 60
		}
		burst := rng.Int64N(6)
		delay := rng.Int64N(burst + 2)
		ref := &nginxLimitReq{rate: ctxRate, burst: burst, delay: delay}
		p := Policy{Capacity: burst + 1, Rate: Rate{N: ctxRate, Per: 1000 * time.Second}, Delay: delay, Clock: ClockClamp}
		tab, err := NewTable(TickQueue, p)
		if err != nil {
			t.Fatal(err)
		}
		ts := int64(1_000_000) * int64(time.Millisecond)
		for i := 0; i < 200; i++ {
			ts += rng.Int64N(4) * rng.Int64N(int64(time.Second))
			ok, delayMs := ref.request(ts / int64(time.Millisecond))
			got := tab.Allow(0, ts, 1)
			if got.Allowed != ok || ok && got.Delay != time.Duration(delayMs)*time.Millisecond {
				t.Fatalf("trial %d %+v: request %d (t=%dns): %+v, nginx %v delay %dms", trial, p, i, ts, got, ok, delayMs)
			}
		}
	}
}

// TestTickQueueIsLeakyQueue: with a drain of whole parts per tick and
// times on the tick grid, nothing is rounded, and TickQueue admits and
// counts as LeakyQueue does, on traces in time order (a refused request
// moves LeakyQueue's clock, not TickQueue's, as it does not nginx's).
func TestTickQueueIsLeakyQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for trial := 0; trial < 200; trial++ {
		tick := []int64{1, 1000, sec}[rng.IntN(3)]
		per := tick * (1 + rng.Int64N(10))
		p := Policy{Capacity: 1 + rng.Int64N(6), Rate: Rate{N: 1 + rng.Int64N(4), Per: time.Duration(per)},
			Tick: time.Duration(tick), Parts: per / tick, Clock: Clock(rng.IntN(2))}
		trace := randomTrace(rng, 150, tick, 3, false)
		for i := range trace {
			trace[i].t -= trace[i].t % tick // on the grid
		}
		want := run(t, LeakyQueue, p, trace)
		got := run(t, TickQueue, p, trace)
		for i := range got {
			if got[i].Allowed != want[i].Allowed || got[i].Remaining != want[i].Remaining || got[i].Reason != want[i].Reason {
				t.Fatalf("%+v: request %d: %+v, leaky-queue %+v", p, i, got[i], want[i])
			}
		}
	}
}
