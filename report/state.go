package report

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/internal/intmath"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// States keeps the requests of a few users as a replay decides them, to
// draw each one's state over time, a panel per limiter: the number that
// stands for the state (limiters.Algorithm.Gauge), each request marked
// with its outcome at the number its decision left, and between requests
// the number as it evolves.
//
// Per request it keeps the time, the cost and, per limiter, the outcome
// and that number: a few words, in chunks, so that it grows without
// copying. The lines between requests are never held: each use generates
// them again by stepping the user's requests through a limiters.Table of
// the limiter, reading its gauge at every time the number stops moving
// on a straight line, and the picture downsamples them as they come.
//
// The outcomes are the replay's own decisions. States replays each
// request once more through a table of its own to read the gauge, and
// Emit fails if that replay decides otherwise, so no picture shows a
// state the replay did not have.
type States struct {
	lanes  []sim.Lane
	delays bool
	users  []string
	ids    map[string]uint32 // a user's id in tables: its index in users
	keys   []*keyTrace       // per user
	tables []*limiters.Table // per lane
	others []string          // a few other users seen
}

// Undrawable says why the states of lanes cannot be drawn, naming the
// lane and its algorithm, or returns "" when they can: a lane whose
// decisions for one user depend on the other users' requests (nginx's
// zone, limiters.Algorithm.KeysInteract), as States replays the drawn
// users' requests alone, or whose algorithm has no gauge.
func Undrawable(lanes []sim.Lane) string {
	for _, l := range lanes {
		name := l.Name
		if name != l.Algorithm.String() {
			name = fmt.Sprintf("%s (%s)", l.Name, l.Algorithm)
		}
		if l.Algorithm.KeysInteract() {
			return fmt.Sprintf("%s: its decisions for one user depend on the other users' requests (nginx's zone), and a state is drawn from a replay of the drawn users' requests alone", name)
		}
		if g := l.Algorithm.Gauge(); g.Quantity == "" {
			return fmt.Sprintf("%s has no gauge to draw: %s", name, g.None)
		}
	}
	return ""
}

// NewStates returns a States for a replay through lanes that keeps the
// requests of users. It fails for lanes that are Undrawable.
func NewStates(lanes []sim.Lane, users []string) (*States, error) {
	if why := Undrawable(lanes); why != "" {
		return nil, fmt.Errorf("report: %s", why)
	}
	s := &States{lanes: lanes, delays: delaying(lanes), users: users, ids: map[string]uint32{}, keys: make([]*keyTrace, len(users))}
	for i, u := range users {
		s.ids[u] = uint32(i)
	}
	for _, l := range lanes {
		tb, err := limiters.NewTable(l.Algorithm, l.Policy)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", l.Name, err)
		}
		s.tables = append(s.tables, tb)
	}
	return s, nil
}

// Configure asks cfg for what Emit reads: every request, and the
// decisions in full when a lane delays what it admits.
func (s *States) Configure(cfg *sim.Config) {
	cfg.Rows = true
	cfg.Detail = cfg.Detail || s.delays
}

// Filter returns a source that passes on only the requests of the users
// from src: a key's decisions depend on its own requests alone, so
// replaying them alone decides them as the whole trace would. It notes a
// few of the other users it passed over (Others).
func (s *States) Filter(src sim.Source) sim.Source {
	return &userSource{src: src, s: s}
}

// Others returns a few of the users other than the kept ones that Filter
// passed over: for an error about a user with no request.
func (s *States) Others() []string { return s.others }

// Has reports whether user had a request in the replay.
func (s *States) Has(user string) bool {
	id, ok := s.ids[user]
	return ok && s.keys[id] != nil
}

// Emit takes a batch of the replay; it is sim.Run's emit callback.
func (s *States) Emit(b *sim.Batch) error {
	n := len(s.lanes)
	for i := range b.Requests {
		r := &b.Requests[i]
		id, ok := s.ids[string(r.User)]
		if !ok {
			continue
		}
		kt := s.keys[id]
		if kt == nil {
			kt = &keyTrace{lanes: n}
			s.keys[id] = kt
		}
		out, vals := kt.add(r.Time, r.Cost)
		for l, tb := range s.tables {
			d := tb.Allow(id, r.Time, r.Cost)
			if d.Allowed != b.Allowed(i, l) || s.delays && d.Allowed && d.Delay != b.Decision(i, l).Delay {
				return fmt.Errorf("report: %s decided line %d (user %q at %d) otherwise when its user's requests were replayed alone", s.lanes[l].Name, r.Line, r.User, r.Time)
			}
			switch {
			case d.Allowed && d.Delay > 0:
				out[l] = outDelayed
			case d.Allowed:
				out[l] = outAllowed
			default:
				out[l] = outRejected
			}
			vals[l], _ = tb.Gauge(id, r.Time)
		}
	}
	return nil
}

