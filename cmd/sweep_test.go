package cmd

import (
	"encoding/csv"
	"encoding/json"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sweepRowsOf parses sweep -o jsonl.
func sweepRowsOf(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		rows = append(rows, m)
	}
	return rows
}

// TestSweepMatchesCompare: every candidate of a sweep over a random trace
// has the figures that compare --limiter gives it alone, its
// keys_rejected is the number of keys compare --by-key lists for it, and
// its p99_retry_after is the nearest-rank 99th percentile of the
// retry_after that run gives its rejected requests.
func TestSweepMatchesCompare(t *testing.T) {
	dir := t.TempDir()
	trace := ratesim(t, "", "gen", "--pattern", "bursty", "--users", "12", "--requests", "1500", "--seed", "5", "--unit", "ms")
	if trace.code != 0 {
		t.Fatal(trace.stderr)
	}
	path := dir + "/t.csv"
	writeFile(t, path, trace.stdout)
	intent := []string{"--limit", "4", "--window", "10s", "--unit", "ms"}
	sweep := ratesim(t, "", "sweep", "--algos", "token-bucket,gcra,sliding-counter,sliding-buckets",
		"--capacity", "2,5", "--rate", "1/2s,1/1s", "--limit", "3..5:2", "--window", "5s,10s", "--buckets", "5",
		"--intent", "4/10s", "--unit", "ms", "-o", "jsonl", path)
	if sweep.code != 0 {
		t.Fatal(sweep.stderr)
	}
	rows := sweepRowsOf(t, sweep.stdout)
	// token-bucket and gcra: 2 capacities × 2 rates; sliding-counter:
	// 2 limits × 2 windows; sliding-buckets: those × 1 buckets value.
	if len(rows) != 4+4+4+4 {
		t.Fatalf("%d candidates, want 16", len(rows))
	}
	for _, row := range rows {
		name := row["limiter"].(string)
		cmp := ratesim(t, "", append([]string{"compare", "--summary", "-o", "json", "--limiter", "c=" + name, path}, intent...)...)
		if cmp.code != 0 {
			t.Fatalf("%s: %s", name, cmp.stderr)
		}
		var summary []map[string]any
		if err := json.Unmarshal([]byte(cmp.stdout), &summary); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"requests", "allowed", "allow_pct", "false_allows", "false_rejects", "max_in_interval", "ratio"} {
			if row[k] != summary[0][k] {
				t.Errorf("%s: %s %v in the sweep, %v in compare", name, k, row[k], summary[0][k])
			}
		}
		for _, k := range []string{"capacity", "rate", "limit", "window", "buckets"} {
			if v, ok := summary[0][k]; ok && slices.Contains(algoParams(t, row["algo"].(string)), k) && row[k] != v {
				t.Errorf("%s: %s %v in the sweep, %v in compare", name, k, row[k], v)
			}
		}
		bk := ratesim(t, "", append([]string{"compare", "--by-key", "1000", "-o", "csv", "--limiter", "c=" + name, path}, intent...)...)
		keys := strings.Count(strings.TrimSpace(bk.stdout), "\n") // less the header
		if got := int(row["keys_rejected"].(float64)); got != keys {
			t.Errorf("%s: keys_rejected %d, compare --by-key lists %d", name, got, keys)
		}
		// p99 from run's rows: run takes the candidate's parameters as flags.
		args := []string{"run", "--algo", row["algo"].(string), "-o", "csv", path, "--unit", "ms", "--limit", "4", "--window", "10s"}
		for _, kv := range strings.Split(strings.SplitN(name, ":", 2)[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			args = append(args, "--"+k, v)
		}
		run := ratesim(t, "", args...)
		if run.code != 0 {
			t.Fatalf("%s: %s", name, run.stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(run.stdout)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var waits []*big.Rat
		for _, r := range recs[1:] {
			if r[3] == "false" {
				w, _ := new(big.Rat).SetString(r[5])
				waits = append(waits, w)
			}
		}
		sort.Slice(waits, func(i, j int) bool { return waits[i].Cmp(waits[j]) < 0 })
		if len(waits) == 0 {
			if row["p99_retry_after"] != nil {
				t.Errorf("%s: p99_retry_after %v with no rejection", name, row["p99_retry_after"])
			}
			continue
		}
		rank := (len(waits)*99 + 99) / 100 // ceil(n*0.99)
		want := waits[rank-1]
		got, _ := new(big.Rat).SetString(strconv.FormatFloat(row["p99_retry_after"].(float64), 'f', -1, 64))
		if got.Cmp(want) != 0 {
			t.Errorf("%s: p99_retry_after %v, want %v (rank %d of %d)", name, got.FloatString(3), want.FloatString(3), rank, len(waits))
		}
	}
}

// algoParams are the parameters algorithm name takes, from ratesim algos.
func algoParams(t *testing.T, name string) []string {
	switch name {
	case "token-bucket", "gcra":
		return []string{"capacity", "rate"}
	case "sliding-buckets":
		return []string{"limit", "window", "buckets"}
	}
	return []string{"limit", "window"}
}
