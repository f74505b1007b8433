package cmd

import (
	"cmp"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// sweepMetrics are the numeric columns of a sweep after the parameters,
// in column order.
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
func pickable() []string {
	var names []string
	for _, prm := range limiters.Params() {
		names = append(names, prm.Name)
	}
	for _, c := range sweepMetrics {
		names = append(names, c.name)
	}
	return names
}

// sweepColumns are the columns of a sweep's rows: the parameters any
// candidate takes, the metrics, and the marks.
func sweepColumns(sp *policySpec, cands []*candidate, picking bool) []column {
	cols := []column{{name: "limiter", machineOnly: true}, {name: "algo"}}
	for _, prm := range limiters.Params() {
		if slices.ContainsFunc(cands, func(c *candidate) bool { return slices.Contains(c.lane.Algorithm.Params(), prm.Name) }) {
			cols = append(cols, column{name: prm.Name, right: prm.Kind != limiters.ParamRate, omitNull: true})
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

// sweepRows are the rows of cands under cols. Tables mark the frontier
// and the best with a *.
func sweepRows(cands []*candidate, sp *policySpec, cols []column, table bool) [][]cell {
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
		st := c.stats
		var row []cell
		for _, col := range cols {
			var v cell
			switch col.name {
			case "limiter":
				v = strCell(c.spec.Name)
			case "algo":
				v = strCell(c.lane.Algorithm.String())
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
				v = numCell(ratio(st.Burst.Count, sp.Intent.Limit))
			case "p99_retry_after":
				switch w, ok := sim.Quantile(st.Waits, 99, 100); {
				case !ok:
					v = nullCell()
				case c.never:
					v = strCell("never")
				default:
					v = decCell(w, sp.Unit)
				}
			case "state_bytes":
				v = intCell(c.lane.Algorithm.StateBytes(c.lane.Policy))
			case "frontier":
				v = mark(c.front)
			case "meets":
				v = boolCell(c.meets)
			case "best":
				v = mark(c.best)
			case "intent_limit":
				v = intCell(sp.Intent.Limit)
			case "intent_window":
				v = decCell(sp.Intent.Window, sp.Unit)
			case "clock":
				v = strCell(clockName(c.lane.Policy.Clock))
			case "unit":
				v = strCell(unitName(sp.Unit))
			default: // a parameter
				if !slices.Contains(c.lane.Algorithm.Params(), col.name) {
					v = nullCell()
				} else if _, isRate := c.lane.Policy.Field(col.name).(*limiters.Rate); isRate {
					v = strCell(sp.paramText(c.lane.Policy, col.name))
				} else {
					v = numCell(sp.paramText(c.lane.Policy, col.name))
					if d, ok := c.lane.Policy.Field(col.name).(*time.Duration); ok {
						v = decCell(*d, sp.Unit)
					}
				}
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// score computes c's numeric columns exactly, for --pick.
func (c *candidate) score(sp *policySpec) {
	st := c.stats
	num := map[string]*big.Rat{}
	unit := big.NewInt(int64(sp.Unit))
	for _, prm := range limiters.Params() {
		if !slices.Contains(c.lane.Algorithm.Params(), prm.Name) {
			continue
		}
		switch v := c.lane.Policy.Field(prm.Name).(type) {
		case *int64:
			num[prm.Name] = new(big.Rat).SetInt64(*v)
		case *time.Duration:
			num[prm.Name] = new(big.Rat).SetFrac(big.NewInt(int64(*v)), unit)
		case *limiters.Rate:
			// Per unit: N per Per nanoseconds is N*unit/Per.
			num[prm.Name] = new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(v.N), unit), big.NewInt(int64(v.Per)))
		}
	}
	frac := func(a, b int64, scale int64) *big.Rat {
		if b <= 0 {
			return nil // a share of nothing: no value, which meets no constraint
		}
		return new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(a), big.NewInt(scale)), big.NewInt(b))
	}
	num["requests"] = new(big.Rat).SetInt64(st.Requests)
	num["allowed"] = new(big.Rat).SetInt64(st.Allowed)
	setFrac := func(name string, r *big.Rat) {
		if r != nil {
			num[name] = r
		}
	}
	setFrac("allow_pct", frac(st.Allowed, st.Requests, 100))
	num["false_allows"] = new(big.Rat).SetInt64(st.FalseAllows)
	num["false_rejects"] = new(big.Rat).SetInt64(st.FalseRejects)
	setFrac("false_reject_pct", frac(st.FalseRejects, st.Requests, 100))
	num["keys_rejected"] = new(big.Rat).SetInt64(st.KeysRejected)
	num["max_in_interval"] = new(big.Rat).SetInt64(st.Burst.Count)
	setFrac("ratio", frac(st.Burst.Count, sp.Intent.Limit, 1))
	if w, ok := sim.Quantile(st.Waits, 99, 100); ok {
		if w == limiters.InfDuration {
			c.never = true
		} else {
			num["p99_retry_after"] = new(big.Rat).SetFrac(big.NewInt(int64(w)), unit)
		}
	}
	num["state_bytes"] = new(big.Rat).SetInt64(c.lane.Algorithm.StateBytes(c.lane.Policy))
	c.num = num
}

// constraint is one comparison of --pick: column op value.
type constraint struct {
	column, op string
	value      *big.Rat
	text       string
}

// constraints are --pick's comparisons, all of which a candidate must
// meet; nil when --pick is not given.
type constraints []constraint

var constraintRE = regexp.MustCompile(`^\s*([a-z_][a-z0-9_]*)\s*(<=|>=|<|>)\s*(\S+)\s*$`)

// parsePick parses --pick.
func parsePick(s string) (constraints, error) {
	if s == "" {
		return nil, nil
	}
	var out constraints
	for _, part := range strings.Split(s, ",") {
		m := constraintRE.FindStringSubmatch(part)
		if m == nil {
			if strings.ContainsAny(part, "=!") && !strings.ContainsAny(part, "<>") {
				return nil, usageErrorf("--pick %q: %q compares with = or !=; the comparisons are <, <=, > and >=", s, strings.TrimSpace(part))
			}
			return nil, usageErrorf("--pick %q: %q is not COLUMN<=NUMBER (comparisons: <, <=, >, >=; a comma is AND)", s, strings.TrimSpace(part))
		}
		if !slices.Contains(pickable(), m[1]) {
			return nil, usageErrorf("--pick %q: unknown column %q (numeric columns: %s)", s, m[1], strings.Join(pickable(), ", "))
		}
		v, ok := new(big.Rat).SetString(strings.TrimSuffix(m[3], "%"))
		if !ok {
			return nil, usageErrorf("--pick %q: %q is not a number", s, m[3])
		}
		out = append(out, constraint{column: m[1], op: m[2], value: v, text: m[1] + m[2] + m[3]})
	}
	return out, nil
}

func (cs constraints) text() string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.text)
	}
	return strings.Join(parts, " and ")
}

