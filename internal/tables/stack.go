package tables

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// StackKey describes a policy's key: "user", "user,path", "global".
func StackKey(p sim.StackPolicy) string {
	if len(p.KeyFields) == 0 {
		return "global"
	}
	return strings.Join(p.KeyFields, ",")
}

// StackSummaryColumns are the columns of compare --summary on a stack.
var StackSummaryColumns = []render.Column{
	{Name: "policy"},
	{Name: "algo"},
	{Name: "key"},
	{Name: "shadow"},
	{Name: "requests", Right: true},
	{Name: "refused", Right: true},
	{Name: "refused_alone", Right: true, Title: "alone"},
	{Name: "would_reject", Right: true, Title: "would reject"},
	{Name: "allowed", Right: true, Title: "stack allowed"},
	{Name: "stack", MachineOnly: true},
}

// StackSummaryRows are the rows of StackSummaryColumns: a row per policy,
// its requests those it applied to.
func StackSummaryRows(policies []sim.StackPolicy, rep *sim.StackReport, mode sim.StackMode) [][]render.Cell {
	var rows [][]render.Cell
	for i, p := range policies {
		st := rep.Policies[i]
		refused, would := render.Int(st.Refused), render.Int(0)
		if p.Shadow {
			refused, would = render.Int(0), render.Int(st.Refused)
		}
		rows = append(rows, []render.Cell{
			render.Str(p.Name), render.Str(p.Algorithm.String()), render.Str(StackKey(p)), render.Bool(p.Shadow),
			render.Int(st.Requests), refused, render.Int(st.Alone), would, render.Int(rep.Allowed), render.Str(StackModeName(mode)),
		})
	}
	return rows
}

// StackModeName is the name of a stack mode, as --stack takes it.
func StackModeName(m sim.StackMode) string {
	if m == sim.StackRefund {
		return "refund"
	}
	return "consume"
}

// StackLines describe the policies, a line each.
func StackLines(sp *Policy, policies []sim.StackPolicy) []string {
	var lines []string
	for _, p := range policies {
		pol := p.Policy
		text := fmt.Sprintf("policy %s (%s, key %s", p.Name, p.Algorithm, StackKey(p))
		if p.Shadow {
			text += ", shadow"
		}
		text += "): "
		if p.Algorithm.Windowed() {
			text += fmt.Sprintf("limit %d per %s", pol.Limit, sp.Duration(pol.Window))
		} else {
			text += fmt.Sprintf("capacity %d, rate %s per %s", pol.Capacity, pol.Rate.Format(sp.Unit), traces.UnitName(sp.Unit))
		}
		lines = append(lines, text+sp.ExtraParams([]limiters.Algorithm{p.Algorithm}, pol))
	}
	return lines
}

// StackColumns are the columns run adds on a stack: the policy that
// refused, and the shadow policies that would have.
var StackColumns = []render.Column{
	{Name: "policy"},
	{Name: "would_reject"},
}

// ClientSummaryColumns are the columns of compare --summary --clients.
var ClientSummaryColumns = []render.Column{
	{Name: "algo"},
	{Name: "unique_requests", Right: true, Title: "unique"},
	{Name: "attempts", Right: true},
	{Name: "amplification", Right: true, Title: "amplif."},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "goodput", Right: true},
	{Name: "gave_up", Right: true},
	{Name: "latency_p50", Right: true, Title: "p50 latency"},
	{Name: "latency_p99", Right: true, Title: "p99 latency"},
	{Name: "latency_max", Right: true, Title: "max latency"},
	{Name: "clients", MachineOnly: true},
	{Name: "max_retries", MachineOnly: true},
	{Name: "unit", MachineOnly: true},
}

// ClientSummaryRows are the rows of the summary of a closed loop.
func ClientSummaryRows(lanes []sim.Lane, stats []sim.ClientStats, c sim.Clients, unit time.Duration) [][]render.Cell {
	var rows [][]render.Cell
	for i, st := range stats {
		q := func(num, den int64) render.Cell {
			w, ok := sim.Quantile(st.Latency, num, den)
			if !ok {
				return render.Null()
			}
			return render.Dec(w, unit)
		}
		rows = append(rows, []render.Cell{
			render.Str(lanes[i].Name),
			render.Int(st.Unique),
			render.Int(st.Attempts),
			render.Num(render.Ratio(st.Attempts, st.Unique)),
			render.Int(st.Allowed),
			render.Int(st.Rejected),
			render.Int(st.Goodput),
			render.Int(st.GaveUp),
			q(50, 100),
			q(99, 100),
			q(1, 1),
			render.Str(c.Model.String()),
			render.Int(int64(c.MaxRetries)),
			render.Str(traces.UnitName(unit)),
		})
	}
	return rows
}

// ClientColumns are the columns run adds under --clients.
var ClientColumns = []render.Column{
	{Name: "attempt", Right: true},
	{Name: "original_line", Right: true},
	{Name: "gave_up"},
}

// ClientLine states the client model, and when latency ends for lanes.
func ClientLine(c sim.Clients, lanes []sim.Lane) string {
	var how string
	switch c.Model {
	case sim.ClientsHonour:
		how = "retry at the Retry-After told, in whole seconds rounded up"
		if c.RetryAfterExact {
			how = "retry at the exact retry_after told"
		}
	case sim.ClientsImmediate:
		how = "retry after " + c.RetryDelay.String()
	case sim.ClientsBackoff:
		how = fmt.Sprintf("retry after an exponential backoff from %s to %s", c.Base, c.Max)
		if c.Jitter {
			how += fmt.Sprintf(", full jitter (seed %d)", c.Seed)
		}
	}
	retries := fmt.Sprintf("%d retries", c.MaxRetries)
	if c.MaxRetries == 1 {
		retries = "1 retry"
	}
	end := "the attempt allowed"
	var queues []string
	for _, l := range lanes {
		if l.Algorithm.Delays() {
			queues = append(queues, l.Name)
		}
	}
	if len(queues) > 0 {
		end += ", and for " + strings.Join(queues, ", ") + " to its release from the queue"
	}
	return fmt.Sprintf("clients: %s, at most %s; latency is from a request's own time to %s", how, retries, end)
}
