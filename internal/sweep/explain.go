package sweep

import (
	"math/big"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// A Why is what can be shown exactly of why no candidate meets a sweep's
// constraints.
type Why struct {
	// Constraints has, per constraint, how many candidates meet it alone
	// and the best value any reached.
	Constraints []Reach
	// PullApart: each constraint is met by some candidate, but none meets
	// them all.
	PullApart bool
	// Burst, when not nil, is a burst in the trace that the intent allows
	// and some candidates cannot admit: each of those wrongly rejects at
	// least the difference.
	Burst *Burst
	// Slow counts the candidates whose long-run rate is below the
	// intent's: under traffic sustained at the intent's rate they reject
	// what it allows.
	Slow int
}

// A Reach is how far the candidates got with one constraint.
type Reach struct {
	Constraint Constraint
	Met        int        // candidates that meet it
	Best       *Candidate // the one with the best value; nil when none has the column
}

// A Burst is the intent's worst burst, and how many candidates admit less.
type Burst struct {
	// Interval is the intent's worst burst: Count cost for Key from
	// From to To.
	Interval sim.Interval
	// Span is To - From.
	Span time.Duration
	// Short is how many candidates admit less than Count in Span.
	Short int
	// Most is the candidate that admits the most in Span, MostBound.
	Most      *Candidate
	MostBound int64
}

// Explain says why none of cands meets cs, where intentStats is the
// report of the intent's own sliding log and intent its policy.
func Explain(cands []*Candidate, cs Constraints, intentStats *sim.AlgoStats, intent limiters.Policy) Why {
	var w Why
	alone := 0
	rejectsOut := false
	for _, k := range cs {
		r := Reach{Constraint: k}
		for _, c := range cands {
			if k.Met(c) {
				r.Met++
			}
			v := c.Num[k.Column]
			if v == nil {
				continue
			}
			if r.Best == nil {
				r.Best = c
				continue
			}
			d := v.Cmp(r.Best.Num[k.Column])
			if (k.Op[0] == '<' && d < 0) || (k.Op[0] == '>' && d > 0) {
				r.Best = c
			}
		}
		switch {
		case r.Met > 0:
			alone++
		case r.Best != nil && (k.Column == "false_rejects" || k.Column == "false_reject_pct"):
			rejectsOut = true
		}
		w.Constraints = append(w.Constraints, r)
	}
	w.PullApart = alone == len(cs) && len(cs) > 1
	if !rejectsOut {
		return w
	}
	// Causes of false rejects that hold whatever else the trace holds. The
	// intent allowed one key x within [from, to]; a candidate that admits
	// less than x in any interval that long wrongly rejects the rest.
	if x := intentStats.Burst.Count; x > 0 {
		b := &Burst{Interval: intentStats.Burst, Span: time.Duration(intentStats.Burst.To - intentStats.Burst.From)}
		for _, c := range cands {
			m := c.Lane.Algorithm.MaxInInterval(c.Lane.Policy, b.Span)
			if m < x {
				b.Short++
			}
			if b.Most == nil || m > b.MostBound {
				b.Most, b.MostBound = c, m
			}
		}
		if b.Short > 0 {
			w.Burst = b
		}
	}
	intentRate := new(big.Rat).SetFrac(big.NewInt(intent.Limit), big.NewInt(int64(intent.Window)))
	for _, c := range cands {
		if r := LongRunRate(c.Lane); r != nil && r.Cmp(intentRate) < 0 {
			w.Slow++
		}
	}
	return w
}
