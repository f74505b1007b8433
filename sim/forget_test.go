package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// churnTrace is a time-ordered trace over many short-lived keys: each key
// sends a burst of a few requests and is never heard from again, while a
// few long-lived keys keep sending. Times go back a little now and then.
func churnTrace(rng *rand.Rand, n int, jitter bool) []event {
	var out []event
	now := int64(0)
	next := 0
	for len(out) < n {
		now += int64(rng.IntN(300)) * int64(time.Millisecond)
		t := now
		if jitter && rng.IntN(10) == 0 {
			t -= int64(rng.IntN(200)) * int64(time.Millisecond)
		}
		var user string
		switch rng.IntN(4) {
		case 0:
			user = "steady" + strconv.Itoa(rng.IntN(3))
		default:
			user = "k" + strconv.Itoa(next)
			next++
		}
		for range 1 + rng.IntN(5) {
			out = append(out, event{user: user, time: t, cost: 1 + int64(rng.IntN(2))})
			t += int64(rng.IntN(3)) * int64(time.Second)
		}
	}
	return out
}

// TestForgetsIdleKeys replays long traces over many short-lived keys with
// workers that forget idle keys early and often, and checks that every
// decision, state text and report figure is what keeping every key gives,
// while the keys held stay a small part of the keys seen.
func TestForgetsIdleKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial, jitter := range []bool{false, true} {
		events := churnTrace(rng, 8000, jitter)
		for _, workers := range []int{1, 2} {
			keep := Config{Algorithms: limiters.AllAlgorithms(), Policy: seedPolicy, Workers: workers, Top: 4, MostRejected: 4, Explain: true, KeepKeys: true}
			forget := keep
			forget.KeepKeys = false
			forget.sweepAt = 64
			wantD, wantO, want := collect(t, events, keep)
			gotD, gotO, got := collect(t, events, forget)
			if diff := quickDiff(wantD, gotD); diff != "" {
				t.Fatalf("trial %d, %d workers: decisions (-kept +forgetting):\n%s", trial, workers, diff)
			}
			if diff := quickDiff(wantO, gotO); diff != "" {
				t.Fatalf("trial %d, %d workers: oracle (-kept +forgetting):\n%s", trial, workers, diff)
			}
			if got.KeysHeld*3 > got.Keys {
				t.Errorf("trial %d, %d workers: held up to %d keys of %d", trial, workers, got.KeysHeld, got.Keys)
			}
			got.KeysHeld = want.KeysHeld
			if diff := quickDiff(want, got); diff != "" {
				t.Fatalf("trial %d, %d workers: report (-kept +forgetting):\n%s", trial, workers, diff)
			}
			if states := explainTexts(t, events, forget); states != explainTexts(t, events, keep) {
				t.Fatalf("trial %d, %d workers: state texts differ", trial, workers)
			}
		}
	}
}

// TestForgetsLongKeys is TestForgetsIdleKeys with keys long enough to live
// in the interner's arena, which sweeps compact while a batch is being
// decided: the decisions and the report must still be those of keeping
// every key.
func TestForgetsLongKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	events := churnTrace(rng, 20000, true)
	prefix := strings.Repeat("tenant-with-a-long-name/", 40)
	for i := range events {
		events[i].user = prefix + events[i].user
	}
	for _, workers := range []int{1, 2} {
		keep := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Workers: workers, Top: 4, MostRejected: 4, KeepKeys: true}
		forget := keep
		forget.KeepKeys = false
		forget.sweepAt = 64
		wantD, _, want := collect(t, events, keep)
		gotD, _, got := collect(t, events, forget)
		if diff := quickDiff(wantD, gotD); diff != "" {
			t.Fatalf("%d workers: decisions (-kept +forgetting):\n%s", workers, diff)
		}
		got.KeysHeld = want.KeysHeld
		if diff := quickDiff(want, got); diff != "" {
			t.Fatalf("%d workers: report (-kept +forgetting):\n%s", workers, diff)
		}
	}
}

