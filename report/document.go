package report

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// Contents are what the HTML report of one replay is made of: the
// replay's report, its tables as the commands render them, and what
// else was drawn.
type Contents struct {
	Frame  *Frame
	Report *sim.Report
	// Lines state the replay under the line naming the trace: the
	// policy, the limiters with a policy of their own, a backwards clock.
	Lines []string
	// Top is how many keys per limiter, and worst intervals, are listed.
	Top int
	// Every is the timeline's interval; TimelineNote, when not empty,
	// says why there is no timeline instead.
	Every        time.Duration
	TimelineNote string
	// The tables: the summary per limiter, the agreement between them
	// (none without a Header), the worst burst per limiter and overall,
	// and the keys each limiter rejected most.
	Summary, Agreement, Bursts, TopBursts, Keys Table
	// States holds the worst keys' requests (WorstUsers), from a second
	// replay; when it is nil, StatesNote says why the states are not
	// drawn.
	States     *States
	StatesNote string
	// Sweep is the section of a sweep of the same trace, or nil.
	Sweep *Section
}

// NewDocument lays out the HTML report of c: the replay, the summary, the
// worst bursts, the top keys, the timeline, the worst keys' states and
// the sweep, a section each.
func NewDocument(c *Contents) *Document {
	fr, rep := c.Frame, c.Report
	doc := &Document{Title: "ratesim report: " + fr.Trace}
	doc.Lines = append([]string{fmt.Sprintf("%s: %s, %s", fr.Trace, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key"))}, c.Lines...)

	against := fmt.Sprintf("false allows and rejects are against the oracle, a sliding log of limit %d per %s", fr.Intent.Limit, fr.duration(fr.Intent.Window))
	if !fr.IntentNamed {
		against = "no intent given, so no false allows, false rejects or ratios (-): --intent LIMIT/WINDOW counts them against an exact rolling limit"
	}
	sec := Section{Heading: "Summary", Text: []string{
		fmt.Sprintf("max_in_interval is the most cost one key got through in any %s; %s.", fr.duration(fr.Interval), against)}}
	sec.Tables = append(sec.Tables, c.Summary)
	if c.Agreement.Header != nil {
		sec.Tables = append(sec.Tables, c.Agreement)
	}
	doc.Sections = append(doc.Sections, sec)

	doc.Sections = append(doc.Sections, Section{Heading: "Worst bursts",
		Text: []string{fmt.Sprintf("The most cost one key got through in any closed interval of %s, from the first to the last allowed request in it: per limiter, then the %d worst over every limiter and key (at most one per limiter and key).",
			fr.duration(fr.Interval), c.Top)},
		Tables: []Table{c.Bursts, c.TopBursts}})

	keys := Section{Heading: "Top keys", Text: []string{fmt.Sprintf("The %d keys each limiter rejected most.", c.Top)}}
	if len(c.Keys.Rows) == 0 {
		keys.Text = append(keys.Text, "No limiter rejected a request.")
	} else {
		keys.Tables = []Table{c.Keys}
	}
	doc.Sections = append(doc.Sections, keys)

	tl := Section{Heading: "Timeline"}
	if c.TimelineNote != "" {
		tl.Text = []string{"No timeline: " + c.TimelineNote + "."}
	} else {
		tl.Figures = []*Figure{TimelineFigure(fr, c.Every, rep)}
	}
	doc.Sections = append(doc.Sections, tl)

	st := Section{Heading: "The worst key's state, per limiter"}
	switch {
	case c.States == nil:
		st.Text = []string{c.StatesNote}
	case len(WorstUsers(rep)) == 0:
		st.Text = []string{"No limiter allowed a request."}
	default:
		st.Text = []string{"For each limiter, the key of its worst burst: its state over time, each request marked at the state its decision left, the worst interval shaded."}
		st.Figures = c.States.WorstFigures(fr, rep)
	}
	doc.Sections = append(doc.Sections, st)
	if c.Sweep != nil {
		doc.Sections = append(doc.Sections, *c.Sweep)
	}
	return doc
}
