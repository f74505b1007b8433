package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

const runLong = `Replay a trace through one algorithm and print its decision on every
request, in trace order.

Columns: user, timestamp (as the trace wrote it), cost, allowed, remaining
(whole units left), retry_after (how long until this request would pass if
nothing else arrived; 0 when allowed), reset_after (how long until the key is
back to its fresh state) and reason (empty when allowed). leaky-queue adds
delay, --key adds key, --explain adds state: what the decision was based on.
--headers adds the rate-limit fields a server would send with the decision,
named as the HTTP fields in lower case: ratelimit-policy and ratelimit
(draft-ietf-httpapi-ratelimit-headers, Structured Field lists), retry-after
(whole seconds, rounded up: never earlier than the exact retry) and
x-ratelimit-limit, x-ratelimit-remaining and x-ratelimit-reset.
Durations are exact numbers in the trace unit (seconds for RFC 3339 traces).

A table shows the first 1000 rows and a totals footer; -o csv, json or jsonl
stream every row.`

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
	clients clientOptions
}

func newRunCmd() *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:               "run --algo NAME [flags] TRACE|- [TRACE...]",
		Short:             "Replay a trace through one algorithm, request by request",
		Long:              runLong + policyHelp + clientHelp + stackHelp,
		Example:           runExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.policy.markSet(c.Flags())
			return runRun(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Algo, "algo", "", "algorithm: "+algorithmNames())
	fs.BoolVar(&o.Explain, "explain", false, "add the state column: what each decision was based on")
	fs.StringVar(&o.Only, "only", "", "show only allowed or rejected requests")
	fs.StringVar(&o.Headers, "headers", "none", "add the rate-limit fields a server would send with each decision: ietf (RateLimit-Policy, RateLimit, Retry-After), x-ratelimit (X-RateLimit-Limit, -Remaining, -Reset, Retry-After), both, or none")
	fs.StringSliceVar(&o.With, "with", nil, "extra columns, comma-separated: line (the trace line) or any field of the trace (ip,path,status), to join decisions back to the log")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	addClientFlags(fs, &o.clients)
	registerCompletions(c)
	return c
}

// runRun replays o.trace through one algorithm and writes a row per request.
func runRun(o *runOptions, s streams) error {
	specs, err := o.policy.specs()
	if err != nil {
		return err
	}
	stack, err := o.policy.stackOf()
	if err != nil {
		return err
	}
	if stack != nil {
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
		return usageErrorf("invalid --headers %q (valid: ietf, x-ratelimit, both, none)", o.Headers)
	}
	clients, err := o.clients.parse(o.policy.set)
	if err != nil {
		return err
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
	row := runRow{unit: rp.spec.Unit, queue: lane.Algorithm.Delays(), keyed: len(o.trace.Key) > 0, explain: o.Explain}
	row.setWith(o.With)
	if style != headers.StyleNone {
		q, err := headers.QuotaOf("", lane.Algorithm, lane.Policy)
		if err != nil {
			return usageErrorf("--headers: %s", ErrorText(err))
		}
		row.setFields(style, []headers.Quota{q})
	}
	if clients.Model != sim.ClientsNone {
		return runClientRows(rp, &row, clients, keepAllowed, keepRejected, format, s)
	}
	cols, err := row.allColumns(rp.trace.RFC3339())
	if err != nil {
		return err
	}
	rw := render.NewRecordWriter(s.out, format, cols)
	var totalCost costSum
	emit := func(b *sim.Batch) error {
		for i := range b.Requests {
			row.req, row.d = &b.Requests[i], b.Decision(i, 0)
			totalCost.add(row.req.Cost)
			if row.d.Allowed {
				if !keepAllowed {
					continue
				}
			} else if !keepRejected {
				continue
			}
			row.exact = b.Exact(i, 0)
			if o.Explain {
				row.state = b.State(i, 0)
			}
			if err := rw.End(row.appendTo(rw.Enc(), rw.Begin())); err != nil {
				return err
			}
		}
		return nil
	}
	cfg := rp.config(true, o.Explain)
	cfg.With = row.attrs
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
		st := rep.Algos[0]
		var footer map[string]string
		if rep.Requests > 0 {
			// The footer counts the whole trace; when the table lists fewer
			// rows (--only, or past render.MaxTableRows) it says how many it shows.
			requests := render.Plural(rep.Requests, "request")
			if shown := int64(rw.Kept()); shown != rep.Requests {
				which := ""
				if o.Only != "" {
					which = o.Only + " "
				}
				requests += ", " + formatInt(shown) + " " + which + "shown"
			}
			footer = map[string]string{
				"user":      "total",
				"timestamp": requests,
				"cost":      totalCost.String(),
				"allowed":   formatInt(st.Allowed) + " allowed",
				"reason":    formatInt(st.Rejected) + " rejected",
			}
		}
		w := render.NewTextWriter(s.out, format)
		name := lane.Algorithm.String()
		if lane.Name != name {
			name = fmt.Sprintf("%s (%s)", lane.Name, lane.Algorithm)
		}
		w.Line(fmt.Sprintf("%s on %s: %s", name, rp.trace.name, rp.spec.DescribeLane(rp.spec.Lanes[0], "; ")))
		w.Line(fmt.Sprintf("%s, %s", render.Plural(rep.Requests, "request"), render.Plural(int64(rep.Keys), "key")))
		if line := tables.BackwardsLine(rep); line != "" {
			w.Line(line)
		}
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
		return usageErrorf("%s stacks policies: --algo does not join them", o.policy.Config)
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
			return usageErrorf("invalid --headers %q (valid: ietf, x-ratelimit, both, none)", o.Headers)
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
	switch only {
	case "":
		return true, true, nil
	case "allowed":
		return true, false, nil
	case "rejected":
		return false, true, nil
	}
	return false, false, usageErrorf("invalid --only %q (valid: allowed, rejected)", only)
}

// decisionColumns are the first columns of a row per decision: user,
// timestamp (right-aligned when numeric), cost, allowed, remaining,
// retry_after, reset_after and reason.
func decisionColumns(rfc3339 bool) []render.Column {
	return []render.Column{
		{Name: "user"},
		{Name: "timestamp", Right: !rfc3339},
		{Name: "cost", Right: true},
		{Name: "allowed"},
		{Name: "remaining", Right: true},
		{Name: "retry_after", Right: true, NullText: "never"},
		{Name: "reset_after", Right: true, NullText: "never"},
		{Name: "reason"},
	}
}

// appendFields appends, through e, the values of the rate-limit fields
// for decisions ds of the policies with quotas: null where the response
// has no such field.
func appendFields(e *render.Encoder, b []byte, fields []headers.Field, quotas []headers.Quota, ds []limiters.Decision) []byte {
	for _, f := range fields {
		b = e.Next(b)
		start := len(b)
		v, ok := f.Append(b, quotas, ds)
		switch {
		case !ok:
			b = e.Null(v[:start])
		case f == headers.RateLimitPolicy || f == headers.RateLimit:
			b = e.Text(v[:start], string(v[start:]))
		default:
			b = v // a whole number, the same in every format
		}
	}
	return b
}

// costSum is a sum of costs in 128 bits, two's complement: a few huge
// costs pass int64, and the footer shows the exact total.
type costSum struct {
	hi int64
	lo uint64
}

func (s *costSum) add(cost int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(cost), 0)
	s.hi += cost>>63 + int64(carry)
}

