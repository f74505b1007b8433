package cmd

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shuffledTrace returns a trace of n requests of a few users, in a random
// order, and the same requests in time order (ties in the shuffled order).
func shuffledTrace(n int) (shuffled, sorted string) {
	rng := rand.New(rand.NewPCG(7, 8))
	type row struct {
		user string
		t    int
	}
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{fmt.Sprintf("u%d", rng.IntN(5)), rng.IntN(n / 2)}
	}
	var sb, ss strings.Builder
	sb.WriteString("user,timestamp,endpoint\n")
	ss.WriteString("user,timestamp,endpoint\n")
	for i, r := range rows {
		fmt.Fprintf(&sb, "%s,%d,/e%d\n", r.user, r.t, i%3)
	}
	// A stable sort by time of the shuffled rows.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && rows[idx[j]].t < rows[idx[j-1]].t; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	for _, i := range idx {
		fmt.Fprintf(&ss, "%s,%d,/e%d\n", rows[i].user, rows[i].t, i%3)
	}
	return sb.String(), ss.String()
}

// emptyDir fails unless dir holds nothing.
func emptyDir(t *testing.T, dir, when string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("%s: %d entries left in the temporary directory, such as %s", when, len(entries), entries[0].Name())
	}
}

// TestSortEqualsPresorted: --sort gives the bytes of the same trace sorted
// beforehand, in memory and spilling to several files, and leaves no
// temporary file, after success or an error.
func TestSortEqualsPresorted(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	shuffled, sorted := shuffledTrace(3000)
	dir := t.TempDir()
	writeFile(t, dir+"/shuffled.csv", shuffled)
	writeFile(t, dir+"/sorted.csv", sorted)
	for _, cmd := range [][]string{
		{"compare", "-o", "csv", "--key", "user,endpoint"},
		{"compare", "--summary", "-o", "json"},
		{"run", "--algo", "sliding-log", "-o", "csv", "--explain"},
		{"burst", "--algos", "all", "-o", "json"},
	} {
		want := ratesim(t, "", append(cmd, dir+"/sorted.csv")...)
		for _, mem := range []string{"256MiB", "8KiB"} {
			got := ratesim(t, "", append(cmd, "--sort", "--sort-mem", mem, dir+"/shuffled.csv")...)
			if got.code != 0 || got.stderr != "" {
				t.Fatalf("%v --sort-mem %s: exit %d: %s", cmd, mem, got.code, got.stderr)
			}
			if strings.ReplaceAll(got.stdout, "shuffled.csv", "sorted.csv") != want.stdout {
				t.Errorf("%v --sort-mem %s: output differs from the presorted trace's", cmd, mem)
			}
			emptyDir(t, tmp, "after success")
		}
	}
	// Without --sort: the warning and the count.
	got := ratesim(t, "", "compare", "--summary", "-o", "json", dir+"/shuffled.csv")
	if !strings.Contains(got.stderr, "replay it with --sort") || strings.Contains(got.stdout, `"clock_backwards":0`) {
		t.Errorf("unsorted without --sort: %s%s", got.stdout, got.stderr)
	}
	// The lines named are the trace's own.
	got = ratesim(t, "", "run", "--algo", "gcra", "-o", "csv", "--with", "line", "--sort", dir+"/shuffled.csv")
	lines := strings.Split(got.stdout, "\n")
	if first := strings.Split(lines[1], ","); first[len(first)-1] == "2" {
		t.Errorf("--sort --with line: the first row is line 2 of the shuffled trace: %s", lines[1])
	}
	// An error part way: the sort's files go too.
	writeFile(t, dir+"/bad.csv", shuffled+"u1,x,/e1\n")
	got = ratesim(t, "", "compare", "--sort", "--sort-mem", "8KiB", dir+"/bad.csv")
	if got.code != 1 || !strings.Contains(got.stderr, `bad.csv:3002:4: invalid timestamp "x"`) {
		t.Errorf("bad row: exit %d: %s", got.code, got.stderr)
	}
	emptyDir(t, tmp, "after an error")
}

// TestMergedEqualsPremerged: two per-server logs give what one log of
// both gives.
func TestMergedEqualsPremerged(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/a.csv", "user,timestamp\nu1,1\nu2,2\nu1,4\nu1,6\nu1,9\n")
	writeFile(t, dir+"/b.csv", "user,timestamp\nu1,2\nu1,3\nu2,5\nu1,8\n")
	writeFile(t, dir+"/ab.csv", "user,timestamp\nu1,1\nu2,2\nu1,2\nu1,3\nu1,4\nu2,5\nu1,6\nu1,8\nu1,9\n")
	for _, cmd := range [][]string{{"compare", "-o", "csv"}, {"compare", "--summary", "-o", "jsonl"}, {"burst", "-o", "csv"}} {
		want := ratesim(t, "", append(cmd, dir+"/ab.csv")...)
		got := ratesim(t, "", append(cmd, dir+"/a.csv", dir+"/b.csv")...)
		if got.code != 0 || got.stdout != want.stdout {
			t.Errorf("%v: merged\n%s%s\npremerged\n%s", cmd, got.stdout, got.stderr, want.stdout)
		}
		// An empty file first changes nothing, whatever the kind of times.
		writeFile(t, dir+"/empty.csv", "user,timestamp\n")
		if got := ratesim(t, "", append(cmd, dir+"/empty.csv", dir+"/ab.csv")...); got.code != 0 || got.stdout != want.stdout {
			t.Errorf("%v with an empty first file:\n%s%s", cmd, got.stdout, got.stderr)
		}
		// --sort merges them too.
		got = ratesim(t, "", append(cmd, "--sort", dir+"/a.csv", dir+"/b.csv")...)
		if got.code != 0 || got.stdout != want.stdout {
			t.Errorf("%v --sort: merged\n%s%s\npremerged\n%s", cmd, got.stdout, got.stderr, want.stdout)
		}
	}
}

