package cmd

import (
	"fmt"
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
	deadline := time.Now().Add(20 * time.Second)
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
	if !strings.Contains(stderr.String(), "ratesim: interrupted") {
		t.Errorf("stderr: %q", stderr.String())
	}
	emptyDir(t, tmp, "after an interrupt")
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
