package sim

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// labelByUser labels a request by its user's number modulo 3.
func labelByUser(ev *traces.Event, key []byte) (uint8, error) {
	n, _ := strconv.Atoi(string(ev.User[1:]))
	return uint8(n % 3), nil
}

// TestLabelCounts checks the counts by label against the decisions the
// rows report, for runs of a few lanes and of more than one mask word:
// per lane, the requests of each label add up to all of them, and the
// allowed are those the rows say.
func TestLabelCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	events := randomTrace(rng, 3000, 40, true)
	for i := range events {
		events[i].user = "u" + strconv.Itoa(int(rng.IntN(40)))
	}
	for _, nlanes := range []int{3, 70} {
		var lanes []Lane
		for l := range nlanes {
			lanes = append(lanes, Lane{Name: "tb" + strconv.Itoa(l), Algorithm: limiters.TokenBucket,
				Policy: limiters.Policy{Capacity: int64(1 + l%9), Rate: limiters.Rate{N: int64(1 + l%4), Per: time.Second}}})
		}
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Label: labelByUser, Labels: 3}
		allowed, rep := collectAllowed(t, events, cfg)
		for a, st := range rep.Algos {
			var want [3]LabelCount
			for i, ev := range events {
				lab, _ := labelByUser(&traces.Event{User: []byte(ev.user)}, nil)
				want[lab].Requests++
				if allowed[a][i] {
					want[lab].Allowed++
				}
			}
			if len(st.ByLabel) != 3 || [3]LabelCount(st.ByLabel) != want {
				t.Fatalf("%d lanes, lane %d: by label %v, want %v", nlanes, a, st.ByLabel, want)
			}
			var total int64
			for _, c := range st.ByLabel {
				total += c.Requests
			}
			if total != rep.Requests {
				t.Errorf("labels count %d requests of %d", total, rep.Requests)
			}
		}
	}
}

// TestBatchLabels checks Batch.Label and that a labeller's error stops
// the run.
func TestBatchLabels(t *testing.T) {
	events := secs("u5", 1, 2, 3)
	cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Label: labelByUser, Labels: 3, Rows: true}
	_, err := Run(&sliceSource{events: events}, cfg, func(b *Batch) error {
		for i := range b.Requests {
			if b.Label(i) != 2 {
				t.Errorf("request %d: label %d, want 2", i, b.Label(i))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	cfg.Label = func(*traces.Event, []byte) (uint8, error) { return 0, boom }
	if _, err := Run(&sliceSource{events: events}, cfg, nil); !errors.Is(err, boom) {
		t.Errorf("labeller's error: %v", err)
	}
	cfg.Label = func(*traces.Event, []byte) (uint8, error) { return 3, nil }
	if _, err := Run(&sliceSource{events: events}, cfg, nil); err == nil {
		t.Errorf("a label out of range was taken")
	}
}

// TestWithFile: the "file" a request carries is its trace's name, unless
// the trace has a field of that name.
func TestWithFile(t *testing.T) {
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.FixedWindow}, Policy: seedPolicy, Rows: true, With: []string{"file"}}
	src := &sliceSource{events: secs("u1", 1, 2)}
	src.ev.File = "a.log"
	var got []string
	_, err := Run(src, cfg, func(b *Batch) error {
		for i := range b.Requests {
			got = append(got, string(b.With(i, 0)))
		}
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != "a.log" || got[1] != "a.log" {
		t.Errorf("file: %q, %v", got, err)
	}
}

// TestWithFileField: Config.WithFile carries the trace's name even where
// the trace has a field "file", which With's "file" gives instead.
func TestWithFileField(t *testing.T) {
	trace := "user,timestamp,file\nu1,1,x.txt\nu1,2,y.txt\n"
	r, err := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Algorithms: []limiters.Algorithm{limiters.FixedWindow}, Policy: seedPolicy, Rows: true, With: []string{"file"}, WithFile: true}
	var got []string
	_, err = Run(r, cfg, func(b *Batch) error {
		if b.NumWith() != 2 {
			t.Errorf("NumWith %d, want 2", b.NumWith())
		}
		for i := range b.Requests {
			got = append(got, string(b.With(i, 0))+" "+string(b.With(i, 1)))
		}
		return nil
	})
	if want := []string{"x.txt trace.csv", "y.txt trace.csv"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("with file: %q, %v; want %q", got, err, want)
	}
}