// Figure draws user's state under every limiter, each limiter's worst
// burst (bursts, in lane order) shaded; nil when the user had no request.
func (s *States) Figure(fr *Frame, user string, bursts []sim.Interval) *Figure {
	id, ok := s.ids[user]
	if !ok || s.keys[id] == nil {
		return nil
	}
	f := &Figure{Title: fr.title("state of " + user), Clock: fr.Clock, XLabel: fr.XLabel}
	for l := range s.lanes {
		var burst sim.Interval
		if l < len(bursts) {
			burst = bursts[l]
		}
		f.Panels = append(f.Panels, s.panel(fr, l, s.keys[id], burst))
	}
	return f
}

// WorstUsers returns the users of the limiters' worst bursts in rep, each
// once, in lane order: the users whose states WorstFigures draws.
func WorstUsers(rep *sim.Report) []string {
	var users []string
	for _, st := range rep.Algos {
		if st.Burst.Count > 0 && !slices.Contains(users, st.Burst.Key) {
			users = append(users, st.Burst.Key)
		}
	}
	return users
}

// WorstFigures draws, for each user of WorstUsers(rep), its state under
// the limiters whose worst burst it had, that burst shaded.
func (s *States) WorstFigures(fr *Frame, rep *sim.Report) []*Figure {
	var figs []*Figure
	for _, user := range WorstUsers(rep) {
		id, ok := s.ids[user]
		if !ok || s.keys[id] == nil {
			continue
		}
		var panels []Panel
		var names []string
		for l := range s.lanes {
			if st := rep.Algos[l]; st.Burst.Count > 0 && st.Burst.Key == user {
				panels = append(panels, s.panel(fr, l, s.keys[id], st.Burst))
				names = append(names, s.lanes[l].Name)
			}
		}
		figs = append(figs, &Figure{
			Title:  []string{fmt.Sprintf("state of %s, the worst key of %s", user, strings.Join(names, ", "))},
			Clock:  fr.Clock,
			XLabel: fr.XLabel,
			Panels: panels,
		})
	}
	return figs
}

// maxEdges is the most window edges a panel draws; more would be a grey
// smear.
const maxEdges = 200

// lineColumns is how finely a state's line keeps the times its number
// bends at: a breakpoint closer than 1/lineColumns of the user's time span
// to the last point drawn is passed over, the number drawn a straight line
// to where it stands then. The number between two requests moves one way
// only, so every column of a picture of fewer columns still shows its
// highest and lowest exactly; it bounds the points of a line whatever the
// breakpoints (a tick queue's drain has one every tick).
const lineColumns = 4096

// panel draws lane l's state for the user of kt.
func (s *States) panel(fr *Frame, l int, kt *keyTrace, burst sim.Interval) Panel {
	lane := s.lanes[l]
	a, pol := lane.Algorithm, lane.Policy
	g := a.Gauge()
	limit := float64(a.Limit(pol))
	title := fmt.Sprintf("%s: %s", lane.Name, g.Quantity)
	if lane.Name != a.String() {
		title = fmt.Sprintf("%s (%s): %s", lane.Name, a, g.Quantity)
	}
	pn := Panel{Title: title, YLabel: g.Quantity, YFrom0: true,
		Limits: []Limit{{Label: fmt.Sprintf("%s %s", g.Limit, FormatNumber(limit)), Y: limit, Color: Black}}}
	first, last := kt.time(0), kt.time(kt.n-1)
	res := int64(0)
	if last > first {
		res = int64(uint64(last-first) / lineColumns)
	}
	pn.Lines = []Line{{Label: lane.Name, Color: LimiterColor(l), Series: kt.line(fr, lane, res)}}
	pn.Marks = append(pn.Marks,
		Marks{Label: "allowed", Color: Allowed, Shape: Circle, Series: kt.marks(fr, l, outAllowed)},
		Marks{Label: "rejected", Color: Rejected, Shape: Cross, Series: kt.marks(fr, l, outRejected)})
	if a.Delays() {
		pn.Marks = append(pn.Marks, Marks{Label: "delayed", Color: Delayed, Shape: Triangle, Series: kt.marks(fr, l, outDelayed)})
	}
	if w := int64(a.Aligned(pol)); w > 0 {
		for k := intmath.FloorDiv(first, w) + 1; k <= intmath.FloorDiv(last, w) && len(pn.Edges) <= maxEdges; k++ {
			pn.Edges = append(pn.Edges, fr.X(k*w))
		}
		if len(pn.Edges) > maxEdges {
			pn.Edges = nil
		}
	}
	if burst.Count > 0 {
		pn.Spans = []Span{{Label: fmt.Sprintf("worst burst: %d in %s", burst.Count, fr.duration(fr.Interval)),
			From: fr.X(burst.From), To: fr.X(burst.To)}}
	}
	return pn
}

// A request's outcome under one limiter.
const (
	outRejected uint8 = iota
	outAllowed
	outDelayed
)

// keyTrace is one user's requests and, per limiter, the outcome of each
// and the gauge after it.
type keyTrace struct {
	lanes  int
	n      int
	chunks []*keyChunk
}

// keyChunk holds keyChunkLen requests of a keyTrace.
type keyChunk struct {
	t, cost [keyChunkLen]int64
	outcome []uint8   // per request, one per limiter
	values  []float64 // per request, one per limiter
}