// met reports whether candidate c meets constraint k. A column c does not
// have (a parameter its algorithm does not take) meets nothing; a
// p99_retry_after of never is above every number, and a candidate that
// rejected nothing told no request to wait: it meets p99_retry_after<x
// and <=x, not >x or >=x.
func (k constraint) met(c *candidate) bool {
	v := c.num[k.column]
	if v == nil {
		if k.column != "p99_retry_after" {
			return false
		}
		if c.never {
			return k.op == ">" || k.op == ">="
		}
		return c.stats != nil && len(c.stats.Waits) == 0 && (k.op == "<" || k.op == "<=")
	}
	r := v.Cmp(k.value)
	switch k.op {
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case ">":
		return r > 0
	}
	return r >= 0
}

// better orders candidates for --pick: fewest false allows, then fewest
// false rejects, then the smallest parameters (in limiters.Params order),
// then grid order.
func better(a, b *candidate) int {
	if c := cmp.Compare(a.stats.FalseAllows, b.stats.FalseAllows); c != 0 {
		return c
	}
	if c := cmp.Compare(a.stats.FalseRejects, b.stats.FalseRejects); c != 0 {
		return c
	}
	for _, prm := range limiters.Params() {
		x, y := a.num[prm.Name], b.num[prm.Name]
		if x != nil && y != nil {
			if c := x.Cmp(y); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(a.index, b.index)
}

// pick marks the candidates that meet cs and the best of them, and
// returns them best first.
func pick(cands []*candidate, cs constraints) []*candidate {
	if cs == nil {
		return nil
	}
	var out []*candidate
	for _, c := range cands {
		c.meets = true
		for _, k := range cs {
			if !k.met(c) {
				c.meets = false
				break
			}
		}
		if c.meets {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, better)
	if len(out) > 0 {
		out[0].best = true
	}
	return out
}

// markFrontier marks the candidates of among that no other of among beats
// on both false allows and false rejects: none has at most as many of each
// and fewer of one. With --pick, among is the candidates that meet it, so
// that the best (the fewest false allows, then false rejects) is always on
// the frontier; the others are not on it.
func markFrontier(cands, among []*candidate) {
	for _, c := range cands {
		c.front = false
	}
	for _, c := range among {
		c.front = !slices.ContainsFunc(among, func(o *candidate) bool {
			fa, fr := o.stats.FalseAllows, o.stats.FalseRejects
			return fa <= c.stats.FalseAllows && fr <= c.stats.FalseRejects && (fa < c.stats.FalseAllows || fr < c.stats.FalseRejects)
		})
	}
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

// unreachable explains, a line each, why no candidate meets cs: the best
// value any candidate reached for each constraint, and the causes that
// can be shown exactly. intent is the report of the intent's own sliding
// log.
func unreachable(cands []*candidate, cs constraints, intent *sim.AlgoStats, sp *policySpec) []string {
	lines := []string{fmt.Sprintf("no candidate of %d meets %s.", len(cands), cs.text())}
	lines = append(lines, "the best each constraint alone reached:")
	alone := 0
	rejectsOut := false
	for _, k := range cs {
		var bestC *candidate
		met := 0
		for _, c := range cands {
			if k.met(c) {
				met++
			}
			v := c.num[k.column]
			if v == nil {
				continue
			}
			if bestC == nil {
				bestC = c
				continue
			}
			r := v.Cmp(bestC.num[k.column])
			if (k.op[0] == '<' && r < 0) || (k.op[0] == '>' && r > 0) {
				bestC = c
			}
		}
		switch {
		case bestC == nil:
			lines = append(lines, fmt.Sprintf("  %s: no candidate has a %s", k.text, k.column))
		case met > 0:
			alone++
			lines = append(lines, fmt.Sprintf("  %s: met by %d alone; best %s (%s)", k.text, met, ratText(bestC.num[k.column]), bestC.spec.Name))
		default:
			lines = append(lines, fmt.Sprintf("  %s: met by none; best %s (%s)", k.text, ratText(bestC.num[k.column]), bestC.spec.Name))
			if k.column == "false_rejects" || k.column == "false_reject_pct" {
				rejectsOut = true
			}
		}
	}
	if alone == len(cs) && len(cs) > 1 {
		lines = append(lines, "each constraint is met by some candidate, but none meets them all: they pull against each other (fewer false rejects takes a larger burst or rate, which lets more through)")
	}
	if !rejectsOut {
		return lines
	}
	// Causes of false rejects that hold whatever else the trace holds. The
	// intent allowed one key x within [from, to]; a candidate that admits
	// less than x in any interval that long wrongly rejects the rest.
	window := sp.Intent.Window
	if x := intent.Burst.Count; x > 0 {
		span := time.Duration(intent.Burst.To - intent.Burst.From)
		var short int
		var most *candidate
		var mostBound int64
		for _, c := range cands {
			m := c.lane.Algorithm.MaxInInterval(c.lane.Policy, span)
			if m < x {
				short++
			}
			if most == nil || m > mostBound {
				most, mostBound = c, m
			}
		}
		burst := fmt.Sprintf("the intent allows key %s %d within %s (from %s to %s)", intent.Burst.Key, x, sp.duration(span),
			instantCell(intent.Burst.From, sp).text, instantCell(intent.Burst.To, sp).text)
		switch {
		case short == len(cands):
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than any candidate admits: %s, but the most any candidate admits in %s is %d (%s), so every candidate wrongly rejects at least %d of those requests",
				burst, sp.duration(span), mostBound, most.spec.Name, x-mostBound))
		case short > 0:
			lines = append(lines, fmt.Sprintf("a burst in the trace is larger than %d of the candidates admit: %s, more than they admit in %s, so each of those wrongly rejects at least the difference",
				short, burst, sp.duration(span)))
		}
	}
	slow := 0
	intentRate := new(big.Rat).SetFrac(big.NewInt(sp.Intent.Limit), big.NewInt(int64(window)))
	for _, c := range cands {
		if r := longRunRate(c.lane); r != nil && r.Cmp(intentRate) < 0 {
			slow++
		}
	}
	if slow > 0 {
		lines = append(lines, fmt.Sprintf("%d of the %d candidates have a long-run rate below the intent's %d per %s: under traffic sustained at the intent's rate they fall behind it and reject what it allows",
			slow, len(cands), sp.Intent.Limit, sp.duration(window)))
	}
	return lines
}

// longRunRate is the most a limiter admits per nanosecond in the long
// run: a bucket's rate, a window algorithm's limit per window; nil when
// not known.
func longRunRate(l sim.Lane) *big.Rat {
	p := l.Policy
	if l.Algorithm.Windowed() {
		return new(big.Rat).SetFrac(big.NewInt(p.Limit), big.NewInt(int64(p.Window)))
	}
	if p.Rate.Valid() {
		return new(big.Rat).SetFrac(big.NewInt(p.Rate.N), big.NewInt(int64(p.Rate.Per)))
	}
	return nil
}
