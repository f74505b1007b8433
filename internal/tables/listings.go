package tables

import (
	"strings"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/traces"
)

// AlgosColumns are the columns of ratesim algos: per algorithm, how it
// works, its parameters, its state, how it lets bursts through and when
// to choose it.
var AlgosColumns = []render.Column{
	{Name: "name"},
	{Name: "summary", MachineOnly: true},
	{Name: "parameters"},
	{Name: "how"},
	{Name: "state"},
	{Name: "bursts"},
	{Name: "choose"},
}

// AlgosRows are the rows of AlgosColumns, one per algorithm of algos.
func AlgosRows(algos []limiters.Algorithm) [][]render.Cell {
	var rows [][]render.Cell
	for _, a := range algos {
		doc := a.Doc()
		rows = append(rows, []render.Cell{render.Str(a.String()), render.Str(a.Summary()), render.Str(paramFlags(a)),
			render.Str(doc.How), render.Str(doc.State), render.Str(doc.Bursts), render.Str(doc.Choose)})
	}
	return rows
}

// AlgoCard describes a in a card (render.Card): its name and summary,
// how it works, its parameters, its state, its bursts and when to choose
// it.
func AlgoCard(a limiters.Algorithm) (title string, fields []render.Field) {
	doc := a.Doc()
	return a.String() + ": " + a.Summary(), []render.Field{
		{Label: "how", Text: doc.How}, {Label: "parameters", Text: paramFlags(a)}, {Label: "state", Text: doc.State},
		{Label: "bursts", Text: doc.Bursts}, {Label: "choose", Text: doc.Choose},
	}
}

// paramFlags names the flags of the parameters a takes: "--limit,
// --window".
func paramFlags(a limiters.Algorithm) string {
	var flags []string
	for _, name := range a.Params() {
		flags = append(flags, "--"+name)
	}
	return strings.Join(flags, ", ")
}

// PresetsColumns are the columns of ratesim presets: per preset, the
// library, an example, its parameters, how they map onto the algorithm,
// and (for scripts) what it reproduces and where it differs.
var PresetsColumns = []render.Column{
	{Name: "preset"},
	{Name: "library"},
	{Name: "example"},
	{Name: "parameters"},
	{Name: "mapping"},
	{Name: "burst"},
	{Name: "reproduces", MachineOnly: true},
	{Name: "differences", MachineOnly: true},
	{Name: "ignores", MachineOnly: true},
	{Name: "time", MachineOnly: true},
	{Name: "proven", MachineOnly: true},
}

// PresetsRows are the rows of PresetsColumns, one per preset of list.
func PresetsRows(list []presets.Preset) [][]render.Cell {
	var rows [][]render.Cell
	for _, p := range list {
		rows = append(rows, []render.Cell{render.Str(p.Name), render.Str(p.Library), render.Str(p.Name + ":" + p.Example), render.Str(presetParams(p)),
			render.Str(p.Mapping), render.Str(p.Burst), render.Str(p.Reproduces), render.Str(p.Differences),
			render.Str(p.Ignores), render.Str(p.Time), render.Str(p.Proven)})
	}
	return rows
}

// PresetCard describes p in a card (render.Card).
func PresetCard(p presets.Preset) (title string, fields []render.Field) {
	return p.Name + ": " + p.Library, []render.Field{
		{Label: "example", Text: "--limiter " + p.Name + ":" + p.Example},
		{Label: "parameters", Text: presetParams(p)},
		{Label: "mapping", Text: p.Mapping},
		{Label: "burst", Text: p.Burst},
		{Label: "reproduces", Text: p.Reproduces},
		{Label: "differs", Text: p.Differences},
		{Label: "ignores", Text: p.Ignores},
		{Label: "time", Text: p.Time},
		{Label: "proven", Text: p.Proven},
	}
}

// presetParams lists a preset's parameters with their defaults:
// "rate, burst (0), nodelay".
func presetParams(p presets.Preset) string {
	var out []string
	for _, prm := range p.Params {
		s := prm.Name
		if prm.Default != "" && !prm.Flag {
			s += " (" + prm.Default + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// FormatCard describes the trace format f in a card (render.Card): how
// it is recognized, where its time and duration come from, what
// --time-is and --observed default to, the user and its example.
func FormatCard(f traces.FormatInfo) (title string, fields []render.Field) {
	orNone := func(v, none string) string {
		if v == "" {
			return none
		}
		return v
	}
	records := ""
	if f.TimeRecords != traces.TimeIsDefault {
		records = " (the " + f.TimeRecords.String() + ")"
	}
	timeIs := f.TimeIs.String()
	switch {
	case f.TimeIs == traces.TimeIsDefault:
		timeIs = "does not apply: the trace's times are its own"
	case f.TimeNote != "":
		timeIs += "; " + f.TimeNote
	}
	return f.Name + ": " + f.Description, []render.Field{
		{Label: "recognized", Text: orNone(f.Sniffed, "only with --format "+f.Name)},
		{Label: "time", Text: f.Time + records},
		{Label: "duration", Text: orNone(f.Duration, "none")},
		{Label: "arrival", Text: orNone(f.Arrival, "none")},
		{Label: "--time-is", Text: timeIs},
		{Label: "--observed", Text: orNone(f.Observed, "status=429,503")},
		{Label: "user", Text: f.User},
		{Label: "example", Text: "traces/examples/" + f.Example},
	}
}
