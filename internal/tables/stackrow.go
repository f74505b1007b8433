package tables

import (
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
)

// A StackRow is the row of a request a stack of policies decided: run's
// columns (RunRow) with the stack's answer (sim.StackDecision.Decision),
// then StackColumns. The rate-limit fields list every enforcing policy
// that applies to the request, and Retry-After is the stack's wait.
type StackRow struct {
	RunRow
	policies  []sim.StackPolicy
	enforcing []int           // the policies that are not shadows
	quotas    []headers.Quota // every enforcing policy's, with --headers
	applied   []headers.Quota // scratch: those that apply to a row
	ds        []limiters.Decision
	would     []string
}

// NewStackRow returns the row of a replay of policies, durations in
// unit, with the rate-limit fields of style (headers.StyleNone: none)
// and the extra columns with.
func NewStackRow(policies []sim.StackPolicy, unit time.Duration, style headers.Style, with []string) (*StackRow, error) {
	r := &StackRow{RunRow: RunRow{Unit: unit}, policies: policies}
	for i, p := range policies {
		if !p.Shadow {
			r.enforcing = append(r.enforcing, i)
			r.Queue = r.Queue || p.Algorithm.Delays()
		}
	}
	r.SetWith(with)
	r.ds = make([]limiters.Decision, 0, len(r.enforcing))
	if style != headers.StyleNone {
		for _, i := range r.enforcing {
			q, err := headers.QuotaOf(policies[i].Name, policies[i].Algorithm, policies[i].Policy)
			if err != nil {
				return nil, errorf("--headers: policy %s: %s", policies[i].Name, err)
			}
			r.quotas = append(r.quotas, q)
		}
		r.SetFields(style, r.quotas)
		r.applied = make([]headers.Quota, 0, len(r.quotas))
	}
	return r, nil
}

// AppendTo appends the row of d to b.
func (r *StackRow) AppendTo(e *render.Encoder, b []byte, d *sim.StackDecision) []byte {
	// The rate-limit fields speak of the policies that apply to the
	// request: one that does not limits nothing of it.
	r.ds, r.applied = r.ds[:0], r.applied[:0]
	for k, i := range r.enforcing {
		if !d.Applies[i] {
			continue
		}
		dec := d.Decisions[i]
		if !dec.Allowed {
			// The response's Retry-After is when the stack lets the
			// request through, not when this policy alone would.
			dec.RetryAfter = d.Decision.RetryAfter
		}
		r.ds = append(r.ds, dec)
		if r.quotas != nil {
			r.applied = append(r.applied, r.quotas[k])
		}
	}
	if r.quotas != nil {
		r.Quotas, r.FieldDs = r.applied, r.ds
	}
	r.Unlimited = !d.Limited
	r.Req, r.D, r.Exact, r.RefusedBy = &d.Request, &d.Decision, &d.Exact, ""
	if d.Refused >= 0 {
		r.RefusedBy = r.policies[d.Refused].Name
	}
	b = r.AppendHead(e, b)
	b = e.Text(e.Next(b), r.RefusedBy)
	r.would = r.would[:0]
	for i, p := range r.policies {
		if p.Shadow && !d.Decisions[i].Allowed {
			r.would = append(r.would, p.Name)
		}
	}
	b = e.Text(e.Next(b), strings.Join(r.would, ","))
	return r.AppendTail(e, b)
}
