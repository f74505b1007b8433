package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
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

// gatedSource serves n requests of ten users a second apart, then waits
// for gate to close before it ends.
type gatedSource struct {
	n, i int
	gate chan struct{}
	ev   traces.Event
}

func (g *gatedSource) Next() (*traces.Event, error) {
	if g.i == g.n {
		<-g.gate
		return nil, io.EOF
	}
	g.i++
	g.ev.User = []byte("u" + strconv.Itoa(g.i%10))
	g.ev.Time = int64(g.i) * int64(time.Second)
	g.ev.TimeText = strconv.AppendInt(g.ev.TimeText[:0], int64(g.i), 10)
	g.ev.Cost, g.ev.Line = 1, g.i+1
	return &g.ev, nil
}

func (g *gatedSource) Name() string { return "gated.csv" }

// lockedBuffer is a bytes.Buffer written and read by several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClientsProgress: a closed loop that runs long shows, on a terminal,
// the requests read and the attempts made so far, and ends on a line with
// the true counts.
func TestClientsProgress(t *testing.T) {
	gate := make(chan struct{})
	src := &gatedSource{n: 5000, gate: gate}
	rp := &replay{}
	lanes := []sim.Lane{{Name: "gcra", Algorithm: limiters.GCRA, Policy: limiters.Policy{Capacity: 1, Rate: limiters.Rate{N: 1, Per: time.Hour}}}}
	c := sim.Clients{Model: sim.ClientsImmediate, MaxRetries: 2, RetryDelay: time.Millisecond}
	var stderr lockedBuffer
	done := make(chan error, 1)
	var stats []sim.ClientStats
	go func() {
		var err error
		stats, err = runClients(rp, src, lanes, nil, c, streams{progress: true, err: &stderr}, func(*sim.Attempt) error { return nil })
		done <- err
	}()
	// The first batch of requests is decided, each refused but the first
	// and retried twice, while the trace waits for its end.
	line := regexp.MustCompile(`\rratesim: gated\.csv: 5000 requests, ([0-9]+) attempts \([0-9]+s\)\x1b\[K`)
	deadline := time.Now().Add(20 * time.Second)
	var m []string
	for m == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		m = line.FindStringSubmatch(stderr.String())
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Fatalf("no progress line with the attempts in %q", stderr.String())
	}
	if n, _ := strconv.Atoi(m[1]); n <= 4096 {
		t.Errorf("progress shows %d attempts, no more than the first batch of requests without their retries", n)
	}
	end := fmt.Sprintf(`\rratesim: gated\.csv: 5000 requests, %d attempts \([0-9]+s\)\x1b\[K\n$`, stats[0].Attempts)
	if out := stderr.String(); !regexp.MustCompile(end).MatchString(out) {
		t.Errorf("the progress does not end on the true counts, 5000 requests and %d attempts: %q", stats[0].Attempts, out[max(0, len(out)-200):])
	}
}

// TestReplaysShareRunColumns: every replay run shows has run's columns, in
// run's order, for every algorithm: a client's attempts (--clients) add
// only attempt, original_line and gave_up, and a stack's answers only
// policy and would_reject (and show no key: its policies key as each
// says). A column added to run's rows reaches the others.
func TestReplaysShareRunColumns(t *testing.T) {
	trace := inRepo("traces/examples/boundary.csv")
	header := func(args ...string) []string {
		t.Helper()
		out := ratesim(t, "", append(args, "--headers", "both", "--with", "line", "-o", "csv", trace)...)
		if out.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, out.code, out.stderr)
		}
		head, _, _ := strings.Cut(out.stdout, "\n")
		return strings.Split(head, ",")
	}
	without := func(cols []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(drop, c) })
	}
	dir := t.TempDir()
	for _, a := range limiters.AllAlgorithms() {
		run := header("run", "--algo", a.String(), "--key", "user")
		if a.Delays() && !slices.Contains(run, "delay") {
			t.Errorf("%v: run has no delay column: %v", a, run)
		}
		clients := header("run", "--algo", a.String(), "--key", "user", "--clients", "honour")
		if got := without(clients, "attempt", "original_line", "gave_up"); !slices.Equal(got, run) {
			t.Errorf("%v: --clients has columns %v, run %v", a, clients, run)
		}
		config := filepath.Join(dir, a.String()+".yaml")
		if err := os.WriteFile(config, []byte("policies:\n  - {name: p, algorithm: "+a.String()+", key: [user]}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		stack := header("run", "--config", config)
		if got := without(stack, "policy", "would_reject"); !slices.Equal(got, without(run, "key")) {
			t.Errorf("%v: a stack has columns %v, run %v", a, stack, run)
		}
	}
}
