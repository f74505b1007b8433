package cmd

import (
	"strings"
	"testing"
)

// TestRetryStorm states what clients that retry do to the bundled
// traces. On the boundary trace, retrying at once (every 0.1s, up to 20
// times) multiplies the requests a sliding log of 3 per 10s sees by 11,
// and honouring Retry-After by 2: the storm is 5.5 times the load. On the
// bursty trace under the same policy, the load stays above the limit for
// long stretches, and with the default 3 retries both reach about three
// times the requests (2.94 at once, 2.96 honouring: honouring clients
// come back in synchronised waves and are refused again), but honouring
// clients get 2426 of the 4000 requests through and immediate ones 1486.
func TestRetryStorm(t *testing.T) {
	cases := []struct {
		trace string
		args  []string
		want  string
	}{
		{"boundary.csv", []string{"--clients", "immediate", "--max-retries", "20"}, "sliding-log,6,66,11.00,3,63,3,3,"},
		{"boundary.csv", []string{"--clients", "honour", "--max-retries", "20"}, "sliding-log,6,12,2.00,6,6,6,0,"},
		{"bursty.csv", []string{"--clients", "immediate"}, "sliding-log,4000,11778,2.94,1486,10292,1486,2514,"},
		{"bursty.csv", []string{"--clients", "honour"}, "sliding-log,4000,11838,2.96,2426,9412,2426,1574,"},
	}
	for _, c := range cases {
		args := append([]string{"compare", "--summary", "--algos", "sliding-log", "-o", "csv", inRepo("traces/examples/" + c.trace)}, c.args...)
		out := ratesim(t, "", args...)
		if out.code != 0 {
			t.Fatal(out.stderr)
		}
		rows := strings.Split(strings.TrimSpace(out.stdout), "\n")
		if len(rows) != 2 || !strings.HasPrefix(rows[1], c.want) {
			t.Errorf("%s %v:\n%s\nwant a row starting %s", c.trace, c.args, out.stdout, c.want)
		}
	}
}
