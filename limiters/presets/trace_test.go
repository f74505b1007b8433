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
	keys     int           // how many keys
	requests int           // how many requests in all
	span     time.Duration // how long the trace runs
	maxCost  int64         // costs from 1 to maxCost; 1 for none
	// idle is the shortest idle gap each key has once (a little over a
	// minute unless set); idleJitter what may be added to it.
	idle, idleJitter time.Duration
	backwards        bool // now and then a key's time goes back
	// newKeys more keys send one request each, at random times: keys
	// that arrive late, as nginx's zone expiry needs.
	newKeys int
	// pauses, when set, makes one step in five a pause of up to that
	// long, where a store's TTLs run out.
	pauses time.Duration
}

// randomTrace returns a random trace of shape s: each key alternates
// bursts (requests within a few milliseconds, or the same nanosecond),
// gaps around its share of the span, and once an idle gap of a little
// over a minute; keys are interleaved by time, each in its own order (in
// time order unless backwards, which sends a key back up to 2 s now and
// then). Times carry nanoseconds.
func randomTrace(rng *rand.Rand, s traceShape) []diffRequest {
	if s.idle == 0 {
		s.idle, s.idleJitter = 61*time.Second, 20*time.Second
	}
	per := max(1, s.requests/s.keys)
	lines := make([][]diffRequest, s.keys, s.keys+s.newKeys)
	for k := range s.keys {
		idle := int64(s.idle)
		if s.idleJitter > 0 {
			idle += rng.Int64N(int64(s.idleJitter))
		}
		active := int64(s.span) - idle
		if active < int64(s.span)/10 {
			idle, active = 0, int64(s.span) // no room for the idle gap
		}
		steps := max(1, per/3) // a step sends 3 requests on average
		// One step in five pauses, half of pauses on average.
		pausing := int64(steps) / 5 * int64(s.pauses) / 2
		gap := max((active-pausing)/int64(steps), int64(time.Millisecond))
		t := rng.Int64N(gap)
		idleAt := per/4 + rng.IntN(per/2+1)
		var out []diffRequest
		for i := 0; i < per; {
			switch r := rng.IntN(10); {
			case i >= idleAt && idle > 0:
				t += idle
				idle = 0
			case r < 2 && s.pauses > 0:
				t += rng.Int64N(int64(s.pauses))
			case r < 3: // a burst on the last one
			case r < 8:
				t += rng.Int64N(2 * gap)
			case r < 9 && s.backwards:
				t = max(t-rng.Int64N(int64(2*time.Second)), 0)
			default:
				t += rng.Int64N(int64(5 * time.Millisecond))
			}
			for b := 1 + rng.IntN(5); b > 0 && i < per; b-- {
				at := t
				if rng.IntN(3) != 0 {
					at += rng.Int64N(int64(3 * time.Millisecond))
				}
				cost := int64(1)
				if s.maxCost > 1 && rng.IntN(5) == 0 {
					cost = 1 + rng.Int64N(s.maxCost)
				}
				i++
				if at > int64(s.span) {
					continue // the key's share ran past the span: it ends early
				}
				out = append(out, diffRequest{key: k, at: at, cost: cost})
			}
		}
		if !s.backwards {
			sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
		}
		lines[k] = out
	}
	for k := s.keys; k < s.keys+s.newKeys; k++ {
		lines = append(lines, []diffRequest{{key: k, at: rng.Int64N(int64(s.span)), cost: 1}})
	}
	// Merge the keys' lines by time, each key's in its own order.
	var out []diffRequest
	next := make([]int, len(lines))
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
