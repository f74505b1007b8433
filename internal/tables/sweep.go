package tables

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/traces"

	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// SweepMetrics are the columns of a sweep's metrics, after the parameters,
// in the order of sweep.Metrics.
var SweepMetrics = []render.Column{
	{Name: "requests", Right: true, MachineOnly: true}, // the header states them
	{Name: "allowed", Right: true, MachineOnly: true},  // allow % shows them
	{Name: "allow_pct", Right: true, Title: "allow %", Suffix: "%"},
	{Name: "false_allows", Right: true, Title: "false allows"},
	{Name: "false_rejects", Right: true, Title: "false rejects"},
	{Name: "false_reject_pct", Right: true, Title: "false rej %", Suffix: "%"},
	{Name: "keys_rejected", Right: true, Title: "keys rejected"},
	{Name: "max_in_interval", Right: true},
	{Name: "ratio", Right: true},
	{Name: "p99_retry_after", Right: true, Title: "p99 retry"},
	{Name: "state_bytes", Right: true, Title: "state bytes"},
}

// Pickable lists the columns --pick compares: every numeric one.
func Pickable() []string { return sweep.Pickable() }

// SweepColumns are the columns of a sweep's rows: the parameters any
// candidate takes (an algorithm's, a preset's given), the metrics, and
// the marks.
func SweepColumns(cands []*sweep.Candidate, picking bool) []render.Column {
	cols := []render.Column{{Name: "limiter", MachineOnly: true}, {Name: "algo"}}
	for _, name := range sweep.ParamNames() {
		if slices.ContainsFunc(cands, func(c *sweep.Candidate) bool { return candidateTakes(c, name) }) {
			prm, ok := limiterParam(name)
			cols = append(cols, render.Column{Name: name, Right: ok && prm.Kind != limiters.ParamRate, OmitNull: true})
		}
	}
	cols = append(cols, SweepMetrics...)
	cols = append(cols, render.Column{Name: "frontier"})
	if picking {
		cols = append(cols, render.Column{Name: "meets", MachineOnly: true}, render.Column{Name: "best"})
	}
	return append(cols,
		render.Column{Name: "intent_limit", MachineOnly: true},
		render.Column{Name: "intent_window", MachineOnly: true},
		render.Column{Name: "clock", MachineOnly: true},
		render.Column{Name: "unit", MachineOnly: true})
}

// candidateTakes reports whether c has a value of parameter name: one of
// its algorithm's, or a preset's given in the grid.
func candidateTakes(c *sweep.Candidate, name string) bool {
	if c.Algo.Preset != nil {
		return slices.Contains(c.Params, name)
	}
	return slices.Contains(c.Lane.Algorithm.Params(), name)
}

