package cmd

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/partial"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
)

// partialFormat is the -o of a shard's partial result.
const partialFormat = "partial"

const shardUsage = "replay only the keys of shard I of N (0 <= I < N; a key's shard is the FNV-1a 64-bit hash of its bytes modulo N) and write, with -o partial, its partial result; ratesim merge joins the partials of every shard into the output of the whole"

// addShardFlag adds --shard to a replay command.
func addShardFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "shard", "", shardUsage)
}

// mergeKey is the context key of the merger that stands in for a
// command's replays when ratesim merge runs the command on the partials
// of its shards.
type mergeKey struct{}

// shardStreams turns s into the streams of a replay command run on one
// shard (--shard, -o partial), whose output is its partial result, or run
// by ratesim merge on the partials of its shards; otherwise it returns s.
// output is the command's -o, shard its --shard.
func shardStreams(c *cobra.Command, args []string, po *policyOptions, output, shard string, s streams) (streams, error) {
	if m, ok := s.context().Value(mergeKey{}).(*partial.Merger); ok {
		s.merge, s.progress = m, false
		if cfg := m.Header().Config; cfg != nil && po != nil {
			pf, err := spec.ParseFile(cfg.Path, []byte(cfg.Data))
			if err != nil {
				return s, err
			}
			po.file = pf
		}
		return s, nil
	}
	split := splitOf(s)
	if output != partialFormat && shard == "" && split == nil {
		return s, nil
	}
	if output != partialFormat {
		return s, usageErrorf("--shard writes a shard's partial result: give -o partial, and join the shards' partials with ratesim merge")
	}
	sh := sim.Shard{Index: 0, Count: 1}
	switch {
	case split != nil && shard != "":
		return s, usageErrorf("a split shard takes its shard from the program that split the trace, not --shard")
	case split != nil:
		sh = split.Shard
	case shard != "":
		var err error
		if sh, err = sim.ParseShard(shard); err != nil {
			return s, err
		}
	}
	h := partial.Header{Ratesim: c.Root().Version, Command: c.Name(), Args: partial.Args(c.Flags(), args, "shard", "output")}
	h.Shard, h.Order = partial.Shard{Index: sh.Index, Count: sh.Count}, partial.OrderTrace
	if po != nil && po.Config != "" {
		pf, data, err := spec.ReadFileData(po.Config)
		if err != nil {
			return s, err
		}
		po.file = pf
		h.Config = &partial.ConfigFile{Path: po.Config, Data: string(data)}
	}
	h.Fingerprint = partial.Fingerprint(h.Ratesim, h.Command, h.Args, h.Config)
	s.part, s.out = partial.NewRun(s.out, sh, h), io.Discard
	return s, nil
}

// refuseShard returns the usage error of a replay that does not split
// into shards exactly, naming what does not, when the command runs on a
// shard or is merged; nil otherwise.
func refuseShard(s streams, what string) error {
	if s.part == nil && s.merge == nil {
		return nil
	}
	return usageErrorf("--shard: %s, so the shards' results would not merge exactly; replay the whole trace in one process", what)
}

// refuseStackShard refuses a stack under --shard, naming the first policy
// keyed otherwise than the replay, whose decisions depend on requests of
// other shards.
func refuseStackShard(s streams, stack []stackSpec, keys []string) error {
	if s.part == nil && s.merge == nil {
		return nil
	}
	replayKey := spec.StackPolicy{}.KeyIn(keys)
	for _, p := range stack {
		if k := p.KeyIn(keys); !slices.Equal(k, replayKey) {
			keyed := "one key for every request (a global limit)"
			if len(k) > 0 {
				keyed = strings.Join(k, ",")
			}
			return usageErrorf("--shard splits the trace by its key (%s), and policy %s is keyed by %s: its decisions depend on requests of other shards, so the shards' results would not merge exactly", strings.Join(replayKey, ","), p.LaneName(), keyed)
		}
	}
	return refuseShard(s, "a stack of policies replays in one pass of its own, which does not split into shards yet")
}

