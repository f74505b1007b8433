package limiters

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The benchmarks replay the same work for every algorithm and for
// x/time/rate: a stream of requests a microsecond apart, over one key or
// over 100,000 keys in random order, with a policy of 10 per second and a
// burst of 10.
const (
	benchStream = 1 << 16
	benchStep   = int64(time.Microsecond)
	warmSliding = 1_500_000 // requests: more than a window of the stream
)

var benchPolicy = Policy{
	Limit:    10,
	Window:   time.Second,
	Capacity: 10,
	Rate:     Rate{N: 10, Per: time.Second},
}

func benchKeys(keys int) []uint32 {
	rng := rand.New(rand.NewPCG(1, 1))
	ids := make([]uint32, benchStream)
	for i := range ids {
		ids[i] = uint32(rng.IntN(keys))
	}
	return ids
}

var benchSink int64

func BenchmarkAllow(b *testing.B) {
	for _, keys := range []int{1, 100_000} {
		ids := benchKeys(keys)
		names := make([]string, keys)
		for i := range names {
			names[i] = fmt.Sprint("user", i)
		}
		for _, alg := range AllAlgorithms() {
			b.Run(fmt.Sprintf("table/%s/keys=%d", alg, keys), func(b *testing.B) {
				tab, _ := NewTable(alg, benchPolicy)
				now := int64(0)
				for id := 0; id < keys; id++ {
					tab.Allow(uint32(id), now, 1)
				}
				if alg == SlidingLog {
					// Let the logs' rings reach their steady size.
					for i := 0; i < warmSliding; i++ {
						now += benchStep
						tab.Allow(ids[i&(benchStream-1)], now, 1)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				var n int64
				for i := 0; i < b.N; i++ {
					now += benchStep
					if tab.Allow(ids[i&(benchStream-1)], now, 1).Allowed {
						n++
					}
				}
				benchSink += n
			})
			b.Run(fmt.Sprintf("keyed/%s/keys=%d", alg, keys), func(b *testing.B) {
				k, _ := NewKeyed(alg, benchPolicy)
				now := int64(0)
				for id := 0; id < keys; id++ {
					k.Allow(names[id], now, 1)
				}
				if alg == SlidingLog {
					for i := 0; i < warmSliding; i++ {
						now += benchStep
						k.Allow(names[ids[i&(benchStream-1)]], now, 1)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				var n int64
				for i := 0; i < b.N; i++ {
					now += benchStep
					if k.Allow(names[ids[i&(benchStream-1)]], now, 1).Allowed {
						n++
					}
				}
				benchSink += n
			})
		}
		b.Run(fmt.Sprintf("x-time-rate/keys=%d", keys), func(b *testing.B) {
			lims := make([]*rate.Limiter, keys)
			for i := range lims {
				lims[i] = rate.NewLimiter(10, 10)
			}
			base := time.Unix(1_000_000, 0)
			times := make([]time.Time, benchStream)
			b.ReportAllocs()
			b.ResetTimer()
			var n int64
			now := base
			for i := 0; i < b.N; i++ {
				j := i & (benchStream - 1)
				if j == 0 {
					// Precompute the next times outside the per-request work,
					// as the int64 stream of the other benchmarks is.
					b.StopTimer()
					for t := range times {
						now = now.Add(time.Microsecond)
						times[t] = now
					}
					b.StartTimer()
				}
				if lims[ids[j]].AllowN(times[j], 1) {
					n++
				}
			}
			benchSink += n
		})
		// The keyed form of the same: a map from key to *rate.Limiter under
		// a mutex, beside Keyed.
		b.Run(fmt.Sprintf("x-time-rate-map/keys=%d", keys), func(b *testing.B) {
			var mu sync.Mutex
			lims := make(map[string]*rate.Limiter, keys)
			for _, name := range names {
				lims[name] = rate.NewLimiter(10, 10)
			}
			base := time.Unix(1_000_000, 0)
			times := make([]time.Time, benchStream)
			b.ReportAllocs()
			b.ResetTimer()
			var n int64
			now := base
			for i := 0; i < b.N; i++ {
				j := i & (benchStream - 1)
				if j == 0 {
					b.StopTimer()
					for t := range times {
						now = now.Add(time.Microsecond)
						times[t] = now
					}
					b.StartTimer()
				}
				mu.Lock()
				ok := lims[names[ids[j]]].AllowN(times[j], 1)
				mu.Unlock()
				if ok {
					n++
				}
			}
			benchSink += n
		})
	}
}

// BenchmarkSeedFive decides each request under the seed's five algorithms:
// with five Tables, with a Group's Allow, and with a Group's Admit (only
// whether each allowed it). One op is one request under all five. Each
// store first sees a warm-up stream, so that what is measured is the
// steady state (every key's state created, the logs at their size).
func BenchmarkSeedFive(b *testing.B) {
	algs := ClassicAlgorithms()
	for _, keys := range []int{1, 100_000} {
		ids := benchKeys(keys)
		warm := func(step func(id uint32, now int64)) int64 {
			now := int64(0)
			for i := range warmSliding {
				now += benchStep
				step(ids[i&(benchStream-1)], now)
			}
			return now
		}
		b.Run(fmt.Sprintf("tables/keys=%d", keys), func(b *testing.B) {
			var tabs []*Table
			for _, a := range algs {
				t, _ := NewTable(a, benchPolicy)
				tabs = append(tabs, t)
			}
			now := warm(func(id uint32, now int64) {
				for _, t := range tabs {
					t.Allow(id, now, 1)
				}
			})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now += benchStep
				id := ids[i&(benchStream-1)]
				for _, t := range tabs {
					if t.Allow(id, now, 1).Allowed {
						benchSink++
					}
				}
			}
		})
		b.Run(fmt.Sprintf("group-allow/keys=%d", keys), func(b *testing.B) {
			g, _ := NewGroup(algs, benchPolicy)
			out := make([]Decision, len(algs))
			now := warm(func(id uint32, now int64) { g.Allow(id, now, 1, out) })
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now += benchStep
				benchSink += int64(g.Allow(ids[i&(benchStream-1)], now, 1, out))
			}
		})
		b.Run(fmt.Sprintf("group-admit/keys=%d", keys), func(b *testing.B) {
			g, _ := NewGroup(algs, benchPolicy)
			now := warm(func(id uint32, now int64) { g.Admit(id, now, 1) })
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now += benchStep
				benchSink += int64(g.Admit(ids[i&(benchStream-1)], now, 1))
			}
		})
	}
}
