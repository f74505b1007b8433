package presets

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratesim/ratesim/limiters"
)

// TestXTimeRateDifferential drives golang.org/x/time/rate itself and the
// x-time-rate preset side by side on random traces (several keys, bursts
// within a millisecond, idle gaps over a minute, costs up to b+2, times to
// the nanosecond, keys going back in time) under random r and every, and
// fails on any request where they differ: whether AllowN(t, n) allows it,
// the tokens TokensAt(t) reports after it (as remaining, truncated), and
// for a refusal the delay a reservation at t would get (ReserveN on a copy
// of the limiter, DelayFrom(t)).
func TestXTimeRateDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 22))
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano()
	rates := []string{"0.3", "1", "2.5", "3", "7", "10", "0.05", "1000", "0.001", "33.3"}
	everys := []time.Duration{7 * time.Millisecond, 333 * time.Millisecond, 1500 * time.Millisecond, time.Minute, 13 * time.Microsecond}
	compared, differ := 0, 0
	for trial := 0; trial < 60; trial++ {
		b := 1 + rng.IntN(8)
		params := map[string]string{"b": strconv.Itoa(b)}
		var limit rate.Limit
		if trial%2 == 0 {
			r := rates[rng.IntN(len(rates))]
			params["r"] = r
			f, _ := strconv.ParseFloat(r, 64)
			limit = rate.Limit(f)
		} else {
			every := everys[rng.IntN(len(everys))]
			params["every"] = every.String()
			limit = rate.Every(every)
		}
		tab := table(t, "x-time-rate", params)
		trace := randomTrace(rng, traceShape{keys: 1 + rng.IntN(12), requests: 2000, span: 10 * time.Minute, maxCost: int64(b + 2), backwards: true})
		// A third of the requests come when the key's tokens should just
		// have come back, to the nanosecond or a few off, where float64
		// rounding and the truncated wait decide.
		lastAt := map[int]int64{}
		for i := range trace {
			rq := &trace[i]
			if last, ok := lastAt[rq.key]; ok && rng.IntN(3) == 0 {
				wait := int64(float64(rq.cost) / float64(limit) * 1e9)
				rq.at = last + wait + rng.Int64N(5) - 2
			}
			lastAt[rq.key] = rq.at
		}
		libs := map[int]*rate.Limiter{}
		for i, rq := range trace {
			lim := libs[rq.key]
			if lim == nil {
				lim = rate.NewLimiter(limit, b)
				libs[rq.key] = lim
			}
			at := time.Unix(0, base+rq.at)
			// The delay a reservation would get, on a copy, so the
			// limiter itself sees only AllowN.
			probe := new(rate.Limiter)
			reflect.ValueOf(probe).Elem().Set(reflect.ValueOf(lim).Elem())
			res := probe.ReserveN(at, int(rq.cost))
			wantDelay := res.DelayFrom(at)
			wantAllowed := lim.AllowN(at, int(rq.cost))
			wantRemaining := max(int64(lim.TokensAt(at)), 0)
			got := tab.Allow(uint32(rq.key), base+rq.at, rq.cost)
			compared++
			bad := got.Allowed != wantAllowed || got.Remaining != wantRemaining
			if !wantAllowed && got.RetryAfter != wantDelay {
				bad = true
			}
			if bad {
				differ++
				if differ <= 5 {
					t.Errorf("trial %d %v, request %d (key %d, t %d, n %d): preset %+v; x/time/rate allowed %v, tokens %v, delay %v",
						trial, params, i, rq.key, base+rq.at, rq.cost, got, wantAllowed, lim.TokensAt(at), wantDelay)
				}
			}
		}
	}
	proof(t, "x-time-rate | %s, AllowN/TokensAt/ReserveN in process | %d | %d", XTimeRateVersion, compared, differ)
}

var _ = limiters.XTimeRate
