package cmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/gateway"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// warnGateway writes the warnings of the --policy-from config to w,
// once.
func (o *policyOptions) warnGateway(w io.Writer) {
	for _, wr := range o.gateway.TakeWarnings() {
		fmt.Fprintf(w, "ratesim: %s\n", wr)
	}
}

// hasFile reports whether a policy file or a gateway's config is given.
func (o *policyOptions) hasFile() bool { return o.Config != "" || o.gateway.From != "" }

// stackAsLane turns the stack of the policy file (a policies: list, or
// a gateway's config) into what a command that replays limiters side by
// side, each over every request under one key, replays: its one policy
// as a lane of its own (spec.File.OneLane), the replay keyed as the
// policy is unless --key says the same.
func (o *policyOptions) stackAsLane(to *traceOptions, warnings io.Writer) (*spec.File, error) {
	what := o.file.Path
	if o.gateway.From != "" {
		what = "--policy-from " + what
	}
	lane, err := o.file.OneLane(what, to.Key, o.set["key"])
	if err != nil {
		return nil, err
	}
	to.Key = lane.Key
	if lane.Warning != "" {
		warnf(warnings, "%s", lane.Warning)
	}
	o.file = lane.File
	return o.file, nil
}

type lintOptions struct {
	gateway gateway.Flags
	trace   traceOptions
}

func newLintCmd() *cobra.Command {
	o := &lintOptions{}
	c := &cobra.Command{
		Use:         "lint CONFIG [TRACE]",
		Short:       "Say what a gateway's rate-limit config will do that its author may not mean",
		Long:        helpText("lint"),
		Example:     "  ratesim lint nginx.conf\n  ratesim lint nginx.conf access.log\n  ratesim lint --descriptor remote_address=ip ratelimit.yaml access.log",
		Args:        cobra.RangeArgs(1, 2),
		Annotations: exitStatus("a bad flag, a config that cannot be read (its file and line named)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.gateway.From = args[0]
			return runLint(o, args[1:], streamsOf(c))
		},
	}
	fs := c.Flags()
	o.gateway.AddFormatFlags(fs)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// runLint prints the warnings of a config and, with a trace, of the
// config against it.
func runLint(o *lintOptions, traceArgs []string, s streams) error {
	opt, err := o.gateway.Options()
	if err != nil {
		return err
	}
	opt.Lint = true
	cfg, err := gateway.Read(o.gateway.From, opt)
	if err != nil {
		return err
	}
	warnings := cfg.Warnings
	if len(traceArgs) > 0 {
		o.trace.Path, o.trace.More = traceArg(traceArgs), moreTraces(traceArgs)
		t, err := openTrace(&o.trace, s)
		if err != nil {
			return err
		}
		more, err := cfg.LintTrace(t)
		t.Close()
		if err != nil {
			return err
		}
		warnings = append(warnings, more...)
	}
	for _, w := range warnings {
		fmt.Fprintln(s.out, w)
	}
	if len(warnings) == 0 {
		fmt.Fprintf(s.err, "ratesim: %s: no warnings\n", o.gateway.From)
	}
	return nil
}

type exportOptions struct {
	To      string
	Limiter string
	Field   string
	trace   traceOptions
}

func newExportCmd() *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:         "export --to TARGET --limiter SPEC [TRACE]",
		Short:       "Write a limiter as a gateway's config, saying what it approximates",
		Long:        helpText("export", "TARGETS", gateway.Targets.String()),
		Example:     "  ratesim export --to nginx --limiter nginx:rate=10r/s,burst=20,nodelay\n  ratesim export --to envoy --limiter fixed-window:limit=100,window=1m access.log",
		Args:        cobra.MaximumNArgs(1),
		Annotations: exitStatus("a bad flag, an unknown target, a bad --limiter"),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.trace.Path = args[0]
			}
			return runExport(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.To, "to", "", "the config to write: "+gateway.Targets.String())
	fs.StringVar(&o.Limiter, "limiter", "", "the limiter: [NAME=]ALGORITHM[:KEY=VALUE,...] or a preset (see LIMITERS in 'ratesim compare --help')")
	fs.StringVar(&o.Field, "key-field", "ip", "with a TRACE, the trace field the config's client address is read from")
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// runExport writes the limiter as the target's config, and with a trace
// how the two decide it.
func runExport(o *exportOptions, s streams) error {
	if gateway.Targets.Index(o.To) < 0 {
		return usageErrorf("--to %q: want one of %s", o.To, gateway.Targets)
	}
	if o.Limiter == "" {
		return usageErrorf("export needs a --limiter")
	}
	l, err := spec.ParseLimiter(o.Limiter)
	if err != nil {
		return err
	}
	unit, err := traces.UnitFlag(o.trace.Unit)
	if err != nil {
		return err
	}
	lane, ex, err := exportLimiter(o.To, l, unit, s.out, s.err)
	if err != nil {
		return err
	}
	if o.trace.Path == "" {
		return nil
	}
	cfg, err := gateway.ReadBack(o.To, ex, o.Field)
	if err != nil {
		return usageErrorf("%s", ErrorText(err))
	}
	t, err := openTrace(&o.trace, s)
	if err != nil {
		return err
	}
	defer t.Close()
	d, err := gateway.Compare(t, lane, []string{o.Field}, cfg, unit)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.err, "ratesim: on %s: %d requests; %s allowed %d, the %s config %d; they decide %d differently\n", t.name, d.Requests, lane.Name, d.Allowed, o.To, d.ExportAllowed, d.Differ)
	return t.finish()
}

// exportLimiter writes the limiter l, durations in unit, as a config of
// target to out, and to notes what it approximates.
func exportLimiter(target string, l spec.Limiter, unit time.Duration, out, notes io.Writer) (sim.Lane, *gateway.Exported, error) {
	lane, ex, err := gateway.ExportLimiter(target, l, unit)
	if err != nil {
		return lane, nil, err
	}
	if _, err := io.WriteString(out, ex.Text); err != nil {
		return lane, nil, err
	}
	for _, n := range ex.Notes {
		fmt.Fprintf(notes, "ratesim: %s: %s\n", target, n)
	}
	if ex.Exact {
		fmt.Fprintf(notes, "ratesim: %s: decides as %s\n", target, lane.Name)
	}
	return lane, ex, nil
}

// sweepExport writes the best candidate of a sweep as the --export
// config: to the --export-file, or to out below the sweep's table.
func sweepExport(target, file string, best spec.Limiter, unit time.Duration, out, notes io.Writer) error {
	if file == "" {
		fmt.Fprintf(out, "\nthe best candidate, %s, as a %s config:\n\n", best.LaneName(), target)
		_, _, err := exportLimiter(target, best, unit, out, notes)
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, _, err := exportLimiter(target, best, unit, f, notes); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(notes, "ratesim: wrote the best candidate, %s, as a %s config to %s\n", best.LaneName(), target, file)
	return nil
}

// sweepDeployed reads the sweep's --policy-from config, the limit
// deployed today, as a candidate of index i beside the grid's, scored
// as they are: whether a candidate beats what runs now, and by how
// much. The config is one policy over every request (stackAsLane), and
// the sweep is keyed as it is.
func sweepDeployed(o *sweepOptions, i int, s streams) (*sweep.Candidate, error) {
	po := &policyOptions{gateway: o.gateway, set: o.set}
	if _, err := po.policyFile(); err != nil {
		return nil, err
	}
	po.warnGateway(s.err)
	pf, err := po.stackAsLane(&o.trace, s.err)
	if err != nil {
		return nil, err
	}
	return sweep.Deployed(pf.Limiters[0], i), nil
}