// TestSortInterrupted: an interrupt during a sort that has spilled leaves
// no temporary file, and exits with status 130.
func TestSortInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process")
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "compare", "--sort", "--sort-mem", "4KiB", "-")
	cmd.Env = append(os.Environ(), "RATESIM_RUN_MAIN=1", "TMPDIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Feed enough for several runs, then keep the input open: the sort is
	// still reading when the interrupt comes.
	fmt.Fprintln(stdin, "user,timestamp")
	for i := range 5000 {
		fmt.Fprintf(stdin, "u%d,%d\n", i%7, 5000-i)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if sortRuns(t, cmd.Process.Pid, tmp) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sort runs appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	stdin.Close()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d (%v), want 130; stderr: %s", code, err, stderr.String())
	}
	if stderr.String() != "ratesim: interrupted\n" {
		t.Errorf("stderr: %q, want the interrupt alone", stderr.String())
	}
	emptyDir(t, tmp, "after an interrupt")
}

// cancelOnWrite is a writer that cancels a context at its first write: an
// interrupt that comes once a command has started its output.
type cancelOnWrite struct {
	cancel func()
	n      int
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.n += len(p)
	c.cancel()
	return len(p), nil
}

// TestInterruptedCommandsCleanUp: a command interrupted (its context
// cancelled) while it reads, sorts, copies standard input or writes,
// stops promptly, exits 130 with "interrupted" alone, and leaves nothing
// in the temporary directory: the interrupt returns through every
// command's own cleanup.
func TestInterruptedCommandsCleanUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// Long enough that output is written before the trace is read whole.
	rng := rand.New(rand.NewPCG(9, 10))
	var b strings.Builder
	b.WriteString("user,timestamp\n")
	for range 200_000 {
		fmt.Fprintf(&b, "u%d,%d\n", rng.IntN(1000), rng.IntN(100_000))
	}
	shuffled := b.String()
	dir := t.TempDir()
	writeFile(t, dir+"/shuffled.csv", shuffled)
	for _, c := range []struct {
		args []string
		// stdin: a pipe held open with the trace's start in it, read
		// until the interrupt; else the interrupt comes at the first
		// write of output.
		stdin bool
	}{
		{[]string{"compare", "-o", "csv", "--sort", "--sort-mem", "64KiB", dir + "/shuffled.csv"}, false},
		{[]string{"run", "--algo", "gcra", "-o", "csv", dir + "/shuffled.csv"}, false},
		{[]string{"gen", "--requests", "100000000"}, false},
		{[]string{"compare", "--sort", "--sort-mem", "4KiB", "-"}, true},
		{[]string{"compare", "--summary", "-"}, true},
		{[]string{"report", "-", "-o", dir + "/r.html"}, true},
		{[]string{"sweep", "--capacity", "1..4", "--pick", "allow_pct>=10", "--by-key", "2", "-"}, true},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		out := &cancelOnWrite{cancel: cancel}
		var stdin io.Reader = strings.NewReader("")
		var pw *os.File
		if c.stdin {
			pr, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			pw = w
			stdin = pr
			go func() {
				w.WriteString(shuffled[:len(shuffled)/2])
				time.Sleep(100 * time.Millisecond)
				cancel()
			}()
		}
		var errb strings.Builder
		done := make(chan int, 1)
		go func() { done <- MainContext(ctx, "test", c.args, stdin, out, &errb) }()
		select {
		case code := <-done:
			// A command that went on to its end would exit 0.
			if code != 130 || errb.String() != "ratesim: interrupted\n" {
				t.Errorf("%v: exit %d, stderr %q; want 130 and the interrupt alone", c.args, code, errb.String())
			}
		case <-time.After(2 * time.Minute): // a guard against a hang, not a timing
			t.Fatalf("%v: still running 2 minutes after the interrupt", c.args)
		}
		if pw != nil {
			pw.Close()
		}
		cancel()
		emptyDir(t, tmp, fmt.Sprint(c.args))
		if _, err := os.Stat(dir + "/r.html"); err == nil {
			t.Errorf("%v: a report written", c.args)
		}
	}
}

