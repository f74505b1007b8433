package cmd

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/limiters"
)

// TestByKeyAddsUp: with room for every key, --by-key's rejections and
// false rejects add up to the summary's, limiter by limiter; keys come
// most rejected first; and a small N keeps the top of that list.
func TestByKeyAddsUp(t *testing.T) {
	dir := t.TempDir()
	trace := ratesim(t, "", "gen", "--pattern", "bursty", "--users", "30", "--requests", "4000", "--seed", "9")
	if trace.code != 0 {
		t.Fatal(trace.stderr)
	}
	path := dir + "/t.csv"
	writeFile(t, path, trace.stdout)
	args := []string{"--algos", "all", path}
	all := ratesim(t, "", append([]string{"compare", "--by-key", "1000", "-o", "csv"}, args...)...)
	if all.code != 0 {
		t.Fatal(all.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(all.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type sums struct{ rejected, falseRejects int64 }
	got := map[string]sums{}
	perLimiter := map[string][][]string{}
	for _, r := range rows[1:] {
		rej, _ := strconv.ParseInt(r[4], 10, 64)
		fr, _ := strconv.ParseInt(r[5], 10, 64)
		req, _ := strconv.ParseInt(r[2], 10, 64)
		al, _ := strconv.ParseInt(r[3], 10, 64)
		if al+rej != req || rej == 0 {
			t.Errorf("row %v: allowed and rejected do not make the requests, or nothing rejected", r)
		}
		s := got[r[0]]
		s.rejected += rej
		s.falseRejects += fr
		got[r[0]] = s
		if prev := perLimiter[r[0]]; len(prev) > 0 {
			if last, _ := strconv.ParseInt(prev[len(prev)-1][4], 10, 64); last < rej {
				t.Errorf("%s: %s with %d rejections after a key with %d", r[0], r[1], rej, last)
			}
		}
		perLimiter[r[0]] = append(perLimiter[r[0]], r)
	}
	summary := ratesim(t, "", append([]string{"compare", "--summary", "-o", "jsonl"}, args...)...)
	for _, line := range strings.Split(strings.TrimSpace(summary.stdout), "\n") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatal(err)
		}
		algo := raw["algo"].(string)
		want := sums{int64(raw["rejected"].(float64)), int64(raw["false_rejects"].(float64))}
		if got[algo] != want {
			t.Errorf("%s: by-key sums %+v, summary %+v", algo, got[algo], want)
		}
		if want.rejected == 0 {
			t.Errorf("%s: no rejections to add up", algo)
		}
	}
	// --by-key 3 is the first three of each limiter's list.
	top := ratesim(t, "", append([]string{"compare", "--by-key", "3", "-o", "csv"}, args...)...)
	var want []string
	for _, name := range algorithmNamesOf(limiters.AllAlgorithms()) {
		for _, r := range perLimiter[name][:min(3, len(perLimiter[name]))] {
			want = append(want, strings.Join(r, ","))
		}
	}
	if strings.TrimSpace(top.stdout) != "limiter,key,requests,allowed,rejected,false_rejects,first_rejection\n"+strings.Join(want, "\n") {
		t.Errorf("--by-key 3:\n%s\nwant the first three of each:\n%s", top.stdout, strings.Join(want, "\n"))
	}
}
