package cmd

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ratesim/ratesim/sim"
)

// splitTrace splits the CSV trace at path as another program would: by
// the FNV-1a hash of each record's user, keeping each record's line.
func splitTrace(t *testing.T, path string, n int) (header string, texts []string, lines [][]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	header = all[0]
	bufs := make([]strings.Builder, n)
	lines = make([][]int, n)
	for i, l := range all[1:] {
		user, _, _ := strings.Cut(l, ",")
		sh := sim.ShardOf([]byte(user), n)
		bufs[sh].WriteString(l + "\n")
		lines[sh] = append(lines[sh], i+2)
	}
	for i := range bufs {
		texts = append(texts, header+"\n"+bufs[i].String())
	}
	return header, texts, lines
}

// TestReplaySplit checks that the shards of a trace split by another
// program, replayed with ReplaySplit and merged, give the output of the
// whole trace, and that a record in the wrong shard or a bad record is an
// error naming its line in the whole trace.
func TestReplaySplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	trace := shardTrace(t, rng, 400, false)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"compare", "--summary", "--algos", "all"},
		{"run", "--algo", "token-bucket", "--with", "line,ep", "--capacity", "3"},
		{"burst", "--top", "4"},
	} {
		for _, format := range []string{"json", "csv", "table"} {
			whole := ratesim(t, "", append(append([]string{}, args...), "-o", format, trace)...)
			if whole.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, whole.code, whole.stderr)
			}
			_, texts, lines := splitTrace(t, trace, 3)
			merge := []string{"merge", "-o", format}
			for i := range texts {
				var out, errb bytes.Buffer
				code := ReplaySplit(context.Background(), "test", args, sim.Shard{Index: i, Count: 3}, trace, lines[i], strings.NewReader(texts[i]), &out, &errb)
				if code != 0 {
					t.Fatalf("%v, shard %d: exit %d: %s", args, i, code, errb.String())
				}
				p := filepath.Join(dir, fmt.Sprintf("s%d", i))
				if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				merge = append(merge, p)
			}
			got := ratesim(t, "", merge...)
			if got.code != 0 || got.stdout != whole.stdout {
				t.Fatalf("%v -o %s: merge of the split shards: exit %d, %s; differs from the whole (-whole +merged):\n%s", args, format, got.code, got.stderr,
					cmp.Diff(strings.Split(whole.stdout, "\n"), strings.Split(got.stdout, "\n")))
			}
		}
	}

	header, texts, lines := splitTrace(t, trace, 2)
	for _, c := range []struct {
		name, text string
		lines      []int
		want       string
	}{
		// Shard 1's records replayed as shard 0.
		{"wrong shard", texts[1], lines[1], fmt.Sprintf("%s:%d: key", trace, lines[1][0])},
		{"bad record", header + "\nu1,x,1,/e\n", []int{57}, fmt.Sprintf("%s:57:", trace)},
	} {
		var out, errb bytes.Buffer
		code := ReplaySplit(context.Background(), "test", []string{"compare", "--summary"}, sim.Shard{Index: 0, Count: 2}, trace, c.lines, strings.NewReader(c.text), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 naming %q", c.name, code, errb.String(), c.want)
		}
	}
}
