package tables

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// BurstColumns are the columns of burst's report.
var BurstColumns = []render.Column{
	{Name: "algo"},
	{Name: "limit", Right: true, MachineOnly: true},
	{Name: "intent_limit", Right: true, Title: "intent limit", TableOnly: true},
	{Name: "interval", Right: true},
	{Name: "max_in_interval", Right: true},
	{Name: "ratio", Right: true},
	{Name: "user"},
	{Name: "from", Right: true},
	{Name: "to", Right: true},
	{Name: "window", MachineOnly: true},
	{Name: "capacity", OmitNull: true, MachineOnly: true},
	{Name: "rate", OmitNull: true, MachineOnly: true},
	{Name: "clock", MachineOnly: true},
	{Name: "unit", MachineOnly: true},
	{Name: "intent_limit", MachineOnly: true},
	{Name: "intent_window", MachineOnly: true},
}

// BurstRows are the rows of BurstColumns of the worst intervals ivs.
func BurstRows(ivs []sim.Interval, sp *Policy) [][]render.Cell {
	var rows [][]render.Cell
	for _, iv := range ivs {
		user, from, to := sp.BurstCells(iv)
		lane := sp.Lane(iv.Name)
		limit, window, capacity, rate := sp.LaneCells(lane)
		intentLimit, intentWindow := sp.IntentCells()
		rows = append(rows, append([]render.Cell{
			render.Str(iv.Name),
			limit,
			intentLimit,
			render.Dec(sp.Interval, sp.Unit),
			render.Int(iv.Count),
			sp.RatioCell(iv.Count),
			user, from, to,
			window,
			capacity, rate,
			render.Str(spec.ClockName(lane.Policy.Clock)),
			render.Str(traces.UnitName(sp.Unit)),
			intentLimit,
			intentWindow,
		}, sp.ExtraCells(lane)...))
	}
	return rows
}
