package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/sim"
)

// NewContents returns the contents of the HTML report of one replay:
// its report rep under the policy sp, drawn in the frame fr, with top
// keys per limiter and worst intervals listed and the timeline's
// intervals every long: the lines that state the replay, the summary,
// agreement, burst and key tables, and why there is no timeline when
// there is none. The states and the sweep are the caller's to add.
func NewContents(fr *Frame, rep *sim.Report, sp *tables.Policy, top int, every time.Duration) *Contents {
	c := &Contents{Frame: fr, Report: rep, Top: top, Every: every}
	c.Lines = append([]string{"policy: " + sp.Describe(true)}, sp.LaneLines()...)
	if line := tables.BackwardsLine(rep); line != "" {
		c.Lines = append(c.Lines, line)
	}
	summary, _ := render.WriteRecords(nil, render.FormatTable, tables.WithLabelColumns(append(slices.Clone(tables.SummaryColumns), sp.ExtraColumns()...), rep), tables.SummaryRows(rep, sp))
	c.Summary = TableOf(summary, "summary", "per limiter")
	if len(sp.Lanes) > 1 && rep.Agree != nil {
		c.Agreement = TableOf(tables.AgreementTable(rep), "agreement", "agreement: % of requests decided alike")
	}
	burstTable := func(ivs []sim.Interval) *render.Table {
		var rows [][]render.Cell
		for _, iv := range ivs {
			user, from, to := sp.BurstCells(iv)
			limit, _, _, _ := sp.LaneCells(sp.Lane(iv.Name))
			intentLimit, _ := sp.IntentCells()
			rows = append(rows, []render.Cell{render.Str(iv.Name), limit, intentLimit, render.Dec(sp.Interval, sp.Unit),
				render.Int(iv.Count), sp.RatioCell(iv.Count), user, from, to})
		}
		t, _ := render.WriteRecords(nil, render.FormatTable, tables.BurstColumns[:9], rows)
		return t
	}
	var worst []sim.Interval
	for _, st := range rep.Algos {
		worst = append(worst, st.Burst)
	}
	c.Bursts = TableOf(burstTable(worst), "bursts", "per limiter")
	c.TopBursts = TableOf(burstTable(rep.Top), "top-bursts", fmt.Sprintf("the %d worst", top))
	keys, _ := render.WriteRecords(nil, render.FormatTable, tables.ByKeyColumns, tables.ByKeyRows(rep, sp))
	c.Keys = TableOf(keys, "keys", "")
	if rep.IntervalsOutOfOrder > 0 {
		c.TimelineNote = tables.OutOfOrder(rep.IntervalsOutOfOrder).Error()
	}
	return c
}

// TableOf is a rendered table as the report shows it, with its class
// and caption.
func TableOf(t *render.Table, class, caption string) Table {
	return Table{Caption: caption, Header: t.Header, Right: t.Right, Rows: t.Rows, Class: class}
}

// A SweepRun is a sweep's replay, its candidates scored: what the
// report's section about it and its figure show.
type SweepRun struct {
	Trace  string      // the trace's name
	Report *sim.Report // the replay of every candidate and the intent
	Policy *tables.Policy
	Grid   *sweep.Grid
	Algos  []sweep.Algo
	// Candidates are every candidate; Picked those that meet
	// Constraints, best first.
	Candidates, Picked []*sweep.Candidate
	Constraints        sweep.Constraints
	// Intent is the intent's own sliding log; IntentFrom says where the
	// intent came from: "--intent", or per parameter for an inherited one.
	Intent     *sim.AlgoStats
	IntentFrom string
}

// Figure draws the sweep's candidates (with frontierOnly, those on the
// frontier), titled with the trace, the grid, the intent and the pick.
func (r *SweepRun) Figure(frontierOnly bool) *Figure {
	sp := r.Policy
	title := []string{
		fmt.Sprintf("sweep — %s: %s, %s", r.Trace, render.Plural(r.Report.Requests, "request"), render.Plural(int64(r.Report.Keys), "key")),
		fmt.Sprintf("grid: %s: %s", render.Plural(int64(len(r.Candidates)), "candidate"), r.Grid.Describe(r.Algos)),
		fmt.Sprintf("intent: limit %d per %s, clock %s", sp.Intent.Limit, sp.Duration(sp.Intent.Window), spec.ClockName(sp.Intent.Clock)),
	}
	if r.Constraints != nil {
		line := fmt.Sprintf("pick: %s: %s of %d meet it", r.Constraints, render.Plural(int64(len(r.Picked)), "candidate"), len(r.Candidates))
		if len(r.Picked) > 0 {
			line += "; best " + r.Picked[0].Limiter.Name
		}
		title = append(title, line)
	}
	return SweepFigure(Sweep{Title: title, Grid: r.Grid, Candidates: r.Candidates, Picked: r.Picked,
		Constraints: r.Constraints, Unit: sp.Unit, FrontierOnly: frontierOnly})
}

// Section is the report's section about the sweep: what it ran and
// scored against, its candidates (or those that meet the pick, best
// first, or why none does) and its figure.
func (r *SweepRun) Section() Section {
	sp, cons := r.Policy, r.Constraints
	sec := Section{Heading: "Sweep"}
	sec.Text = []string{
		fmt.Sprintf("%s%s.", render.Plural(int64(len(r.Candidates)), "candidate"), ": "+r.Grid.Describe(r.Algos)),
		fmt.Sprintf("Each scored against the intent, a sliding log of limit %d per %s, clock %s (%s): false allows and rejects, and max_in_interval over %s; the frontier (no other candidate%s has at most as many false allows and false rejects, and fewer of one) is marked *.",
			sp.Intent.Limit, sp.Duration(sp.Intent.Window), spec.ClockName(sp.Intent.Clock), r.IntentFrom, sp.Duration(sp.Interval), tables.FrontierAmong(cons)),
	}
	rows := r.Candidates
	caption := "every candidate"
	if cons != nil {
		if len(r.Picked) == 0 {
			sec.Text = append(sec.Text, tables.Unreachable(r.Candidates, cons, r.Intent, sp)...)
		} else {
			rows = r.Picked
			caption = fmt.Sprintf("the %d of %d that meet %s, best first, the best marked *", len(r.Picked), len(r.Candidates), cons.String())
		}
	}
	cols := tables.SweepColumns(r.Candidates, cons != nil)
	if cons == nil || len(r.Picked) > 0 {
		t, _ := render.WriteRecords(nil, render.FormatTable, cols, tables.SweepRows(rows, sp, cols, true))
		sec.Tables = []Table{TableOf(t, "sweep", caption)}
	}
	sec.Figures = []*Figure{r.Figure(false)}
	return sec
}
