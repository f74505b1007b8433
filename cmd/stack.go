package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
)

// stackHelp documents stacked policies in help texts.
const stackHelp = `

STACKED POLICIES
  In --config, policies: is a list of limits that all apply (per user AND
  per endpoint AND global, 10/s AND 1000/h), each with a name, an
  algorithm and its parameters, a key (a list of trace attributes, default
  the replay's key; [] for one global limit) and shadow: true for a policy
  that only counts what it would refuse:

    policies:
      - {name: per-user, algorithm: token-bucket, capacity: 10, rate: 1/1s, key: [user]}
      - {name: global, algorithm: fixed-window, limit: 1000, window: 1m, key: []}
      - {name: new-limit, algorithm: sliding-log, limit: 5, window: 1s, shadow: true}

  A request passes when every enforcing policy allows it; its reason names
  the first that refused it. --stack consume (default) lets the policies
  that allowed a refused request still count it, as limiters in series do;
  --stack refund checks them all, then takes the request in all or none.
  run lists policy and would_reject per request; compare --summary gives
  per policy how many it refused, and how many it alone refused.`

// stackOf returns the stack of the --config file, nil when it has no
// policies: list. A stack replaces --algos and --limiter.
func (o *policyOptions) stackOf() ([]stackSpec, error) {
	if o.Config == "" {
		if o.set["stack"] {
			return nil, usageErrorf("--stack needs a --config file with a policies: list")
		}
		return nil, nil
	}
	pf, err := o.policyFile()
	if err != nil {
		return nil, err
	}
	if len(pf.Policies) == 0 {
		if o.set["stack"] {
			return nil, usageErrorf("--stack needs a policies: list in %s", o.Config)
		}
		return nil, nil
	}
	if len(o.Limiters) > 0 {
		return nil, usageErrorf("%s stacks policies: --limiter does not join them", o.Config)
	}
	return pf.Policies, nil
}

// stackMode parses --stack.
func (o *policyOptions) stackMode() (sim.StackMode, error) {
	switch o.Stack {
	case "", "consume":
		return sim.StackConsume, nil
	case "refund":
		return sim.StackRefund, nil
	}
	return 0, usageErrorf("invalid --stack %q (valid: consume, refund)", o.Stack)
}

// prepareStack resolves a stack's policies and opens the trace.
func prepareStack(to *traceOptions, po *policyOptions, stack []stackSpec, s streams) (*replay, []sim.StackPolicy, error) {
	po.single = true
	specs := make([]limiterSpec, len(stack))
	for i, sp := range stack {
		specs[i] = sp.Limiter
	}
	rp, err := prepare(to, po, nil, specs, "", s)
	if err != nil {
		return nil, nil, err
	}
	policies := make([]sim.StackPolicy, len(stack))
	for i, sp := range stack {
		key := sp.Key
		if key == nil {
			key = rp.keys
			if key == nil {
				key = []string{"user"}
			}
		}
		policies[i] = sim.StackPolicy{Lane: rp.spec.Lanes[i], KeyFields: key, Shadow: sp.Shadow}
	}
	return rp, policies, nil
}

// stackKey describes a policy's key: "user", "user,path", "global".
func stackKey(p sim.StackPolicy) string {
	if len(p.KeyFields) == 0 {
		return "global"
	}
	return strings.Join(p.KeyFields, ",")
}

// stackSummaryColumns are the columns of compare --summary on a stack.
var stackSummaryColumns = []column{
	{name: "policy"},
	{name: "algo"},
	{name: "key"},
	{name: "shadow"},
	{name: "requests", right: true},
	{name: "refused", right: true},
	{name: "refused_alone", right: true, title: "alone"},
	{name: "would_reject", right: true, title: "would reject"},
	{name: "allowed", right: true, title: "stack allowed"},
	{name: "stack", machineOnly: true},
}

func stackSummaryRows(policies []sim.StackPolicy, stats []sim.StackStats, requests, allowed int64, mode sim.StackMode) [][]cell {
	var rows [][]cell
	for i, p := range policies {
		refused, would := intCell(stats[i].Refused), intCell(0)
		if p.Shadow {
			refused, would = intCell(0), intCell(stats[i].Refused)
		}
		rows = append(rows, []cell{
			strCell(p.Name), strCell(p.Algorithm.String()), strCell(stackKey(p)), boolCell(p.Shadow),
			intCell(requests), refused, intCell(stats[i].Alone), would, intCell(allowed), strCell(stackModeName(mode)),
		})
	}
	return rows
}

func stackModeName(m sim.StackMode) string {
	if m == sim.StackRefund {
		return "refund"
	}
	return "consume"
}

// runStackSummary replays a stack and writes a row per policy.
func runStackSummary(rp *replay, policies []sim.StackPolicy, mode sim.StackMode, format outputFormat, s streams) error {
	var requests int64
	stats, allowed, err := sim.RunStack(rp.trace, policies, mode, func(*sim.StackDecision) error { requests++; return nil })
	if err != nil {
		return err
	}
	rows := stackSummaryRows(policies, stats, requests, allowed, mode)
	t, err := writeRecords(s.out, format, stackSummaryColumns, rows)
	if err != nil {
		return err
	}
	if t != nil {
		w := &textWriter{w: s.out, format: format}
		w.line(fmt.Sprintf("stack on %s: %s, %d allowed by every enforcing policy (--stack %s)", rp.trace.name, plural(requests, "request"), allowed, stackModeName(mode)))
		for _, l := range stackLines(rp, policies) {
			w.line(l)
		}
		w.blank()
		w.table(t)
		if w.err != nil {
			return w.err
		}
	}
	return rp.trace.finish()
}

