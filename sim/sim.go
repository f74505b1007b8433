// Package sim replays a trace of requests through rate limiters.
//
// One pass over the trace feeds every selected algorithm. Keys are hashed
// to workers that own their state; each worker interns its keys to dense
// ids and keeps a key's states for every algorithm side by side in a
// limiters.Group. Results come back in trace order, a batch at a time.
// Burst tracking (the most allowed cost in any closed interval) and the
// oracle (a sliding log with the same limit and window) run alongside.
package sim

import (
	"fmt"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// Source yields trace events in order; *traces.Reader is one. The returned
// event and the byte slices it holds may be reused by the next call. A
// Source that also has a Name() string method (as *traces.Reader does) is
// named in errors about its events.
type Source interface {
	Next() (*traces.Event, error)
}

// Config selects what a Run computes.
type Config struct {
	// Lanes are the limiters to run, in output order, each an algorithm
	// with its own policy and a name of its own. At most 63.
	Lanes []Lane
	// Algorithms, when Lanes is empty, are the lanes: each under Policy,
	// named by the algorithm. One of the two must not be empty.
	Algorithms []limiters.Algorithm
	// Policy is the shared parameter set of Algorithms; its limit, window
	// and clock are also the oracle's, the exact rolling policy that false
	// allows and rejects are counted against.
	Policy limiters.Policy
	// KeyFields names the event attributes that make up the limiter key.
	// One field's value is the key as it is ("2001:db8::1"); several are
	// joined with ':' ("user", "endpoint" -> "u1:/login"), a field that
	// holds a ':' or starts with '[' written in brackets, with any ']' or
	// '\' inside escaped by a '\' ("[2001:db8::1]:/login"), so that
	// different fields never make one key. Empty means user.
	KeyFields []string
	// With names event attributes to carry with each request, for
	// Batch.With: a record without one of them is an error naming it.
	With []string
	// WithFile carries with each request, after the With values, the
	// name of the trace file it came from: Batch.With(i, len(With)). It
	// is the file's name even where an event has an attribute "file"
	// (which With's "file" would give).
	WithFile bool
	// Rows asks for per-request results through the emit callback. Without
	// it, Run only gathers the Report.
	Rows bool
	// Detail fills Batch.Decisions with every field of every decision.
	// Without it a batch tells only which algorithms allowed each request
	// (Batch.Allowed), which takes far less arithmetic.
	Detail bool
	// Explain adds each algorithm's state text to every row; it implies
	// Detail.
	Explain bool
	// Rejections gathers, per lane, the keys it rejected at least once
	// (AlgoStats.KeysRejected) and how long each request it rejected was
	// told to wait (AlgoStats.Waits), exactly. It costs every decision's
	// full arithmetic, as Detail does, and memory for each key rejected.
	Rejections bool
	// WaitsTail, with Rejections, keeps of each lane's waits only the
	// longest exactly (at least a sixteenth of them, checked each time
	// the lane's refusals double from 65536 on) and counts the shorter
	// ones alone (AlgoStats.WaitsBelow): far less work per refusal, and
	// enough for the high quantiles a sweep reports, which WaitQuantile
	// gives exactly when they fall among the waits kept, and reports when
	// one does not (a trace whose refusals' waits shrink late), so that
	// the caller can replay again without it. A partial result to merge
	// needs every wait: leave it off then.
	WaitsTail bool
	// MostRejected, when positive, lists per lane the keys it rejected
	// most (AlgoStats.MostRejected), at most MostRejected of them,
	// exactly: the workers count every key's requests and rejections, so
	// memory grows with the keys of the trace.
	MostRejected int
	// Every, when positive, counts per interval of that length (aligned
	// by floor division) the requests and each lane's allowed, false
	// allows and false rejects: Report.Intervals. The trace must come
	// interval by interval; see Report.IntervalsOutOfOrder.
	Every time.Duration
	// Interval is the burst interval; 0 means Policy.Window.
	Interval time.Duration
	// Unit is the trace's time unit, used in state texts; 0 means seconds,
	// and limiters.UnitRFC3339 writes their times as RFC 3339 times.
	Unit time.Duration
	// Top is how many of the worst intervals overall the report lists.
	Top int
	// Workers is the number of goroutines that own key state; 0 means 2.
	// The results never depend on it, except that forgetting idle keys
	// (see KeepKeys) happens per worker. A lane whose keys interact
	// (limiters.Algorithm.KeysInteract: nginx's zone) needs every key in
	// one worker: the run then has one.
	Workers int
	// KeepKeys keeps every key's state to the end. Without it, a worker
	// holding many keys forgets those whose state and burst ring are back
	// to fresh, so memory follows the live keys rather than every key the
	// trace names. Forgetting never changes a decision: should a forgotten
	// key come back at a time for which that is not sure (the trace goes
	// back in time too far), Run stops with an error.
	KeepKeys bool
	// Shard, when its Count is positive, replays only the keys of one
	// shard (see ShardOf), each request keeping its position in the
	// whole trace as its Seq; the Report then holds its Positions, and
	// its IntervalsOutOfOrder is the whole trace's. Merge joins the
	// reports of a trace's shards into the report of the whole.
	Shard Shard
	// keySets are more keys to build for each request, beside KeyFields',
	// for the replays that key several limiters differently (RunStack).
	keySets []keySet
	// noLists keeps every key's bursts in rings, never in a list (see
	// burstList): tests compare the two.
	noLists bool
	// listsOffAfter, when positive, is the number of spilled keys after
	// which the lists may be dropped, in place of listsOffAfter: tests set
	// it low.
	listsOffAfter int64
	// sweepAt is the number of keys a worker holds before it first looks
	// for idle ones; 0 means minSweep. Tests set it low.
	sweepAt int
	// tailFrom, when positive, is the number of a lane's refusals at which
	// WaitsTail first looks at which it may count alone, in place of
	// 65536: tests set it low.
	tailFrom int64
	// Label, when not nil, labels every request, 0 to Labels-1, from its
	// event and its limiter key (legitimate or abusive; what production
	// did with it): the report then counts per lane the requests of each
	// label and the allowed among them (AlgoStats.ByLabel), and
	// Batch.Label gives each request's. Its error stops the run.
	Label func(ev *traces.Event, key []byte) (uint8, error)
	// Labels is the number of labels Label gives, at most MaxLabels.
	Labels int
	// DecisionsOnly skips the oracle and burst tracking, for callers that
	// need only the decisions and the counts: the report's FalseAllows,
	// FalseRejects, Burst and Top are then zero, and so is Batch.Oracle.
	DecisionsOnly bool
}

// Request is one trace event as the engine saw it. Its byte slices point
// into the batch and are valid only during the emit callback.
type Request struct {
	Seq      int64 // 0-based position in the trace
	Line     int   // source line
	User     []byte
	Key      []byte // equal to User unless Config.KeyFields says otherwise
	Time     int64  // nanoseconds
	TimeText []byte // the timestamp as the trace wrote it
	Cost     int64
	with     [][]byte
}

// With returns the value of the request's attribute Config.With[j] (for
// RunClients and RunStack, their own With[j]), valid as long as the
// request's other byte slices.
func (r *Request) With(j int) []byte {
	return r.with[j]
}

// With returns the value of request i's attribute Config.With[j]. It is
// valid only during the emit callback.
func (b *Batch) With(i, j int) []byte {
	return b.withVals[i*b.nwith+j]
}

// Batch is a run of consecutive requests, in trace order, with every
// selected algorithm's decision on each.
type Batch struct {
	Requests []Request
	// Decisions holds, with Config.Detail, len(Requests)*len(Algorithms)
	// entries, row by row: the decision of algorithm a on request i is
	// Decisions[i*len(Algorithms)+a]. Without Detail it is empty.
	Decisions []limiters.Decision
	// exact holds, beside Decisions, each decision's durations in full.
	exact []limiters.Exact
	// Oracle reports, per request, whether the exact rolling policy (a
	// sliding log with the same limit and window) allowed it.
	Oracle []bool

	nalg     int
	n0       int         // lanes in the first mask word
	words    int         // mask words per request
	nwith    int         // len(Config.With), plus 1 with Config.WithFile
	withVals [][]byte    // per request, Config.With's values
	masks    []uint64    // per request, words of the lanes that allowed it
	states   []stateSpan // per request and algorithm, with Config.Explain
	labels   []uint8     // per request, with Config.Label
	text     [][]byte    // state texts, one buffer per worker
}

// stateSpan locates one state text: text[w][off:end].
type stateSpan struct{ w, off, end uint32 }

// Allowed reports whether algorithm a allowed request i.
func (b *Batch) Allowed(i, a int) bool {
	word, bit := wordOf(a, b.n0)
	return b.masks[i*b.words+word]&(1<<bit) != 0
}

// Decision returns algorithm a's decision on request i. It needs
// Config.Detail.
func (b *Batch) Decision(i, a int) *limiters.Decision {
	return &b.Decisions[i*b.nalg+a]
}

// Exact returns algorithm a's RetryAfter, ResetAfter and Delay on request
// i in full: where the Decision says limiters.InfDuration because a wait
// does not fit a time.Duration, here it is exact. It needs Config.Detail.
func (b *Batch) Exact(i, a int) *limiters.Exact {
	return &b.exact[i*b.nalg+a]
}

// State returns algorithm a's state text for request i, or nil without
// Config.Explain. The slice is valid only during the emit callback.
func (b *Batch) State(i, a int) []byte {
	if len(b.states) == 0 {
		return nil
	}
	s := b.states[i*b.nalg+a]
	return b.text[s.w][s.off:s.end]
}

// Interval is a closed time interval in which one algorithm allowed Count
// units of cost for one key: From and To are the times of the first and last
// allowed request inside it.
type Interval struct {
	Algorithm limiters.Algorithm
	Name      string // the lane's
	Key       string
	From, To  int64
	Count     int64
}

// AlgoStats summarises one algorithm over a whole trace.
type AlgoStats struct {
	Name      string // the lane's
	Algorithm limiters.Algorithm
	Policy    limiters.Policy // the lane's
	Requests  int64
	Allowed   int64
	Rejected  int64
	// FalseAllows counts requests this algorithm allowed and the oracle
	// rejected; FalseRejects the reverse.
	FalseAllows  int64
	FalseRejects int64
	// FirstRejection is the first rejected request; nil when none was.
	FirstRejection *Rejection
	// Burst is the worst interval: the most allowed cost for one key inside
	// any closed interval of the burst length. Count 0 when nothing passed.
	Burst Interval
	// KeysRejected is, with Config.Rejections, the number of keys this
	// algorithm rejected at least once.
	KeysRejected int64
	// MostRejected are, with Config.MostRejected, the keys this lane
	// rejected most: most rejections first, then fewer requests, then by
	// key; keys it never rejected are left out.
	MostRejected []KeyRejections
	// ByLabel are, with Config.Label, the lane's counts of the requests
	// of each label.
	ByLabel []LabelCount
	// Waits are, with Config.Rejections, the RetryAfter of every request
	// this algorithm rejected, by value, shortest first; see Quantile.
	// A request no wait cures counts as limiters.InfDuration.
	Waits []DurationCount
	// WaitsBelow are, with Config.WaitsTail, how many waits Waits leaves
	// out, each shorter than every wait it lists.
	WaitsBelow int64
}

// WaitQuantile is Quantile of the lane's waits (Waits and the WaitsBelow
// shorter ones it leaves out): ok is false when nothing was counted or
// the fraction is not between 0 and 1, and known is false when the
// quantile falls among the waits left out, whose values were not kept.
func (s *AlgoStats) WaitQuantile(num, den int64) (w time.Duration, ok, known bool) {
	return tailQuantile(s.Waits, s.WaitsBelow, num, den)
}

// WaitsKnown reports whether every lane's quantile num/den of its waits
// is known (see AlgoStats.WaitQuantile): always without
// Config.WaitsTail.
func (r *Report) WaitsKnown(num, den int64) bool {
	for i := range r.Algos {
		if _, _, known := r.Algos[i].WaitQuantile(num, den); !known {
			return false
		}
	}
	return true
}

// Rejection identifies one rejected request.
type Rejection struct {
	Seq      int64
	Line     int
	Key      string
	Time     int64
	TimeText string
}

// Report is what a Run found over the whole trace.
type Report struct {
	Requests int64
	// Keys is the number of different keys in the trace. Once idle keys
	// are forgotten (see Config.KeepKeys) keys are told apart by a 64-bit
	// hash of their bytes.
	Keys int
	// KeysHeld is the most keys whose state was kept at any time, summed
	// over the workers' peaks; without forgetting it equals Keys.
	KeysHeld int
	Interval time.Duration
	// ClockBackwards counts the requests earlier than their key's latest
	// request before them: a trace out of time order. FirstBackwards is
	// the first of them, nil when there is none.
	ClockBackwards int64
	FirstBackwards *Rejection
	Algos          []AlgoStats
	// Agree[a][b] is the number of requests algorithms a and b decided
	// alike; nil for runs of more than 63 lanes.
	Agree [][]int64
	// Intervals are, with Config.Every, the counts of each interval that
	// has a request, in time order; nil when the trace is not interval by
	// interval: IntervalsOutOfOrder is then the line of the first request
	// in an interval before the one of the request before it.
	Intervals           []IntervalCounts
	IntervalsOutOfOrder int
	// Top lists the worst intervals overall (at most one per algorithm and
	// key), worst first, at most Config.Top of them.
	Top []Interval
	// Positions are, for a replay of a shard (Config.Shard), the trace
	// positions a merge orders its findings by; nil otherwise.
	Positions *Positions
}

// Run replays src through cfg.Lanes (or cfg.Algorithms). With cfg.Rows it calls emit for
// each batch of requests in trace order; emit must not keep the batch. It
// returns the report over the whole trace, or the first error from src or
// emit.
func Run(src Source, cfg Config, emit func(*Batch) error) (*Report, error) {
	return run(src, cfg, emit)
}

// A ForgottenKeyError reports a request whose key had been forgotten as
// idle (see Config.KeepKeys) from a time later than the request's: the
// trace went back in time too far for the key's decision to be sure, so
// Run stopped. Replaying with KeepKeys decides such a trace.
type ForgottenKeyError struct {
	File     string
	Line     int
	Key      string
	TimeText string
}

func (e *ForgottenKeyError) Error() string {
	return fmt.Sprintf("sim: %s:%d: key %q comes back at %s, earlier than the time from which it was forgotten as idle: the trace goes back in time too far to forget idle keys", e.File, e.Line, e.Key, e.TimeText)
}