const keyChunkLen = 4096

// add appends a request at t of cost and returns where its limiters'
// outcomes and gauges go.
func (kt *keyTrace) add(t, cost int64) (outcome []uint8, values []float64) {
	j := kt.n % keyChunkLen
	if j == 0 {
		kt.chunks = append(kt.chunks, &keyChunk{outcome: make([]uint8, keyChunkLen*kt.lanes), values: make([]float64, keyChunkLen*kt.lanes)})
	}
	c := kt.chunks[len(kt.chunks)-1]
	c.t[j], c.cost[j] = t, cost
	kt.n++
	return c.outcome[j*kt.lanes : (j+1)*kt.lanes], c.values[j*kt.lanes : (j+1)*kt.lanes]
}

// time returns the time of request i.
func (kt *keyTrace) time(i int) int64 { return kt.chunks[i/keyChunkLen].t[i%keyChunkLen] }

// marks yields, for limiter l, the requests of one outcome at the gauge
// their decisions left.
func (kt *keyTrace) marks(fr *Frame, l int, outcome uint8) iter.Seq[Point] {
	return func(yield func(Point) bool) {
		for k, c := range kt.chunks {
			for j := range min(keyChunkLen, kt.n-k*keyChunkLen) {
				if c.outcome[j*kt.lanes+l] == outcome && !yield(Point{X: fr.X(c.t[j]), Y: c.values[j*kt.lanes+l]}) {
					return
				}
			}
		}
	}
}

// line yields the line of lane's gauge over the requests: at each request
// the number it was judged by, then the number it left, and between
// requests the number at each time it stops moving on a straight line,
// one nanosecond before and at it (a window's count drops to 0 at the
// window's edge), but for breakpoints closer than res to the last point
// drawn. A request earlier than the one before it is drawn at the time
// the line has reached, so that the line runs forward.
func (kt *keyTrace) line(fr *Frame, lane sim.Lane, res int64) iter.Seq[Point] {
	return func(yield func(Point) bool) {
		tb, err := limiters.NewTable(lane.Algorithm, lane.Policy)
		if err != nil {
			return // the lane's policy was valid for its replay
		}
		var last Point
		drawn := false
		emit := func(ns int64, y float64) bool {
			p := Point{X: fr.X(ns), Y: y}
			if drawn && p == last {
				return true
			}
			last, drawn = p, true
			return yield(p)
		}
		gauge := func(ns int64) float64 {
			v, _ := tb.Gauge(0, ns)
			return v
		}
		var at int64 // the time the line has reached
		for k, c := range kt.chunks {
			for j := range min(keyChunkLen, kt.n-k*keyChunkLen) {
				t := c.t[j]
				if k == 0 && j == 0 {
					at = t
				} else if t > at {
					if !between(tb, at, t, res, emit) {
						return
					}
					at = t
				}
				if !emit(at, gauge(at)) {
					return
				}
				tb.Allow(0, t, c.cost[j])
				if !emit(at, gauge(at)) {
					return
				}
			}
		}
	}
}

// between emits the points of tb's gauge for key 0 after from and before
// to, with no request between: at each time the number stops moving on a
// straight line, a nanosecond before it and at it, but for those closer
// than res to the last point, where it emits the number res later
// instead. It reports false when emit did, to stop.
func between(tb *limiters.Table, from, to, res int64, emit func(ns int64, y float64) bool) bool {
	c := from
	for {
		_, until := tb.Gauge(0, c)
		switch {
		case until > to:
			return true // a straight line to the request at to
		case uint64(until)-uint64(c) > uint64(res): // until > c: the difference fits

			if until-1 > c {
				if v, _ := tb.Gauge(0, until-1); !emit(until-1, v) {
					return false
				}
			}
			if v, _ := tb.Gauge(0, until); !emit(until, v) {
				return false
			}
			c = until
		case uint64(res) >= uint64(to)-uint64(c):
			return true
		default:
			c += res
			if v, _ := tb.Gauge(0, c); !emit(c, v) {
				return false
			}
		}
		if c == math.MaxInt64 {
			return true
		}
	}
}

// userSource passes on only the requests of the users of a States.
type userSource struct {
	src sim.Source
	s   *States
}

func (u *userSource) Next() (*traces.Event, error) {
	for {
		ev, err := u.src.Next()
		if err != nil {
			return ev, err
		}
		if u.wanted(ev.User) {
			return ev, nil
		}
		if o := &u.s.others; len(*o) < 5 && !slices.Contains(*o, string(ev.User)) {
			*o = append(*o, string(ev.User))
		}
	}
}

// wanted reports whether user is one of the users kept; they are few, so
// comparing each costs less than hashing.
func (u *userSource) wanted(user []byte) bool {
	for _, w := range u.s.users {
		if string(user) == w {
			return true
		}
	}
	return false
}

// Name is the trace's name, which sim puts in its errors.
func (u *userSource) Name() string {
	if n, ok := u.src.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
