package cmd

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/gateway"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
)

// gatewayOptions are the flags that read a gateway's config as the stack
// of policies to replay.
type gatewayOptions struct {
	From        string   // --policy-from
	Format      string   // --policy-format
	Map         []string // --policy-map NAME=FIELD
	Descriptors []string // --descriptor KEY=FIELD,...
	cfg         *gateway.Config
}

func addGatewayFlags(fs *pflag.FlagSet, o *gatewayOptions) {
	fs.StringVar(&o.From, "policy-from", "", "a gateway's config to replay as it is (nginx.conf, an Envoy ratelimit YAML, kong.yml, ...): its limits are a stack of policies")
	fs.StringVar(&o.Format, "policy-format", "", "the --policy-from config's format: "+gateway.Formats.String()+" (default: told from its content)")
	fs.StringArrayVar(&o.Map, "policy-map", nil, "NAME=FIELD: the trace field of a variable or header the config keys on ('$http_x_api_key=api_key'); repeatable")
	fs.StringArrayVar(&o.Descriptors, "descriptor", nil, "an Envoy descriptor a request sends, KEY=FIELD,... (remote_address=ip,path=path); repeatable")
}

// options are the gateway's read options the flags give.
func (o *gatewayOptions) options() (gateway.Options, error) {
	opt := gateway.Options{Format: o.Format, Fields: map[string]string{}}
	for _, m := range o.Map {
		for _, kv := range strings.Split(m, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || v == "" {
				return opt, usageErrorf("--policy-map %q: want NAME=FIELD, such as '$http_x_api_key=api_key'", m)
			}
			opt.Fields[k] = v
		}
	}
	for _, d := range o.Descriptors {
		es, err := gateway.ParseDescriptor(d)
		if err != nil {
			return opt, err
		}
		opt.Descriptors = append(opt.Descriptors, es)
	}
	return opt, nil
}

// read reads the --policy-from config; config is --config, which it
// replaces.
func (o *gatewayOptions) read(config string) (*spec.File, error) {
	if config != "" {
		return nil, usageErrorf("--config and --policy-from both give the policy: give one")
	}
	opt, err := o.options()
	if err != nil {
		return nil, err
	}
	cfg, err := gateway.Read(o.From, opt)
	if err != nil {
		return nil, err
	}
	o.cfg = cfg
	return cfg.File, nil
}

// warn writes the config's warnings to w, once.
func (o *gatewayOptions) warn(w io.Writer) {
	if o.cfg == nil {
		return
	}
	for _, wr := range o.cfg.Warnings {
		fmt.Fprintf(w, "ratesim: %s\n", wr)
	}
	o.cfg.Warnings = nil // once, however often the policy is resolved
}

// hasFile reports whether a policy file or a gateway's config is given.
func (o *policyOptions) hasFile() bool { return o.Config != "" || o.gateway.From != "" }

// stackAsLane turns the stack of the policy file (a policies: list, or
// a gateway's config) into what a command that replays limiters side by
// side, each over every request under one key, replays: its one policy
// as a lane of its own (a limiters: entry), the replay keyed as the
// policy is unless --key says the same. A stack it cannot replay so (two
// policies that apply together, a policy that applies to some requests
// only, a shadow policy, one key for every request) is a usage error
// naming what, never a replay of something else.
func (o *policyOptions) stackAsLane(to *traceOptions, warnings io.Writer) (*spec.File, error) {
	pf := o.file
	what := pf.Path
	if o.gateway.From != "" {
		what = "--policy-from " + what
	}
	p := pf.Policies[0]
	where := ""
	if p.At != "" {
		where = " (" + string(p.At) + ")"
	}
	const only = "this command replays limiters side by side, each over every request; run and compare --summary replay a stack"
	switch {
	case len(pf.Policies) > 1:
		names := make([]string, len(pf.Policies))
		for i, q := range pf.Policies {
			names[i] = q.Name
		}
		return nil, usageErrorf("%s: %d policies (%s) apply together as a stack: %s", what, len(pf.Policies), strings.Join(names, ", "), only)
	case p.Match != nil && !p.EmptyKeyOnly:
		return nil, usageErrorf("%s: policy %s%s applies to some requests only (a location, descriptor or method): %s", what, p.Name, where, only)
	case p.Shadow:
		return nil, usageErrorf("%s: policy %s%s is a shadow policy, which refuses nothing: %s", what, p.Name, where, only)
	case p.Key != nil && len(p.Key) == 0:
		return nil, usageErrorf("%s: policy %s%s is one limit for every request (no key): %s", what, p.Name, where, only)
	case p.Key != nil && o.set["key"] && !slices.Equal(p.Key, to.Key):
		return nil, usageErrorf("--key %s: policy %s%s keys on %s", strings.Join(to.Key, ","), p.Name, where, strings.Join(p.Key, ","))
	}
	if p.Key != nil {
		to.Key = p.Key
	}
	if p.EmptyKeyOnly {
		warnf(warnings, "policy %s%s: a request whose %s is empty passes nginx unaccounted; this command limits it under the empty key (run and compare pass it)", p.Name, where, strings.Join(p.Key, " and "))
	}
	lane := *pf
	lane.Policies, lane.Limiters = nil, []spec.Limiter{p.Limiter}
	if lane.Limiters[0].Name == "" {
		lane.Limiters[0].Name = p.Name
	}
	o.file = &lane
	return o.file, nil
}

type lintOptions struct {
	gateway gatewayOptions
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
	fs.StringVar(&o.gateway.Format, "policy-format", "", "the config's format: "+gateway.Formats.String()+" (default: told from its content)")
	fs.StringArrayVar(&o.gateway.Map, "policy-map", nil, "NAME=FIELD: the trace field of a variable or header the config keys on; repeatable")
	fs.StringArrayVar(&o.gateway.Descriptors, "descriptor", nil, "an Envoy descriptor a request sends, KEY=FIELD,...; repeatable")
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// runLint prints the warnings of a config and, with a trace, of the
// config against it.
func runLint(o *lintOptions, traceArgs []string, s streams) error {
	opt, err := o.gateway.options()
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
	unit, err := parseUnit(o.trace.Unit)
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
	plan, err := spec.Resolve(spec.Inputs{Limiters: []spec.Limiter{l}, Single: true})
	if err != nil {
		return sim.Lane{}, nil, err
	}
	bound, err := plan.Bind(unit)
	if err != nil {
		return sim.Lane{}, nil, err
	}
	lane := bound.Lanes[0]
	ex, err := gateway.Export(target, lane)
	if err != nil {
		return lane, nil, usageErrorf("%s", ErrorText(err))
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
	po.gateway.warn(s.err)
	pf, err := po.stackAsLane(&o.trace, s.err)
	if err != nil {
		return nil, err
	}
	l := pf.Limiters[0]
	a := sweep.Algo{Algorithm: l.Algorithm}
	if l.Preset != "" {
		if p, ok := presets.Lookup(l.Preset); ok {
			a = sweep.Algo{Algorithm: l.Algorithm, Preset: p}
		}
	}
	return &sweep.Candidate{Index: i, Algo: a, Limiter: l, Values: map[string]string{}}, nil
}

// deployedLine says which row of a sweep is the deployed config's.
func deployedLine(c *sweep.Candidate, path string) string {
	at := ""
	if c.Limiter.At != "" {
		at = " (" + string(c.Limiter.At) + ")"
	}
	return fmt.Sprintf("deployed: %s's policy %s%s, replayed beside the grid as its last row", path, c.Limiter.Name, at)
}
