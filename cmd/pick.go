package cmd

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// sweepMetrics are the columns of a sweep's metrics, after the parameters,
// in the order of sweep.Metrics.
var sweepMetrics = []column{
	{name: "requests", right: true, machineOnly: true}, // the header states them
	{name: "allowed", right: true, machineOnly: true},  // allow % shows them
	{name: "allow_pct", right: true, title: "allow %", suffix: "%"},
	{name: "false_allows", right: true, title: "false allows"},
	{name: "false_rejects", right: true, title: "false rejects"},
	{name: "false_reject_pct", right: true, title: "false rej %", suffix: "%"},
	{name: "keys_rejected", right: true, title: "keys rejected"},
	{name: "max_in_interval", right: true},
	{name: "ratio", right: true},
	{name: "p99_retry_after", right: true, title: "p99 retry"},
	{name: "state_bytes", right: true, title: "state bytes"},
}

// pickable lists the columns --pick compares: every numeric one.
func pickable() []string { return sweep.Pickable() }

// sweepColumns are the columns of a sweep's rows: the parameters any
// candidate takes (an algorithm's, a preset's given), the metrics, and
// the marks.
func sweepColumns(cands []*sweep.Candidate, picking bool) []column {
	cols := []column{{name: "limiter", machineOnly: true}, {name: "algo"}}
	for _, name := range sweep.ParamNames() {
		if slices.ContainsFunc(cands, func(c *sweep.Candidate) bool { return candidateTakes(c, name) }) {
			prm, ok := limiterParam(name)
			cols = append(cols, column{name: name, right: ok && prm.Kind != limiters.ParamRate, omitNull: true})
		}
	}
	cols = append(cols, sweepMetrics...)
	cols = append(cols, column{name: "frontier"})
	if picking {
		cols = append(cols, column{name: "meets", machineOnly: true}, column{name: "best"})
	}
	return append(cols,
		column{name: "intent_limit", machineOnly: true},
		column{name: "intent_window", machineOnly: true},
		column{name: "clock", machineOnly: true},
		column{name: "unit", machineOnly: true})
}

// candidateTakes reports whether c has a value of parameter name: one of
// its algorithm's, or a preset's given in the grid.
func candidateTakes(c *sweep.Candidate, name string) bool {
	if c.Algo.Preset != nil {
		return slices.Contains(c.Params, name)
	}
	return slices.Contains(c.Lane.Algorithm.Params(), name)
}

