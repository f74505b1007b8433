package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

func TestKeyNames(t *testing.T) {
	for _, tc := range []struct{ key, name string }{
		{"u1", "p:{u1}:lim:gcra"},
		{"", "p:{%}:lim:gcra"},
		{"%", "p:{%25}:lim:gcra"},
		{"}", "p:{%7D}:lim:gcra"},
		{"{", "p:{%7B}:lim:gcra"},
		{"}{x", "p:{%7D%7Bx}:lim:gcra"},
		{"a:b\n\x00", "p:{a:b\n\x00}:lim:gcra"},
		{"%7D", "p:{%257D}:lim:gcra"},
	} {
		if got := keyName("p:", tc.key, ":lim:gcra"); got != tc.name {
			t.Errorf("keyName(%q) = %q, want %q", tc.key, got, tc.name)
		}
	}
}

// hostileKeys are keys a client may choose to escape its limit with: each
// an attempt at an empty hash tag, a tag of its own, a name of another
// key's, or a key Redis or Lua might mangle.
var hostileKeys = []string{
	"{", "}", "}{", "{}", "{}x}", "}x{y}", "x{y}z", "{u}", ":", "a:b", "::",
	"\n", "a\r\nb", "\x00", "x\x00y", "\xff\xfe\xfd", "\xc3", "",
	"%", "%7D", "%7B", "%25", "* ?[", "\\", "ünïcødé", " ",
}

