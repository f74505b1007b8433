package sweep

import (
	"cmp"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// Metrics are the numeric columns of a candidate beyond its parameters,
// in column order.
var Metrics = []string{"requests", "allowed", "allow_pct", "false_allows", "false_rejects", "false_reject_pct",
	"keys_rejected", "max_in_interval", "ratio", "p99_retry_after", "state_bytes"}

// LabelMetrics are the numeric columns of who a candidate stopped, which
// candidates have when the requests are labelled (sim.Config.Label with
// the labels of traces.Label): legitimate requests rejected, and their
// share, abusive ones stopped, and their share.
var LabelMetrics = []string{"legit_rejected", "legit_reject_pct", "abusive_stopped", "abusive_stopped_pct"}

// Pickable lists the columns --pick compares: every numeric one.
func Pickable() []string { return append(append(ParamNames(), Metrics...), LabelMetrics...) }

// score is what the replay found of a candidate, and its marks.
type score struct {
	// Lane is the candidate's lane of the replay, and Stats what the
	// replay found of it.
	Lane  sim.Lane
	Stats *sim.AlgoStats
	// Num are the numeric columns, exactly; a column it has no value of
	// (a parameter it does not take, a share of no request) is absent.
	Num map[string]*big.Rat
	// Never: its p99_retry_after is a wait no request can end.
	Never bool
	// Meets: it meets every constraint; Best: it is the best that does;
	// Front: it is on the frontier (of those that meet the constraints,
	// when there are some).
	Meets, Best, Front bool
}

// Score sets c's lane and stats and computes its numeric columns against
// the intent, a sliding log of intent.Limit per intent.Window, with
// durations and rates per unit. The p99 of its waits must be known (see
// sim.Report.WaitsKnown); one that is not is left out.
func (c *Candidate) Score(lane sim.Lane, st *sim.AlgoStats, intent limiters.Policy, unit time.Duration) {
	c.Lane, c.Stats = lane, st
	num := map[string]*big.Rat{}
	u := big.NewInt(int64(unit))
	if c.Algo.Preset != nil {
		for _, name := range c.Params {
			if r, ok := new(big.Rat).SetString(c.Values[name]); ok {
				num[name] = r
			}
		}
	} else {
		for _, name := range lane.Algorithm.Params() {
			switch v := lane.Policy.Field(name).(type) {
			case *int64:
				num[name] = new(big.Rat).SetInt64(*v)
			case *time.Duration:
				num[name] = new(big.Rat).SetFrac(big.NewInt(int64(*v)), u)
			case *limiters.Rate:
				// Per unit: N per Per nanoseconds is N*unit/Per.
				num[name] = new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(v.N), u), big.NewInt(int64(v.Per)))
			}
		}
	}
	frac := func(name string, a, b, scale int64) {
		if b > 0 { // a share of nothing has no value, which meets no constraint
			num[name] = new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(a), big.NewInt(scale)), big.NewInt(b))
		}
	}
	num["requests"] = new(big.Rat).SetInt64(st.Requests)
	num["allowed"] = new(big.Rat).SetInt64(st.Allowed)
	frac("allow_pct", st.Allowed, st.Requests, 100)
	num["false_allows"] = new(big.Rat).SetInt64(st.FalseAllows)
	num["false_rejects"] = new(big.Rat).SetInt64(st.FalseRejects)
	frac("false_reject_pct", st.FalseRejects, st.Requests, 100)
	num["keys_rejected"] = new(big.Rat).SetInt64(st.KeysRejected)
	num["max_in_interval"] = new(big.Rat).SetInt64(st.Burst.Count)
	frac("ratio", st.Burst.Count, intent.Limit, 1)
	if w, ok, known := st.WaitQuantile(99, 100); ok && known {
		if w == limiters.InfDuration {
			c.Never = true
		} else {
			num["p99_retry_after"] = new(big.Rat).SetFrac(big.NewInt(int64(w)), u)
		}
	}
	num["state_bytes"] = new(big.Rat).SetInt64(lane.Algorithm.StateBytes(lane.Policy))
	if len(st.ByLabel) == traces.NumLabels {
		legit, abusive := st.ByLabel[traces.Legit], st.ByLabel[traces.Abusive]
		num["legit_rejected"] = new(big.Rat).SetInt64(legit.Rejected())
		frac("legit_reject_pct", legit.Rejected(), legit.Requests, 100)
		num["abusive_stopped"] = new(big.Rat).SetInt64(abusive.Rejected())
		frac("abusive_stopped_pct", abusive.Rejected(), abusive.Requests, 100)
	}
	c.Num = num
}

// A Constraint is one comparison of --pick: column op value.
type Constraint struct {
	Column, Op string
	Value      *big.Rat
	Text       string // as given: "ratio<=1.2"
}

// Constraints are --pick's comparisons, all of which a candidate must
// meet; nil when --pick is not given.
type Constraints []Constraint

var constraintRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(<=|>=|<|>)\s*(\S+)\s*$`)

// ParsePick parses --pick: COLUMN<=NUMBER (or <, >, >=), a comma for AND.
func ParsePick(s string) (Constraints, error) {
	if s == "" {
		return nil, nil
	}
	var out Constraints
	for _, part := range strings.Split(s, ",") {
		m := constraintRE.FindStringSubmatch(part)
		if m == nil {
			if strings.ContainsAny(part, "=!") && !strings.ContainsAny(part, "<>") {
				return nil, errorf("--pick %q: %q compares with = or !=; the comparisons are <, <=, > and >=", s, strings.TrimSpace(part))
			}
			return nil, errorf("--pick %q: %q is not COLUMN<=NUMBER (comparisons: <, <=, >, >=; a comma is AND)", s, strings.TrimSpace(part))
		}
		if !slices.Contains(Pickable(), m[1]) {
			return nil, errorf("--pick %q: unknown column %q (numeric columns: %s)", s, m[1], strings.Join(Pickable(), ", "))
		}
		v, ok := new(big.Rat).SetString(strings.TrimSuffix(m[3], "%"))
		if !ok {
			return nil, errorf("--pick %q: %q is not a number", s, m[3])
		}
		out = append(out, Constraint{Column: m[1], Op: m[2], Value: v, Text: m[1] + m[2] + m[3]})
	}
	return out, nil
}

// String is the constraints as a sentence says them: "a<=1 and b>2".
func (cs Constraints) String() string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " and ")
}

// Met reports whether candidate c meets constraint k. A column c has no
// value of (a parameter it does not take) meets nothing; a
// p99_retry_after of never is above every number, and a candidate that
// rejected nothing told no request to wait: it meets p99_retry_after<x
// and <=x, not >x or >=x.
func (k Constraint) Met(c *Candidate) bool {
	v := c.Num[k.Column]
	if v == nil {
		if k.Column != "p99_retry_after" {
			return false
		}
		if c.Never {
			return k.Op == ">" || k.Op == ">="
		}
		return c.Stats != nil && len(c.Stats.Waits) == 0 && c.Stats.WaitsBelow == 0 && (k.Op == "<" || k.Op == "<=")
	}
	r := v.Cmp(k.Value)
	switch k.Op {
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case ">":
		return r > 0
	}
	return r >= 0
}

// Better orders candidates for --pick: fewest false allows, then fewest
// false rejects, then the smallest parameters (in ParamNames order), then
// grid order.
func Better(a, b *Candidate) int {
	if c := cmp.Compare(a.Stats.FalseAllows, b.Stats.FalseAllows); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stats.FalseRejects, b.Stats.FalseRejects); c != 0 {
		return c
	}
	for _, name := range ParamNames() {
		x, y := a.Num[name], b.Num[name]
		if x != nil && y != nil {
			if c := x.Cmp(y); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(a.Index, b.Index)
}

// Pick marks the candidates that meet cs and the best of them, and the
// frontier: of those that meet cs, so that the best (the fewest false
// allows, then false rejects) is always on it, or of all without cs. It
// returns those that meet cs, best first.
func Pick(cands []*Candidate, cs Constraints) []*Candidate {
	if cs == nil {
		markFrontier(cands, cands)
		return nil
	}
	var out []*Candidate
	for _, c := range cands {
		c.Meets = true
		for _, k := range cs {
			if !k.Met(c) {
				c.Meets = false
				break
			}
		}
		if c.Meets {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, Better)
	if len(out) > 0 {
		out[0].Best = true
	}
	markFrontier(cands, out)
	return out
}

// markFrontier marks the candidates of among that no other of among
// beats on both false allows and false rejects: none has at most as many
// of each and fewer of one. The others of cands are not on it.
func markFrontier(cands, among []*Candidate) {
	for _, c := range cands {
		c.Front = false
	}
	for _, c := range among {
		c.Front = !slices.ContainsFunc(among, func(o *Candidate) bool {
			fa, fr := o.Stats.FalseAllows, o.Stats.FalseRejects
			return fa <= c.Stats.FalseAllows && fr <= c.Stats.FalseRejects && (fa < c.Stats.FalseAllows || fr < c.Stats.FalseRejects)
		})
	}
}

// LongRunRate is the most a limiter admits per nanosecond in the long
// run: a bucket's rate, a window algorithm's limit per window; nil when
// not known.
func LongRunRate(l sim.Lane) *big.Rat {
	p := l.Policy
	if l.Algorithm.Windowed() {
		return new(big.Rat).SetFrac(big.NewInt(p.Limit), big.NewInt(int64(p.Window)))
	}
	if p.Rate.Valid() {
		return new(big.Rat).SetFrac(big.NewInt(p.Rate.N), big.NewInt(int64(p.Rate.Per)))
	}
	return nil
}
