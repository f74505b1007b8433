package cmd

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "update golden files")

// goldenDir is where the golden files are, relative to the repository
// root. They are opened through goldenPath, by an absolute path, so that
// the go command sees which files a cached result depends on (see
// fromRoot).
const goldenDir = "testdata/golden"

// goldenPath is the absolute path of the named golden file.
func goldenPath(name string) string { return inRepo(goldenDir + "/" + name + ".golden") }

// result is what one ratesim invocation produced.
type result struct {
	stdout, stderr string
	code           int
}

// ratesim runs the command line in-process on a fresh root command.
func ratesim(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main("test", args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// golden renders a result for a golden file: stdout, then stderr and the
// exit status when there is anything to see.
func (r result) golden() string {
	var b strings.Builder
	b.WriteString(r.stdout)
	if r.stderr != "" {
		b.WriteString("[stderr]\n" + r.stderr)
	}
	if r.code != 0 {
		fmt.Fprintf(&b, "[exit status %d]\n", r.code)
	}
	return b.String()
}

// checkGolden compares got with testdata/golden/name.golden, or rewrites
// the file with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := goldenPath(name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (-want +got):\n%s", goldenDir+"/"+name+".golden", cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")))
	}
}

const ex = "traces/examples/"

// bucket is the seed's bucket policy: capacity 3, 0.2 per second.
var bucket = []string{"--capacity", "3", "--rate", "0.2"}

type goldenCase struct {
	name  string
	args  []string
	stdin string
}

