package tables

import (
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// DecisionColumns are the first columns of a row per decision: user,
// timestamp (right-aligned when numeric), cost, allowed, remaining,
// retry_after, reset_after and reason.
func DecisionColumns(rfc3339 bool) []render.Column {
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

// CostSum is a sum of costs in 128 bits, two's complement: a few huge
// costs pass int64, and the footer shows the exact total.
type CostSum struct {
	hi int64
	lo uint64
}

func (s *CostSum) Add(cost int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(cost), 0)
	s.hi += cost>>63 + int64(carry)
}

func (s CostSum) String() string {
	n := big.NewInt(s.hi)
	n.Lsh(n, 64)
	return n.Add(n, new(big.Int).SetUint64(s.lo)).String()
}

// AppendWait appends a decision's duration d as an exact number in unit.
// A d of limiters.InfDuration stands for a wait longer than a Duration
// holds (about 292 years); full has it exactly.
func AppendWait(dst []byte, d time.Duration, full limiters.Span, unit time.Duration) []byte {
	if d != limiters.InfDuration {
		return AppendDuration(dst, int64(d), unit)
	}
	q, r := new(big.Int).QuoRem(full.Big(), big.NewInt(int64(unit)), new(big.Int))
	dst = q.Append(dst, 10)
	if r.Sign() != 0 {
		frac := traces.AppendDecimal(nil, r.Int64(), unit) // "0.xyz"
		dst = append(dst, frac[1:]...)
	}
	return dst
}

// AppendDuration appends ns as an exact number in unit; zero, the common
// case, without the general conversion.
func AppendDuration(dst []byte, ns int64, unit time.Duration) []byte {
	if ns == 0 {
		return append(dst, '0')
	}
	return traces.AppendDecimal(dst, ns, unit)
}

// RunRow is one row of run's output, and which of the optional columns
// it has. Every replay run shows writes its rows with it: a request's
// decision under one limiter, a client's attempt (--clients) and a
// stack's answer (a policies: list), so that a column run shows is shown
// by all three. Those add columns of their own between the decision's
// (appendHead) and the rate-limit fields and --with columns (appendTail).
type RunRow struct {
	Req *sim.Request
	// time is the time of the row as written, when it is not the
	// request's own: a client's retry.
	Time  []byte
	D     *limiters.Decision
	Exact *limiters.Exact
	// refusedBy names the stack's policy that refused the request; its
	// reason is then "policy: reason".
	RefusedBy string
	State     []byte // the state text, with --explain
	Unit      time.Duration

	Queue, Keyed, Explain bool // the delay, key and state columns

	// Unlimited: no limit applied to the request (no policy of a stack
	// did), so it has no remaining or reset_after to show: they are
	// empty in CSV, null in JSON, "-" in tables.
	Unlimited bool

	With  []string // the --with columns: line, or attributes
	Attrs []string // the attributes of with, in order (sim.Config.With)

	Fields  []headers.Field     // the --headers columns
	Quotas  []headers.Quota     // the limiters' quotas, for them
	FieldDs []limiters.Decision // the decision of each quota's limiter; nil: d alone
	ds      []limiters.Decision // scratch: d, for them
}

// columns are run's columns of a decision, in the order appendHead writes
// them: user, timestamp (right-aligned when numeric), cost, allowed,
// remaining, retry_after, reset_after and reason, then delay for the
// leaky queue, key with --key and state with --explain.
func (r *RunRow) Columns(rfc3339 bool) []render.Column {
	cols := DecisionColumns(rfc3339)
	if r.Queue {
		cols = append(cols, render.Column{Name: "delay", Right: true})
	}
	if r.Keyed {
		cols = append(cols, render.Column{Name: "key"})
	}
	if r.Explain {
		cols = append(cols, render.Column{Name: "state", Width: render.MaxStateWidth})
	}
	return cols
}

// allColumns are every column of r's rows: columns, then extra (the
// replay's own), then those of the rate-limit fields and of --with. A
// --with column named as another is an error.
func (r *RunRow) AllColumns(rfc3339 bool, extra ...render.Column) ([]render.Column, error) {
	cols := append(r.Columns(rfc3339), extra...)
	for _, f := range r.Fields {
		cols = append(cols, render.Column{Name: f.String(), Right: f != headers.RateLimitPolicy && f != headers.RateLimit})
	}
	for _, w := range r.With {
		if w == "" {
			return nil, errorf("--with has an empty name")
		}
		if slices.ContainsFunc(cols, func(c render.Column) bool { return c.Name == w }) {
			return nil, errorf("--with %s: run already has a %s column", w, w)
		}
		cols = append(cols, render.Column{Name: w, Right: w == "line"})
	}
	return cols, nil
}

// setWith sets the --with columns: line, or trace attributes, which
// sim.Config.With (or the sim.Config of RunClients and RunStack) is then
// to carry: r.Attrs.
func (r *RunRow) SetWith(with []string) {
	r.With, r.Attrs = with, nil
	for _, w := range with {
		if w != "line" {
			r.Attrs = append(r.Attrs, w)
		}
	}
}

// setFields sets the rate-limit fields of style, for limiters of quotas.
func (r *RunRow) SetFields(style headers.Style, quotas []headers.Quota) {
	r.Fields, r.Quotas = nil, quotas
	for _, f := range headers.Fields() {
		if style.Has(f) {
			r.Fields = append(r.Fields, f)
		}
	}
}

// appendTo appends the values of r's columns through e, for every format:
// appendHead then appendTail.
func (r *RunRow) AppendTo(e *render.Encoder, b []byte) []byte {
	return r.AppendTail(e, r.AppendHead(e, b))
}

// appendHead appends the values of r.columns. It is straight-line code
// on purpose: it runs for every row of run -o csv, which a function call
// per column slowed by about a tenth.
func (r *RunRow) AppendHead(e *render.Encoder, b []byte) []byte {
	d, x := r.D, r.Exact
	b = e.Bytes(b, r.Req.User)
	if r.Time != nil {
		b = e.Time(e.Next(b), r.Time)
	} else {
		b = e.Time(e.Next(b), r.Req.TimeText)
	}
	b = strconv.AppendInt(e.Next(b), r.Req.Cost, 10)
	b = strconv.AppendBool(e.Next(b), d.Allowed)
	if r.Unlimited {
		b = e.Absent(e.Next(b))
	} else {
		b = strconv.AppendInt(e.Next(b), d.Remaining, 10)
	}
	if d.Reason == limiters.ReasonCost || x.RetryAfter.Never() {
		b = e.Null(e.Next(b))
	} else {
		b = AppendWait(e.Next(b), d.RetryAfter, x.RetryAfter, r.Unit)
	}
	if r.Unlimited {
		b = e.Absent(e.Next(b))
	} else {
		b = AppendWait(e.Next(b), d.ResetAfter, x.ResetAfter, r.Unit)
	}
	if r.RefusedBy != "" {
		b = e.Text(e.Next(b), r.RefusedBy+": "+string(d.Reason))
	} else {
		b = e.Text(e.Next(b), string(d.Reason))
	}
	if r.Queue {
		b = AppendWait(e.Next(b), d.Delay, x.Delay, r.Unit)
	}
	if r.Keyed {
		b = e.Bytes(e.Next(b), r.Req.Key)
	}
	if r.Explain {
		b = e.Bytes(e.Next(b), r.State)
	}
	return b
}

// appendTail appends the values of the rate-limit fields and the --with
// columns, each after next.
func (r *RunRow) AppendTail(e *render.Encoder, b []byte) []byte {
	if len(r.Fields) > 0 {
		ds := r.FieldDs
		if ds == nil {
			if r.ds == nil {
				r.ds = make([]limiters.Decision, 1)
			}
			r.ds[0] = *r.D
			ds = r.ds
		}
		b = appendFields(e, b, r.Fields, r.Quotas, ds)
	}
	j := 0
	for _, w := range r.With {
		if w == "line" {
			b = strconv.AppendInt(e.Next(b), int64(r.Req.Line), 10)
			continue
		}
		b = e.Bytes(e.Next(b), r.Req.With(j))
		j++
	}
	return b
}

// An Error is a mistake in how a table was asked for (a --with column
// named as another): a usage error.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Usage reports that the error is a mistake in how ratesim was called.
func (e *Error) Usage() bool { return true }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// RunHeading are the lines above run's table of one lane: the limiter
// and its policy on the trace, the requests and keys, and the requests
// that went back in time.
func RunHeading(lane sim.Lane, trace string, sp *Policy, rep *sim.Report) []string {
	name := lane.Algorithm.String()
	if lane.Name != name {
		name = fmt.Sprintf("%s (%s)", lane.Name, lane.Algorithm)
	}
	lines := []string{
		fmt.Sprintf("%s on %s: %s", name, trace, sp.DescribeLane(lane, "; ")),
		fmt.Sprintf("%s, %s", render.Plural(rep.Requests, "request"), render.Plural(int64(rep.Keys), "key")),
	}
	if line := BackwardsLine(rep); line != "" {
		lines = append(lines, line)
	}
	return lines
}

// RunFooter is the footer of run's table: the whole trace's requests,
// cost, allowed and rejected, and, when the table shows fewer rows than
// there are requests (shown of them, only those --only names), how many
// it shows; nil for a trace with no request.
func RunFooter(rep *sim.Report, shown int64, only string, cost CostSum) map[string]string {
	if rep.Requests == 0 {
		return nil
	}
	st := rep.Algos[0]
	requests := render.Plural(rep.Requests, "request")
	if shown != rep.Requests {
		which := ""
		if only != "" {
			which = only + " "
		}
		requests += ", " + strconv.FormatInt(shown, 10) + " " + which + "shown"
	}
	return map[string]string{
		"user":      "total",
		"timestamp": requests,
		"cost":      cost.String(),
		"allowed":   strconv.FormatInt(st.Allowed, 10) + " allowed",
		"reason":    strconv.FormatInt(st.Rejected, 10) + " rejected",
	}
}

// WriteRun writes one batch of run's rows, the decisions of the batch's
// one lane, adding every request's cost to cost; with keepAllowed or
// keepRejected false, the allowed or refused requests are left out.
// The state column is written when row.Explain says.
func WriteRun(rw *render.RecordWriter, row *RunRow, b *sim.Batch, keepAllowed, keepRejected bool, cost *CostSum) error {
	for i := range b.Requests {
		row.Req, row.D = &b.Requests[i], b.Decision(i, 0)
		cost.Add(row.Req.Cost)
		if row.D.Allowed {
			if !keepAllowed {
				continue
			}
		} else if !keepRejected {
			continue
		}
		row.Exact = b.Exact(i, 0)
		if row.Explain {
			row.State = b.State(i, 0)
		}
		if err := rw.End(row.AppendTo(rw.Enc(), rw.Begin())); err != nil {
			return err
		}
	}
	return nil
}
