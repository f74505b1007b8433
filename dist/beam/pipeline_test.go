package ratesimbeam

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/ratesim/ratesim/cmd"
)

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

// ratesim runs the ratesim command line in-process and returns its
// standard output.
func ratesim(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cmd.Main("ratesim-beam", args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("ratesim %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// TestPipelineEqualsOneProcess runs the pipeline on the Prism runner, in
// process, over a trace of 100,000 requests split into 8 shards, and
// checks that its output is, byte for byte, what one ratesim process
// writes for the whole trace.
func TestPipelineEqualsOneProcess(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	data := ratesim(t, "gen", "--pattern", "bursty", "--users", "3000", "--requests", "100000", "--seed", "25")
	if err := os.WriteFile(trace, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		output string
	}{
		{[]string{"compare", "--summary", "--algos", "all"}, "json"},
		{[]string{"burst", "--top", "5"}, "csv"},
	} {
		want := ratesim(t, append(append([]string{}, c.args...), "-o", c.output, trace)...)
		p, s := beam.NewPipelineWithRoot()
		out, err := Summary(s, Options{Trace: trace, Args: c.args, Output: c.output, Shards: 8})
		if err != nil {
			t.Fatal(err)
		}
		passert.Equals(s, out, want)
		if _, err := prism.Execute(context.Background(), p); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
	}
}
