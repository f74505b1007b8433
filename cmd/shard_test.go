package cmd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ratesim/ratesim/internal/render"
)

// shardTrace writes a random CSV trace: bursts, idle gaps, repeated
// times, costs, an endpoint to key on, a few rows out of time order and,
// with bad, rows a lenient read skips.
func shardTrace(t *testing.T, rng *rand.Rand, n int, bad bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("user,timestamp,cost,ep\n")
	now := int64(rng.IntN(20))
	users := 2 + rng.IntN(30)
	for i := range n {
		switch rng.IntN(10) {
		case 0:
			now += int64(rng.IntN(25))
		case 1, 2, 3:
		default:
			now += int64(rng.IntN(3))
		}
		ts := now
		if rng.IntN(60) == 0 {
			ts -= int64(1 + rng.IntN(12)) // out of time order
		}
		cost := 1
		if rng.IntN(5) == 0 {
			cost = 1 + rng.IntN(4)
		}
		if bad && i%41 == 13 {
			b.WriteString("broken row\n")
		}
		fmt.Fprintf(&b, "u%d,%d.%d,%d,/e%d\n", rng.IntN(users), ts, rng.IntN(2)*5, cost, rng.IntN(3))
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shardCase is a command line whose output merge must reproduce.
type shardCase struct {
	name string
	args []string
	html bool // report: -o is the file
}

var shardCases = []shardCase{
	{name: "run", args: []string{"run", "--algo", "token-bucket", "--capacity", "4", "--rate", "1/3"}},
	{name: "run-explain", args: []string{"run", "--algo", "sliding-log", "--explain", "--with", "line,ep", "--headers", "both"}},
	{name: "run-queue-key", args: []string{"run", "--algo", "leaky-queue", "--key", "user,ep", "--only", "rejected"}},
	{name: "run-limiter", args: []string{"run", "--limiter", "gate=gcra:capacity=2,rate=1/4"}},
	{name: "compare", args: []string{"compare"}},
	{name: "compare-diff", args: []string{"compare", "--diff", "--algos", "all"}},
	{name: "compare-summary", args: []string{"compare", "--summary", "--algos", "all", "--interval", "5"}},
	{name: "compare-limiters", args: []string{"compare", "--summary", "--limiter", "a=fixed-window:limit=2,window=5", "--limiter", "b=token-bucket:capacity=6,rate=1/2", "--intent", "4/10"}},
	{name: "compare-with", args: []string{"compare", "--with", "file,line,ep", "--algos", "token-bucket,gcra"}},
	{name: "compare-key", args: []string{"compare", "--key", "user,ep", "--clock", "clamp"}},
	{name: "compare-timeline", args: []string{"compare", "--timeline", "7", "--sort"}},
	// The trace is not in time order: the whole replay refuses, and so
	// does every shard, with the same message.
	{name: "compare-timeline-unsorted", args: []string{"compare", "--timeline", "7"}},
	{name: "run-sorted", args: []string{"run", "--algo", "fixed-window", "--sort", "--with", "line"}},
	{name: "compare-by-key", args: []string{"compare", "--by-key", "3", "--algos", "all"}},
	{name: "burst", args: []string{"burst", "--algos", "all"}},
	{name: "burst-top", args: []string{"burst", "--top", "5", "--interval", "4", "--key", "user,ep"}},
	{name: "sweep", args: []string{"sweep", "--capacity", "1..6", "--rate", "1/2,1/5", "--intent", "3/10"}},
	{name: "sweep-pick", args: []string{"sweep", "--algos", "token-bucket,fixed-window", "--capacity", "2..5", "--limit", "2..4", "--window", "10", "--intent", "3/10", "--pick", "false_reject_pct<=30,ratio<=2"}},
	{name: "report", html: true, args: []string{"report", "--algos", "all", "--top", "3", "--sweep", "--capacity 2..5 --rate 1/3,1/4"}},
}

// TestMergeEqualsWhole checks that merging the partials of every shard
// of a random trace gives, byte for byte, the output of the replay of the
// whole trace, and its exit status, for every command and output format,
// split into 1, 2, 3 and 7 shards.
func TestMergeEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	traces := []string{shardTrace(t, rng, 250, false), shardTrace(t, rng, 300, true)}
	for ti, trace := range traces {
		extra := []string{}
		if ti == 1 {
			extra = []string{"--lenient"}
		}
		for _, c := range shardCases {
			t.Run(fmt.Sprintf("%s/%d", c.name, ti), func(t *testing.T) {
				dir := t.TempDir()
				formats := render.FormatNames()
				if c.html {
					formats = []string{"report.html"}
				}
				want := map[string]string{}
				for _, f := range formats {
					want[f] = shardOutput(t, dir, "whole", c, f, append(append(append([]string{}, c.args...), extra...), trace))
				}
				for _, n := range []int{1, 2, 3, 7} {
					var parts []string
					for i := range n {
						args := append(append(append([]string{}, c.args...), extra...), "--shard", fmt.Sprintf("%d/%d", i, n), "-o", "partial", trace)
						r := ratesim(t, "", args...)
						if r.code != 0 && r.code != 3 {
							// A shard fails only as the whole replay does.
							// (its last line: the shard leaves the warnings
							// about the whole trace to the merge).
							whole := want[formats[0]]
							lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
							if !strings.HasPrefix(whole, fmt.Sprintf("[exit %d]\n", r.code)) || !strings.HasSuffix(whole, lines[len(lines)-1]+"\n") {
								t.Fatalf("%v: exit %d: %s\nand the whole replay gave:\n%s", args, r.code, r.stderr, whole)
							}
							parts = nil
							break
						}
						path := filepath.Join(dir, fmt.Sprintf("%d-%d.partial", n, i))
						if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
							t.Fatal(err)
						}
						parts = append(parts, path)
					}
					if parts == nil {
						continue
					}
					// The shards in any order.
					rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
					for _, f := range formats {
						got := shardOutput(t, dir, fmt.Sprintf("merged%d", n), c, f, append([]string{"merge"}, parts...))
						if got != want[f] {
							t.Fatalf("-o %s, %d shards: merge differs from the whole (-whole +merged):\n%s", f, n,
								cmp.Diff(strings.Split(want[f], "\n"), strings.Split(got, "\n")))
						}
					}
				}
			})
		}
	}
}

