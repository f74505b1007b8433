package cmd

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"
)

func newPlotTimelineCmd() *cobra.Command {
	o := &plotReplayOptions{}
	var every string
	c := &cobra.Command{
		Use:   "timeline --every D [flags] TRACE -o FILE",
		Short: "Per interval, requests and what each limiter allowed",
		Long: `Draw, per interval of --every (aligned by floor division), the requests and
what each limiter allowed, its false rejects marked, and below them each
limiter's false rejects and false allows against the oracle: the numbers of
compare --timeline. The trace must be in time order (or give --sort).` + policyHelp,
		Example:           "  ratesim plot timeline --every 1m traces/examples/bursty.csv -o timeline.svg",
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			s := streamsOf(c)
			if every == "" {
				return usageErrorf("plot timeline needs --every, the length of its intervals")
			}
			rp, format, err := o.prepare(c, args, s)
			if err != nil {
				return err
			}
			defer rp.trace.Close()
			f, err := timelineFigure(rp, every, s)
			if err != nil {
				return err
			}
			if err := o.out.write(f, format, s); err != nil {
				return err
			}
			return rp.trace.finish()
		},
	}
	c.Flags().StringVar(&every, "every", "", "the length of the intervals: a number in the trace unit or a Go duration (1m)")
	addPlotReplayFlags(c.Flags(), o)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// timelineFigure replays rp's trace and draws its timeline.
func timelineFigure(rp *replay, everyText string, s streams) (*report.Figure, error) {
	every, err := parseTimeline(everyText, "--every", rp.spec.Unit)
	if err != nil {
		return nil, err
	}
	cfg := rp.config(false, false)
	cfg.Every = every
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		return nil, err
	}
	if rep.IntervalsOutOfOrder > 0 {
		return nil, outOfOrder(rep.IntervalsOutOfOrder)
	}
	return timelineFromReport(rp, every, rep), nil
}

// timelineFromReport draws the timeline of rep, which counted intervals
// of every.
func timelineFromReport(rp *replay, every time.Duration, rep *sim.Report) *report.Figure {
	sp := rp.spec
	n := len(sp.Lanes)
	requests := report.Line{Label: "requests", Color: report.Black, Step: true}
	allowed := make([]report.Line, n)
	falseRej := make([]report.Line, n)
	falseAll := make([]report.Line, n)
	marks := make([]report.Marks, n)
	for l, lane := range sp.Lanes {
		allowed[l] = report.Line{Label: lane.Name, Color: report.LimiterColor(l), Step: true}
		falseRej[l] = report.Line{Label: lane.Name + " false rejects", Color: report.LimiterColor(l), Step: true}
		falseAll[l] = report.Line{Label: lane.Name + " false allows", Color: report.LimiterColor(l), Step: true, Dashed: true}
		marks[l] = report.Marks{Label: lane.Name + " false rejects", Color: report.LimiterColor(l), Shape: report.LimiterShape(l)}
	}
	for _, iv := range rep.Intervals {
		x := xOf(iv.Start, sp)
		requests.Points = append(requests.Points, report.Point{X: x, Y: float64(iv.Requests)})
		for l, c := range iv.Lanes {
			allowed[l].Points = append(allowed[l].Points, report.Point{X: x, Y: float64(c.Allowed)})
			falseRej[l].Points = append(falseRej[l].Points, report.Point{X: x, Y: float64(c.FalseRejects)})
			falseAll[l].Points = append(falseAll[l].Points, report.Point{X: x, Y: float64(c.FalseAllows)})
			if c.FalseRejects > 0 {
				marks[l].Points = append(marks[l].Points, report.Point{X: x, Y: float64(c.Allowed)})
			}
		}
	}
	return timelineFromSeries(rp, every, rep, requests, allowed, falseRej, falseAll, marks)
}

