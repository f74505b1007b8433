package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/redisstore"
)

// snapshot returns every key of the database with its DUMP and PTTL.
func snapshot(t *testing.T, c redis.UniversalClient) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	snap := map[string]string{}
	for _, k := range keys {
		dump, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, _ := c.PTTL(ctx, k).Result()
		snap[k] = dump + "|" + strconv.FormatBool(ttl > 0)
	}
	return snap
}

// TestReplayLeavesOtherApplicationsKeys: a replay into a database that
// holds other applications' keys leaves every one of them as it was,
// checked key by key (DUMP and TTL): a prefix that holds keys is refused
// without --resume, and a run removes only the states of the keys it
// wrote. (Clean-up deleted every key matching PREFIX*: --prefix s took
// session:42, s:important and shop:cart:9 with it, --prefix rl: a live
// limiter's rl:{tenant-42}:api; and a reused prefix started from stale
// state.) Kept state expires on its own, an hour after it is fresh.
func TestReplayLeavesOtherApplicationsKeys(t *testing.T) {
	addr, _ := scratchServer(t)
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	ctx := context.Background()
	c.Set(ctx, "session:42", "x", 0)
	c.HSet(ctx, "s:important", "a", 1, "b", 2)
	c.RPush(ctx, "shop:cart:9", "apple", "pear")
	c.HSet(ctx, "rl:{tenant-42}:api", "w", 7, "c", 3)
	c.Set(ctx, "ratesim:replay:notours", "y", time.Hour)
	// Under the prefix s, named as a state of the run's, but of a user the
	// trace does not have.
	c.ZAdd(ctx, "s{nobody}:gcra:gcra", redis.Z{Score: 1, Member: "m"})
	apps := snapshot(t, c)
	store := "redis://" + addr + "/0"
	trace := genTrace(t, "--pattern", "bursty", "--users", "40", "--requests", "3000", "--seed", "8", "--unit", "ms")
	untouched := func(what string) {
		t.Helper()
		now := snapshot(t, c)
		for k, v := range apps {
			if now[k] != v {
				t.Errorf("%s: %s changed or gone", what, k)
			}
		}
		for k := range now {
			if _, ok := apps[k]; !ok && !strings.HasPrefix(k, "kept:") {
				t.Errorf("%s: key %q left behind", what, k)
			}
		}
	}
	for _, prefix := range []string{"s", "rl:", "shop:cart"} {
		r := ratesim(t, "", append([]string{"replay", "--store", store, "--prefix", prefix, "--algos", "gcra,sliding-log", trace}, storePolicy...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "already holds keys") || !strings.Contains(r.stderr, "--resume") {
			t.Errorf("--prefix %s: exit %d, %s", prefix, r.code, r.stderr)
		}
		untouched("--prefix " + prefix + " refused")
	}
	for _, args := range [][]string{
		{"--prefix", "s", "--resume", "--algos", "gcra,sliding-log"},
		{"--algos", "all", "--workers", "4"},
		{"--prefix", "ratesim:replay:", "--resume", "--algos", "all", "--route", "spread", "--workers", "3"},
		{"--naive", "--prefix", "s", "--resume", "--algos", "gcra,fixed-window", "--workers", "2"},
	} {
		if r := ratesim(t, "", append(append([]string{"replay", "--store", store, "--summary"}, args...), append(storePolicy, trace)...)...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		untouched(strings.Join(args, " "))
	}

	// --keep-state, then a second run on its prefix: refused, then
	// resumed, and its state removed at the end.
	keep := ratesim(t, "", append([]string{"replay", "--store", store, "--summary", "--prefix", "kept:", "--keep-state", "--algos", "gcra", trace}, storePolicy...)...)
	if keep.code != 0 || !strings.Contains(keep.stderr, "kept in") || !strings.Contains(keep.stderr, "expire on their own 1h0m0s after they are fresh again") {
		t.Fatalf("--keep-state: exit %d: %s", keep.code, keep.stderr)
	}
	kept, _ := c.Keys(ctx, "kept:*").Result()
	if len(kept) != 40 {
		t.Fatalf("%d keys kept, want the trace's 40", len(kept))
	}
	if ttl, _ := c.PTTL(ctx, kept[0]).Result(); ttl < 59*time.Minute {
		t.Errorf("a kept key expires in %v, want an hour past its fresh time", ttl)
	}
	again := ratesim(t, "", append([]string{"replay", "--store", store, "--summary", "--prefix", "kept:", "--algos", "gcra", trace}, storePolicy...)...)
	if again.code != 2 || !strings.Contains(again.stderr, "--resume") {
		t.Errorf("the kept prefix again: exit %d: %s", again.code, again.stderr)
	}
	resumed := ratesim(t, "", append([]string{"replay", "--store", store, "--summary", "--prefix", "kept:", "--resume", "--algos", "gcra", trace}, storePolicy...)...)
	if resumed.code != 0 {
		t.Fatalf("--resume: exit %d: %s", resumed.code, resumed.stderr)
	}
	if left, _ := c.Keys(ctx, "kept:*").Result(); len(left) != 0 {
		t.Errorf("%d keys left under kept: after the resumed run", len(left))
	}
	untouched("the end")
}

// TestReplayHidesThePassword: no message shows the store's password:
// not the errors of a bad --store URL (24 of 36 did), not the summary;
// and the password can come from $REDIS_PASSWORD or --password-file
// instead of the command line, where ps shows it.
func TestReplayHidesThePassword(t *testing.T) {
	const pw = "TOPSECRET"
	for _, u := range []string{
		"redis://u:TOPSECRET@127.0.0.1:notaport/0", "redis+cluster://:TOPSECRET@a:1/2", "rediss://u:TOPSECRET@h:1/0?bad=1",
		"redis://:TOPSECRET@h:1/x", "redis://u:TOP/SECRET@h:1/0", "unix://:TOPSECRET@relative", "http://u:TOPSECRET@h",
	} {
		r := ratesim(t, "", "replay", "--store", u, "traces/examples/boundary.csv")
		if r.code != 2 || strings.Contains(r.stderr, "TOP") {
			t.Errorf("--store %s: exit %d, %s", u, r.code, r.stderr)
		}
	}
	addr, _ := scratchServer(t, "--requirepass", pw)
	store := "redis://" + addr + "/0"
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string, r result, code int) {
		t.Helper()
		if r.code != code || strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("%s: exit %d (want %d)\n%s%s", what, r.code, code, r.stdout, r.stderr)
		}
	}
	check("no password", ratesim(t, "", "replay", "--store", store, "traces/examples/boundary.csv"), 1)
	check("--password-file", ratesim(t, "", "replay", "--store", store, "--password-file", file, "--summary", "-o", "json", "traces/examples/boundary.csv"), 0)
	check("the password twice", ratesim(t, "", "replay", "--store", "redis://:"+pw+"@"+addr+"/0", "--password-file", file, "traces/examples/boundary.csv"), 2)
	t.Setenv("REDIS_PASSWORD", pw)
	check("REDIS_PASSWORD", ratesim(t, "", "replay", "--store", store, "--summary", "traces/examples/boundary.csv"), 0)
	t.Setenv("REDIS_PASSWORD", "wrong")
	r := ratesim(t, "", "replay", "--store", store, "traces/examples/boundary.csv")
	check("a wrong password", r, 1)
	if !strings.Contains(r.stderr, "WRONGPASS") {
		t.Errorf("a wrong password: %s", r.stderr)
	}
}

