package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/limiters"
)

// TestMain either runs the tests, from the repository root so that paths
// read as in the README, or, when a test script executes "ratesim", runs
// the command itself.
func TestMain(m *testing.M) {
	if os.Getenv("RATESIM_RUN_MAIN") == "1" {
		// A test runs this binary as ratesim itself (TestSortInterrupted).
		os.Exit(Main("test", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(fromRoot{m}, map[string]func(){
		"ratesim": func() { os.Exit(Main("test", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		// exitcode N ratesim ARGS... runs ratesim and succeeds if it exits
		// with status N.
		"exitcode": func() {
			if len(os.Args) < 3 || os.Args[2] != "ratesim" {
				fmt.Fprintln(os.Stderr, "usage: exitcode N ratesim ARGS...")
				os.Exit(100)
			}
			code := Main("test", os.Args[3:], os.Stdin, os.Stdout, os.Stderr)
			if want := os.Args[1]; strconv.Itoa(code) != want {
				fmt.Fprintf(os.Stderr, "exit status %d, want %s\n", code, want)
				os.Exit(100)
			}
			os.Exit(0)
		},
	})
}

// pkgDir is the package directory, where the test binary starts; repoRoot
// is the repository root, where the tests run. Both are absolute.
var pkgDir, repoRoot string

// fromRoot runs the tests in the repository root.
//
// The change of directory happens before m.Run starts the test log, so the
// go command never learns of it: it resolves every relative path a test
// opens against pkgDir when it decides whether a cached result still holds.
// Test inputs (golden files, scripts) are therefore opened by absolute
// paths built with inRepo, or editing them would leave "ok (cached)" in
// place.
type fromRoot struct{ m *testing.M }

func (r fromRoot) Run() int {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	pkgDir, repoRoot = wd, filepath.Dir(wd)
	if err := os.Chdir(repoRoot); err != nil {
		panic(err)
	}
	return r.m.Run()
}

// chdirLogged changes to the repository root again, the directory the
// tests already run in, but now with the test log running: the go command
// then resolves the relative paths a test opens after it (the bundled
// traces its commands name, README.md) against the root, so editing them
// invalidates a cached result.
func chdirLogged(t *testing.T) {
	t.Helper()
	if err := os.Chdir(repoRoot); err != nil {
		t.Fatal(err)
	}
}

// inRepo is the absolute path of a file given relative to the repository
// root.
func inRepo(rel string) string { return filepath.Join(repoRoot, filepath.FromSlash(rel)) }

func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("traces/examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: inRepo("cmd/testdata/script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			// ALGOS is every algorithm's name in the kinds table's order,
			// as "(valid: ...)" lists give them.
			env.Setenv("ALGOS", strings.Join(algorithmNamesOf(limiters.AllAlgorithms()), ", "))
			// OUTPUTS is every output format's name, as -o's "(valid: ...)"
			// list gives them.
			env.Setenv("OUTPUTS", strings.Join(render.FormatNames(), ", "))
			// A race-enabled binary sleeps a second at exit by default;
			// every exec in the scripts would pay it.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"decisions": cmdDecisions,
			"gzip":      cmdGzip,
		},
	})
}

// cmdDecisions (decisions IN OUT [COLUMN...]) copies the CSV file IN to OUT
// with only the named columns, or without its user and timestamp columns,
// leaving the decisions of each algorithm.
func cmdDecisions(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: decisions IN OUT [COLUMN...]")
	}
	rows, err := csv.NewReader(strings.NewReader(ts.ReadFile(args[0]))).ReadAll()
	ts.Check(err)
	var keep []int
	for i, name := range rows[0] {
		if len(args) > 2 && slices.Contains(args[2:], name) || len(args) == 2 && name != "user" && name != "timestamp" {
			keep = append(keep, i)
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, r := range rows {
		var out []string
		for _, i := range keep {
			out = append(out, r[i])
		}
		ts.Check(w.Write(out))
	}
	w.Flush()
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}

// cmdGzip (gzip IN OUT) compresses IN into OUT.
func cmdGzip(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gzip IN OUT")
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b.Bytes(), 0o644))
}

// algorithmNamesOf returns the names of algos, in their order.
func algorithmNamesOf(algos []limiters.Algorithm) []string {
	names := make([]string, len(algos))
	for i, a := range algos {
		names[i] = a.String()
	}
	return names
}
