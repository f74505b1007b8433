package cmd

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ratesim/ratesim/limiters"
)

// TestTimelineAddsUp: the timeline's counts, summed over its intervals,
// are the summary's, limiter by limiter, and no interval has more active
// keys than the trace.
func TestTimelineAddsUp(t *testing.T) {
	dir := t.TempDir()
	for _, pattern := range []string{"bursty", "boundary"} {
		trace := ratesim(t, "", "gen", "--pattern", pattern, "--users", "20", "--requests", "3000", "--seed", "5")
		if trace.code != 0 {
			t.Fatal(trace.stderr)
		}
		path := dir + "/" + pattern + ".csv"
		writeFile(t, path, trace.stdout)
		args := []string{"--algos", "all", "--limiter", "b5=sliding-buckets:buckets=5", path}
		tl := ratesim(t, "", append([]string{"compare", "--timeline", "7", "-o", "csv"}, args...)...)
		if tl.code != 0 {
			t.Fatalf("timeline: %s", tl.stderr)
		}
		rows, err := csv.NewReader(strings.NewReader(tl.stdout)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		sums := map[string][5]int64{}
		intervals := map[string]bool{}
		for _, r := range rows[1:] {
			intervals[r[0]] = true
			s := sums[r[1]]
			for k := range 5 {
				v, _ := strconv.ParseInt(r[2+k], 10, 64)
				s[k] += v
			}
			sums[r[1]] = s
			if active, _ := strconv.Atoi(r[7]); active < 1 || active > 20 {
				t.Errorf("%s: %d keys active in interval %s", pattern, active, r[0])
			}
		}
		if len(intervals) < 5 {
			t.Errorf("%s: only %d intervals", pattern, len(intervals))
		}
		summary := ratesim(t, "", append([]string{"compare", "--summary", "-o", "jsonl"}, args...)...)
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(summary.stdout), "\n") {
			var st struct {
				Algo                                                   string
				Requests, Allowed, Rejected, FalseAllows, FalseRejects int64
			}
			var raw map[string]any
			json.Unmarshal([]byte(line), &raw)
			st.Algo = raw["algo"].(string)
			for k, p := range []*int64{&st.Requests, &st.Allowed, &st.Rejected, &st.FalseAllows, &st.FalseRejects} {
				*p = int64(raw[[]string{"requests", "allowed", "rejected", "false_allows", "false_rejects"}[k]].(float64))
			}
			want := [5]int64{st.Requests, st.Allowed, st.Rejected, st.FalseAllows, st.FalseRejects}
			if got := sums[st.Algo]; got != want {
				t.Errorf("%s, %s: timeline sums %v, summary %v", pattern, st.Algo, got, want)
			}
			n++
		}
		if sums["fixed-window"][2] == 0 || sums["sliding-log"][4] == 0 && sums["fixed-window"][3] == 0 {
			t.Errorf("%s: no rejections or false decisions to add up: %v", pattern, sums)
		}
		// Every algorithm, and b5.
		if want := len(limiters.AllAlgorithms()) + 1; n != want || len(sums) != want {
			t.Errorf("%s: %d summary rows, %d limiters in the timeline", pattern, n, len(sums))
		}
	}
}