// TestSortFewOpenFiles: a sort of many runs merges them a few at a time,
// so that it works under a low limit of open files (the shell's ulimit
// -n), with the output of the presorted trace.
func TestSortFewOpenFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set the limit with")
	}
	shuffled, sorted := shuffledTrace(3000)
	dir := t.TempDir()
	writeFile(t, dir+"/shuffled.csv", shuffled)
	writeFile(t, dir+"/sorted.csv", sorted)
	want := ratesim(t, "", "compare", "-o", "csv", dir+"/sorted.csv")
	tmp := t.TempDir()
	cmd := exec.Command(sh, "-c", `ulimit -n 64 && exec "$0" "$@"`, os.Args[0], "compare", "-o", "csv", "--sort", "--sort-mem", "1KiB", dir+"/shuffled.csv")
	cmd.Env = append(os.Environ(), "RATESIM_RUN_MAIN=1", "TMPDIR="+tmp)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("--sort-mem 1KiB under ulimit -n 64: %v: %s", err, stderr.String())
	}
	if strings.ReplaceAll(stdout.String(), "shuffled.csv", "sorted.csv") != want.stdout {
		t.Error("--sort-mem 1KiB: output differs from the presorted trace's")
	}
	emptyDir(t, tmp, "after the sort")
}

// TestReadTwiceFromPipes: the commands that read a trace twice (report's
// state plots and sweep, sweep --by-key) read standard input, a FIFO or a
// pipe as they read a file: copied once to a temporary file, removed
// after; no hang, no empty second read.
func TestReadTwiceFromPipes(t *testing.T) {
	chdirLogged(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	trace := "traces/examples/multi-user.csv"
	text, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	feed := func() {
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(text)
			f.Close()
		}()
	}
	sweep := []string{"sweep", "--capacity", "1..6", "--rate", "0.3", "--intent", "3/10s", "--pick", "allow_pct>=50", "--by-key", "3"}
	wantSweep := ratesim(t, "", append(sweep, trace)...)
	if wantSweep.code != 0 || !strings.Contains(wantSweep.stdout, "| alice |") {
		t.Fatalf("sweep --by-key of the file: exit %d: %s%s", wantSweep.code, wantSweep.stdout, wantSweep.stderr)
	}
	report := func(stdin, path, name string) string {
		out := filepath.Join(dir, "r.html")
		r := ratesim(t, stdin, "report", "--sweep", "--capacity 1..4", path, "-o", out)
		if r.code != 0 {
			t.Fatalf("report %s: exit %d: %s", path, r.code, r.stderr)
		}
		html, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(out)
		return strings.ReplaceAll(string(html), name, "TRACE")
	}
	wantReport := report("", trace, trace)
	if !strings.Contains(wantReport, "state of bob") || !strings.Contains(wantReport, ">Sweep</h2>") {
		t.Fatal("the file's report has no state plot or sweep")
	}
	for _, src := range []string{"stdin", "fifo"} {
		path, stdin := "-", string(text)
		if src == "fifo" {
			path, stdin = fifo, ""
			feed()
		}
		got := ratesim(t, stdin, append(sweep, path)...)
		if got.code != 0 || strings.ReplaceAll(got.stdout, "sweep on "+map[string]string{"stdin": "stdin", "fifo": fifo}[src], "sweep on "+trace) != wantSweep.stdout {
			t.Errorf("sweep --by-key of %s: exit %d:\n%s%s", src, got.code, got.stdout, got.stderr)
		}
		if src == "fifo" {
			feed()
		}
		name := map[string]string{"stdin": "stdin", "fifo": fifo}[src]
		if got := report(stdin, path, name); got != wantReport {
			t.Errorf("report of %s differs from the file's", src)
		}
		emptyDir(t, tmp, src)
	}
}

// TestMergeTimeKinds: times of RFC 3339 traces stay RFC 3339 times behind
// an empty trace, and a numeric trace does not merge with an RFC 3339 one.
func TestMergeTimeKinds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/empty.csv", "user,timestamp\n")
	writeFile(t, dir+"/nums.csv", "user,timestamp\nu1,1\n")
	got := ratesim(t, "", "burst", "-o", "csv", dir+"/empty.csv", "traces/examples/rfc3339.csv")
	if got.code != 0 || !strings.Contains(got.stdout, ",u1,2024-01-01T00:00:07Z,2024-01-01T00:00:12Z,") {
		t.Errorf("behind an empty trace: %s%s", got.stdout, got.stderr)
	}
	got = ratesim(t, "", "compare", dir+"/nums.csv", "traces/examples/rfc3339.csv")
	if got.code != 2 || !strings.Contains(got.stderr, "cannot be merged: one has RFC 3339 times, the other numbers") {
		t.Errorf("numbers and RFC 3339: exit %d: %s", got.code, got.stderr)
	}
}

// sortRuns counts the sort's run files that process pid has open in dir.
// They have no names (they are removed as soon as made, so that nothing
// is left of them however the process ends): they are seen among its
// open files, as Linux shows them, or in dir on systems that keep their
// names.
func sortRuns(t *testing.T, pid int, dir string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		runs, _ := filepath.Glob(filepath.Join(dir, "ratesim-sort-*"))
		return len(runs)
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, filepath.Join(dir, "ratesim-sort-")) && strings.HasSuffix(target, " (deleted)") {
			n++
		}
	}
	return n
}