func (s costSum) String() string {
	n := big.NewInt(s.hi)
	n.Lsh(n, 64)
	return n.Add(n, new(big.Int).SetUint64(s.lo)).String()
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

// appendWait appends a decision's duration d as an exact number in unit.
// A d of limiters.InfDuration stands for a wait longer than a Duration
// holds (about 292 years); full has it exactly.
func appendWait(dst []byte, d time.Duration, full limiters.Span, unit time.Duration) []byte {
	if d != limiters.InfDuration {
		return appendDuration(dst, int64(d), unit)
	}
	q, r := new(big.Int).QuoRem(full.Big(), big.NewInt(int64(unit)), new(big.Int))
	dst = q.Append(dst, 10)
	if r.Sign() != 0 {
		frac := traces.AppendDecimal(nil, r.Int64(), unit) // "0.xyz"
		dst = append(dst, frac[1:]...)
	}
	return dst
}

// appendDuration appends ns as an exact number in unit; zero, the common
// case, without the general conversion.
func appendDuration(dst []byte, ns int64, unit time.Duration) []byte {
	if ns == 0 {
		return append(dst, '0')
	}
	return traces.AppendDecimal(dst, ns, unit)
}

// runRow is one row of run's output, and which of the optional columns
// it has. Every replay run shows writes its rows with it: a request's
// decision under one limiter, a client's attempt (--clients) and a
// stack's answer (a policies: list), so that a column run shows is shown
// by all three. Those add columns of their own between the decision's
// (appendHead) and the rate-limit fields and --with columns (appendTail).
type runRow struct {
	req *sim.Request
	// time is the time of the row as written, when it is not the
	// request's own: a client's retry.
	time  []byte
	d     *limiters.Decision
	exact *limiters.Exact
	// refusedBy names the stack's policy that refused the request; its
	// reason is then "policy: reason".
	refusedBy string
	state     []byte // the state text, with --explain
	unit      time.Duration

	queue, keyed, explain bool // the delay, key and state columns

	with  []string // the --with columns: line, or attributes
	attrs []string // the attributes of with, in order (sim.Config.With)

	fields  []headers.Field     // the --headers columns
	quotas  []headers.Quota     // the limiters' quotas, for them
	fieldDs []limiters.Decision // the decision of each quota's limiter; nil: d alone
	ds      []limiters.Decision // scratch: d, for them
}

// columns are run's columns of a decision, in the order appendHead writes
// them: user, timestamp (right-aligned when numeric), cost, allowed,
// remaining, retry_after, reset_after and reason, then delay for the
// leaky queue, key with --key and state with --explain.
func (r *runRow) columns(rfc3339 bool) []render.Column {
	cols := decisionColumns(rfc3339)
	if r.queue {
		cols = append(cols, render.Column{Name: "delay", Right: true})
	}
	if r.keyed {
		cols = append(cols, render.Column{Name: "key"})
	}
	if r.explain {
		cols = append(cols, render.Column{Name: "state", Width: render.MaxStateWidth})
	}
	return cols
}

// allColumns are every column of r's rows: columns, then extra (the
// replay's own), then those of the rate-limit fields and of --with. A
// --with column named as another is an error.
func (r *runRow) allColumns(rfc3339 bool, extra ...render.Column) ([]render.Column, error) {
	cols := append(r.columns(rfc3339), extra...)
	for _, f := range r.fields {
		cols = append(cols, render.Column{Name: f.String(), Right: f != headers.RateLimitPolicy && f != headers.RateLimit})
	}
	for _, w := range r.with {
		if w == "" {
			return nil, usageErrorf("--with has an empty name")
		}
		if slices.ContainsFunc(cols, func(c render.Column) bool { return c.Name == w }) {
			return nil, usageErrorf("--with %s: run already has a %s column", w, w)
		}
		cols = append(cols, render.Column{Name: w, Right: w == "line"})
	}
	return cols, nil
}

// setWith sets the --with columns: line, or trace attributes, which
// sim.Config.With (or the sim.Config of RunClients and RunStack) is then
// to carry: r.attrs.
func (r *runRow) setWith(with []string) {
	r.with, r.attrs = with, nil
	for _, w := range with {
		if w != "line" {
			r.attrs = append(r.attrs, w)
		}
	}
}

// setFields sets the rate-limit fields of style, for limiters of quotas.
func (r *runRow) setFields(style headers.Style, quotas []headers.Quota) {
	r.fields, r.quotas = nil, quotas
	for _, f := range headers.Fields() {
		if style.Has(f) {
			r.fields = append(r.fields, f)
		}
	}
}

// appendTo appends the values of r's columns through e, for every format:
// appendHead then appendTail.
func (r *runRow) appendTo(e *render.Encoder, b []byte) []byte {
	return r.appendTail(e, r.appendHead(e, b))
}

// appendHead appends the values of r.columns. It is straight-line code
// on purpose: it runs for every row of run -o csv, which a function call
// per column slowed by about a tenth.
func (r *runRow) appendHead(e *render.Encoder, b []byte) []byte {
	d, x := r.d, r.exact
	b = e.Bytes(b, r.req.User)
	if r.time != nil {
		b = e.Time(e.Next(b), r.time)
	} else {
		b = e.Time(e.Next(b), r.req.TimeText)
	}
	b = strconv.AppendInt(e.Next(b), r.req.Cost, 10)
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	if d.Reason == limiters.ReasonCost || x.RetryAfter.Never() {
		b = e.Null(e.Next(b))
	} else {
		b = appendWait(e.Next(b), d.RetryAfter, x.RetryAfter, r.unit)
	}
	b = appendWait(e.Next(b), d.ResetAfter, x.ResetAfter, r.unit)
	if r.refusedBy != "" {
		b = e.Text(e.Next(b), r.refusedBy+": "+string(d.Reason))
	} else {
		b = e.Text(e.Next(b), string(d.Reason))
	}
	if r.queue {
		b = appendWait(e.Next(b), d.Delay, x.Delay, r.unit)
	}
	if r.keyed {
		b = e.Bytes(e.Next(b), r.req.Key)
	}
	if r.explain {
		b = e.Bytes(e.Next(b), r.state)
	}
	return b
}

// appendTail appends the values of the rate-limit fields and the --with
// columns, each after next.
func (r *runRow) appendTail(e *render.Encoder, b []byte) []byte {
	if len(r.fields) > 0 {
		ds := r.fieldDs
		if ds == nil {
			if r.ds == nil {
				r.ds = make([]limiters.Decision, 1)
			}
			r.ds[0] = *r.d
			ds = r.ds
		}
		b = appendFields(e, b, r.fields, r.quotas, ds)
	}
	j := 0
	for _, w := range r.with {
		if w == "line" {
			b = strconv.AppendInt(e.Next(b), int64(r.req.Line), 10)
			continue
		}
		b = e.Bytes(e.Next(b), r.req.With(j))
		j++
	}
	return b
}