// partialReplay replays src, the shard's events of rp's trace, as cfg
// says, into the partial s.part.
func partialReplay(s streams, rp *replay, src sim.Source, cfg sim.Config) (*sim.Report, error) {
	t := rp.trace
	if err := s.part.Start(partial.Trace{Name: t.name, RFC3339: t.RFC3339(), Times: t.TimeWriter(), Sorted: t.Sorted()}); err != nil {
		return nil, err
	}
	for _, l := range cfg.Lanes {
		if l.Algorithm.KeysInteract() {
			return nil, usageErrorf("--shard splits the trace by key, and the keys of %s (%s) share one zone: a key's decisions depend on the other keys' requests, so the shards' results would not merge exactly; replay the whole trace in one process", l.Name, l.Algorithm)
		}
	}
	return s.part.Replay(src, cfg, t.skips)
}

// newMergeCmd is "ratesim merge".
func newMergeCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:         "merge [-o FORMAT] PARTIAL...",
		Short:       "Join the partial results of a trace's shards into the output of the whole",
		Long:        helpText("merge"),
		Args:        cobra.MinimumNArgs(1),
		Annotations: map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			return runMerge(c, output, args)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: "+strings.Join(append([]string{}, outputChoices()...), ", ")+" (default table); for report, the HTML file")
	registerCompletions(c)
	return c
}

// outputChoices are the output formats merge takes.
func outputChoices() []string {
	return render.FormatNames()
}

// runMerge reads the partials at paths and runs the command they are of
// on them.
func runMerge(c *cobra.Command, output string, paths []string) error {
	s := streamsOf(c)
	var readers []*partial.Reader
	for _, p := range paths {
		f, err := openPartial(p, s)
		if err != nil {
			return err
		}
		defer f.Close()
		r, err := partial.NewReader(p, f)
		if err != nil {
			return err
		}
		readers = append(readers, r)
	}
	version := c.Root().Version
	m, err := partial.NewMerger(version, readers)
	if err != nil {
		return err
	}
	h := m.Header()
	args := []string{h.Command}
	switch {
	case h.Command == "report" && output == "":
		return usageErrorf("the partials are of report: merge needs -o FILE.html")
	case output == partialFormat:
		return usageErrorf("merge writes the output of the whole replay; -o partial is for one shard's")
	case output != "":
		args = append(args, "--output="+output)
	}
	args = append(args, h.Args...)
	root := NewRootCmd(version)
	root.SetArgs(args)
	root.SetIn(s.in)
	root.SetOut(c.OutOrStdout())
	root.SetErr(c.ErrOrStderr())
	ctx := context.WithValue(s.context(), mergeKey{}, m)
	if err := root.ExecuteContext(ctx); err != nil {
		return err
	}
	return m.Done()
}

// openPartial opens the partial at path, "-" for standard input.
func openPartial(path string, s streams) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(s.in), nil
	}
	return os.Open(path)
}

// shardFlags are a command's --shard and -o: under --shard the output is
// the partial, and -o becomes as, so the command's own is not written.
type shardFlags struct {
	shard, output *string
	as            string
}

// replayCmd fills in c what every command that replays a trace shares:
// the trace arguments and their completion, the exit statuses (unless c
// names its own), and a RunE that sets the trace's paths, marks the
// policy flags given (po, when the command has them), turns --shard into
// a partial's streams (sh, when it takes --shard), and calls run.
func replayCmd(c *cobra.Command, to *traceOptions, po *policyOptions, sh *shardFlags, run func(*cobra.Command, streams) error) *cobra.Command {
	c.Args, c.ValidArgsFunction = exactTrace, completeTraceFiles
	if c.Annotations == nil {
		c.Annotations = map[string]string{exitStatusKey: replayExitStatus}
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		to.Path, to.More = traceArg(args), moreTraces(args)
		if po != nil {
			po.markSet(c.Flags())
		}
		s := streamsOf(c)
		if sh != nil {
			var err error
			if s, err = shardStreams(c, args, po, *sh.output, *sh.shard, s); err != nil {
				return err
			}
			if s.part != nil {
				*sh.output = sh.as
			}
		}
		return run(c, s)
	}
	return c
}