// explainTexts returns every state text of a run, in order.
func explainTexts(t *testing.T, events []event, cfg Config) string {
	t.Helper()
	cfg.Rows, cfg.Explain = true, true
	var b strings.Builder
	_, err := Run(&sliceSource{events: events}, cfg, func(bt *Batch) error {
		for i := range bt.Requests {
			for a := range cfg.Algorithms {
				b.Write(bt.State(i, a))
				b.WriteByte('\n')
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestForgottenKeyComesBackEarly checks that a key forgotten as idle, then
// seen again at a time before the one it was judged idle at, stops the run
// with an error naming the line, rather than getting a fresh state's
// decision; and that keeping every key decides that trace.
func TestForgottenKeyComesBackEarly(t *testing.T) {
	var events []event
	for i := range 2000 {
		events = append(events, event{user: "k" + strconv.Itoa(i), time: int64(i) * int64(time.Second), cost: 1})
	}
	events = append(events, event{user: "k3", time: 1500 * int64(time.Second), cost: 1})
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Workers: 1, Rows: true, sweepAt: 64}
	_, err := Run(&sliceSource{events: events}, cfg, func(*Batch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `trace:2002: key "k3" comes back at 1500`) {
		t.Fatalf("got %v, want an error for line 2002", err)
	}
	cfg.KeepKeys = true
	if _, err := Run(&sliceSource{events: events}, cfg, func(*Batch) error { return nil }); err != nil {
		t.Fatalf("keeping every key: %v", err)
	}
	// A key that is new, not forgotten, may come at any time.
	events[len(events)-1].user = "new"
	cfg.KeepKeys = false
	if _, err := Run(&sliceSource{events: events}, cfg, func(*Batch) error { return nil }); err != nil {
		t.Fatalf("a new key late in time: %v", err)
	}
}

// TestInternerRemove removes keys at random from a large interner and
// checks that every held key keeps its id, removed ones come back with
// reused ids, and the arena is compacted on the way.
func TestInternerRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	in := newInterner()
	key := func(i int) []byte {
		// Long keys, so that removing them makes the arena compact.
		return append(bytes.Repeat([]byte{'x'}, 1000), fmt.Sprint(i)...)
	}
	held := map[int]uint32{}
	lookup := func(i int) (uint32, bool) {
		k := key(i)
		h := hashKey(k)
		c := in.candidate(h)
		return in.lookup(k, h, c)
	}
	compacted := false
	remove := func(i int) {
		before := in.dead
		in.remove(held[i])
		delete(held, i)
		if in.dead < before {
			compacted = true
		}
	}
	for round := range 30000 {
		i := rng.IntN(3000)
		// Mostly adds for a third of the rounds, then mostly removals,
		// then a mix.
		p := []int{10, 90, 50}[round/10000]
		if _, ok := held[i]; ok && rng.IntN(100) < p {
			remove(i)
			continue
		}
		id, added := lookup(i)
		if want, ok := held[i]; ok != !added || ok && id != want {
			t.Fatalf("round %d: key %d: id %d added %v, held %v as %d", round, i, id, added, ok, want)
		}
		held[i] = id
	}
	if in.Len() != len(held) {
		t.Errorf("Len = %d, want %d", in.Len(), len(held))
	}
	for i, id := range held {
		if got, added := lookup(i); got != id || added || !bytes.Equal(in.key(id), key(i)) {
			t.Errorf("key %d: id %d (added %v), want %d", i, got, added, id)
		}
	}
	if !compacted {
		t.Errorf("the arena was never compacted (%d dead bytes of %d now)", in.dead, in.bytes)
	}
}

// TestInternerStaleCandidate looks a key up with a candidate slot found
// before the table grew and before removals compacted the key bytes: the
// stale slot's id then names a key that lived far into an arena that
// compaction has since shrunk, and must not be trusted, nor make the
// prefetch of its bytes read outside the arena.
func TestInternerStaleCandidate(t *testing.T) {
	in := newInterner()
	key := func(i int) []byte {
		return append(bytes.Repeat([]byte{'y'}, 2000), fmt.Sprint(i)...) // in the arena
	}
	var ids []uint32
	add := func(i int) uint32 {
		k := key(i)
		id, _ := in.lookup(k, hashKey(k), nil)
		return id
	}
	for i := range 1500 { // about 3 MiB: the key below lands in a later chunk
		ids = append(ids, add(i))
	}
	target := key(1500)
	h := hashKey(target)
	id := add(1500)
	stale := in.candidate(h)
	chunk, _ := in.ref(id).place()
	if stale == nil || chunk == 0 {
		t.Fatal("the key should be in a later arena chunk")
	}
	for i := 1501; i < 2100; i++ { // the table grows at 1729 keys
		ids = append(ids, add(i))
	}
	if in.owns(stale) {
		t.Fatal("the table did not grow")
	}
	compacted := false
	for _, i := range ids {
		before := in.dead
		in.remove(i)
		compacted = compacted || in.dead < before
	}
	if !compacted || len(in.arena) > chunk {
		t.Fatalf("the arena should have compacted below chunk %d; it has %d", chunk, len(in.arena))
	}
	in.prefetchKey(stale.id1 - 1)
	if got, added := in.lookup(target, h, stale); got != id || added {
		t.Errorf("with a stale candidate: id %d (added %v), want %d", got, added, id)
	}
}
