package cmd

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

const plotStateLong = `Draw one key's state over time, a panel per limiter: what the algorithm
keeps (a window's count, the cost in the log, the estimate, tokens, the
level, the queue, GCRA's debt in tokens), the limit or capacity as a
dashed line, each request as a mark (allowed, rejected, or delayed by
leaky-queue), the window edges of the window algorithms, and the worst
burst interval shaded.

The state after each request is the one "run --explain" shows; between
requests a bucket is drawn refilling or draining at its rate, a fixed
window's count falls to zero at the window's edge and a sliding log's
entries leave it a window after they came. Only the key's requests are
kept: the trace is read once and never held.`

// plotStateOptions are the options of "ratesim plot state".
type plotStateOptions struct {
	plotReplayOptions
	User string
}

func newPlotStateCmd() *cobra.Command {
	o := &plotStateOptions{}
	c := &cobra.Command{
		Use:               "state --user U [flags] TRACE -o FILE",
		Short:             "One key's state over time, a panel per limiter",
		Long:              plotStateLong + policyHelp,
		Example:           "  ratesim plot state --user u1 traces/examples/boundary.csv -o boundary.svg\n  ratesim plot state --user u1 --algos all --term traces/examples/boundary.csv",
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			s := streamsOf(c)
			if o.User == "" {
				return usageErrorf("plot state needs --user, the key to draw")
			}
			rp, format, err := o.prepare(c, args, s)
			if err != nil {
				return err
			}
			defer rp.trace.Close()
			f, err := stateFigure(rp, o.User, s)
			if err != nil {
				return err
			}
			if err := o.out.write(f, format, s); err != nil {
				return err
			}
			return rp.trace.finish()
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.User, "user", "", "the key whose state to draw (its user, or with --key the composite key)")
	addPlotReplayFlags(fs, &o.plotReplayOptions)
	_ = c.RegisterFlagCompletionFunc("user", completeUsers)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// userSource passes on only the requests of some users: a key's
// decisions depend on its own requests alone, so replaying them alone
// decides them as the whole trace would, and nothing else is kept.
type userSource struct {
	src   sim.Source
	users []string // few: comparing each costs less than hashing
	n     int64
	other []string // a few other users, for the error when none has one
}

func (u *userSource) Next() (*traces.Event, error) {
	for {
		ev, err := u.src.Next()
		if err != nil {
			return ev, err
		}
		if u.wanted(ev.User) {
			u.n++
			return ev, nil
		}
		if len(u.other) < 5 && !slices.Contains(u.other, string(ev.User)) {
			u.other = append(u.other, string(ev.User))
		}
	}
}

// wanted reports whether user is one of the users passed on.
func (u *userSource) wanted(user []byte) bool {
	for _, w := range u.users {
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

// statePoint is one request of the key under one limiter.
type statePoint struct {
	t       int64 // ns
	allowed bool
	delayed bool
	value   float64
	cost    int64
}

// keyTrace is one key's requests and, per limiter, the state after each:
// what its picture is drawn from, a few machine words a request, in
// chunks, so that it grows without copying. The picture's points are
// generated from it again for each use and downsampled as they go (see
// report.Line.Series), never held.
type keyTrace struct {
	lanes  int
	n      int
	chunks []*keyChunk
}

// keyChunk holds keyChunkLen requests of a keyTrace.
type keyChunk struct {
	t, cost          [keyChunkLen]int64
	allowed, delayed [keyChunkLen]uint64 // a bit per limiter
	values           []float64           // per request, a value per limiter
}

const keyChunkLen = 4096

// add appends a request at t of cost, with its limiters' outcomes
// (allowed and delayed, a bit each) and state values.
func (kt *keyTrace) add(t, cost int64, allowed, delayed uint64, values []float64) {
	j := kt.n % keyChunkLen
	if j == 0 {
		kt.chunks = append(kt.chunks, &keyChunk{values: make([]float64, keyChunkLen*kt.lanes)})
	}
	c := kt.chunks[len(kt.chunks)-1]
	c.t[j], c.cost[j], c.allowed[j], c.delayed[j] = t, cost, allowed, delayed
	copy(c.values[j*kt.lanes:], values)
	kt.n++
}

// at returns request i under limiter l.
func (kt *keyTrace) at(i, l int) statePoint {
	c, j := kt.chunks[i/keyChunkLen], i%keyChunkLen
	return statePoint{t: c.t[j], cost: c.cost[j], allowed: c.allowed[j]&(1<<l) != 0, delayed: c.delayed[j]&(1<<l) != 0,
		value: c.values[j*kt.lanes+l]}
}

// keyStates replays the requests of users through rp's limiters and
// returns, per user, its requests and the state after each, and the
// report of that replay, and a few of the other users, for an error
// about a user with no request.
func keyStates(rp *replay, users []string, s streams) (map[string]*keyTrace, *sim.Report, []string, error) {
	if len(rp.keys) > 0 {
		return nil, nil, nil, usageErrorf("plot state draws a user's state: it does not take --key")
	}
	for _, l := range rp.spec.Lanes {
		if l.Algorithm.KeysInteract() {
			return nil, nil, nil, usageErrorf("%s: its decisions for one user depend on the other users' requests (nginx's zone), and the state is drawn from the drawn users' requests alone", l.Name)
		}
	}
	src := &userSource{src: rp.trace, users: users}
	cfg := rp.config(true, true)
	lanes := rp.spec.Lanes
	traces := map[string]*keyTrace{}
	values := make([]float64, len(lanes))
	var perr error
	emit := func(b *sim.Batch) error {
		for i := range b.Requests {
			r := &b.Requests[i]
			kt := traces[string(r.User)]
			if kt == nil {
				kt = &keyTrace{lanes: len(lanes)}
				traces[string(r.User)] = kt
			}
			var allowed, delayed uint64
			for l, lane := range lanes {
				d := b.Decision(i, l)
				v, err := stateValue(lane, d, b.State(i, l), r.Time, rp.spec)
				if err != nil && perr == nil {
					perr = err
				}
				values[l] = v
				if d.Allowed {
					allowed |= 1 << l
					if d.Delay > 0 {
						delayed |= 1 << l
					}
				}
			}
			kt.add(r.Time, r.Cost, allowed, delayed, values)
		}
		return nil
	}
	rep, err := rp.runFrom(src, cfg, s, emit)
	if err != nil {
		return nil, nil, nil, err
	}
	if perr != nil {
		return nil, nil, nil, perr
	}
	return traces, rep, src.other, nil
}

// noUserError says that user has no request in the trace.
func noUserError(rp *replay, user string, other []string) error {
	msg := fmt.Sprintf("no request of user %q in %s", user, rp.trace.name)
	if len(other) > 0 {
		msg += fmt.Sprintf(" (users seen include %s)", strings.Join(other, ", "))
	}
	return usageErrorf("%s", msg)
}

// stateValue reads the number a state panel draws from a decision and its
// state text (what "run --explain" shows).
func stateValue(lane sim.Lane, d *limiters.Decision, text []byte, now int64, sp *policySpec) (float64, error) {
	bad := func() error { return fmt.Errorf("plot: cannot read %s's state %q", lane.Name, text) }
	num := func(field []byte) (float64, error) {
		v, err := strconv.ParseFloat(string(bytes.TrimPrefix(field, []byte("~"))), 64)
		if err != nil {
			return 0, bad()
		}
		return v, nil
	}
	// after returns the word after prefix in text.
	after := func(prefix string) []byte {
		_, rest, _ := bytes.Cut(text, []byte(prefix))
		rest = bytes.TrimLeft(rest, asciiSpace)
		if i := bytes.IndexAny(rest, asciiSpace); i >= 0 {
			rest = rest[:i]
		}
		return rest
	}
	switch lane.Algorithm {
	case limiters.FixedWindow, limiters.SlidingBuckets:
		return num(after(" count "))
	case limiters.SlidingLog:
		return float64(lane.Policy.Limit - d.Remaining), nil
	case limiters.SlidingCounter:
		return num(after("estimate "))
	case limiters.TokenBucket:
		return num(after("tokens "))
	case limiters.LeakyBucket:
		return num(after("level "))
	case limiters.LeakyQueue:
		return num(after("queue "))
	case limiters.GCRA:
		tat := string(bytes.TrimPrefix(after("tat "), []byte("~")))
		var at int64
		if sp.rfc3339 {
			t, err := time.Parse(time.RFC3339Nano, tat)
			if err != nil {
				return 0, bad()
			}
			at = t.UnixNano()
		} else {
			d, err := traces.ParseDuration(tat, sp.Unit)
			if err != nil {
				return 0, bad()
			}
			at = int64(d)
		}
		// The debt in tokens: how far the theoretical arrival time is
		// ahead of now, at the rate.
		r := lane.Policy.Rate
		return math.Max(0, float64(at-now)*float64(r.N)/float64(r.Per)), nil
	}
	switch {
	case lane.Algorithm == limiters.SpringGateway:
		return float64(lane.Policy.Library.Spring.BurstCapacity - d.Remaining), nil
	case lane.Algorithm.Library() && !lane.Algorithm.Windowed():
		return float64(lane.Policy.Capacity - d.Remaining), nil // what the library reports used
	}
	return float64(lane.Policy.Limit - d.Remaining), nil
}

// asciiSpace are the characters that separate the words of a state text.
const asciiSpace = " \t\n\v\f\r"

// stateQuantity names what a state panel draws for an algorithm.
func stateQuantity(a limiters.Algorithm) string {
	switch a {
	case limiters.FixedWindow:
		return "count in window"
	case limiters.SlidingLog:
		return "cost in log"
	case limiters.SlidingCounter:
		return "estimate"
	case limiters.SlidingBuckets:
		return "count in span"
	case limiters.TokenBucket:
		return "tokens"
	case limiters.LeakyBucket:
		return "level"
	case limiters.LeakyQueue:
		return "queued"
	case limiters.GCRA:
		return "debt (tokens)"
	}
	return "state"
}

// maxEdges is the most window edges a panel draws; more would be a grey
// smear.
const maxEdges = 200

// stateFigure replays user's requests and draws their state.
func stateFigure(rp *replay, user string, s streams) (*report.Figure, error) {
	states, rep, other, err := keyStates(rp, []string{user}, s)
	if err != nil {
		return nil, err
	}
	kt := states[user]
	if kt == nil {
		return nil, noUserError(rp, user, other)
	}
	sp := rp.spec
	f := &report.Figure{
		Title:  figureTitle(fmt.Sprintf("state of %s", user), rp),
		Clock:  sp.rfc3339,
		XLabel: xLabel(rp),
	}
	for l, lane := range sp.Lanes {
		f.Panels = append(f.Panels, statePanel(lane, l, kt, rep.Algos[l].Burst, sp))
	}
	return f, nil
}

// statePanel draws limiter index's state for the key of kt.
func statePanel(lane sim.Lane, index int, kt *keyTrace, burst sim.Interval, sp *policySpec) report.Panel {
	a, pol := lane.Algorithm, lane.Policy
	limit, limitName := float64(pol.Limit), "limit"
	if !a.Windowed() {
		limit, limitName = float64(pol.Capacity), "capacity"
	}
	title := fmt.Sprintf("%s: %s", lane.Name, stateQuantity(a))
	if lane.Name != a.String() {
		title = fmt.Sprintf("%s (%s): %s", lane.Name, a, stateQuantity(a))
	}
	pn := report.Panel{Title: title, YLabel: stateQuantity(a), YFrom0: true,
		Limits: []report.Limit{{Label: fmt.Sprintf("%s %s", limitName, report.FormatNumber(limit)), Y: limit, Color: report.Black}}}
	rate := 0.0
	if pol.Rate.Valid() {
		rate = float64(pol.Rate.N) / float64(pol.Rate.Per) // per ns
	}
	line := func(yield func(report.Point) bool) {
		var log []statePoint // the sliding log's allowed requests in the window
		var prev statePoint
		for i := range kt.n {
			p := kt.at(i, index)
			if i > 0 && !between(a, pol, prev, p.t, rate, &log, sp, yield) {
				return
			}
			if !yield(report.Point{X: xOf(p.t, sp), Y: p.value}) {
				return
			}
			if a == limiters.SlidingLog && p.allowed {
				log = append(log, p)
			}
			prev = p
		}
	}
	// marks yields the requests of one outcome.
	const allowed, rejected, delayed = 0, 1, 2
	marks := func(outcome int) func(func(report.Point) bool) {
		bit := uint64(1) << index
		return func(yield func(report.Point) bool) {
			for k, c := range kt.chunks {
				for j := range min(keyChunkLen, kt.n-k*keyChunkLen) {
					o := rejected
					switch {
					case c.delayed[j]&bit != 0:
						o = delayed
					case c.allowed[j]&bit != 0:
						o = allowed
					}
					if o == outcome && !yield(report.Point{X: xOf(c.t[j], sp), Y: c.values[j*kt.lanes+index]}) {
						return
					}
				}
			}
		}
	}
	pn.Lines = []report.Line{{Label: lane.Name, Color: report.LimiterColor(index), Series: line}}
	pn.Marks = append(pn.Marks,
		report.Marks{Label: "allowed", Color: report.Allowed, Shape: report.Circle, Series: marks(allowed)},
		report.Marks{Label: "rejected", Color: report.Rejected, Shape: report.Cross, Series: marks(rejected)})
	if a.Delays() {
		pn.Marks = append(pn.Marks, report.Marks{Label: "delayed", Color: report.Delayed, Shape: report.Triangle, Series: marks(delayed)})
	}
	if a.Windowed() && a != limiters.SlidingLog && kt.n > 0 {
		w := int64(pol.Window)
		first, last := kt.at(0, index).t, kt.at(kt.n-1, index).t
		for k := floorDiv(first, w) + 1; k*w <= last && len(pn.Edges) < maxEdges; k++ {
			pn.Edges = append(pn.Edges, xOf(k*w, sp))
		}
		if len(pn.Edges) >= maxEdges {
			pn.Edges = nil
		}
	}
	if burst.Count > 0 {
		pn.Spans = []report.Span{{Label: fmt.Sprintf("worst burst: %d in %s", burst.Count, sp.duration(sp.interval())),
			From: xOf(burst.From, sp), To: xOf(burst.To, sp)}}
	}
	return pn
}

// between yields the points that draw a limiter's state from the request
// prev until just before the next one at t: a bucket refilling or
// draining at its rate, a fixed window emptied at its edge, a sliding
// log's entries leaving it. Only the picture depends on this arithmetic,
// never a decision. It reports false when yield did, to stop.
func between(a limiters.Algorithm, pol limiters.Policy, prev statePoint, t int64, rate float64, log *[]statePoint, sp *policySpec, yield func(report.Point) bool) bool {
	v := prev.value
	capacity := float64(pol.Capacity)
	pt := func(at int64, y float64) report.Point { return report.Point{X: xOf(at, sp), Y: y} }
	switch a {
	case limiters.TokenBucket:
		if rate <= 0 || v >= capacity {
			return yield(pt(t, v))
		}
		full := prev.t + int64(math.Ceil((capacity-v)/rate))
		if full < t {
			return yield(pt(full, capacity)) && yield(pt(t, capacity))
		}
		return yield(pt(t, v+rate*float64(t-prev.t)))
	case limiters.LeakyBucket, limiters.LeakyQueue, limiters.GCRA:
		if rate <= 0 || v <= 0 {
			return yield(pt(t, v))
		}
		empty := prev.t + int64(math.Ceil(v/rate))
		if empty < t {
			return yield(pt(empty, 0)) && yield(pt(t, 0))
		}
		return yield(pt(t, v-rate*float64(t-prev.t)))
	case limiters.FixedWindow:
		w := int64(pol.Window)
		edge := (floorDiv(prev.t, w) + 1) * w
		if edge <= t {
			return yield(pt(edge, v)) && yield(pt(edge, 0)) && yield(pt(t, 0))
		}
	case limiters.SlidingLog:
		// An entry at e counts while now <= e + window.
		w := int64(pol.Window)
		for len(*log) > 0 && (*log)[0].t+w < t {
			e := (*log)[0]
			*log = (*log)[1:]
			if e.t+w < prev.t {
				continue
			}
			x := xOf(e.t+w, sp)
			if !yield(report.Point{X: x, Y: v}) || !yield(report.Point{X: x, Y: v - float64(e.cost)}) {
				return false
			}
			v -= float64(e.cost)
		}
		return yield(pt(t, v))
	}
	return yield(pt(t, v))
}
