package cmd

import (
	"context"
	"io"
	"slices"

	"github.com/ratesim/ratesim/internal/partial"
	"github.com/ratesim/ratesim/sim"
)

// splitKey is the context key of a shard split by another program.
type splitKey struct{}

// ReplaySplit runs a replay command on one shard of a trace that another
// program split by key, as the Apache Beam pipeline in dist/beam does,
// and writes the shard's partial result to stdout, as --shard I/N -o
// partial does; ratesim merge (or MainContext with "merge") joins the
// partials of every shard into the output of the whole trace.
//
// args are the command and its flags, without -o, --shard or a trace.
// trace holds the shard's records in trace order: the trace's CSV header,
// then one record a line, lines[k] being the line of the k-th of them in
// the whole trace, the file name. Every record must be of the shard
// (sim.ShardOf of its key), and the trace one file in the order ratesim
// would replay it; events and errors name their lines in it. The result
// is the exit status, as Main's.
func ReplaySplit(ctx context.Context, version string, args []string, shard sim.Shard, name string, lines []int, trace io.Reader, stdout, stderr io.Writer) int {
	shard.Split = true
	ctx = context.WithValue(ctx, splitKey{}, &partial.Split{Shard: shard, Name: name, Lines: lines})
	return MainContext(ctx, version, append(slices.Clip(args), "-o", partialFormat, "-"), trace, stdout, stderr)
}

// splitOf returns the split shard the command runs on, nil when none.
func splitOf(s streams) *partial.Split {
	sp, _ := s.context().Value(splitKey{}).(*partial.Split)
	return sp
}

// openSplit checks that o reads one shard of a split trace as it can,
// and makes t name the lines of the whole trace.
func openSplit(sp *partial.Split, o *traceOptions, t *trace) error {
	switch {
	case o.Lenient:
		return usageErrorf("a split shard is replayed without --lenient: a skipped record would be counted by its shard alone")
	case o.Sort:
		return usageErrorf("a split shard is replayed in trace order: --sort would need the whole trace")
	case len(o.More) > 0:
		return usageErrorf("a split shard is of one trace file")
	}
	t.split, t.name = sp, sp.Name
	return nil
}
