// Package ratesimbeam replays a trace through ratesim's limiters on
// Apache Beam: the trace's records keyed by shard (the FNV-1a hash of
// their key, as ratesim --shard splits), grouped, each shard replayed by
// ratesim's own engine, and the shards' partial results combined into
// the output of the replay of the whole trace, byte for byte what one
// ratesim process writes.
//
// A pipeline reads one CSV trace file, on any file system Beam reads
// (local paths, gs://, s3:// with the SDK's file systems linked in).
package ratesimbeam

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"

	"github.com/ratesim/ratesim/cmd"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Record)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Partials)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*keyFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*replayFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeFn)(nil)).Elem())
}

// Options say what a pipeline replays and how it splits the work.
type Options struct {
	// Trace is the CSV trace file: a path or a glob that matches one file.
	Trace string
	// Args are the ratesim command and its flags, without a trace, -o or
	// --shard: "compare --summary ...", "burst ...", "sweep ...".
	Args []string
	// Output is the output format, as ratesim's -o: table, csv, json,
	// jsonl or markdown.
	Output string
	// Shards is how many shards the trace is split into, by key.
	Shards int
	// Key are the fields of ratesim's --key, when Args give it; empty
	// keys by the user. UserField is --user-field's.
	Key       []string
	UserField string
	// Version names the ratesim the partials are written and merged by.
	Version string
}

// check checks o before a pipeline is built.
func (o *Options) check() error {
	switch {
	case o.Trace == "":
		return fmt.Errorf("ratesimbeam: no trace")
	case o.Shards <= 0:
		return fmt.Errorf("ratesimbeam: the number of shards must be positive, got %d", o.Shards)
	case len(o.Args) == 0:
		return fmt.Errorf("ratesimbeam: no command")
	}
	switch o.Args[0] {
	case "compare":
		if !slices.Contains(o.Args, "--summary") {
			return fmt.Errorf("ratesimbeam: compare needs --summary here: its per-request rows would all be gathered on one worker to be put back in trace order")
		}
	case "burst", "sweep":
	default:
		return fmt.Errorf("ratesimbeam: %q is not replayed here: compare --summary, burst and sweep are", o.Args[0])
	}
	if o.Version == "" {
		o.Version = "ratesim-beam"
	}
	return nil
}

// A Record is one line of the trace and its line number; line 1 is the
// CSV header, which every shard receives.
type Record struct {
	Line int
	Text string
}

// Summary builds the pipeline of o in s and returns its output: a
// PCollection of one string, what "ratesim ARGS -o OUTPUT TRACE" writes.
func Summary(s beam.Scope, o Options) (beam.PCollection, error) {
	if err := o.check(); err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope("ratesim")
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, o.Trace))
	keyed := beam.ParDo(s, &keyFn{Shards: o.Shards, Key: o.Key, UserField: o.UserField}, files)
	shards := beam.GroupByKey(s, keyed)
	partials := beam.ParDo(s, &replayFn{Args: o.Args, Shards: o.Shards, Version: o.Version, Name: o.Trace}, shards)
	return beam.Combine(s, &mergeFn{Shards: o.Shards, Version: o.Version, Output: o.Output}, partials), nil
}

// keyFn reads a trace file line by line and keys each record by its
// shard; the header goes to every shard, so that every shard replays.
// A record whose key cannot be read goes to shard 0, whose replay
// reports it.
type keyFn struct {
	Shards    int
	Key       []string
	UserField string

	header string
}

// ProcessElement reads file.
func (f *keyFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(int, Record)) error {
	rc, err := file.Open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<20)
	var key []byte
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if err == io.EOF && text == "" {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("ratesimbeam: %s:%d: %w", file.Metadata.Path, line, err)
		}
		text = strings.TrimSuffix(text, "\n")
		if line == 1 {
			f.header = text
			for i := range f.Shards {
				emit(i, Record{Line: 1, Text: text})
			}
			continue
		}
		if key, err = f.keyOf(key[:0], text); err != nil {
			emit(0, Record{Line: line, Text: text})
			continue
		}
		emit(sim.ShardOf(key, f.Shards), Record{Line: line, Text: text})
	}
	return nil
}

