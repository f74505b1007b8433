package tables

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// A Policy is a replay's policy, resolved and bound to the trace's unit,
// with how the trace writes its times: what every table of the replay
// states its parameters, durations and times by.
type Policy struct {
	*spec.Spec
	// RFC3339: the trace's timestamps are absolute times (RFC 3339, an
	// access log's, a layout's), not numbers.
	RFC3339 bool
	// Times writes instants as the trace writes its times.
	Times traces.TimeWriter
}

// QueueNote says how the report measures the bursts of the queue forms
// among algos: "leaky-queue's bursts are measured ...", or "" when none
// delays what it admits.
func QueueNote(algos []limiters.Algorithm) string {
	var names []string
	for _, a := range algos {
		if a.Delays() && !slices.Contains(names, a.String()+"'s") {
			names = append(names, a.String()+"'s")
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + " bursts are measured when requests leave its queue (timestamp + delay)"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " bursts are measured when requests leave their queues (timestamp + delay)"
}

// BackwardsLine is the line of a report's header that counts the requests
// earlier than their key's latest; empty when there are none.
func BackwardsLine(rep *sim.Report) string {
	if rep.ClockBackwards == 0 {
		return ""
	}
	return fmt.Sprintf("clock_backwards: %s earlier than their key's latest, the first at line %d", render.Plural(rep.ClockBackwards, "request"), rep.FirstBackwards.Line)
}

// Lane returns the lane named name.
func (sp *Policy) Lane(name string) sim.Lane {
	for _, l := range sp.Lanes {
		if l.Name == name {
			return l
		}
	}
	return sim.Lane{Name: name}
}

// LaneCells are the limit, window, capacity and rate of a lane for a
// report: a window lane's own limit and window; for a bucket the intent's
// limit and window (null when no intent was given) beside its capacity
// and rate.
func (sp *Policy) LaneCells(l sim.Lane) (limit, window, capacity, rate render.Cell) {
	if l.Algorithm.Windowed() {
		return render.Int(l.Policy.Limit), render.Dec(l.Policy.Window, sp.Unit), render.Null(), render.Null()
	}
	limit, window = sp.IntentCells()
	return limit, window, render.Int(l.Policy.Capacity), render.Str(l.Policy.Rate.Format(sp.Unit))
}

// IntentCells are the intent's limit and window, null when no intent was
// given.
func (sp *Policy) IntentCells() (limit, window render.Cell) {
	if !sp.IntentNamed {
		return render.Null(), render.Null()
	}
	return render.Int(sp.Intent.Limit), render.Dec(sp.Intent.Window, sp.Unit)
}

// AgainstIntent is a cell counted against the intent: v, or null when no
// intent was given.
func (sp *Policy) AgainstIntent(v render.Cell) render.Cell {
	if !sp.IntentNamed {
		return render.Null()
	}
	return v
}

// RatioCell is the ratio of a burst count to the intent's limit, null
// when no intent was given.
func (sp *Policy) RatioCell(count int64) render.Cell {
	return sp.AgainstIntent(render.Num(render.Ratio(count, sp.Intent.Limit)))
}

// AgainstLine says what false allows, false rejects and ratios are
// counted against: "false allows and rejects are against the oracle, a
// sliding log of limit 3 per 10s", or that no intent was given.
func (sp *Policy) AgainstLine() string {
	if !sp.IntentNamed {
		return "no intent given, so no false allows, false rejects or ratios (-): --intent LIMIT/WINDOW counts them against an exact rolling limit"
	}
	return fmt.Sprintf("false allows and rejects are against the oracle, a sliding log of limit %d per %s", sp.Intent.Limit, sp.Duration(sp.Intent.Window))
}

// LaneLines describe, a line each, the lanes whose parameters are their
// own, or who have names of their own; none in a plain run.
func (sp *Policy) LaneLines() []string {
	var lines []string
	for i, l := range sp.Lanes {
		if !sp.Own[i] && l.Name == l.Algorithm.String() {
			continue
		}
		text := fmt.Sprintf("limiter %s: ", l.Name)
		if l.Name != l.Algorithm.String() {
			text = fmt.Sprintf("limiter %s (%s): ", l.Name, l.Algorithm)
		}
		lines = append(lines, text+sp.DescribeLane(l, ", "))
	}
	return lines
}

// DescribeLane states lane l's parameters, joined by sep: "limit 3 per
// 10s; clock reject", "limit 3 per 10s, buckets 5, clock reject".
func (sp *Policy) DescribeLane(l sim.Lane, sep string) string {
	p := l.Policy
	var parts []string
	if l.Algorithm.Windowed() {
		parts = append(parts, fmt.Sprintf("limit %d per %s", p.Limit, sp.Duration(p.Window)))
	} else {
		parts = append(parts, fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, p.Rate.Format(sp.Unit), traces.UnitName(sp.Unit)))
	}
	if extra := sp.ExtraParams([]limiters.Algorithm{l.Algorithm}, p); extra != "" {
		parts = append(parts, extra[2:])
	}
	if l.Algorithm.OwnClock() { // --clock does not apply to it
		return strings.Join(append(parts, "earlier times as the library takes them"), sep)
	}
	return strings.Join(append(parts, "clock "+spec.ClockName(p.Clock)), sep)
}

// ExtraColumns are the columns a report's rows about lanes add when the
// lanes need them: algorithm when a lane has a name of its own (its
// column shows the name), and each parameter beyond spec.CoreParams that a
// Lane takes (buckets), null for the lanes that do not.
func (sp *Policy) ExtraColumns() []render.Column {
	var cols []render.Column
	if sp.Named() {
		cols = append(cols, render.Column{Name: "algorithm", MachineOnly: true})
	}
	for _, prm := range sp.extraParamList() {
		cols = append(cols, render.Column{Name: prm.Name, OmitNull: true, MachineOnly: true})
	}
	return cols
}

// ExtraCells are lane l's cells of extraColumns.
func (sp *Policy) ExtraCells(l sim.Lane) []render.Cell {
	var cells []render.Cell
	if sp.Named() {
		cells = append(cells, render.Str(l.Algorithm.String()))
	}
	for _, prm := range sp.extraParamList() {
		if !slices.Contains(l.Algorithm.Params(), prm.Name) {
			cells = append(cells, render.Null())
			continue
		}
		switch v := l.Policy.Field(prm.Name).(type) {
		case *int64:
			cells = append(cells, render.Int(*v))
		case *time.Duration:
			cells = append(cells, render.Dec(*v, sp.Unit))
		default:
			cells = append(cells, render.Str(sp.ParamText(l.Policy, prm.Name)))
		}
	}
	return cells
}

// Named reports whether a lane has a name other than its algorithm's.
func (sp *Policy) Named() bool {
	return slices.ContainsFunc(sp.Lanes, func(l sim.Lane) bool { return l.Name != l.Algorithm.String() })
}

// extraParamList lists the parameters beyond spec.CoreParams that a lane takes.
func (sp *Policy) extraParamList() []limiters.Param {
	var out []limiters.Param
	for _, prm := range limiters.Params() {
		if !slices.Contains(spec.CoreParams, prm.Name) && slices.ContainsFunc(sp.Lanes, func(l sim.Lane) bool { return slices.Contains(l.Algorithm.Params(), prm.Name) }) {
			out = append(out, prm)
		}
	}
	return out
}

// ExtraParams states, each after ", ", the parameters beyond spec.CoreParams
// that any of algos takes, with their values in p: ", buckets 10".
func (sp *Policy) ExtraParams(algos []limiters.Algorithm, p limiters.Policy) string {
	var b strings.Builder
	for _, prm := range limiters.Params() {
		if slices.Contains(spec.CoreParams, prm.Name) || !slices.ContainsFunc(algos, func(a limiters.Algorithm) bool { return slices.Contains(a.Params(), prm.Name) }) {
			continue
		}
		b.WriteString(", " + prm.Name + " " + sp.ParamText(p, prm.Name))
	}
	return b.String()
}

// ParamText renders the value of parameter name in p, durations and
// rates in the unit: "10", "2.5s", "0.2".
func (sp *Policy) ParamText(p limiters.Policy, name string) string {
	switch v := p.Field(name).(type) {
	case *int64:
		return strconv.FormatInt(*v, 10)
	case *time.Duration:
		return sp.Duration(*v)
	case *limiters.Rate:
		return v.Format(sp.Unit)
	}
	return ""
}

// Duration renders d with the unit's name: "10s", "2.5s", "10000ms".
func (sp *Policy) Duration(d time.Duration) string {
	return string(traces.AppendDecimal(nil, int64(d), sp.Unit)) + traces.UnitName(sp.Unit)
}

// rate renders the bucket rate per unit.
func (sp *Policy) rate() string {
	return sp.Shared.Rate.Format(sp.Unit)
}

// Describe states in one line the shared parameters, those of the lanes
// that have none of their own (laneLines lists the others), or that each
// has its own. With burst, it adds the burst interval and the intent,
// when that is not the shared limit and window, or that none was given.
func (sp *Policy) Describe(burst bool) string {
	var windowed, bucket bool
	var shared []limiters.Algorithm
	for i, l := range sp.Lanes {
		if sp.Own[i] {
			continue
		}
		shared = append(shared, l.Algorithm)
		if l.Algorithm.Windowed() {
			windowed = true
		} else {
			bucket = true
		}
	}
	var parts []string
	p := sp.Shared
	if len(shared) == 0 {
		parts = append(parts, "each limiter has its own (below)")
	}
	if windowed {
		parts = append(parts, fmt.Sprintf("limit %d per %s", p.Limit, sp.Duration(p.Window)))
	}
	if bucket {
		parts = append(parts, fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, sp.rate(), traces.UnitName(sp.Unit)))
	}
	if extra := sp.ExtraParams(shared, p); extra != "" {
		parts = append(parts, extra[2:])
	}
	if len(shared) > 0 {
		parts = append(parts, "clock "+spec.ClockName(p.Clock))
	}
	if burst {
		parts = append(parts, "burst interval "+sp.Duration(sp.Interval))
		switch {
		case !sp.IntentNamed:
			parts = append(parts, "no intent given, so no false allows, false rejects or ratios: --intent LIMIT/WINDOW counts them against an exact rolling limit")
		case !windowed || sp.Intent.Limit != p.Limit || sp.Intent.Window != p.Window:
			parts = append(parts, fmt.Sprintf("oracle limit %d per %s", sp.Intent.Limit, sp.Duration(sp.Intent.Window)))
		}
	}
	return strings.Join(parts, "; ")
}

