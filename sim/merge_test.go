package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestShardsMerge checks that the reports of the shards of random traces,
// merged, are the report of the whole trace, and that their rows, put
// back in order of Seq, are the whole trace's rows: for every kind of
// figure a report holds, for 1, 2, 3 and 7 shards, and in every grouping
// of the merge.
func TestShardsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	lanes := []Lane{}
	for _, a := range limiters.AllAlgorithms() {
		lanes = append(lanes, Lane{Name: a.String(), Algorithm: a, Policy: seedPolicy})
	}
	for trial := range 12 {
		events := randomTrace(rng, 200+rng.IntN(1500), 1+rng.IntN(40), trial%2 == 0)
		if trial%3 == 2 {
			// Out of time order: clock_backwards, and no timeline.
			for range 5 {
				i, j := rng.IntN(len(events)), rng.IntN(len(events))
				events[i], events[j] = events[j], events[i]
			}
		}
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Top: 1 + rng.IntN(6), MostRejected: 1 + rng.IntN(5),
			Every: time.Duration(1+rng.IntN(20)) * time.Second, Rejections: true, Rows: true, Detail: trial%4 == 0, Explain: trial%4 == 1}
		var whole []Row
		want, err := Run(&sliceSource{events: events}, cfg, func(b *Batch) error {
			for i := range b.Requests {
				whole = append(whole, b.Row(i))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 7} {
			var parts []*Part
			var rows []Row
			for i := range n {
				sc := cfg
				sc.Shard = Shard{Index: i, Count: n}
				rep, err := Run(&sliceSource{events: events}, sc, func(b *Batch) error {
					for i := range b.Requests {
						rows = append(rows, b.Row(i))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				p, err := PartOf(rep, &sc)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
			}
			// In one merge, and folded one part at a time from the end.
			all, err := Merge(parts)
			if err != nil {
				t.Fatal(err)
			}
			folded := parts[n-1]
			for i := n - 2; i >= 0; i-- {
				if folded, err = Merge([]*Part{parts[i], folded}); err != nil {
					t.Fatal(err)
				}
			}
			for _, got := range []*Report{all.Report, folded.Report} {
				got.Positions, got.KeysHeld = nil, want.KeysHeld
				if diff := quickDiff(want, got); diff != "" {
					t.Fatalf("trial %d, %d shards: merged report differs (-whole +merged):\n%s", trial, n, diff)
				}
			}
			slices.SortFunc(rows, func(a, b Row) int { return cmpInt(a.Seq, b.Seq) })
			if diff := quickDiff(whole, rows); diff != "" {
				t.Fatalf("trial %d, %d shards: rows differ (-whole +shards):\n%s", trial, n, diff)
			}
			// The rows make batches that answer as the replay's did.
			b, err := NewBatch(len(lanes), 0, rows)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if diff := quickDiff(whole[i], b.Row(i)); diff != "" {
					t.Fatalf("trial %d: row %d rebuilt differs:\n%s", trial, i, diff)
				}
			}
		}
	}
}

// TestShardOf pins the shard hash, which other tools reproduce: FNV-1a 64
// of the key's bytes, modulo the count.
func TestShardOf(t *testing.T) {
	for _, c := range []struct {
		key  string
		n    int
		want int
	}{
		{"", 7, int(uint64(14695981039346656037) % 7)},
		{"a", 1 << 30, int(uint64(0xaf63dc4c8601ec8c) % (1 << 30))},
		{"foobar", 1000, int(uint64(0x85944171f73967e8) % 1000)},
	} {
		if got := ShardOf([]byte(c.key), c.n); got != c.want {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", c.key, c.n, got, c.want)
		}
	}
}

func TestBadShard(t *testing.T) {
	for _, sh := range []Shard{{Index: 3, Count: 3}, {Index: -1, Count: 2}, {Count: -1}} {
		_, err := Run(&sliceSource{events: secs("u", 1)}, Config{Algorithms: []limiters.Algorithm{limiters.FixedWindow}, Policy: seedPolicy, Shard: sh}, nil)
		if err == nil {
			t.Errorf("shard %+v: no error", sh)
		}
	}
}