// timelineFromSeries lays out a timeline's figure.
func timelineFromSeries(rp *replay, every time.Duration, rep *sim.Report, requests report.Line, allowed, falseRej, falseAll []report.Line, marks []report.Marks) *report.Figure {
	sp := rp.spec
	// A closing point so that the last interval's step has a width.
	closeStep := func(l *report.Line) {
		if len(l.Points) > 0 {
			last := l.Points[len(l.Points)-1]
			l.Points = append(l.Points, report.Point{X: last.X + xOf(int64(every), sp) - xOf(0, sp), Y: last.Y})
		}
	}
	closeStep(&requests)
	top := report.Panel{Title: fmt.Sprintf("requests and allowed per %s (marks: intervals with false rejects)", sp.duration(every)),
		YLabel: "requests", YFrom0: true, Lines: []report.Line{requests}}
	bottom := report.Panel{Title: fmt.Sprintf("false rejects (solid) and false allows (dashed) per %s, against a sliding log of limit %d per %s",
		sp.duration(every), sp.Intent.Limit, sp.duration(sp.Intent.Window)), YLabel: "requests", YFrom0: true}
	for l := range allowed {
		closeStep(&allowed[l])
		closeStep(&falseRej[l])
		closeStep(&falseAll[l])
		top.Lines = append(top.Lines, allowed[l])
		top.Marks = append(top.Marks, marks[l])
		bottom.Lines = append(bottom.Lines, falseRej[l], falseAll[l])
	}
	return &report.Figure{
		Title:  figureTitle(fmt.Sprintf("timeline per %s (%s, %s)", sp.duration(every), plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")), rp),
		Clock:  sp.rfc3339,
		XLabel: xLabel(rp),
		Panels: []report.Panel{top, bottom},
	}
}

func newPlotBurstCmd() *cobra.Command {
	o := &plotReplayOptions{}
	c := &cobra.Command{
		Use:   "burst [flags] TRACE -o FILE",
		Short: "Per limiter, the most cost one key got through in any interval, over time",
		Long: `Draw, for each limiter, the most cost one key got through in any closed
interval of --interval (default: the window) ending at each moment, against
the intended limit: where each limiter overshoots. Each limiter's worst
interval, as burst reports it, is marked. Times are grouped into at most
2048 columns, each showing its highest value.` + policyHelp,
		Example:           "  ratesim plot burst traces/examples/multi-user.csv -o burst.svg",
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			s := streamsOf(c)
			rp, format, err := o.prepare(c, args, s)
			if err != nil {
				return err
			}
			defer rp.trace.Close()
			f, err := burstFigure(rp, s)
			if err != nil {
				return err
			}
			if err := o.out.write(f, format, s); err != nil {
				return err
			}
			return rp.trace.finish()
		},
	}
	addPlotReplayFlags(c.Flags(), o)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// maxBurstBins is the most columns a burst figure keeps; past it,
// neighbouring columns merge, keeping the higher value, so the maxima
// are exact.
const maxBurstBins = 2048

// binMax keeps, per limiter, the largest value seen in each bin of time,
// in at most maxBurstBins bins: when there would be more, the bins double
// in width, two merged into one by their maximum.
type binMax struct {
	width int64
	first int64     // the index of the first bin
	vals  [][]int64 // per bin, per lane: the largest value, or -1
	lanes int
}

func (b *binMax) add(t int64, lane int, v int64) {
	k := floorDiv(t, b.width)
	if b.vals == nil {
		b.first = k
	}
	for k-b.first >= maxBurstBins {
		b.coarsen()
		k = floorDiv(t, b.width)
	}
	k = max(k, b.first) // a trace out of time order: counted at its start
	for int64(len(b.vals)) <= k-b.first {
		row := make([]int64, b.lanes)
		for i := range row {
			row[i] = -1
		}
		b.vals = append(b.vals, row)
	}
	row := b.vals[k-b.first]
	row[lane] = max(row[lane], v)
}

// coarsen doubles the bins' width.
func (b *binMax) coarsen() {
	first := floorDiv(b.first, 2)
	var vals [][]int64
	for i, row := range b.vals {
		j := floorDiv(b.first+int64(i), 2) - first
		if int(j) >= len(vals) {
			vals = append(vals, slices.Clone(row))
			continue
		}
		for l, v := range row {
			vals[j][l] = max(vals[j][l], v)
		}
	}
	b.width *= 2
	b.first, b.vals = first, vals
}

// keyWindow is one key's allowed requests under one limiter within the
// burst interval, and their cost.
type keyWindow struct {
	times, costs []int64
	sum          int64
}

// burstFigure replays rp's trace and draws, per limiter, the most cost
// one key had in the interval ending at each allowed request.
func burstFigure(rp *replay, s streams) (*report.Figure, error) {
	sp := rp.spec
	n := len(sp.Lanes)
	iv := int64(sp.Interval)
	bins := &binMax{width: max(iv/8, 1), lanes: n}
	keys := map[string][]keyWindow{}
	cfg := rp.config(true, false)
	cfg.Detail = slices.ContainsFunc(sp.Algos(), limiters.Algorithm.Delays)
	rep, err := rp.run(cfg, s, func(b *sim.Batch) error {
		for i := range b.Requests {
			r := &b.Requests[i]
			ws := keys[string(r.Key)]
			if ws == nil {
				ws = make([]keyWindow, n)
				keys[string(r.Key)] = ws
			}
			for l := range n {
				if !b.Allowed(i, l) {
					continue
				}
				t := r.Time
				if cfg.Detail {
					t += int64(b.Decision(i, l).Delay)
				}
				w := &ws[l]
				if k := len(w.times); k > 0 && t < w.times[k-1] {
					t = w.times[k-1] // counted at the key's latest
				}
				drop := 0
				for drop < len(w.times) && w.times[drop] < t-iv {
					w.sum -= w.costs[drop]
					drop++
				}
				w.times, w.costs = append(w.times[drop:], t), append(w.costs[drop:], r.Cost)
				w.sum += r.Cost
				bins.add(t, l, w.sum)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pn := report.Panel{
		Title:  fmt.Sprintf("the most cost one key got through in any %s, per column of time (dashed: the intended limit)", sp.duration(sp.Interval)),
		YLabel: "cost in interval", YFrom0: true,
		Limits: []report.Limit{{Label: fmt.Sprintf("limit %d", sp.Intent.Limit), Y: float64(sp.Intent.Limit), Color: report.Black}},
	}
	for l, lane := range sp.Lanes {
		line := report.Line{Label: lane.Name, Color: report.LimiterColor(l)}
		for i, row := range bins.vals {
			if row[l] >= 0 {
				line.Points = append(line.Points, report.Point{X: xOf((bins.first+int64(i))*bins.width, sp), Y: float64(row[l])})
			}
		}
		pn.Lines = append(pn.Lines, line)
		if w := rep.Algos[l].Burst; w.Count > 0 {
			pn.Marks = append(pn.Marks, report.Marks{Label: fmt.Sprintf("%s worst: %d (%s)", lane.Name, w.Count, w.Key),
				Color: report.LimiterColor(l), Shape: report.LimiterShape(l), Points: []report.Point{{X: xOf(w.To, sp), Y: float64(w.Count)}}})
		}
	}
	return &report.Figure{
		Title:  figureTitle(fmt.Sprintf("bursts (%s, %s)", plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")), rp),
		Clock:  sp.rfc3339,
		XLabel: xLabel(rp),
		Panels: []report.Panel{pn},
	}, nil
}

func newPlotSweepCmd() *cobra.Command {
	o := &sweepOptions{values: map[string]*string{}}
	var out plotOutput
	c := &cobra.Command{
		Use:   "sweep [--algos a,b] [--capacity 1..64] [--rate 1/1s,2/1s] [flags] TRACE -o FILE",
		Short: "A sweep's false allows and false rejects against the swept parameter",
		Long: `Run the sweep the same flags give "ratesim sweep" and draw each candidate's
false allows and false rejects against the first parameter given more than
one value, a line for each combination of the others; a panel for each
other column --pick constrains, with the constraint as a dashed line. The
frontier (with --pick, of the candidates that meet it) is ringed and the best
candidate that meets --pick squared.`,
		Example:           "  ratesim plot sweep --capacity 5..40:5 --rate 20/1m,30/1m --intent 20/1m --pick 'false_reject_pct<=1,ratio<=2.5' traces/examples/bursty.csv -o sweep.svg",
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			s := streamsOf(c)
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.set = map[string]bool{}
			c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
			if o.ByKey != 0 {
				return usageErrorf("plot sweep draws no keys: --by-key is for the sweep command")
			}
			format, err := out.format(commandName(c))
			if err != nil {
				return err
			}
			g, algos, cons, err := o.check()
			if err != nil {
				return err
			}
			res, err := sweepReplay(o, g, algos, cons, s)
			if err != nil {
				return err
			}
			defer res.rp.trace.Close()
			if err := out.write(sweepFigure(res, o.Frontier), format, s); err != nil {
				return err
			}
			return res.rp.trace.finish()
		},
	}
	addSweepFlags(c.Flags(), o)
	addTraceFlags(c.Flags(), &o.trace)
	addPlotOutputFlags(c.Flags(), &out)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// sweepFigure draws a sweep's candidates.
func sweepFigure(res *sweepResult, frontierOnly bool) *report.Figure {
	sp := res.rp.spec
	// The X parameter: the first given more than one value.
	xName := ""
	for _, name := range res.g.Names() {
		if len(res.g.Values(name)) > 1 {
			xName = name
			break
		}
	}
	xLabel := "candidate (grid order)"
	if xName != "" {
		xLabel = xName
		if prm := paramByName(xName); prm.Kind == limiters.ParamRate {
			xLabel += " (per " + unitName(sp.Unit) + ")"
		} else if prm.Kind == limiters.ParamDuration {
			xLabel += " (" + unitName(sp.Unit) + ")"
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
	for _, c := range res.cands {
		if frontierOnly && !c.Front {
			continue
		}
		var parts []string
		for _, name := range res.g.Names() {
			if name == xName || !slices.Contains(c.Lane.Algorithm.Params(), name) {
				continue
			}
			parts = append(parts, name+" "+c.Values[name])
		}
		label := c.Lane.Algorithm.String()
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
	for _, k := range res.cons {
		if !slices.Contains(metrics, k.Column) && k.Column != xName {
			metrics = append(metrics, k.Column)
		}
	}
	var best *sweep.Candidate
	if len(res.picked) > 0 {
		best = res.picked[0]
	}
	var panels []report.Panel
	for _, m := range metrics {
		pn := report.Panel{Title: strings.ReplaceAll(m, "_", " "), YLabel: m, YFrom0: true}
		if xName != "" {
			pn.Title += " against " + xName
		}
		for _, k := range res.cons {
			if k.Column == m {
				v, _ := k.Value.Float64()
				pn.Limits = append(pn.Limits, report.Limit{Label: k.Text, Y: v, Color: report.Constraint})
			}
		}
		var front, bestPts []report.Point
		for i, label := range order {
			line := report.Line{Label: label, Color: report.LimiterColor(i)}
			for _, c := range groups[label].cands {
				x, ok := xOfCand(c)
				y := c.Num[m]
				if !ok || y == nil {
					continue
				}
				yf, _ := y.Float64()
				p := report.Point{X: x, Y: yf}
				line.Points = append(line.Points, p)
				if c.Front {
					front = append(front, p)
				}
				if c == best {
					bestPts = append(bestPts, p)
				}
			}
			slices.SortStableFunc(line.Points, func(a, b report.Point) int { return cmp.Compare(a.X, b.X) })
			pn.Lines = append(pn.Lines, line)
			pn.Marks = append(pn.Marks, report.Marks{Color: report.LimiterColor(i), Shape: report.LimiterShape(i), Points: line.Points})
		}
		pn.Marks = append(pn.Marks, report.Marks{Label: "frontier", Color: report.Black, Shape: report.Ring, Points: front})
		if best != nil {
			pn.Marks = append(pn.Marks, report.Marks{Label: "best (--pick)", Color: report.Constraint, Shape: report.Box, Points: bestPts})
		}
		panels = append(panels, pn)
	}
	var title []string
	title = append(title, fmt.Sprintf("sweep — %s: %s, %s", res.rp.trace.name, plural(res.rep.Requests, "request"), plural(int64(res.rep.Keys), "key")))
	title = append(title, fmt.Sprintf("grid: %s%s", plural(int64(len(res.cands)), "candidate"), ": "+res.g.Describe(res.algos)))
	title = append(title, fmt.Sprintf("intent: limit %d per %s, clock %s", sp.Intent.Limit, sp.duration(sp.Intent.Window), clockName(sp.Intent.Clock)))
	if res.cons != nil {
		line := fmt.Sprintf("pick: %s: %s of %d meet it", res.cons.String(), plural(int64(len(res.picked)), "candidate"), len(res.cands))
		if best != nil {
			line += "; best " + best.Limiter.Name
		}
		title = append(title, line)
	}
	return &report.Figure{Title: title, XLabel: xLabel, Panels: panels}
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
