package cmd

import (
	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
)

var runLong = helpText("run")

const runExample = `  ratesim run --algo token-bucket --capacity 3 --rate 0.2 --explain traces/examples/token-bucket.csv
  ratesim run --algo fixed-window --only rejected -o csv trace.csv
  zcat trace.csv.gz | ratesim run --algo gcra --rate 300/1m -`

// runOptions are the options of "ratesim run".
type runOptions struct {
	trace   traceOptions
	policy  policyOptions
	Algo    string
	Explain bool
	Only    string
	Output  string
	// With names the extra columns: line, or any trace attribute.
	With []string
	// Headers names the style of the rate-limit fields to add.
	Headers string
	clients sim.ClientFlags
	Shard   string
}

func newRunCmd() *cobra.Command {
	o := &runOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "run --algo NAME [flags] TRACE|- [TRACE...]",
		Short:   "Replay a trace through one algorithm, request by request",
		Long:    runLong + policyHelp + clientHelp + stackHelp,
		Example: runExample,
	}, &o.trace, &o.policy, &shardFlags{shard: &o.Shard, output: &o.Output, as: "json"}, func(c *cobra.Command, s streams) error {
		return runRun(o, s)
	})
	fs := c.Flags()
	fs.StringVar(&o.Algo, "algo", "", "algorithm: "+algorithmNames())
	fs.BoolVar(&o.Explain, "explain", false, "add the state column: what each decision was based on")
	fs.StringVar(&o.Only, "only", "", "show only allowed or rejected requests")
	fs.StringVar(&o.Headers, "headers", "none", "add the rate-limit fields a server would send with each decision: ietf (RateLimit-Policy, RateLimit, Retry-After), x-ratelimit (X-RateLimit-Limit, -Remaining, -Reset, Retry-After), both, or none")
	fs.StringSliceVar(&o.With, "with", nil, "extra columns, comma-separated: line (the trace line) or any field of the trace (ip,path,status), to join decisions back to the log")
	addOutputFlag(fs, &o.Output)
	addShardFlag(fs, &o.Shard)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	o.clients.AddFlags(fs)
	registerCompletions(c)
	return c
}

// runRun replays o.trace through one algorithm and writes a row per request.
func runRun(o *runOptions, s streams) error {
	specs, err := o.policy.ParseLimiters()
	if err != nil {
		return err
	}
	stack, err := o.policy.stackOf()
	if err != nil {
		return err
	}
	if stack != nil {
		if err := refuseStackShard(s, stack, o.trace.Key); err != nil {
			return err
		}
		return runStack(o, stack, s)
	}
	var algos []limiters.Algorithm
	switch {
	case len(specs) > 1:
		return usageErrorf("run replays one limiter: give one --limiter, or compare several")
	case len(specs) == 1 && o.Algo != "":
		return usageErrorf("give --algo or --limiter, not both")
	case len(specs) == 0:
		algo, err := parseAlgorithm(o.Algo)
		if err != nil {
			return err
		}
		algos = []limiters.Algorithm{algo}
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	keepAllowed, keepRejected, err := onlyFlag(o.Only)
	if err != nil {
		return err
	}
	style, err := headers.StyleNone, error(nil)
	if o.Headers != "" {
		style, err = headers.ParseStyle(o.Headers)
	}
	if err != nil {
		return usageErrorf("invalid --headers %q (valid: %s)", o.Headers, headers.Styles)
	}
	clients, err := o.clients.Clients(o.policy.set)
	if err != nil {
		return err
	}
	if clients.Model != sim.ClientsNone {
		if err := refuseShard(s, "--clients replays the retries in a loop of its own"); err != nil {
			return err
		}
	}
	if clients.Model != sim.ClientsNone && o.Explain {
		return usageErrorf("--clients shows no state texts: it excludes --explain")
	}
	if err := checkKeys(o.trace.Key); err != nil {
		return err
	}
	o.policy.single = true // the config file's limiters: and algos: do not join
	rp, err := prepare(&o.trace, &o.policy, algos, specs, "", s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()

	lane := rp.spec.Lanes[0]
	row := tables.RunRow{Unit: rp.spec.Unit, Queue: lane.Algorithm.Delays(), Keyed: len(o.trace.Key) > 0, Explain: o.Explain}
	row.SetWith(o.With)
	if style != headers.StyleNone {
		q, err := headers.QuotaOf("", lane.Algorithm, lane.Policy)
		if err != nil {
			return usageErrorf("--headers: %s", ErrorText(err))
		}
		row.SetFields(style, []headers.Quota{q})
	}
	if clients.Model != sim.ClientsNone {
		return runClientRows(rp, &row, clients, keepAllowed, keepRejected, format, s)
	}
	cols, err := row.AllColumns(rp.trace.RFC3339())
	if err != nil {
		return err
	}
	rw := render.NewRecordWriter(s.out, format, cols)
	var totalCost tables.CostSum
	emit := func(b *sim.Batch) error {
		return tables.WriteRun(rw, &row, b, keepAllowed, keepRejected, &totalCost)
	}
	cfg := rp.config(true, o.Explain)
	cfg.With = row.Attrs
	cfg.DecisionsOnly = true // run shows no oracle or burst figures
	cfg.Detail = true
	rep, err := rp.run(cfg, s, emit)
	if err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	if rw.Textual() {
		w := render.NewTextWriter(s.out, format)
		w.Lines(tables.RunHeading(lane, rp.trace.name, rp.spec, rep))
		footer := tables.RunFooter(rep, int64(rw.Kept()), o.Only, totalCost)
		w.Blank()
		w.Rows(rw, footer)
		if err := w.Err(); err != nil {
			return err
		}
	}
	return rp.trace.finish()
}

// runStack is run on a stack of policies.
func runStack(o *runOptions, stack []stackSpec, s streams) error {
	switch {
	case o.Algo != "":
		return usageErrorf("%s stacks policies: --algo does not join them", o.policy.file.Path)
	case o.Explain || (o.clients.Model != "" && o.clients.Model != "none"):
		return usageErrorf("a stack of policies excludes --explain and --clients")
	}
	keepAllowed, keepRejected, err := onlyFlag(o.Only)
	if err != nil {
		return err
	}
	mode, err := o.policy.stackMode()
	if err != nil {
		return err
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	style := headers.StyleNone
	if o.Headers != "" {
		if style, err = headers.ParseStyle(o.Headers); err != nil {
			return usageErrorf("invalid --headers %q (valid: %s)", o.Headers, headers.Styles)
		}
	}
	rp, policies, err := prepareStack(&o.trace, &o.policy, stack, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	return runStackRows(rp, policies, mode, style, o.With, keepAllowed, keepRejected, format, s)
}

// onlyFlag parses --only: whether to show the allowed requests, and the
// rejected ones.
func onlyFlag(only string) (allowed, rejected bool, err error) {
	if only == "" {
		return true, true, nil
	}
	i, err := choose("--only", only, onlyChoices)
	return i == 0, i == 1, err
}

// onlyChoices are the choices of --only.
var onlyChoices = choice.List{
	{Name: "allowed", Description: "only allowed requests"},
	{Name: "rejected", Description: "only rejected requests"},
}

// checkKeys checks the --key attribute names.
func checkKeys(keys []string) error {
	for _, k := range keys {
		if k == "" {
			return usageErrorf("--key has an empty attribute name")
		}
	}
	return nil
}
