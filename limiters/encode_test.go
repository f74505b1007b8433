package limiters

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestStepEncodedMatchesKeyed: a key's state kept as bytes between
// requests decides as Keyed does, for every algorithm and clock rule.
func TestStepEncodedMatchesKeyed(t *testing.T) {
	for _, a := range AllAlgorithms() {
		for _, clock := range []Clock{ClockReject, ClockClamp} {
			p := Policy{Limit: 4, Window: 10 * time.Second, Capacity: 4, Rate: Rate{N: 3, Per: 7 * time.Second}, Buckets: 5, Clock: clock}
			r, err := NewRule(a, p)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := NewKeyed(a, p)
			states := map[string][]byte{}
			rng := rand.New(rand.NewPCG(uint64(a), uint64(clock)))
			now := int64(-50e9)
			for i := 0; i < 20000; i++ {
				now += rng.Int64N(3e9)
				at := now - rng.Int64N(2e9) // steps back now and then
				key := fmt.Sprint(rng.IntN(5))
				cost := rng.Int64N(6)
				next, got, err := r.StepEncoded(states[key], at, cost, nil)
				if err != nil {
					t.Fatalf("%v: step %d: %v", a, i, err)
				}
				states[key] = next
				if want := k.Allow(key, at, cost); got != want {
					t.Fatalf("%v clock %d: step %d: got %+v want %+v", a, clock, i, got, want)
				}
			}
		}
	}
}

// FuzzStepEncoded: any bytes are a state or an error, never a panic, and
// what StepEncoded writes it reads back.
func FuzzStepEncoded(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(1), uint8(0))
	f.Add(make([]byte, 25), int64(5), int64(2), uint8(3))
	f.Add(make([]byte, 32), int64(-5), int64(1), uint8(1))
	f.Fuzz(func(t *testing.T, state []byte, now, cost int64, alg uint8) {
		// The textbook kinds: a library kind takes its library's own
		// parameters (a preset's), not this policy.
		algos := AllAlgorithms()
		a := algos[int(alg)%len(algos)]
		r, err := NewRule(a, Policy{Limit: 5, Window: 10, Capacity: 5, Rate: Rate{N: 3, Per: 7}, Buckets: 2})
		if err != nil {
			t.Fatal(err)
		}
		next, _, err := r.StepEncoded(state, now, cost, nil)
		if err != nil {
			return
		}
		if _, _, err := r.StepEncoded(next, now, cost, nil); err != nil {
			t.Fatalf("%v: own encoding %x refused: %v", a, next, err)
		}
	})
}

// TestStepEncodedExactAndDescribe: StepEncodedExact decides as
// Keyed.AllowExact does, durations in full included, and DescribeEncoded
// says of a state what a request it cannot take (a cost above the limit)
// is told, leaving the state as it was, for every algorithm and clock.
func TestStepEncodedExactAndDescribe(t *testing.T) {
	for _, a := range AllAlgorithms() {
		for _, clock := range []Clock{ClockReject, ClockClamp} {
			p := Policy{Limit: 4, Window: 10 * time.Second, Capacity: 4, Rate: Rate{N: 3, Per: 7 * time.Second}, Buckets: 5, Clock: clock}
			r, err := NewRule(a, p)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := NewKeyed(a, p)
			states := map[string][]byte{}
			rng := rand.New(rand.NewPCG(uint64(a)+100, uint64(clock)))
			now := int64(-50e9)
			for i := 0; i < 5000; i++ {
				now += rng.Int64N(3e9)
				at := now - rng.Int64N(2e9)
				key := fmt.Sprint(rng.IntN(5))
				desc, descX, err := r.DescribeEncoded(states[key], at)
				if err != nil {
					t.Fatalf("%v: step %d: describe: %v", a, i, err)
				}
				_, over, overX, err := r.StepEncodedExact(states[key], at, 5, nil)
				if err != nil {
					t.Fatal(err)
				}
				if over.Reason != ReasonCost || desc.Allowed || desc.Reason != ReasonNone || desc.RetryAfter != 0 ||
					desc.Remaining != over.Remaining || desc.ResetAfter != over.ResetAfter || descX.ResetAfter != overX.ResetAfter {
					t.Fatalf("%v clock %d: step %d: described %+v %+v, a cost above the limit is told %+v %+v", a, clock, i, desc, descX, over, overX)
				}
				cost := 1 + rng.Int64N(4)
				next, got, gotX, err := r.StepEncodedExact(states[key], at, cost, nil)
				if err != nil {
					t.Fatalf("%v: step %d: %v", a, i, err)
				}
				states[key] = next
				if want, wantX := k.AllowExact(key, at, cost); got != want || gotX != wantX {
					t.Fatalf("%v clock %d: step %d: got %+v %+v want %+v %+v", a, clock, i, got, gotX, want, wantX)
				}
			}
		}
	}
}
