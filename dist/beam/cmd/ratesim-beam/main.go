// Command ratesim-beam replays a trace through ratesim's limiters on an
// Apache Beam runner: the trace split by key into shards, each replayed
// by ratesim's engine, the shards' results merged into the output one
// ratesim process gives for the whole trace.
//
//	ratesim-beam --input trace.csv --shards 64 --output summary.json -- compare --summary -o json
//
// The runner is chosen with Beam's --runner flag (prism, the default,
// in process; flink, spark or dataflow with their own flags).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	ratesimbeam "github.com/ratesim/ratesim/dist/beam"
)

var (
	input     = flag.String("input", "", "the CSV trace: a path, gs://... or s3://...")
	output    = flag.String("output", "", "where the output goes: a path, gs://... or s3://...")
	shards    = flag.Int("shards", 16, "how many shards the trace is split into, by the FNV-1a hash of each record's key")
	key       = flag.String("key", "", "ratesim's --key, when the command gives it: the fields the limiters key by")
	userField = flag.String("user-field", "", "ratesim's --user-field, when the command gives it")
)

func init() {
	register.Function1x1(trimNewline)
}

// trimNewline drops the output's last newline, which textio writes
// after it.
func trimNewline(v string) string { return strings.TrimSuffix(v, "\n") }

func main() {
	flag.Parse()
	beam.Init()
	if err := run(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "ratesim-beam:", err)
		os.Exit(1)
	}
}

// run builds and runs the pipeline of args: a ratesim command and its
// flags, with -o FORMAT and without a trace.
func run(args []string) error {
	if *input == "" || *output == "" {
		return fmt.Errorf("--input and --output are needed")
	}
	o := ratesimbeam.Options{Trace: *input, Shards: *shards, UserField: *userField}
	if *key != "" {
		o.Key = strings.Split(*key, ",")
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o" || a == "--output":
			if i+1 == len(args) {
				return fmt.Errorf("%s needs a format", a)
			}
			o.Output, i = args[i+1], i+1
		case strings.HasPrefix(a, "-o="), strings.HasPrefix(a, "--output="):
			_, o.Output, _ = strings.Cut(a, "=")
		default:
			o.Args = append(o.Args, a)
		}
	}
	p, s := beam.NewPipelineWithRoot()
	out, err := ratesimbeam.Summary(s, o)
	if err != nil {
		return err
	}
	textio.Write(s, *output, beam.ParDo(s, trimNewline, out))
	return beamx.Run(context.Background(), p)
}