// SweepRows are the rows of cands under cols. Tables mark the frontier
// and the best with a *.
func SweepRows(cands []*sweep.Candidate, sp *Policy, cols []render.Column, table bool) [][]render.Cell {
	mark := func(v bool) render.Cell {
		if !table {
			return render.Bool(v)
		}
		if v {
			return render.Str("*")
		}
		return render.Str("")
	}
	var rows [][]render.Cell
	for _, c := range cands {
		st := c.Stats
		var row []render.Cell
		for _, col := range cols {
			var v render.Cell
			switch col.Name {
			case "limiter":
				v = render.Str(c.Limiter.Name)
			case "algo":
				v = render.Str(c.Algo.String())
			case "requests":
				v = render.Int(st.Requests)
			case "allowed":
				v = render.Int(st.Allowed)
			case "allow_pct":
				v = render.PctCell(st.Allowed, st.Requests)
			case "false_allows":
				v = render.Int(st.FalseAllows)
			case "false_rejects":
				v = render.Int(st.FalseRejects)
			case "false_reject_pct":
				v = render.PctCell(st.FalseRejects, st.Requests)
			case "keys_rejected":
				v = render.Int(st.KeysRejected)
			case "max_in_interval":
				v = render.Int(st.Burst.Count)
			case "ratio":
				v = sp.RatioCell(st.Burst.Count)
			case "p99_retry_after":
				switch w, ok, known := st.WaitQuantile(99, 100); {
				case !ok || !known:
					v = render.Null()
				case c.Never:
					v = render.Str("never")
				default:
					v = render.Dec(w, sp.Unit)
				}
			case "state_bytes":
				v = render.Int(c.Lane.Algorithm.StateBytes(c.Lane.Policy))
			case "frontier":
				v = mark(c.Front)
			case "meets":
				v = render.Bool(c.Meets)
			case "best":
				v = mark(c.Best)
			case "intent_limit":
				v = render.Int(sp.Intent.Limit)
			case "intent_window":
				v = render.Dec(sp.Intent.Window, sp.Unit)
			case "clock":
				v = render.Str(spec.ClockName(c.Lane.Policy.Clock))
			case "unit":
				v = render.Str(traces.UnitName(sp.Unit))
			default: // a parameter, or who it stopped
				var ok bool
				if v, ok = labelCell(col.Name, st); !ok {
					v = paramCell(c, col.Name, sp)
				}
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// paramCell is candidate c's value of parameter name: a preset's as
// given, an algorithm's from its policy, null when it has none.
func paramCell(c *sweep.Candidate, name string, sp *Policy) render.Cell {
	switch {
	case !candidateTakes(c, name):
		return render.Null()
	case c.Algo.Preset != nil:
		if c.Num[name] != nil {
			return render.Num(c.Values[name])
		}
		return render.Str(c.Values[name])
	}
	switch v := c.Lane.Policy.Field(name).(type) {
	case *limiters.Rate:
		return render.Str(sp.ParamText(c.Lane.Policy, name))
	case *time.Duration:
		return render.Dec(*v, sp.Unit)
	}
	return render.Num(sp.ParamText(c.Lane.Policy, name))
}

// RatText renders an exact value for a message: whole numbers as they
// are, others with up to three decimals.
func RatText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(3)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FrontierAmong says which candidates the frontier is among: "" for all,
// " that meets --pick" with constraints.
func FrontierAmong(cons sweep.Constraints) string {
	if cons == nil {
		return ""
	}
	return " that meets " + cons.String()
}

// Unreachable explains, a line each, why no candidate meets cs: the best
// value any candidate reached for each constraint, and the causes that
// can be shown exactly. intent is the report of the intent's own sliding
// log.
func Unreachable(cands []*sweep.Candidate, cs sweep.Constraints, intent *sim.AlgoStats, sp *Policy) []string {
	why := sweep.Explain(cands, cs, intent, sp.Intent)
	lines := []string{fmt.Sprintf("no candidate of %d meets %s.", len(cands), cs), "the best each constraint alone reached:"}
	for _, r := range why.Constraints {
		k := r.Constraint
		switch {
		case r.Best == nil:
			lines = append(lines, fmt.Sprintf("  %s: no candidate has a %s", k.Text, k.Column))
		case r.Met > 0:
			lines = append(lines, fmt.Sprintf("  %s: met by %d alone; best %s (%s)", k.Text, r.Met, RatText(r.Best.Num[k.Column]), r.Best.Limiter.Name))
		default:
			lines = append(lines, fmt.Sprintf("  %s: met by none; best %s (%s)", k.Text, RatText(r.Best.Num[k.Column]), r.Best.Limiter.Name))
		}
	}
	if why.PullApart {
		lines = append(lines, "each constraint is met by some candidate, but none meets them all: they pull against each other (fewer false rejects takes a larger burst or rate, which lets more through)")
	}
	if b := why.Burst; b != nil {
		iv := b.Interval
		burst := fmt.Sprintf("the intent allows key %s %d within %s (from %s to %s)", iv.Key, iv.Count, sp.Duration(b.Span),
			sp.InstantCell(iv.From).Text, sp.InstantCell(iv.To).Text)
		if b.Short == len(cands) {
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than any candidate admits: %s, but the most any candidate admits in %s is %d (%s), so every candidate wrongly rejects at least %d of those requests",
				burst, sp.Duration(b.Span), b.MostBound, b.Most.Limiter.Name, iv.Count-b.MostBound))
		} else {
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than %d of the candidates admit: %s, more than they admit in %s, so each of those wrongly rejects at least the difference",
				b.Short, burst, sp.Duration(b.Span)))
		}
	}
	if why.Slow > 0 {
		lines = append(lines, fmt.Sprintf("%d of the %d candidates have a long-run rate below the intent's %d per %s: under traffic sustained at the intent's rate they fall behind it and reject what it allows",
			why.Slow, len(cands), sp.Intent.Limit, sp.Duration(sp.Intent.Window)))
	}
	return lines
}

// limiterParam returns the limiters parameter named name.
func limiterParam(name string) (limiters.Param, bool) {
	for _, prm := range limiters.Params() {
		if prm.Name == name {
			return prm, true
		}
	}
	return limiters.Param{}, false
}