func goldenCases() []goldenCase {
	cases := []goldenCase{}
	// Each algorithm on its seed example, plain and explained.
	perAlgo := []struct {
		algo, trace string
		policy      []string
	}{
		{"fixed-window", "fixed-window.csv", nil},
		{"sliding-log", "sliding-log.csv", nil},
		{"sliding-counter", "sliding-counter.csv", nil},
		{"token-bucket", "token-bucket.csv", bucket},
		{"leaky-bucket", "leaky-bucket.csv", bucket},
		{"gcra", "token-bucket.csv", bucket},
		{"leaky-queue", "leaky-bucket.csv", bucket},
		{"sliding-buckets", "sliding-buckets.csv", nil},
	}
	for _, p := range perAlgo {
		args := append([]string{"run", "--algo", p.algo}, p.policy...)
		cases = append(cases,
			goldenCase{name: "run-" + p.algo, args: append(args[:len(args):len(args)], ex+p.trace)},
			goldenCase{name: "run-" + p.algo + "-explain", args: append(args[:len(args):len(args)], "--explain", ex+p.trace)},
		)
	}
	cases = append(cases, []goldenCase{
		{name: "run-fixed-window-csv", args: []string{"run", "--algo", "fixed-window", "-o", "csv", ex + "fixed-window.csv"}},
		{name: "run-fixed-window-json", args: []string{"run", "--algo", "fixed-window", "--explain", "-o", "json", ex + "fixed-window.csv"}},
		{name: "run-fixed-window-jsonl", args: []string{"run", "--algo", "fixed-window", "-o", "jsonl", ex + "fixed-window.csv"}},
		{name: "run-fixed-window-markdown", args: []string{"run", "--algo", "fixed-window", "--explain", "-o", "markdown", ex + "fixed-window.csv"}},
		{name: "run-leaky-queue-csv", args: append(append([]string{"run", "--algo", "leaky-queue", "--explain", "-o", "csv"}, bucket...), ex+"boundary.csv")},
		{name: "run-rfc3339-explain", args: []string{"run", "--algo", "sliding-log", "--explain", "-o", "csv", ex + "rfc3339.csv"}},
		{name: "run-rfc3339-queue", args: []string{"run", "--algo", "leaky-queue", "--explain", "-o", "csv", ex + "rfc3339.csv"}},
		{name: "compare-by-key", args: []string{"compare", "--by-key", "2", "--key", "user,endpoint", ex + "multi-user.csv"}},
		{name: "compare-timeline", args: []string{"compare", "--timeline", "5", ex + "multi-user.csv"}},
		{name: "compare-timeline-jsonl", args: []string{"compare", "--timeline", "5", "--algos", "fixed-window,token-bucket", "-o", "jsonl", ex + "multi-user.csv"}},
		{name: "run-sliding-buckets-csv", args: []string{"run", "--algo", "sliding-buckets", "--buckets", "5", "--explain", "-o", "csv", ex + "boundary.csv"}},
		{name: "compare-buckets", args: []string{"compare", "--limiter", "b1=sliding-buckets:buckets=1", "--limiter", "b5=sliding-buckets:buckets=5", "--algos", "fixed-window,sliding-log", ex + "boundary.csv"}},
		{name: "run-only-rejected", args: []string{"run", "--algo", "sliding-log", "--only", "rejected", ex + "boundary.csv"}},
		{name: "run-key", args: []string{"run", "--algo", "token-bucket", "--key", "user,endpoint", "--explain", ex + "multi-user.csv"}},
		{name: "run-millis", args: []string{"run", "--algo", "sliding-log", "--unit", "ms", "--window", "10s", "--explain", ex + "millis.csv"}},
		{name: "run-rfc3339", args: []string{"run", "--algo", "sliding-counter", "--window", "10s", "--explain", ex + "rfc3339.csv"}},
		{name: "run-rfc3339-json", args: []string{"run", "--algo", "sliding-counter", "--window", "10s", "-o", "json", ex + "rfc3339.csv"}},
		{name: "run-stdin", args: []string{"run", "--algo", "fixed-window", "-o", "csv", "-"},
			stdin: "user,timestamp\nu1,1\nu1,2\nu1,3\nu1,4\nu1,11\nu2,4\n"},

		{name: "compare-table", args: []string{"compare", ex + "boundary.csv"}},
		{name: "compare-csv", args: []string{"compare", "-o", "csv", ex + "boundary.csv"}},
		{name: "compare-json", args: []string{"compare", "-o", "json", ex + "boundary.csv"}},
		{name: "compare-jsonl", args: []string{"compare", "-o", "jsonl", ex + "boundary.csv"}},
		{name: "compare-markdown", args: []string{"compare", "-o", "markdown", ex + "boundary.csv"}},
		{name: "compare-summary", args: []string{"compare", "--summary", ex + "boundary.csv"}},
		{name: "compare-summary-json", args: []string{"compare", "--summary", "-o", "json", ex + "boundary.csv"}},
		{name: "compare-summary-csv", args: []string{"compare", "--summary", "-o", "csv", ex + "boundary.csv"}},
		{name: "compare-diff", args: []string{"compare", "--diff", ex + "boundary.csv"}},
		{name: "compare-all-multi-user", args: append(append([]string{"compare", "--algos", "all"}, bucket...), ex+"multi-user.csv")},
		{name: "compare-key-diff", args: []string{"compare", "--algos", "fixed-window,sliding-log,gcra", "--key", "user,endpoint", "--diff", ex + "multi-user.csv"}},

		{name: "sweep-table", args: []string{"sweep", "--algos", "token-bucket,gcra,sliding-buckets", "--capacity", "2..4", "--rate", "1/2s,1/1s", "--buckets", "2,5", "--window", "10", ex + "boundary.csv"}},
		{name: "sweep-pick-json", args: []string{"sweep", "--capacity", "1..5", "--rate", "1/1s,1/2s", "--pick", "false_reject_pct<=0,ratio<=1.5", "-o", "json", ex + "boundary.csv"}},
		{name: "sweep-rfc3339-csv", args: []string{"sweep", "--algos", "fixed-window,sliding-log", "--limit", "2..4", "--window", "5s,10s", "--intent", "3/10s", "-o", "csv", ex + "rfc3339.csv"}},
		{name: "compare-clients-summary", args: []string{"compare", "--summary", "--clients", "honour", ex + "boundary.csv"}},
		{name: "run-clients-backoff", args: []string{"run", "--algo", "sliding-counter", "--clients", "backoff", "--backoff", "1s,4s", ex + "boundary.csv"}},
		{name: "run-headers-both-json", args: []string{"run", "--algo", "sliding-log", "--headers", "both", "-o", "json", ex + "boundary.csv"}},

		{name: "burst-table", args: []string{"burst", ex + "boundary.csv"}},
		{name: "burst-json", args: []string{"burst", "-o", "json", ex + "boundary.csv"}},
		{name: "burst-all-json", args: []string{"burst", "--algos", "all", "-o", "json", ex + "multi-user.csv"}},
		{name: "burst-top", args: []string{"burst", "--algos", "all", "--top", "5", ex + "multi-user.csv"}},
		{name: "burst-interval-markdown", args: []string{"burst", "--interval", "3", "-o", "markdown", ex + "boundary.csv"}},
		{name: "burst-rfc3339-json", args: []string{"burst", "--window", "10s", "-o", "json", ex + "rfc3339.csv"}},

		{name: "demo", args: []string{"demo"}},
		{name: "algos", args: []string{"algos"}},
		{name: "algos-json", args: []string{"algos", "-o", "json"}},

		{name: "gen-steady", args: []string{"gen", "--pattern", "steady", "--users", "3", "--requests", "12", "--seed", "1"}},
		{name: "gen-boundary-jsonl", args: []string{"gen", "--pattern", "boundary", "--users", "2", "--requests", "10", "--seed", "7", "-o", "jsonl"}},
		{name: "gen-bursty-yaml", args: []string{"gen", "--pattern", "bursty", "--users", "2", "--requests", "8", "--seed", "3", "-o", "yaml"}},

		{name: "usage-unknown-algo", args: []string{"run", "--algo", "sliding-window", ex + "boundary.csv"}},
		{name: "usage-bad-limit", args: []string{"compare", "--limit", "0", ex + "boundary.csv"}},
		{name: "usage-bad-flag", args: []string{"burst", "--intervl", "5", ex + "boundary.csv"}},
		{name: "usage-unknown-command", args: []string{"comprae", ex + "boundary.csv"}},
	}...)
	return cases
}

