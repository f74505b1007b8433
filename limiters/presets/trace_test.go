package presets

import (
	"math/rand/v2"
	"sort"
	"time"
)

// A diffRequest is one request of a differential test's random trace.
type diffRequest struct {
	key  int
	at   int64 // nanoseconds since the trace's start
	cost int64
}

// traceShape is what a differential's random trace looks like.
type traceShape struct {
	keys      int           // how many keys
	requests  int           // how many requests in all
	span      time.Duration // how long the trace runs
	maxCost   int64         // costs from 1 to maxCost; 1 for none
	grain     time.Duration // times fall on multiples of it (fractions below it otherwise)
	backwards bool          // now and then a key's time goes back
}

// randomTrace returns a random trace of shape s, in time order but for
// the backward steps: each key alternates bursts (requests within a few
// grains), short gaps, and idle gaps longer than a minute, keys
// interleaved. Every key has at least one idle gap over 60 s when the
// span allows it.
func randomTrace(rng *rand.Rand, s traceShape) []diffRequest {
	per := max(1, s.requests/s.keys)
	lines := make([][]diffRequest, s.keys)
	for k := range s.keys {
		var out []diffRequest
		// Each key's own timeline, over the span.
		t := rng.Int64N(int64(s.span) / 10)
		idle := int64(61*time.Second) + rng.Int64N(int64(20*time.Second))
		idleAt := per/3 + rng.IntN(per/3+1)
		for i := 0; i < per; {
			switch r := rng.IntN(10); {
			case i == idleAt && t+idle < int64(s.span):
				t += idle
			case r < 4: // a burst
			case r < 8:
				t += rng.Int64N(int64(s.span) / int64(per) * 2)
			case r < 9 && s.backwards:
				t -= rng.Int64N(int64(2 * time.Second))
				t = max(t, 0)
			default:
				t += rng.Int64N(int64(200 * time.Millisecond))
			}
			for b := 1 + rng.IntN(5); b > 0 && i < per; b-- {
				at := t + rng.Int64N(int64(3*s.grain))
				at -= at % int64(s.grain)
				if s.grain == 1 {
					at = t + rng.Int64N(int64(3*time.Millisecond))
				}
				cost := int64(1)
				if s.maxCost > 1 && rng.IntN(5) == 0 {
					cost = 1 + rng.Int64N(s.maxCost)
				}
				out = append(out, diffRequest{key: k, at: min(at, int64(s.span)), cost: cost})
				i++
			}
		}
		if !s.backwards {
			sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
		}
		lines[k] = out
	}
	// Merge the keys' lines by time, each key's in its own order.
	var out []diffRequest
	next := make([]int, s.keys)
	for {
		best := -1
		for k, line := range lines {
			if next[k] < len(line) && (best < 0 || line[next[k]].at < lines[best][next[best]].at) {
				best = k
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lines[best][next[best]])
		next[best]++
	}
}
