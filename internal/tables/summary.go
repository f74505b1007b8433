package tables

import (
	"fmt"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// SummaryColumns are the columns of compare --summary; the table shows the
// counts and leaves the parameters to the policy line above it.
var SummaryColumns = []render.Column{
	{Name: "algo"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "allow_pct", Right: true, Title: "allow %", Suffix: "%"},
	{Name: "max_in_interval", Right: true},
	{Name: "ratio", Right: true},
	{Name: "false_allows", Right: true},
	{Name: "false_rejects", Right: true},
	{Name: "first_rejection", Right: true},
	{Name: "first_rejection_user", MachineOnly: true},
	{Name: "burst_user", MachineOnly: true},
	{Name: "burst_from", MachineOnly: true},
	{Name: "burst_to", MachineOnly: true},
	{Name: "limit", MachineOnly: true},
	{Name: "window", MachineOnly: true},
	{Name: "interval", MachineOnly: true},
	{Name: "capacity", OmitNull: true, MachineOnly: true},
	{Name: "rate", OmitNull: true, MachineOnly: true},
	{Name: "clock", MachineOnly: true},
	{Name: "unit", MachineOnly: true},
	{Name: "clock_backwards", MachineOnly: true},
	{Name: "intent_limit", MachineOnly: true},
	{Name: "intent_window", MachineOnly: true},
}

// SummaryRows builds one summary row per algorithm: SummaryColumns, the
// policy's extra columns, and the label columns when rep counts labels
// (WithLabelColumns).
func SummaryRows(rep *sim.Report, sp *Policy) [][]render.Cell {
	var rows [][]render.Cell
	for _, st := range rep.Algos {
		first, firstUser := render.Null(), render.Null()
		if fr := st.FirstRejection; fr != nil {
			first, firstUser = render.Time(fr.TimeText), render.Str(fr.Key)
		}
		bUser, bFrom, bTo := sp.BurstCells(st.Burst)
		lane := sim.Lane{Name: st.Name, Algorithm: st.Algorithm, Policy: st.Policy}
		limit, window, capacity, rate := sp.LaneCells(lane)
		intentLimit, intentWindow := sp.IntentCells()
		rows = append(rows, append([]render.Cell{
			render.Str(st.Name),
			render.Int(st.Requests),
			render.Int(st.Allowed),
			render.Int(st.Rejected),
			render.PctCell(st.Allowed, st.Requests),
			render.Int(st.Burst.Count),
			sp.RatioCell(st.Burst.Count),
			sp.AgainstIntent(render.Int(st.FalseAllows)),
			sp.AgainstIntent(render.Int(st.FalseRejects)),
			first,
			firstUser,
			bUser, bFrom, bTo,
			limit,
			window,
			render.Dec(sp.Interval, sp.Unit),
			capacity,
			rate,
			render.Str(spec.ClockName(st.Policy.Clock)),
			render.Str(traces.UnitName(sp.Unit)),
			render.Int(rep.ClockBackwards),
			intentLimit,
			intentWindow,
		}, append(sp.ExtraCells(lane), LabelCells(&st)...)...))
	}
	return rows
}

// AgreementTable is the pairwise agreement matrix.
func AgreementTable(rep *sim.Report) *render.Table {
	t := &render.Table{Header: []string{"agree %"}, Right: []bool{false}}
	for _, st := range rep.Algos {
		t.Header = append(t.Header, st.Name)
		t.Right = append(t.Right, true)
	}
	for a, st := range rep.Algos {
		row := []string{st.Name}
		for b := range rep.Algos {
			if rep.Requests == 0 {
				row = append(row, "-")
				continue
			}
			text := "-"
			if rep.Requests > 0 {
				text = render.Pct(rep.Agree[a][b], rep.Requests)
			}
			row = append(row, text)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ByKeyColumns are the columns of compare --by-key: a row per limiter and
// key, the keys it rejected most first.
var ByKeyColumns = []render.Column{
	{Name: "limiter"},
	{Name: "key"},
	{Name: "requests", Right: true},
	{Name: "allowed", Right: true},
	{Name: "rejected", Right: true},
	{Name: "false_rejects", Right: true},
	{Name: "first_rejection", Right: true, NullText: "-"},
}

// ByKeyRows are, per limiter in lane order, the rows of the keys it
// rejected most, as rep lists them (sim.Config.MostRejected).
func ByKeyRows(rep *sim.Report, sp *Policy) [][]render.Cell {
	var rows [][]render.Cell
	for _, st := range rep.Algos {
		for _, k := range st.MostRejected {
			rows = append(rows, []render.Cell{render.Str(st.Name), render.Str(k.Key), render.Int(k.Requests),
				render.Int(k.Requests - k.Rejected), render.Int(k.Rejected), sp.AgainstIntent(render.Int(k.FalseRejects)), render.Time(k.FirstRejection)})
		}
	}
	return rows
}

// ByKeyTitle says which keys the rows of rep list, n asked per limiter:
// the n each rejected most, or every key each rejected when none
// rejected as many as n.
func ByKeyTitle(rep *sim.Report, n int) string {
	for _, st := range rep.Algos {
		if len(st.MostRejected) >= n {
			return fmt.Sprintf("the %d keys each limiter rejected most", n)
		}
	}
	return fmt.Sprintf("every key each limiter rejected, the most rejected first: fewer than the %d asked", n)
}
