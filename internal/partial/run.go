package partial

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// A Run writes the partial result of a command's replays of one shard:
// its header once the trace is open (Start), then for each replay its
// rows and its report (Replay).
type Run struct {
	// Header is the partial's header; Start fills in its trace.
	Header  Header
	shard   sim.Shard
	out     io.Writer
	w       *Writer
	streams int
}

// NewRun returns the Run of shard that writes to out, with the header
// the command filled in but for its trace.
func NewRun(out io.Writer, shard sim.Shard, h Header) *Run {
	return &Run{Header: h, shard: shard, out: out}
}

// Start writes the header, with t, the trace as the output states it,
// once: later calls do nothing.
func (r *Run) Start(t Trace) error {
	if r.w != nil {
		return nil
	}
	r.Header.Trace = t
	w, err := NewWriter(r.out, &r.Header)
	r.w = w
	return err
}

// Replay replays src, the shard's events of the trace, as cfg says, and
// writes the replay's rows and its report; skips says, once the replay
// is done, how many records the trace's lenient read skipped and the
// messages of those it showed. Start comes first.
func (r *Run) Replay(src sim.Source, cfg sim.Config, skips func() (int, []string)) (*sim.Report, error) {
	stream := r.streams
	r.streams++
	cfg.Shard = r.shard
	emit := func(b *sim.Batch) error {
		for i := range b.Requests {
			row := b.Row(i)
			if err := r.w.Row(stream, sim.SeqPosition(row.Seq), &row); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := sim.Run(src, cfg, emit)
	if err != nil {
		return nil, err
	}
	p, err := sim.PartOf(rep, &cfg)
	if err != nil {
		return nil, err
	}
	if stream > 0 {
		// A later read may read some users' records only: only the
		// first is of the whole trace.
		p.Events, p.Sum = 0, 0
	}
	skipped, shown := skips()
	if err := r.w.Part(stream, p, skipped, shown); err != nil {
		return nil, err
	}
	return rep, r.w.Flush()
}

// Report is the report of the command's next replay, configured as cfg,
// merged from the shards' partials; emit, when not nil, gets its rows in
// trace order.
func (m *Merger) Report(cfg *sim.Config, emit func(*sim.Batch) error) (*sim.Report, error) {
	if emit == nil {
		emit = func(*sim.Batch) error { return nil }
	}
	p, err := m.Next(len(cfg.Lanes), len(cfg.With), emit)
	if err != nil {
		return nil, err
	}
	if err := Bind(p.Report, cfg.Lanes); err != nil {
		return nil, fmt.Errorf("partial: %w", err)
	}
	return p.Report, nil
}

// Args are the flags of fs given on the command line, but those named
// in skip (--shard and -o), in the order of their names, each as
// --name=value, then "--" and the traces, args: the arguments that shape
// the command's output, in one form however they were written (a
// Header's Args).
func Args(fs *pflag.FlagSet, args []string, skip ...string) []string {
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		for _, s := range skip {
			if f.Name == s {
				return
			}
		}
		sv, ok := f.Value.(pflag.SliceValue)
		switch {
		case ok && f.Value.Type() == "stringArray":
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
		case ok:
			var b strings.Builder
			w := csv.NewWriter(&b)
			_ = w.Write(sv.GetSlice())
			w.Flush()
			out = append(out, "--"+f.Name+"="+strings.TrimSuffix(b.String(), "\n"))
		default:
			out = append(out, "--"+f.Name+"="+f.Value.String())
		}
	})
	return append(append(out, "--"), args...)
}

// A Split is one shard of a trace that another program split by key (as
// the Apache Beam pipeline in dist/beam does): its records, in trace
// order, and where each stands in the whole trace.
type Split struct {
	Shard sim.Shard
	// Name is the whole trace's file name; Lines[k] is the line of the
	// k-th record of the shard in it (the shard's text begins with the
	// trace's header).
	Name  string
	Lines []int
}

// Place gives ev, or the error err of the read of it, the file and line
// it has in the whole trace.
func (sp *Split) Place(ev *traces.Event, err error) (*traces.Event, error) {
	var pe *traces.ParseError
	switch {
	case ev != nil:
		line, ok := sp.line(ev.Line)
		if !ok {
			return nil, fmt.Errorf("%s: record %d of the shard has no line in the whole trace", sp.Name, ev.Line-1)
		}
		ev.File, ev.Line = sp.Name, line
	case errors.As(err, &pe):
		pe.File = sp.Name
		if line, ok := sp.line(pe.Line); ok {
			pe.Line = line
		}
	}
	return ev, err
}

// line is the line in the whole trace of line n of the shard's text,
// whose first line is the header.
func (sp *Split) line(n int) (int, bool) {
	if n == 1 {
		return 1, true
	}
	if k := n - 2; k >= 0 && k < len(sp.Lines) {
		return sp.Lines[k], true
	}
	return 0, false
}
