package cmd

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/internal/sfv"
)

// TestRunHeaders: run --headers both gives, for every algorithm on a
// random trace and on the token-bucket example, RateLimit-Policy and
// RateLimit fields that parse as Structured Field lists naming the
// policy, and a Retry-After, on refusals a wait cures only, that is
// never earlier than the exact retry and less than a second later.
func TestRunHeaders(t *testing.T) {
	dir := t.TempDir()
	gen := ratesim(t, "", "gen", "--pattern", "bursty", "--users", "5", "--requests", "400", "--seed", "3")
	if gen.code != 0 {
		t.Fatal(gen.stderr)
	}
	path := dir + "/t.csv"
	writeFile(t, path, gen.stdout)
	cases := [][]string{{"--algo", "token-bucket", inRepo("traces/examples/token-bucket.csv")}}
	for _, a := range []string{"fixed-window", "sliding-log", "sliding-counter", "token-bucket", "leaky-bucket", "gcra", "leaky-queue", "sliding-buckets"} {
		cases = append(cases, []string{"--algo", a, "--limit", "4", "--window", "7", path})
	}
	for _, args := range cases {
		out := ratesim(t, "", append([]string{"run", "--headers", "both", "-o", "jsonl"}, args...)...)
		if out.code != 0 {
			t.Fatalf("%v: %s", args, out.stderr)
		}
		refusals := 0
		for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
			var row map[string]any
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"ratelimit-policy", "ratelimit"} {
				list, err := sfv.ParseList(row[f].(string))
				if err != nil || len(list) != 1 || list[0].Value != "default" {
					t.Fatalf("%v: %s %q: %v", args, f, row[f], err)
				}
			}
			ra, has := row["retry-after"].(float64)
			if row["allowed"].(bool) || row["retry_after"] == nil {
				if has {
					t.Errorf("%v: retry-after %v on %s", args, ra, line)
				}
				continue
			}
			refusals++
			exact, _ := new(big.Rat).SetString(json.Number(strings.Split(strings.Split(line, `"retry_after":`)[1], ",")[0]).String())
			secs := new(big.Rat).SetInt64(int64(ra))
			if !has || secs.Cmp(exact) < 0 || new(big.Rat).Sub(secs, exact).Cmp(big.NewRat(1, 1)) >= 0 {
				t.Errorf("%v: retry-after %v for an exact retry of %s", args, row["retry-after"], exact.FloatString(9))
			}
		}
		if refusals == 0 {
			t.Errorf("%v: no refusal to check", args)
		}
	}
}
