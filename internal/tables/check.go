package tables

import (
	"github.com/ratesim/ratesim/internal/check"
	"github.com/ratesim/ratesim/internal/render"
)

// CheckColumns are the columns of ratesim check's summary: per limiter,
// the requests, those the log says something of, how many decisions
// agree with it, and the confusion of allowed and refused against passed
// and limited.
var CheckColumns = []render.Column{
	{Name: "limiter"},
	{Name: "requests", Right: true},
	{Name: "observed", Right: true},
	{Name: "agree", Right: true},
	{Name: "agree_pct", Right: true, Title: "agree %", Suffix: "%"},
	{Name: "disagree", Right: true},
	{Name: "allowed_passed", Right: true, Title: "allowed & passed"},
	{Name: "allowed_limited", Right: true, Title: "allowed & limited"},
	{Name: "refused_passed", Right: true, Title: "refused & passed"},
	{Name: "refused_limited", Right: true, Title: "refused & limited"},
	{Name: "unobserved", Right: true, MachineOnly: true},
	{Name: "observed_by", MachineOnly: true},
}

// CheckRows are the rows of CheckColumns, one per lane; observedBy is
// the --observed the log was read with.
func CheckRows(lanes []check.Lane, observedBy string) [][]render.Cell {
	var rows [][]render.Cell
	for i := range lanes {
		l := &lanes[i]
		rows = append(rows, []render.Cell{render.Str(l.Name), render.Int(l.Requests), render.Int(l.Observed()),
			render.Int(l.Agree()), render.PctCell(l.Agree(), l.Observed()), render.Int(l.Observed() - l.Agree()),
			render.Int(l.AllowedPassed), render.Int(l.AllowedLimited), render.Int(l.RefusedPassed), render.Int(l.RefusedLimited),
			render.Int(l.Unobserved), render.Str(observedBy)})
	}
	return rows
}

// DisagreementColumns are the columns of check --disagreements: every
// request a limiter decided otherwise than the log says, where it is in
// the log.
var DisagreementColumns = []render.Column{
	{Name: "limiter"},
	{Name: "file"},
	{Name: "line", Right: true},
	{Name: "user"},
	{Name: "key"},
	{Name: "timestamp"},
	{Name: "allowed"},
	{Name: "observed"},
}

// DisagreementRow is d's row of DisagreementColumns.
func DisagreementRow(d *check.Disagreement) []render.Cell {
	return []render.Cell{render.Str(d.Lane), render.Str(d.File), render.Int(int64(d.Line)), render.Str(d.User), render.Str(d.Key),
		render.Time(d.TimeText), render.Bool(d.Allowed), render.Str(ObservedText(d.Allowed))}
}

// FirstColumns are the columns of a limiter's first disagreements in
// check's table.
var FirstColumns = []render.Column{{Name: "file"}, {Name: "line", Right: true}, {Name: "key"}, {Name: "timestamp"}, {Name: "model"}, {Name: "log"}}

// FirstRows are the rows of FirstColumns for l.
func FirstRows(l *check.Lane) [][]render.Cell {
	var rows [][]render.Cell
	for _, d := range l.First {
		rows = append(rows, []render.Cell{render.Str(d.File), render.Int(int64(d.Line)), render.Str(d.Key), render.Time(d.TimeText),
			render.Str(DecisionText(d.Allowed)), render.Str(ObservedText(d.Allowed))})
	}
	return rows
}

// CheckKeyColumns are the columns of the keys of a limiter that disagree
// most.
var CheckKeyColumns = []render.Column{
	{Name: "key"},
	{Name: "requests", Right: true},
	{Name: "disagree", Right: true},
	{Name: "allowed_limited", Right: true, Title: "allowed & limited"},
	{Name: "refused_passed", Right: true, Title: "refused & passed"},
}

// CheckKeyRows are the rows of CheckKeyColumns for l.
func CheckKeyRows(l *check.Lane) [][]render.Cell {
	var rows [][]render.Cell
	for _, k := range l.Keys {
		rows = append(rows, []render.Cell{render.Str(k.Key), render.Int(k.Requests), render.Int(k.Disagreements),
			render.Int(k.AllowedLimited), render.Int(k.RefusedPassed)})
	}
	return rows
}

// DecisionText is a model's decision: allowed or refused.
func DecisionText(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "refused"
}

// ObservedText is what the log says of a disagreement the model decided
// as allowed says: the opposite, limited or passed.
func ObservedText(allowed bool) string {
	if allowed {
		return "limited"
	}
	return "passed"
}
