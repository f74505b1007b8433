package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain either runs the tests, from the repository root so that paths
// read as in the README, or, when a test script executes "ratesim", runs
// the command itself.
func TestMain(m *testing.M) {
	testscript.Main(fromRoot{m}, map[string]func(){
		"ratesim": func() { os.Exit(Main("test", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// fromRoot runs the tests in the repository root.
type fromRoot struct{ m *testing.M }

func (r fromRoot) Run() int {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	return r.m.Run()
}

func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("traces/examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "cmd/testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			return nil
		},
	})
}
