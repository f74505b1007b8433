package sim

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/ratesim/ratesim/internal/choice"

	"github.com/ratesim/ratesim/internal/keyhash"
	"github.com/ratesim/ratesim/limiters"
)

// ClientModel says what a client does when a request is refused.
type ClientModel uint8

const (
	// ClientsNone never retries: the open-loop replay of the trace.
	ClientsNone ClientModel = iota
	// ClientsHonour retries at the Retry-After it was told, in whole
	// seconds rounded up as an HTTP client reads the field (or exactly,
	// with Clients.RetryAfterExact). A refusal no wait cures is given up.
	ClientsHonour
	// ClientsImmediate retries after Clients.RetryDelay, whatever it was
	// told.
	ClientsImmediate
	// ClientsBackoff retries after an exponential backoff: Base, 2×Base,
	// 4×Base, ... up to Max, with full jitter (a uniform wait from 0 to
	// that) when Clients.Jitter is set.
	ClientsBackoff
)

// ClientModels are the client models, in the order of their constants.
var ClientModels = choice.List{
	{Name: "none", Description: "the open-loop replay of the trace (default)"},
	{Name: "honour", Description: "retry at the Retry-After told"},
	{Name: "immediate", Description: "retry after --retry-delay"},
	{Name: "backoff", Description: "retry after an exponential backoff"},
}

// String returns the model's name: none, honour, immediate or backoff.
func (m ClientModel) String() string {
	if int(m) < len(ClientModels) {
		return ClientModels[m].Name
	}
	return fmt.Sprintf("ClientModel(%d)", m)
}

// ParseClientModel returns the model named name.
func ParseClientModel(name string) (ClientModel, error) {
	if m := ClientModels.Index(name); m >= 0 {
		return ClientModel(m), nil
	}
	if name == "honor" {
		return ClientsHonour, nil
	}
	return 0, fmt.Errorf("sim: unknown client model %q (valid: %s)", name, ClientModels)
}

// MaxClientRetries is the most retries Clients.MaxRetries may allow a
// request. Every refused request may be retried that often, and a request
// that can never pass (its cost above the capacity) is, whatever the
// limiter: the bound keeps a replay's attempts within MaxClientRetries+1
// per request of the trace, while letting a client retry far longer than
// real ones do (10000 retries after 30 s backoffs are 3 and a half days).
const MaxClientRetries = 10000

// Clients describes the clients of a closed-loop replay.
type Clients struct {
	Model ClientModel
	// MaxRetries is how many times a client offers a refused request
	// again before it gives up, at most MaxClientRetries.
	MaxRetries int
	// RetryAfterExact has ClientsHonour wait the exact RetryAfter rather
	// than the whole seconds of an HTTP Retry-After field.
	RetryAfterExact bool
	// RetryDelay is ClientsImmediate's wait.
	RetryDelay time.Duration
	// Base and Max bound ClientsBackoff's waits; Jitter draws each wait
	// uniformly from 0 to its bound, deterministically for Seed.
	Base, Max time.Duration
	Jitter    bool
	Seed      uint64
}

// Attempt is one decision of a closed-loop replay: a request of the
// trace, or a client's retry of it.
type Attempt struct {
	Lane int
	// Request is the trace's request the attempt offers, at its own time
	// (Request.Time, Request.TimeText). Its byte slices are valid only
	// during the emit callback.
	Request Request
	// Time is when this attempt was made; Number is 0 for the request
	// itself and n for its n-th retry.
	Time     int64
	Number   int
	Decision limiters.Decision
	// Exact holds Decision's durations in full.
	Exact limiters.Exact
	// GaveUp says the client gives up after this refusal.
	GaveUp bool
}

// Latency is how long after its request's own time the attempt's request
// was through: when the attempt was allowed, plus the wait in the queue
// of a limiter that delays what it admits (Decision.Delay), as the client
// has its answer only at the release. It saturates at
// limiters.InfDuration.
func (a *Attempt) Latency() time.Duration {
	lat := time.Duration(a.Time - a.Request.Time) // never negative: a retry comes later
	if d := a.Decision.Delay; d > limiters.InfDuration-lat {
		return limiters.InfDuration
	}
	return lat + a.Decision.Delay
}

// ClientStats summarises one lane of a closed-loop replay.
type ClientStats struct {
	Unique   int64 // requests of the trace
	Attempts int64 // decisions: requests and retries
	Allowed  int64 // attempts allowed
	Rejected int64 // attempts refused
	Goodput  int64 // requests eventually allowed
	GaveUp   int64 // requests refused at every attempt
	// Latency holds, for each request eventually allowed, its
	// Attempt.Latency: 0 for those allowed at once by a limiter that
	// does not delay.
	Latency []DurationCount
}

// pending is a retry waiting for its time.
type pending struct {
	at     int64
	order  int64 // ties in time: the earlier scheduled first
	a      Attempt
	key    string
	retrys int
}

type retryHeap []*pending

