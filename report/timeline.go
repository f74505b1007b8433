package report

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// TimelineFigure draws the intervals of rep, a replay that counted them
// per every (sim.Config.Every): per interval the requests and what each
// limiter allowed, its false rejects marked, and below them each
// limiter's false rejects and false allows against the intent.
func TimelineFigure(fr *Frame, every time.Duration, rep *sim.Report) *Figure {
	n := len(rep.Algos)
	requests := Line{Label: "requests", Color: Black, Step: true}
	allowed := make([]Line, n)
	falseRej := make([]Line, n)
	falseAll := make([]Line, n)
	marks := make([]Marks, n)
	for l, st := range rep.Algos {
		allowed[l] = Line{Label: st.Name, Color: LimiterColor(l), Step: true}
		falseRej[l] = Line{Label: st.Name + " false rejects", Color: LimiterColor(l), Step: true}
		falseAll[l] = Line{Label: st.Name + " false allows", Color: LimiterColor(l), Step: true, Dashed: true}
		marks[l] = Marks{Label: st.Name + " false rejects", Color: LimiterColor(l), Shape: LimiterShape(l)}
	}
	for _, iv := range rep.Intervals {
		x := fr.X(iv.Start)
		requests.Points = append(requests.Points, Point{X: x, Y: float64(iv.Requests)})
		for l, c := range iv.Lanes {
			allowed[l].Points = append(allowed[l].Points, Point{X: x, Y: float64(c.Allowed)})
			falseRej[l].Points = append(falseRej[l].Points, Point{X: x, Y: float64(c.FalseRejects)})
			falseAll[l].Points = append(falseAll[l].Points, Point{X: x, Y: float64(c.FalseAllows)})
			if c.FalseRejects > 0 {
				marks[l].Points = append(marks[l].Points, Point{X: x, Y: float64(c.Allowed)})
			}
		}
	}
	// A closing point so that the last interval's step has a width.
	closeStep := func(l *Line) {
		if len(l.Points) > 0 {
			last := l.Points[len(l.Points)-1]
			l.Points = append(l.Points, Point{X: last.X + fr.X(int64(every)) - fr.X(0), Y: last.Y})
		}
	}
	closeStep(&requests)
	per := fr.duration(every)
	top := Panel{Title: fmt.Sprintf("requests and allowed per %s (marks: intervals with false rejects)", per),
		YLabel: "requests", YFrom0: true, Lines: []Line{requests}}
	bottom := Panel{Title: fmt.Sprintf("false rejects (solid) and false allows (dashed) per %s, against a sliding log of limit %d per %s",
		per, fr.Intent.Limit, fr.duration(fr.Intent.Window)), YLabel: "requests", YFrom0: true}
	for l := range allowed {
		closeStep(&allowed[l])
		closeStep(&falseRej[l])
		closeStep(&falseAll[l])
		top.Lines = append(top.Lines, allowed[l])
		top.Marks = append(top.Marks, marks[l])
		bottom.Lines = append(bottom.Lines, falseRej[l], falseAll[l])
	}
	return &Figure{
		Title:  fr.title(fmt.Sprintf("timeline per %s (%s, %s)", per, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key"))),
		Clock:  fr.Clock,
		XLabel: fr.XLabel,
		Panels: []Panel{top, bottom},
	}
}