// TestHostileKeysCluster: in a Redis Cluster, keys made to break hash
// tags (a "}" first gave PREFIX{}x}: an empty tag, whose names Redis
// hashes whole, and the sliding log's two keys landed in two slots:
// CROSSSLOT, and under FailOpen every request passed) get, under every
// failure policy, exactly the decisions limiters.Keyed makes, with no
// failure decision: each key's names share one slot, and two keys never
// share a name. A key of 1 MiB too.
func TestHostileKeysCluster(t *testing.T) {
	c := connect(t, serverAddrs(t, "RATESIM_REDIS_CLUSTER"))
	ctx := context.Background()
	ls := everyLimiter()
	big := strings.Repeat("}{x", 1<<20/3)
	keys := append(append([]string(nil), hostileKeys...), big)
	// Each key's names share a slot; names of different keys differ.
	seen := map[string]string{}
	st0, err := New(c, ls, Options{Prefix: testPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		var slots []int64
		for _, name := range st0.Keys(key) {
			if other, ok := seen[name]; ok {
				t.Errorf("keys %q and %q share the name %q", key, other, name)
			}
			seen[name] = key
			slot, err := c.ClusterKeySlot(ctx, name).Result()
			if err != nil {
				t.Fatal(err)
			}
			slots = append(slots, slot)
		}
		for _, s := range slots {
			if s != slots[0] {
				t.Errorf("key %.20q: its names are in slots %v", key, slots)
				break
			}
		}
	}
	for _, failure := range []Failure{FailError, FailOpen, FailClosed} {
		t.Run(failure.String(), func(t *testing.T) {
			st, err := New(c, ls, Options{Prefix: testPrefix(t), Failure: failure, ExpiryMargin: replayMargin})
			if err != nil {
				t.Fatal(err)
			}
			keyed := make([]*limiters.Keyed, len(ls))
			for i, l := range ls {
				keyed[i], _ = limiters.NewKeyed(l.Algorithm, l.Policy)
			}
			reqs := makeTrace(traceSpec{seed: uint64(failure) + 3, requests: 1200, keys: len(hostileKeys), span: 20 * time.Second, maxCost: 4, jitter: time.Millisecond})
			for i := range reqs {
				var k int
				fmt.Sscanf(reqs[i].key, "k%d", &k)
				reqs[i].key = hostileKeys[k]
			}
			// The big key a few times, amid the others.
			for i := 0; i < len(reqs); i += len(reqs) / 8 {
				reqs[i].key = big
			}
			const batch = 16
			allowed := 0
			for start := 0; start < len(reqs); start += batch {
				var rs []Request
				for _, q := range reqs[start:min(start+batch, len(reqs))] {
					for l := range ls {
						rs = append(rs, Request{Limiter: l, Key: q.key, Now: q.now, Cost: q.cost})
					}
				}
				out := make([]limiters.Decision, len(rs))
				if err := st.AllowBatch(ctx, rs, out); err != nil {
					t.Fatalf("request %d: %v", start, err)
				}
				for j, r := range rs {
					want := keyed[r.Limiter].Allow(r.Key, r.Now, r.Cost)
					if out[j] != want {
						t.Fatalf("%s, key %.20q at %d cost %d: got %+v want %+v", ls[r.Limiter].Name, r.Key, r.Now, r.Cost, out[j], want)
					}
					if want.Allowed {
						allowed++
					}
				}
			}
			if n := st.FailureDecisions(); n != 0 {
				t.Errorf("%d failure decisions", n)
			}
			if allowed == 0 || allowed == len(reqs)*len(ls) {
				t.Errorf("%d of %d allowed: the trace does not test the limits", allowed, len(reqs)*len(ls))
			}
		})
	}
}

// TestSharedPrefixAlgorithms: stores of different processes that share a
// prefix and a limiter's name but not its algorithm (a fixed window of 3
// an hour beside a sliding counter, say) keep their states apart: each
// decides as its own limiters.Keyed does, for every pair of algorithms.
// (They shared one hash: each write moved the other's expiry, and a fixed
// window of 3 an hour let a fifth request through; or they met WRONGTYPE.)
func TestSharedPrefixAlgorithms(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	prefix := testPrefix(t)
	policy := func(a limiters.Algorithm) limiters.Policy {
		if a.Windowed() {
			return limiters.Policy{Limit: 3, Window: time.Hour}
		}
		return limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 3, Per: time.Hour}}
	}
	for _, a := range keptAlgorithms() {
		for _, b := range keptAlgorithms() {
			if a == b {
				continue
			}
			sa := newStore(t, c, a, policy(a), Options{Prefix: prefix})
			sb := newStore(t, c, b, policy(b), Options{Prefix: prefix})
			ka, _ := limiters.NewKeyed(a, policy(a))
			kb, _ := limiters.NewKeyed(b, policy(b))
			key := a.String() + "+" + b.String()
			for i := range 8 {
				now := int64(i) * int64(time.Minute)
				for _, s := range []struct {
					st *Store
					k  *limiters.Keyed
				}{{sa, ka}, {sb, kb}} {
					got, err := s.st.Allow(ctx, key, now, 1)
					if want := s.k.Allow(key, now, 1); err != nil || got != want {
						t.Fatalf("%v beside %v, request %d to %v: got %+v %v want %+v", a, b, i, s.st.lims[0].alg, got, err, want)
					}
				}
			}
		}
	}
}

// TestKeepsEveryAlgorithm: the store has a script for every algorithm of
// package limiters but those notKept names, as Supports promises; a new
// algorithm needs its own. One it does not keep is refused, named.
func TestKeepsEveryAlgorithm(t *testing.T) {
	for _, a := range limiters.AllAlgorithms() {
		if Supports(a) == slices.Contains(notKept, a) {
			t.Errorf("%s: Supports says %v, notKept %v", a, Supports(a), slices.Contains(notKept, a))
		}
		if Supports(a) {
			continue
		}
		_, err := newLimiter(Limiter{Name: "x", Algorithm: a, Policy: limiters.Policy{Limit: 1, Window: time.Second}})
		if err == nil || !strings.Contains(err.Error(), "algorithm "+a.String()+" is not kept in Redis") {
			t.Errorf("%s: New says %v, want a refusal naming it", a, err)
		}
	}
}

// keptAlgorithms are the algorithms the store keeps: the tests of what it
// does with them.
func keptAlgorithms() []limiters.Algorithm {
	return slices.DeleteFunc(limiters.AllAlgorithms(), func(a limiters.Algorithm) bool { return !Supports(a) })
}