// TestReplayStateLost: state lost behind the store's back is reported,
// not left to one "BROKEN" line: a server that may evict the limiters'
// keys is warned about before the replay, keys evicted or flushed during
// it after, and under --verify the replay fails. (FLUSHALL or eviction
// mid-replay changed tens of thousands of rows, and replay exited 0.)
func TestReplayStateLost(t *testing.T) {
	// Evictions: a server whose maxmemory holds a fraction of the keys.
	addr, _ := scratchServer(t, "--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru")
	trace := genTrace(t, "--pattern", "steady", "--users", "40000", "--requests", strconv.Itoa(80000/min(replayScale, 2)), "--seed", "9", "--unit", "ms", "--uniform")
	r := ratesim(t, "", append([]string{"replay", "--store", "redis://" + addr + "/0", "--algos", "sliding-log", "--workers", "2", "--verify", "--summary", "-o", "json", trace}, storePolicy...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "evicts keys at its maxmemory") || !strings.Contains(r.stderr, "allkeys-lru") ||
		!strings.Contains(r.stderr, "keys during the replay") || !strings.Contains(r.stderr, "state was lost") {
		t.Errorf("evictions: exit %d: %s", r.code, r.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0]["evicted_keys"].(float64) == 0 {
		t.Errorf("evictions: the summary %v %v, want evicted_keys", rows, err)
	}

	// A FLUSHALL in the middle of a replay.
	addr, _ = scratchServer(t)
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	trace = genTrace(t, "--pattern", "bursty", "--users", "500", "--requests", strconv.Itoa(100000/replayScale), "--seed", "10", "--unit", "ms")
	for _, verify := range []bool{true, false} {
		done := make(chan result)
		go func() {
			args := append([]string{"replay", "--store", "redis://" + addr + "/0", "--algos", "fixed-window,token-bucket", "--workers", "2", "--pipeline", "4", "--summary", trace}, storePolicy...)
			if verify {
				args = append(args, "--verify")
			}
			done <- ratesim(t, "", args...)
		}()
		waitForKeys(t, c)
		if err := c.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if !strings.Contains(r.stderr, "FLUSHALL or FLUSHDB ran 1 time during the replay") {
			t.Errorf("--verify %v: no word of the flush: exit %d: %s", verify, r.code, r.stderr)
		}
		if verify && (r.code != 1 || !strings.Contains(r.stderr, "state was lost")) {
			t.Errorf("--verify: exit %d: %s", r.code, r.stderr)
		}
		t.Logf("--verify %v: exit %d", verify, r.code)
	}
}

// TestReplayAtomicBoundsUnderClampAndSpread: with --clock clamp and
// --route spread, the store judges a key's racing requests at its latest
// time, in the order they reach it; the check judges them at those times,
// so the atomic store keeps every bound, run after run. (The check clamped
// in trace order, and called the atomic sliding log BROKEN in 5 of 6
// runs.)
func TestReplayAtomicBoundsUnderClampAndSpread(t *testing.T) {
	store := storeURL(t, "RATESIM_REDIS_ADDR")
	trace := genTrace(t, "--pattern", "bursty", "--users", "50", "--requests", strconv.Itoa(20000/replayScale), "--seed", "1")
	for run := range 3 {
		rows := replaySummary(t, "--store", store, "--workers", "8", "--route", "spread", "--pipeline", "1", "--clock", "clamp", "--algos", "all", trace)
		for _, row := range rows {
			if row["holds"] != true {
				t.Errorf("run %d, %v: bound %q broken %v times, by up to %v", run, row["algo"], row["bound"], row["violations"], row["max_excess"])
			}
		}
	}
}

// TestReplayAllAlgos: "all" means every kind of the table, each kept in
// Redis, on a server and on a cluster, as the README's first example runs
// it, with no decision unlike the in-memory replay's.
func TestReplayAllAlgos(t *testing.T) {
	for _, env := range []string{"RATESIM_REDIS_ADDR", "RATESIM_REDIS_CLUSTER"} {
		t.Run(env, func(t *testing.T) {
			store := storeURL(t, env)
			trace := genTrace(t, "--pattern", "bursty", "--users", "200", "--requests", "5000", "--seed", "12")
			rows := replaySummary(t, "--store", store, "--algos", "all", "--workers", "8", "--verify", trace)
			if len(rows) != len(limiters.AllAlgorithms()) {
				t.Errorf("%d rows for --algos all, want one per kind: %v", len(rows), limiters.AllAlgorithms())
			}
			for _, row := range rows {
				if row["differ"] != 0.0 || row["holds"] != true {
					t.Errorf("%v: differ %v, holds %v", row["algo"], row["differ"], row["holds"])
				}
			}
		})
	}
}

var regexpRequests = regexp.MustCompile(`(\d+) requests? decided in trace order and counted in the summary`)

// TestReplayKilledUnderSummary: the server dies during replay --summary:
// the summary of the requests decided is printed, and the message says
// they were counted there, not written (it said "33115 requests decided
// and written in trace order" over an empty output).
func TestReplayKilledUnderSummary(t *testing.T) {
	addr, proc := scratchServer(t)
	trace := genTrace(t, "--pattern", "steady", "--users", "500", "--requests", "200000", "--seed", "2", "--unit", "ms")
	c := redisstore.NewClient([]string{addr}, time.Second)
	defer c.Close()
	done := make(chan result)
	go func() {
		done <- ratesim(t, "", append([]string{"replay", "--store", "redis://" + addr + "/0", "--algos", "token-bucket,fixed-window", "--workers", "4", "--pipeline", "2", "--summary", "-o", "json", trace}, storePolicy...)...)
	}()
	waitForKeys(t, c)
	time.Sleep(100 * time.Millisecond)
	proc.Kill()
	got := <-done
	if got.code != 1 || !strings.Contains(got.stderr, "decided in trace order and counted in the summary on standard output (no row is written with --summary)") {
		t.Fatalf("exit %d, stderr:\n%s", got.code, got.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("the partial summary: %v\n%s", err, got.stdout)
	}
	m := regexpRequests.FindStringSubmatch(got.stderr)
	if m == nil {
		t.Fatalf("no count of the requests decided: %s", got.stderr)
	}
	for _, row := range rows {
		if strconv.FormatFloat(row["requests"].(float64), 'f', -1, 64) != m[1] || row["complete"] != false {
			t.Errorf("%v: requests %v, complete %v; the message says %s", row["algo"], row["requests"], row["complete"], m[1])
		}
	}
}