func (h retryHeap) Len() int { return len(h) }
func (h retryHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].order < h[j].order
}
func (h retryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *retryHeap) Push(x any)   { *h = append(*h, x.(*pending)) }
func (h *retryHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// RunClients replays src through each lane of cfg (Lanes, or Algorithms
// under Policy) with clients that offer a refused request again as c
// says: a closed loop, in which what a lane refuses changes the load it
// sees, so each lane has its own retries. Retries go through the lane like
// any request, in time order with the rest of the trace; a retry due at
// the time of a trace request goes first. cfg says what each request
// carries, as for Run (KeyFields, With); its other fields do not apply.
// emit gets every attempt, lane by lane in time order within a lane,
// interleaved across lanes by time. Memory grows with the keys and the
// retries pending, not the trace.
func RunClients(src Source, cfg Config, c Clients, emit func(*Attempt) error) ([]ClientStats, error) {
	lanes := cfg.lanes()
	if len(lanes) == 0 {
		return nil, fmt.Errorf("sim: no limiters for the clients")
	}
	if c.MaxRetries < 0 || c.MaxRetries > MaxClientRetries {
		return nil, fmt.Errorf("sim: MaxRetries must be from 0 to %d, got %d", MaxClientRetries, c.MaxRetries)
	}
	keyed := make([]*limiters.Keyed, len(lanes))
	for i, l := range lanes {
		k, err := limiters.NewKeyed(l.Algorithm, l.Policy)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		keyed[i] = k
	}
	stats := make([]ClientStats, len(lanes))
	lat := make([]waitCounts, len(lanes))
	heaps := make([]retryHeap, len(lanes))
	var order int64
	decide := func(lane int, a *Attempt, key string, retries int) error {
		st := &stats[lane]
		a.Lane = lane
		a.Decision, a.Exact = keyed[lane].AllowExact(key, a.Time, a.Request.Cost)
		a.GaveUp = false
		st.Attempts++
		if a.Decision.Allowed {
			st.Allowed++
			st.Goodput++
			lat[lane].add(a.Latency())
			return emit(a)
		}
		st.Rejected++
		wait, ok := c.wait(a, retries)
		if !ok || retries >= c.MaxRetries || a.Time > math.MaxInt64-int64(wait) {
			a.GaveUp = true
			st.GaveUp++
			return emit(a)
		}
		order++
		p := &pending{at: a.Time + int64(wait), order: order, a: *a, key: key, retrys: retries + 1}
		if retries == 0 {
			// The first attempt's bytes are the batch's: the retry keeps
			// its own.
			p.a.Request = ownRequest(&a.Request)
		}
		p.a.Time, p.a.Number = p.at, a.Number+1
		heap.Push(&heaps[lane], p)
		return emit(a)
	}
	// drain decides, in every lane, the retries due at or before t.
	drain := func(t int64) error {
		for lane := range heaps {
			for heaps[lane].Len() > 0 && heaps[lane][0].at <= t {
				p := heap.Pop(&heaps[lane]).(*pending)
				if err := decide(lane, &p.a, p.key, p.retrys); err != nil {
					return err
				}
			}
		}
		return nil
	}
	cfg.Lanes, cfg.keySets = nil, nil
	_, err := newEngine(src, cfg).start(src, nil).each(func(b *batch) error {
		b.expose()
		for i := range b.Requests {
			q := &b.Requests[i]
			if err := drain(q.Time); err != nil {
				return err
			}
			key := string(q.Key)
			for lane := range lanes {
				a := Attempt{Request: *q, Time: q.Time}
				stats[lane].Unique++
				if err := decide(lane, &a, key, 0); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := drain(math.MaxInt64); err != nil {
		return nil, err
	}
	for i := range stats {
		stats[i].Latency = mergeWaits(nil, &lat[i])
	}
	return stats, nil
}

// ownRequest returns a copy of q whose byte slices are its own.
func ownRequest(q *Request) Request {
	n := len(q.User) + len(q.Key) + len(q.TimeText)
	for _, w := range q.with {
		n += len(w)
	}
	buf := make([]byte, 0, n)
	own := func(b []byte) []byte {
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	r := *q
	r.User, r.Key, r.TimeText = own(q.User), own(q.Key), own(q.TimeText)
	if len(q.with) > 0 {
		r.with = make([][]byte, len(q.with))
		for j, w := range q.with {
			r.with[j] = own(w)
		}
	}
	return r
}

// wait returns how long after a refusal of attempt a, the retries-th
// retry of its request, the client offers it again; false when it gives
// up at once (no wait cures the refusal).
func (c *Clients) wait(a *Attempt, retries int) (time.Duration, bool) {
	switch c.Model {
	case ClientsHonour:
		d := a.Decision.RetryAfter
		if d == limiters.InfDuration || a.Decision.Reason == limiters.ReasonCost {
			return 0, false
		}
		if !c.RetryAfterExact && d%time.Second != 0 {
			d = d - d%time.Second + time.Second
		}
		return d, true
	case ClientsImmediate:
		return c.RetryDelay, true
	case ClientsBackoff:
		bound := c.Max
		if retries < 62 && c.Base <= c.Max>>retries {
			bound = min(c.Base<<retries, c.Max)
		}
		if !c.Jitter || bound <= 0 {
			return bound, true
		}
		// Full jitter, the same for the same seed, request and retry,
		// whatever else the replay holds.
		var b [24]byte
		for i := range 8 {
			b[i] = byte(c.Seed >> (8 * i))
			b[8+i] = byte(uint64(a.Request.Seq) >> (8 * i))
			b[16+i] = byte(uint64(retries) >> (8 * i))
		}
		h := keyhash.Sum(b[:])
		return time.Duration(h % (uint64(bound) + 1)), true
	}
	return 0, false
}