// sweepRows are the rows of cands under cols. Tables mark the frontier
// and the best with a *.
func sweepRows(cands []*sweep.Candidate, sp *policySpec, cols []column, table bool) [][]cell {
	mark := func(v bool) cell {
		if !table {
			return boolCell(v)
		}
		if v {
			return strCell("*")
		}
		return strCell("")
	}
	var rows [][]cell
	for _, c := range cands {
		st := c.Stats
		var row []cell
		for _, col := range cols {
			var v cell
			switch col.name {
			case "limiter":
				v = strCell(c.Limiter.Name)
			case "algo":
				v = strCell(c.Algo.String())
			case "requests":
				v = intCell(st.Requests)
			case "allowed":
				v = intCell(st.Allowed)
			case "allow_pct":
				v = pctCell(st.Allowed, st.Requests)
			case "false_allows":
				v = intCell(st.FalseAllows)
			case "false_rejects":
				v = intCell(st.FalseRejects)
			case "false_reject_pct":
				v = pctCell(st.FalseRejects, st.Requests)
			case "keys_rejected":
				v = intCell(st.KeysRejected)
			case "max_in_interval":
				v = intCell(st.Burst.Count)
			case "ratio":
				v = sp.ratioCell(st.Burst.Count)
			case "p99_retry_after":
				switch w, ok := sim.Quantile(st.Waits, 99, 100); {
				case !ok:
					v = nullCell()
				case c.Never:
					v = strCell("never")
				default:
					v = decCell(w, sp.Unit)
				}
			case "state_bytes":
				v = intCell(c.Lane.Algorithm.StateBytes(c.Lane.Policy))
			case "frontier":
				v = mark(c.Front)
			case "meets":
				v = boolCell(c.Meets)
			case "best":
				v = mark(c.Best)
			case "intent_limit":
				v = intCell(sp.Intent.Limit)
			case "intent_window":
				v = decCell(sp.Intent.Window, sp.Unit)
			case "clock":
				v = strCell(clockName(c.Lane.Policy.Clock))
			case "unit":
				v = strCell(unitName(sp.Unit))
			default: // a parameter, or who it stopped
				var ok bool
				if v, ok = labelCell(col.name, st); !ok {
					v = paramCell(c, col.name, sp)
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
func paramCell(c *sweep.Candidate, name string, sp *policySpec) cell {
	switch {
	case !candidateTakes(c, name):
		return nullCell()
	case c.Algo.Preset != nil:
		if c.Num[name] != nil {
			return numCell(c.Values[name])
		}
		return strCell(c.Values[name])
	}
	switch v := c.Lane.Policy.Field(name).(type) {
	case *limiters.Rate:
		return strCell(sp.paramText(c.Lane.Policy, name))
	case *time.Duration:
		return decCell(*v, sp.Unit)
	}
	return numCell(sp.paramText(c.Lane.Policy, name))
}

// ratText renders an exact value for a message: whole numbers as they
// are, others with up to three decimals.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(3)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// frontierAmong says which candidates the frontier is among: "" for all,
// " that meets --pick" with constraints.
func frontierAmong(cons sweep.Constraints) string {
	if cons == nil {
		return ""
	}
	return " that meets " + cons.String()
}

// unreachable explains, a line each, why no candidate meets cs: the best
// value any candidate reached for each constraint, and the causes that
// can be shown exactly. intent is the report of the intent's own sliding
// log.
func unreachable(cands []*sweep.Candidate, cs sweep.Constraints, intent *sim.AlgoStats, sp *policySpec) []string {
	why := sweep.Explain(cands, cs, intent, sp.Intent)
	lines := []string{fmt.Sprintf("no candidate of %d meets %s.", len(cands), cs), "the best each constraint alone reached:"}
	for _, r := range why.Constraints {
		k := r.Constraint
		switch {
		case r.Best == nil:
			lines = append(lines, fmt.Sprintf("  %s: no candidate has a %s", k.Text, k.Column))
		case r.Met > 0:
			lines = append(lines, fmt.Sprintf("  %s: met by %d alone; best %s (%s)", k.Text, r.Met, ratText(r.Best.Num[k.Column]), r.Best.Limiter.Name))
		default:
			lines = append(lines, fmt.Sprintf("  %s: met by none; best %s (%s)", k.Text, ratText(r.Best.Num[k.Column]), r.Best.Limiter.Name))
		}
	}
	if why.PullApart {
		lines = append(lines, "each constraint is met by some candidate, but none meets them all: they pull against each other (fewer false rejects takes a larger burst or rate, which lets more through)")
	}
	if b := why.Burst; b != nil {
		iv := b.Interval
		burst := fmt.Sprintf("the intent allows key %s %d within %s (from %s to %s)", iv.Key, iv.Count, sp.duration(b.Span),
			instantCell(iv.From, sp).text, instantCell(iv.To, sp).text)
		if b.Short == len(cands) {
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than any candidate admits: %s, but the most any candidate admits in %s is %d (%s), so every candidate wrongly rejects at least %d of those requests",
				burst, sp.duration(b.Span), b.MostBound, b.Most.Limiter.Name, iv.Count-b.MostBound))
		} else {
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than %d of the candidates admit: %s, more than they admit in %s, so each of those wrongly rejects at least the difference",
				b.Short, burst, sp.duration(b.Span)))
		}
	}
	if why.Slow > 0 {
		lines = append(lines, fmt.Sprintf("%d of the %d candidates have a long-run rate below the intent's %d per %s: under traffic sustained at the intent's rate they fall behind it and reject what it allows",
			why.Slow, len(cands), sp.Intent.Limit, sp.duration(sp.Intent.Window)))
	}
	return lines
}