// BurstCells are the user, from and to of a worst interval; null when
// nothing was allowed.
func (sp *Policy) BurstCells(iv sim.Interval) (user, from, to render.Cell) {
	if iv.Count == 0 {
		return render.Null(), render.Null(), render.Null()
	}
	return render.Str(iv.Key), sp.InstantCell(iv.From), sp.InstantCell(iv.To)
}

// InstantCell renders a time of the trace as the trace writes its times
// (traces.TimeWriter): the one rule for times in every output.
func (sp *Policy) InstantCell(ns int64) render.Cell {
	text := sp.Times.Format(ns)
	if sp.Times.Numeric() {
		return render.Num(text)
	}
	return render.Str(text)
}

// BackwardsWarning says, when the replay of trace found requests earlier
// than their key's latest, that the trace is not in time order, and what
// to do; empty when there are none. clamp says --clock clamp judged them.
func BackwardsWarning(rep *sim.Report, trace string, clamp bool) string {
	if rep.ClockBackwards == 0 {
		return ""
	}
	remedy := "replay it with --sort, or use --clock clamp to judge them at their key's latest time"
	if clamp {
		remedy = "--clock clamp judged them at their key's latest time; --sort judges them at their own"
	}
	return fmt.Sprintf("%s came earlier than their key's latest request, the first at %s:%d: the trace is not in time order; %s",
		render.Plural(rep.ClockBackwards, "request"), trace, rep.FirstBackwards.Line, remedy)
}

// ResolutionWarning says, when the times of the log named name are whole
// multiples of res coarser than the emission interval of some of the
// lanes (sweep.FinerThan), that the requests of one step arrive at once
// and are refused more than at their own times; empty when none is.
func ResolutionWarning(lanes []sim.Lane, name string, res time.Duration) string {
	if res == 0 {
		return ""
	}
	coarse := sweep.FinerThan(lanes, res)
	if len(coarse) == 0 {
		return ""
	}
	if len(coarse) > 3 {
		coarse = append(coarse[:3], fmt.Sprintf("%d more", len(coarse)-3))
	}
	return fmt.Sprintf("the times of %s are whole multiples of %v, coarser than the time between two requests a limiter lets through at its rate (its emission interval), %s: the requests of one step arrive at once, and it refuses more of them than it would at their own times; log times with milliseconds (nginx's $msec) to replay them as they came",
		name, res, render.JoinList(coarse, "and"))
}