// shardOutput runs args with -o format and returns what it wrote (for
// report, the file) and its exit status.
func shardOutput(t *testing.T, dir, name string, c shardCase, format string, args []string) string {
	t.Helper()
	out := format
	if c.html {
		out = filepath.Join(dir, name+".html")
	}
	// -o before the traces or partials.
	args = append([]string{args[0], "-o", out}, args[1:]...)
	r := ratesim(t, "", args...)
	got := fmt.Sprintf("[exit %d]\n%s", r.code, r.stdout)
	if r.code != 0 && r.code != 3 {
		got += r.stderr
	}
	if c.html && (r.code == 0 || r.code == 3) {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		got += string(data)
	}
	return got
}

// TestMergeRefuses checks that merge refuses partials that are not the
// shards of one replay, and that --shard refuses what does not split
// exactly, each with a message that says why.
func TestMergeRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	trace := shardTrace(t, rng, 300, false)
	dir := t.TempDir()
	write := func(name string, args ...string) string {
		t.Helper()
		r := ratesim(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a0 := write("a0", "compare", "--summary", "--shard", "0/2", "-o", "partial", trace)
	a1 := write("a1", "compare", "--summary", "--shard", "1/2", "-o", "partial", trace)
	b1 := write("b1", "compare", "--summary", "--limit", "4", "--shard", "1/2", "-o", "partial", trace)
	c1 := write("c1", "compare", "--summary", "--shard", "1/3", "-o", "partial", trace)
	// The same replay written with its flags in another order and form.
	same := write("same", "compare", "--shard=1/2", "--output=partial", "--summary=true", trace)
	data, err := os.ReadFile(a1)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, bytes.Replace(data, []byte(`"ratesim":"test"`), []byte(`"ratesim":"0.9"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	format2 := filepath.Join(dir, "format2")
	if err := os.WriteFile(format2, bytes.Replace(data, []byte(`"version":1,`), []byte(`"version":2,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(cut, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ratesim(t, "", "merge", "-o", "json", a0, same); r.code != 0 {
		t.Errorf("merge of a replay's shards with flags written otherwise: exit %d: %s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"merge", a0, b1}, 1, "are of different replays"},
		{[]string{"merge", a0, other}, 1, "was written by ratesim 0.9, and this is ratesim test"},
		{[]string{"merge", a0, format2}, 1, "is in version 2 of the partial format, which this ratesim does not read (it reads version 1)"},
		{[]string{"merge", a0}, 1, "shard 1/2 missing"},
		{[]string{"merge", a0, a1, a1}, 1, "are both shard 1/2"},
		{[]string{"merge", a0, c1}, 1, "is a shard of 2"},
		{[]string{"merge", a0, cut}, 1, "not written whole"},
		{[]string{"merge", trace}, 1, "is not a partial result"},
		{[]string{"merge", "-o", "partial", a0, a1}, 2, "-o partial is for one shard's"},
		{[]string{"compare", "--shard", "0/2", trace}, 2, "give -o partial"},
		{[]string{"compare", "--shard", "2/2", "-o", "partial", trace}, 2, "shards are numbered from 0 to 1"},
		{[]string{"compare", "--shard", "x", "-o", "partial", trace}, 2, "want I/N"},
		{[]string{"compare", "--summary", "--clients", "honour", "--shard", "0/2", "-o", "partial", trace}, 2, "--clients"},
		{[]string{"compare", "--summary", "--legit", "user=u1", "--shard", "0/2", "-o", "partial", trace}, 2, "--legit, --abusive and --labels"},
		{[]string{"sweep", "--capacity", "1..3", "--pick", "ratio<=2", "--by-key", "2", "--shard", "0/2", "-o", "partial", trace}, 2, "--by-key lists the keys of the best candidate"},
	} {
		r := ratesim(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// TestShardRefusesStacks checks that a stack whose policy is keyed
// otherwise than the replay, or a limiter whose keys share a zone, is
// refused under --shard, naming the policy.
func TestShardRefusesStacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	trace := shardTrace(t, rng, 100, false)
	dir := t.TempDir()
	config := filepath.Join(dir, "stack.yaml")
	if err := os.WriteFile(config, []byte(`policies:
  - {name: per-user, algorithm: token-bucket, capacity: 5, rate: 1/2}
  - {name: per-endpoint, algorithm: fixed-window, limit: 20, window: 10, key: [ep]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(dir, "global.yaml")
	if err := os.WriteFile(global, []byte(`policies:
  - {name: all, algorithm: fixed-window, limit: 50, window: 10, key: []}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--summary", "--config", config}, "policy per-endpoint is keyed by ep"},
		{[]string{"run", "--config", config}, "policy per-endpoint is keyed by ep"},
		{[]string{"compare", "--summary", "--config", global}, "policy all is keyed by one key for every request"},
		// nginx's zone: its keys' decisions depend on each other's.
		{[]string{"compare", "--summary", "--limiter", "z=nginx:rate=1r/s,burst=5"}, "the keys of z (nginx-limit-req) share one zone"},
	} {
		args := append(append(c.args, "--shard", "0/2", "-o", "partial"), trace)
		r := ratesim(t, "", args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying %q", args, r.code, r.stderr, c.want)
		}
	}
}
