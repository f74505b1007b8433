package tables

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// LabelColumns are the columns of who a limiter stopped, when the
// requests are labelled (sim.Config.Label with the labels of
// traces.Label): they follow the summaries of compare and report and a
// sweep's candidates. The counts of requests are for scripts; tables show
// the rejections and their shares.
var LabelColumns = []render.Column{
	{Name: "legit_requests", Right: true, MachineOnly: true},
	{Name: "legit_rejected", Right: true, Title: "legit rejected"},
	{Name: "legit_reject_pct", Right: true, Title: "legit rej %", Suffix: "%"},
	{Name: "abusive_requests", Right: true, MachineOnly: true},
	{Name: "abusive_stopped", Right: true, Title: "abusive stopped"},
	{Name: "abusive_stopped_pct", Right: true, Title: "abusive stopped %", Suffix: "%"},
	{Name: "unlabelled_requests", Right: true, MachineOnly: true},
}

// Labelled reports whether rep counts its requests by label.
func Labelled(rep *sim.Report) bool {
	return len(rep.Algos) > 0 && len(rep.Algos[0].ByLabel) == traces.NumLabels
}

// WithLabelColumns returns cols and, when rep counts labels, LabelColumns
// after them.
func WithLabelColumns(cols []render.Column, rep *sim.Report) []render.Column {
	if !Labelled(rep) {
		return cols
	}
	return append(cols, LabelColumns...)
}

// LabelCells are st's values of LabelColumns; nil when it counts no
// labels.
func LabelCells(st *sim.AlgoStats) []render.Cell {
	if len(st.ByLabel) != traces.NumLabels {
		return nil
	}
	legit, abusive := st.ByLabel[traces.Legit], st.ByLabel[traces.Abusive]
	return []render.Cell{
		render.Int(legit.Requests), render.Int(legit.Rejected()), render.PctCell(legit.Rejected(), legit.Requests),
		render.Int(abusive.Requests), render.Int(abusive.Rejected()), render.PctCell(abusive.Rejected(), abusive.Requests),
		render.Int(st.ByLabel[traces.Unlabelled].Requests),
	}
}

// labelCell is the value of the label column name for st, and whether
// name is one.
func labelCell(name string, st *sim.AlgoStats) (render.Cell, bool) {
	for i, c := range LabelColumns {
		if c.Name == name {
			cells := LabelCells(st)
			if cells == nil {
				return render.Null(), true
			}
			return cells[i], true
		}
	}
	return render.Cell{}, false
}