func TestGolden(t *testing.T) {
	chdirLogged(t)
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkGolden(t, tc.name, ratesim(t, tc.stdin, tc.args...).golden())
		})
	}
}

// TestGoldenFilesUsed fails on a golden file no case writes, so renamed
// cases do not leave stale files behind.
func TestGoldenFilesUsed(t *testing.T) {
	names := map[string]bool{}
	for _, tc := range goldenCases() {
		if names[tc.name] {
			t.Errorf("two golden cases named %s", tc.name)
		}
		names[tc.name] = true
	}
	files, err := filepath.Glob(inRepo(goldenDir + "/*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden")
		if !names[name] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s/%s: no test case writes it", goldenDir, filepath.Base(f))
		}
	}
}

// TestInputsSeenByGoCommand runs one golden case and one script in a child
// test process with a test log, the record the go command keeps of the
// files a test opened, and resolves the log as the go command does:
// relative paths against the package directory until a logged change of
// directory. The golden file and the script must come out as the files
// the tests really read; otherwise editing them would not invalidate a
// cached "ok".
func TestInputsSeenByGoCommand(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "testlog")
	child := exec.Command(os.Args[0], "-test.run=^(TestGolden|TestScripts|TestREADME)$/^(demo|help|compare-table|compare traces/examples/boundary.csv)$", "-test.testlogfile="+logFile)
	child.Dir = pkgDir
	// A failing case still logs what it read, and fails on its own in this
	// run too: only a missing log is this test's failure.
	out, runErr := child.CombinedOutput()
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("child test run: %v, %v\n%s", runErr, err, out)
	}
	opened := map[string]bool{}
	pwd := pkgDir
	for _, line := range strings.Split(string(data), "\n") {
		op, name, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		switch op {
		case "chdir":
			pwd = name
		case "open", "stat":
			if !filepath.IsAbs(name) {
				name = filepath.Join(pwd, name)
			}
			opened[filepath.Clean(name)] = true
		}
	}
	for _, rel := range []string{"testdata/golden/demo.golden", "cmd/testdata/script/help.txtar", "README.md", "traces/examples/boundary.csv"} {
		want, err := filepath.Abs(rel) // the tests run in the repository root
		if err != nil {
			t.Fatal(err)
		}
		if !opened[want] {
			var seen []string
			for name := range opened {
				if filepath.Base(name) == filepath.Base(want) {
					seen = append(seen, name)
				}
			}
			t.Errorf("the go command would not see that the tests read %s (it resolves the test log to %q)", want, seen)
		}
	}
}