// keyOf appends the limiter key of the record text to dst, read as
// ratesim reads it.
func (f *keyFn) keyOf(dst []byte, text string) ([]byte, error) {
	rd, err := traces.NewReader(strings.NewReader(f.header+"\n"+text+"\n"), "trace.csv", traces.Options{Format: traces.CSV, UserField: f.UserField})
	if err != nil {
		return dst, err
	}
	ev, err := rd.Next()
	if err != nil {
		return dst, err
	}
	return sim.AppendKey(dst, ev, f.Key)
}

// replayFn replays one shard with ratesim's engine and emits its partial
// result.
type replayFn struct {
	Args    []string
	Shards  int
	Version string
	Name    string
}

// ProcessElement replays shard's records, in the order of the trace.
func (f *replayFn) ProcessElement(ctx context.Context, shard int, records func(*Record) bool, emit func(string)) error {
	var recs []Record
	var r Record
	for records(&r) {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return a.Line - b.Line })
	switch {
	case len(recs) == 0 || recs[0].Line != 1:
		return fmt.Errorf("ratesimbeam: shard %d has no header", shard)
	case len(recs) > 1 && recs[1].Line == 1:
		return fmt.Errorf("ratesimbeam: %s matches more than one file: a pipeline replays one trace file", f.Name)
	}
	var text bytes.Buffer
	lines := make([]int, 0, len(recs)-1)
	for i, r := range recs {
		text.WriteString(r.Text)
		text.WriteByte('\n')
		if i > 0 {
			lines = append(lines, r.Line)
		}
	}
	var out, errb bytes.Buffer
	if code := cmd.ReplaySplit(ctx, f.Version, f.Args, sim.Shard{Index: shard, Count: f.Shards}, f.Name, lines, &text, &out, &errb); code != 0 {
		return fmt.Errorf("ratesimbeam: shard %d of %d: exit status %d: %s", shard, f.Shards, code, strings.TrimSpace(errb.String()))
	}
	emit(out.String())
	return nil
}

// Partials are the partial results of shards, gathered to be merged.
type Partials struct {
	Parts []string
}

// mergeFn combines the shards' partial results into the output of the
// whole trace. A merge needs every shard's partial (it checks that none
// is missing or given twice), so the accumulator gathers them, a few
// kilobytes each for a summary, and the output merges them at once with
// ratesim merge.
type mergeFn struct {
	Shards  int
	Version string
	Output  string
}

// CreateAccumulator returns no partial.
func (f *mergeFn) CreateAccumulator() Partials { return Partials{} }

// AddInput adds one shard's partial.
func (f *mergeFn) AddInput(a Partials, p string) Partials {
	a.Parts = append(a.Parts, p)
	return a
}

// MergeAccumulators joins the partials of a and b.
func (f *mergeFn) MergeAccumulators(a, b Partials) Partials {
	a.Parts = append(a.Parts, b.Parts...)
	return a
}

// ExtractOutput merges the partials into the output of the whole trace.
func (f *mergeFn) ExtractOutput(a Partials) (string, error) {
	if len(a.Parts) != f.Shards {
		return "", fmt.Errorf("ratesimbeam: %d partial results of %d shards", len(a.Parts), f.Shards)
	}
	dir, err := os.MkdirTemp("", "ratesim-merge-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	args := []string{"merge"}
	if f.Output != "" {
		args = append(args, "-o", f.Output)
	}
	for i, p := range a.Parts {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.partial", i))
		if err := os.WriteFile(path, []byte(p), 0o600); err != nil {
			return "", err
		}
		args = append(args, path)
	}
	var out, errb bytes.Buffer
	if code := cmd.MainContext(context.Background(), f.Version, args, strings.NewReader(""), &out, &errb); code != 0 {
		return "", fmt.Errorf("ratesimbeam: merge: exit status %d: %s", code, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
