package tables

import (
	"strings"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/traces"
)

// FormatsColumns are the columns of ratesim formats: per trace format,
// where its time comes from and what it records, its duration, the
// defaults of --time-is and --observed, and (for scripts) the rest of
// its description.
var FormatsColumns = []render.Column{
	{Name: "format"},
	{Name: "time"},
	{Name: "time_records", Title: "records"},
	{Name: "duration"},
	{Name: "arrival", MachineOnly: true},
	{Name: "time_is", Title: "--time-is"},
	{Name: "time_note", MachineOnly: true},
	{Name: "observed", Title: "--observed"},
	{Name: "resolution", MachineOnly: true},
	{Name: "user", MachineOnly: true},
	{Name: "sniffed", MachineOnly: true},
	{Name: "example", MachineOnly: true},
	{Name: "aliases", MachineOnly: true},
	{Name: "fields", MachineOnly: true},
	{Name: "description", MachineOnly: true},
}

// FormatsRows are the rows of FormatsColumns, one per format of list.
func FormatsRows(list []traces.FormatInfo) [][]render.Cell {
	orNull := func(v string) render.Cell {
		if v == "" {
			return render.Null()
		}
		return render.Str(v)
	}
	var rows [][]render.Cell
	for _, f := range list {
		var names []string
		for _, fl := range f.Fields {
			names = append(names, fl.Name)
		}
		res := render.Null()
		if f.Resolution > 0 {
			res = render.Str(f.Resolution.String())
		}
		timeIs, records := render.Null(), render.Null()
		if f.TimeIs != traces.TimeIsDefault {
			timeIs = render.Str(f.TimeIs.String())
		}
		if f.TimeRecords != traces.TimeIsDefault {
			records = render.Str(f.TimeRecords.String())
		}
		rows = append(rows, []render.Cell{render.Str(f.Name), orNull(f.Time), records, orNull(f.Duration), orNull(f.Arrival), timeIs,
			orNull(f.TimeNote), orNull(f.Observed), res, orNull(f.User), orNull(f.Sniffed), orNull(f.Example),
			render.Str(strings.Join(f.Aliases, " ")), render.Str(strings.Join(names, " ")), render.Str(f.Description)})
	}
	return rows
}

// FormatFieldColumns are the columns of the fields of formats (ratesim
// formats NAME): the field as the format's documentation names it, the
// attribute it is read into, and what it means.
var FormatFieldColumns = []render.Column{
	{Name: "format"},
	{Name: "field"},
	{Name: "attribute"},
	{Name: "meaning"},
}

// FormatFieldRows are the rows of FormatFieldColumns for the formats of
// list; without the format column (FormatFieldColumns[1:]) when
// withFormat is false.
func FormatFieldRows(list []traces.FormatInfo, withFormat bool) [][]render.Cell {
	var rows [][]render.Cell
	for _, f := range list {
		for _, fl := range f.Fields {
			row := []render.Cell{render.Str(fl.Name), render.Str(fl.Attr), render.Str(fl.Meaning)}
			if withFormat {
				row = append([]render.Cell{render.Str(f.Name)}, row...)
			}
			rows = append(rows, row)
		}
	}
	return rows
}
