package report

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// A Sweep is what a sweep's figure draws: the candidates of its grid,
// scored, those that met its constraints, best first, and the lines its
// title states the sweep in.
type Sweep struct {
	Title       []string
	Grid        *sweep.Grid
	Candidates  []*sweep.Candidate
	Picked      []*sweep.Candidate
	Constraints sweep.Constraints
	// Unit is the unit of the trace's durations and rates.
	Unit time.Duration
	// FrontierOnly draws only the candidates on the frontier.
	FrontierOnly bool
}

// SweepFigure draws each candidate's false allows and false rejects
// against the first parameter given more than one value (grid order when
// none is), a line for each algorithm and combination of the others; a
// panel for each other column the constraints name, with the constraint
// as a dashed line; the frontier ringed and the best that meets the
// constraints squared.
func SweepFigure(sw Sweep) *Figure {
	// The X parameter: the first given more than one value.
	xName := ""
	for _, name := range sw.Grid.Names() {
		if len(sw.Grid.Values(name)) > 1 {
			xName = name
			break
		}
	}
	xLabel := "candidate (grid order)"
	if xName != "" {
		xLabel = xName
		if prm := paramByName(xName); prm.Kind == limiters.ParamRate {
			xLabel += " (per " + traces.UnitName(sw.Unit) + ")"
		} else if prm.Kind == limiters.ParamDuration {
			xLabel += " (" + traces.UnitName(sw.Unit) + ")"
		}
	}
	xOfCand := func(c *sweep.Candidate) (float64, bool) {
		if xName == "" {
			return float64(c.Index), true
		}
		v := c.Num[xName]
		if v == nil {
			return 0, false
		}
		f, _ := v.Float64()
		return f, true
	}
	// A series per algorithm and values of the other parameters.
	type series struct {
		label string
		cands []*sweep.Candidate
	}
	var order []string
	groups := map[string]*series{}
	for _, c := range sw.Candidates {
		if sw.FrontierOnly && !c.Front {
			continue
		}
		var parts []string
		for _, name := range c.Params {
			if name != xName {
				parts = append(parts, name+" "+c.Values[name])
			}
		}
		label := c.Algo.String()
		if len(parts) > 0 {
			label += " " + strings.Join(parts, ", ")
		}
		if groups[label] == nil {
			groups[label] = &series{label: label}
			order = append(order, label)
		}
		groups[label].cands = append(groups[label].cands, c)
	}
	metrics := []string{"false_allows", "false_rejects"}
	for _, k := range sw.Constraints {
		if !slices.Contains(metrics, k.Column) && k.Column != xName {
			metrics = append(metrics, k.Column)
		}
	}
	var best *sweep.Candidate
	if len(sw.Picked) > 0 {
		best = sw.Picked[0]
	}
	var panels []Panel
	for _, m := range metrics {
		pn := Panel{Title: strings.ReplaceAll(m, "_", " "), YLabel: m, YFrom0: true}
		if xName != "" {
			pn.Title += " against " + xName
		}
		for _, k := range sw.Constraints {
			if k.Column == m {
				v, _ := k.Value.Float64()
				pn.Limits = append(pn.Limits, Limit{Label: k.Text, Y: v, Color: Constraint})
			}
		}
		var front, bestPts []Point
		for i, label := range order {
			line := Line{Label: label, Color: LimiterColor(i)}
			for _, c := range groups[label].cands {
				x, ok := xOfCand(c)
				y := c.Num[m]
				if !ok || y == nil {
					continue
				}
				yf, _ := y.Float64()
				p := Point{X: x, Y: yf}
				line.Points = append(line.Points, p)
				if c.Front {
					front = append(front, p)
				}
				if c == best {
					bestPts = append(bestPts, p)
				}
			}
			slices.SortStableFunc(line.Points, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
			pn.Lines = append(pn.Lines, line)
			pn.Marks = append(pn.Marks, Marks{Color: LimiterColor(i), Shape: LimiterShape(i), Points: line.Points})
		}
		pn.Marks = append(pn.Marks, Marks{Label: "frontier", Color: Black, Shape: Ring, Points: front})
		if best != nil {
			pn.Marks = append(pn.Marks, Marks{Label: "best (--pick)", Color: Constraint, Shape: Box, Points: bestPts})
		}
		panels = append(panels, pn)
	}
	return &Figure{Title: sw.Title, XLabel: xLabel, Panels: panels}
}

// paramByName is the parameter named name.
func paramByName(name string) limiters.Param {
	for _, p := range limiters.Params() {
		if p.Name == name {
			return p
		}
	}
	return limiters.Param{}
}