// stackLines describe the policies, a line each.
func stackLines(rp *replay, policies []sim.StackPolicy) []string {
	var lines []string
	for _, p := range policies {
		pol := p.Policy
		text := fmt.Sprintf("policy %s (%s, key %s", p.Name, p.Algorithm, stackKey(p))
		if p.Shadow {
			text += ", shadow"
		}
		text += "): "
		if p.Algorithm.Windowed() {
			text += fmt.Sprintf("limit %d per %s", pol.Limit, rp.spec.duration(pol.Window))
		} else {
			text += fmt.Sprintf("capacity %d, rate %s per %s", pol.Capacity, pol.Rate.Format(rp.spec.Unit), unitName(rp.spec.Unit))
		}
		lines = append(lines, text+rp.spec.extraParams([]limiters.Algorithm{p.Algorithm}, pol))
	}
	return lines
}

// stackRunColumns are run's columns on a stack.
func stackRunColumns(rfc3339 bool) []column {
	return append(decisionColumns(rfc3339),
		column{name: "policy"},
		column{name: "would_reject"})
}

// runStackRows replays a stack and writes a row per request, then, in
// tables, the summary per policy.
func runStackRows(rp *replay, policies []sim.StackPolicy, mode sim.StackMode, style headers.Style, format outputFormat, s streams) error {
	cols := stackRunColumns(rp.trace.RFC3339())
	var quotas []headers.Quota
	var fields []headers.Field
	var enforcing []int
	for i, p := range policies {
		if !p.Shadow {
			enforcing = append(enforcing, i)
		}
	}
	if style != headers.StyleNone {
		for _, i := range enforcing {
			q, err := headers.QuotaOf(policies[i].Name, policies[i].Algorithm, policies[i].Policy)
			if err != nil {
				return usageErrorf("--headers: policy %s: %s", policies[i].Name, ErrorText(err))
			}
			quotas = append(quotas, q)
		}
		var fcols []column
		fields, fcols = fieldColumns(style)
		cols = append(cols, fcols...)
	}
	rw := newRecordWriter(s.out, format, cols)
	unit := rp.spec.Unit
	ds := make([]limiters.Decision, len(enforcing))
	var requests int64
	stats, allowed, err := sim.RunStack(rp.trace, policies, mode, func(d *sim.StackDecision) error {
		requests++
		b := rw.begin()
		e := &rw.enc
		b = e.text(b, d.User)
		b = e.time(e.next(b), []byte(d.TimeText))
		b = strconv.AppendInt(e.next(b), d.Cost, 10)
		b = strconv.AppendBool(e.next(b), d.Allowed)
		// The stack's answer: the least remaining and the longest reset of
		// the enforcing policies, and the longest wait of those that
		// refused.
		remaining := int64(-1)
		var retry, reset time.Duration
		for k, i := range enforcing {
			pd := &d.Decisions[i]
			ds[k] = *pd
			if remaining < 0 || pd.Remaining < remaining {
				remaining = pd.Remaining
			}
			reset = max(reset, pd.ResetAfter)
			if !pd.Allowed {
				retry = max(retry, pd.RetryAfter)
			}
		}
		b = strconv.AppendInt(e.next(b), max(remaining, 0), 10)
		for _, v := range []time.Duration{retry, reset} {
			if v == limiters.InfDuration {
				b = e.null(e.next(b))
			} else {
				b = appendDuration(e.next(b), int64(v), unit)
			}
		}
		if d.Refused >= 0 {
			b = e.text(e.next(b), policies[d.Refused].Name+": "+string(d.Decisions[d.Refused].Reason))
			b = e.text(e.next(b), policies[d.Refused].Name)
		} else {
			b = e.text(e.next(b), "")
			b = e.text(e.next(b), "")
		}
		var would []string
		for i, p := range policies {
			if p.Shadow && !d.Decisions[i].Allowed {
				would = append(would, p.Name)
			}
		}
		b = e.text(e.next(b), strings.Join(would, ","))
		return rw.end(appendFields(e, b, fields, quotas, ds))
	})
	if err != nil {
		return err
	}
	if err := rw.close(); err != nil {
		return err
	}
	if rw.textual() {
		w := &textWriter{w: s.out, format: format}
		w.line(fmt.Sprintf("stack on %s: %s, %d allowed by every enforcing policy (--stack %s)", rp.trace.name, plural(requests, "request"), allowed, stackModeName(mode)))
		for _, l := range stackLines(rp, policies) {
			w.line(l)
		}
		w.blank()
		w.rows(rw, nil)
		t, _ := writeRecords(nil, format, stackSummaryColumns, stackSummaryRows(policies, stats, requests, allowed, mode))
		w.blank()
		w.table(t)
		if w.err != nil {
			return w.err
		}
	}
	return rp.trace.finish()
}
