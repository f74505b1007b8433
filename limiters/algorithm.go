package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
	"unsafe"
)

// An Algorithm names one of the rate-limiting algorithms of this package.
// Its String form is the name the command line uses. Everything about an
// algorithm (its name, texts, parameters, state and bounds) is described
// once, in its entry of the kinds table.
type Algorithm uint8

const (
	// FixedWindow counts cost in aligned windows [k*W, (k+1)*W) and
	// refuses a request that would take the window's count over the limit.
	FixedWindow Algorithm = iota
	// SlidingLog keeps the time and cost of every admitted request and
	// refuses a request that would take the cost inside the closed interval
	// [now-W, now] over the limit. It is the exact rolling policy.
	SlidingLog
	// SlidingCounter estimates the rolling count from two fixed windows,
	// prev*(W-elapsed)/W + cur, and refuses a request while the estimate
	// has reached the limit.
	SlidingCounter
	// TokenBucket refills Capacity tokens at Rate, starting full; a request
	// takes cost tokens.
	TokenBucket
	// LeakyBucket is the meter form of the leaky bucket: it fills by cost
	// per request, drains at Rate, starts empty and refuses a request that
	// would overflow Capacity.
	LeakyBucket
	// GCRA is the generic cell rate algorithm, with burst Capacity and
	// emission interval 1/Rate, as redis_rate and throttled implement it.
	// It decides exactly as TokenBucket with the same capacity and rate.
	GCRA
	// LeakyQueue is the queue form of the leaky bucket: an admitted request
	// waits its turn (Decision.Delay) and leaves at Rate; a request is
	// refused only when the queue of Capacity is full, as nginx limit_req
	// with burst=Capacity-1 does.
	LeakyQueue
	// SlidingBuckets keeps the rolling window as Buckets sub-window
	// counters, aligned as FixedWindow's windows, and refuses a request
	// that would take the cost in its sub-window and the Buckets-1 before
	// it over the limit. One bucket is FixedWindow.
	SlidingBuckets
	// FixedWindowHits is FixedWindow counting every hit, the refused ones
	// too, as Envoy's ratelimit service does: a key that goes on sending
	// over the limit stays refused for the rest of its window.
	FixedWindowHits
	// TickQueue is LeakyQueue read in whole Ticks of time and counted in
	// whole Parts of a request, with the first Delay requests of the
	// queue passed at once: nginx limit_req's arithmetic.
	TickQueue
	// BlockingCounter is SlidingCounter that, once it refuses a key's
	// request, blocks the key for Policy.Block: every request of the key
	// until then is refused, as a Cloudflare rate limiting rule's block
	// action does for its mitigation timeout.
	BlockingCounter

	// The library kinds follow. Each reproduces one real library's
	// limiter as that library computes it, its floating-point arithmetic,
	// its clock and its quirks included, and takes its configuration from
	// Policy.Library as well as from the parameters it lists. They are
	// reached through package presets, which builds their policies from
	// the library's own parameters; AllAlgorithms and ParseAlgorithm
	// leave them out (see Library and LibraryAlgorithms).

	// XTimeRate is golang.org/x/time/rate's Limiter used with AllowN: a
	// token bucket whose tokens are a float64.
	XTimeRate
	// RedisRate is go-redis/redis_rate's GCRA, computed as its Lua script
	// computes it: in float64 seconds since 2017-01-01 from a clock read
	// in microseconds, with the key expiring as Redis expires it.
	RedisRate
	// Throttled is throttled/throttled's GCRARateLimiter: GCRA in whole
	// nanoseconds, with the fields it reports and, with its Redis store,
	// a clock read in microseconds and keys that expire at whole seconds.
	Throttled
	// EnvoyRateLimit is Envoy's ratelimit service's Redis fixed window:
	// every hit counted, over the limit or not, in windows of the Unix
	// time in whole seconds.
	EnvoyRateLimit
	// NginxLimitReq is nginx's limit_req, every arithmetic detail of
	// ngx_http_limit_req_module included: its zone, whose least recently
	// used states expire when new keys arrive, makes one key's decisions
	// depend on the others' (Algorithm.KeysInteract).
	NginxLimitReq
	// HAProxyRate is HAProxy's http_req_rate counter of a stick table
	// (freq_ctr): a sliding estimate from two periods of millisecond
	// ticks, every tracked request counted, denied ones included.
	HAProxyRate
	// SpringGateway is Spring Cloud Gateway's RedisRateLimiter script:
	// a token bucket read in whole seconds, in whole tokens.
	SpringGateway

	numAlgorithms
)

// A Doc describes an algorithm for people choosing one: the texts of
// "ratesim algos".
type Doc struct {
	How    string // how it decides
	State  string // what it keeps per key
	Bursts string // how far it lets bursts through
	Choose string // when to choose it
	// Explain describes the state text of Table.AllowExplain, with an
	// example.
	Explain string
	// Example is the file name of its example trace in traces/examples,
	// and Walkthrough what a replay of it with --explain shows; both are
	// empty when it has none.
	Example, Walkthrough string
}

// kind is everything this package and its users need to know about one
// algorithm. Adding an algorithm is adding its constant and its entry
// here, and a file with its state type.
type kind struct {
	name, summary string
	doc           Doc
	// params names the Policy parameters it takes, as Params does; the
	// first is its limit: the most cost one request may have.
	params  []string
	refusal Reason
	ops     kindOps
	fast    fastDecide
	// wait is the state type's wait method (see waiter), or nil.
	wait fastWait
	// narrow picks, for a rule of the kind, a narrow form of its state
	// that holds every state the rule can reach (setting the rule's
	// fields the form reads), or returns nil for the kind's own; it may
	// be nil. See form.
	narrow func(r *Rule) *form
	// shares: kinds with the same non-empty shares keep one state for
	// equal parameters, and differ only in the name of their refusal.
	shares string
	// alike: kinds with the same non-empty alike make the same decisions,
	// at the same times, for equal parameters.
	alike string
	// delays: an admitted request waits Decision.Delay.
	delays bool
	// validate checks what the parameters' own checks do not, or is nil.
	validate func(p Policy) error
	// setup derives the rule's fields from a valid policy, or is nil.
	setup func(r *Rule)
	// bound is the most cost the algorithm admits for one key in any
	// closed interval of interval+1 ns, saturating at math.MaxInt64.
	bound func(p Policy, interval int64) int64
	// backWithin is the length of the aligned spans inside which a key's
	// state still admits a request earlier than its newest, or 0.
	backWithin func(p Policy) int64
	// library: a library kind, reproducing a real library (see XTimeRate).
	library bool
	// ownClock: the kind takes a time earlier than its key's latest as
	// its library does, and Policy.Clock does not apply.
	ownClock bool
	// zoned: the kind's keys share one zone per store, which a request
	// for one key may change for the others (see NginxLimitReq).
	zoned bool
	// gauge is the number that stands for the state (Algorithm.Gauge).
	gauge gaugeSpec
	// aligned is the length of the aligned windows it counts in
	// (Algorithm.Aligned), or nil when it has none.
	aligned func(p Policy) int64
	// logEntries is the most entries its state's log holds under p (a
	// sliding log's, a time each; sliding buckets', a sub-window each), or
	// nil when it keeps no log.
	logEntries func(p Policy) int64
}

// kinds is the table of algorithms, in declaration order.
var kinds = [numAlgorithms]kind{
	FixedWindow: {
		name:    "fixed-window",
		summary: "count per aligned window; bursts at window edges",
		doc: Doc{
			How: "Cuts time into aligned windows of --window ([0,10), [10,20), ...) and counts the cost each key spent in the current one. " +
				"A request passes while the count stays within --limit; the count starts over when the next window begins.",
			State: "constant: the window start and a count",
			Bursts: "Up to twice the limit across a window edge: a full window's worth just before the edge and another just after it " +
				"(6 requests in [7, 12] under 3 per 10).",
			Explain: "\"window [10,20) count 1\": the key's window and its count after the decision.",
			Choose:  "A plain quota per calendar interval, where the smallest state matters more than rolling accuracy and an occasional double burst is harmless.",
			Example: "fixed-window.csv",
			Walkthrough: "Fixed window: one count per aligned window. The fourth request in [0,10) is refused; at 11 a new window starts. " +
				"u2 has its own count.",
		},
		params:     windowParams,
		refusal:    ReasonWindow,
		ops:        ops[FixedWindowState, *FixedWindowState]{},
		fast:       fastOf((*FixedWindowState).decide),
		narrow:     narrowWindow,
		bound:      alignedBound,
		backWithin: func(p Policy) int64 { return int64(p.Window) },
		gauge:      gaugeSpec{quantity: "count in window"},
		aligned:    func(p Policy) int64 { return int64(p.Window) },
	},
	SlidingLog: {
		name:    "sliding-log",
		summary: "exact rolling window over a log of admitted requests",
		doc: Doc{
			How: "Keeps the time of every allowed request. A request passes if the cost allowed in the closed interval [now - window, now] " +
				"leaves room for it; entries older than that are dropped as time moves on.",
			State: "grows with the limit: one timestamp per allowed request in the last window",
			Bursts: "Never more than the limit in any closed interval of the window's length. This is the exact rolling policy, " +
				"the oracle ratesim measures the other algorithms against.",
			Explain: "\"log [3 5 12]\": the log after the decision; \"12x2\" is an entry of cost 2; more than 7 entries show as \"log [1 2 3 ... 8 9 10] (10 entries)\".",
			Choose:  "An exact rolling maximum, when the limit is small enough to store a timestamp per allowed request.",
			Example: "sliding-log.csv",
			Walkthrough: "Sliding log: the times of the allowed requests in the closed interval [t-10, t]. At 12 the entry 1 has left the interval; " +
				"at 13 the entry 3 sits exactly on its edge and still counts.",
		},
		params:  windowParams,
		refusal: ReasonLog,
		ops:     ops[SlidingLogState, *SlidingLogState]{},
		fast:    fastOf((*SlidingLogState).decide),
		narrow:  narrowLog,
		bound: func(p Policy, interval int64) int64 {
			// Intervals of W+1 ns hold at most the limit each.
			n, w := uint64(interval)+1, uint64(p.Window)
			return satMul((n+w)/(w+1), uint64(p.Limit)) // n+w does not overflow: both < 2^63
		},
		gauge:      gaugeSpec{quantity: "cost in log"},
		logEntries: func(p Policy) int64 { return p.Limit }, // an entry per admitted time in the window
	},
	SlidingCounter: {
		name:    "sliding-counter",
		summary: "rolling estimate from the current and previous window",
		doc: Doc{
			How: "Keeps the counts of the current and the previous fixed window and estimates the rolling count as " +
				"previous x (share of the previous window still inside the rolling interval) + current. " +
				"A request passes while the estimate leaves room for it; ratesim computes the estimate exactly, in integers.",
			State: "constant: a window start and two counts",
			Bursts: "Far smaller than a fixed window's, but not zero: the estimate assumes the previous window's requests were spread evenly, " +
				"so it lets a few too many through when they came late and rejects early when they came early.",
			Explain: "\"estimate 2.4\": the estimate the decision was judged by.",
			Choose:  "A rolling limit in constant memory, when an estimate is good enough.",
			Example: "sliding-counter.csv",
			Walkthrough: "Sliding counter: the previous window's count, weighted by how much of it the rolling interval still covers, plus the current count. " +
				"At 12: 3 x 0.8 + 0 = 2.4 passes; at 13: 3 x 0.7 + 1 = 3.1 does not.",
		},
		params:     windowParams,
		refusal:    ReasonEstimate,
		ops:        ops[SlidingCounterState, *SlidingCounterState]{},
		fast:       fastOf((*SlidingCounterState).decide),
		narrow:     narrowCounter,
		bound:      alignedBound,
		backWithin: func(p Policy) int64 { return int64(p.Window) },
		gauge:      gaugeSpec{quantity: "estimate"},
		aligned:    func(p Policy) int64 { return int64(p.Window) },
	},
	TokenBucket: {
		name:    "token-bucket",
		summary: "tokens refill at a rate up to a capacity; starts full",
		doc: Doc{
			How: "Each key has a bucket of up to --capacity tokens, full at first, refilled at --rate tokens per unit of time. " +
				"A request takes its cost in tokens if enough are there and is rejected otherwise. The refill is computed from the elapsed time when a request arrives, exactly.",
			State:   "constant: the tokens and the time they were counted",
			Bursts:  "The capacity at once after a quiet spell, then the rate: never more than capacity + rate x elapsed in any interval.",
			Explain: "\"tokens 2\": the tokens after the decision.",
			Choose:  "API traffic: a long-term rate with an explicit, bounded burst. A sound default.",
			Example: "token-bucket.csv",
			Walkthrough: "Token bucket: starts full with 3 tokens, spends one per request and gets one back every 5 seconds. " +
				"At 6 only a fifth of a token has come back.",
		},
		params:  bucketParams,
		refusal: ReasonNoTokens,
		ops:     ops[bucket, *bucket]{},
		fast:    fastOf((*bucket).decide),
		wait:    waitOf((*bucket).wait),
		narrow:  narrowBucket,
		shares:  "bucket",
		alike:   "meter",
		setup:   setupRate,
		bound:   meterBound,
		gauge:   gaugeSpec{quantity: "tokens", free: true},
	},
	LeakyBucket: {
		name:    "leaky-bucket",
		summary: "meter that fills per request and drains at a rate; starts empty",
		doc: Doc{
			How: "The meter form of the leaky bucket: each key's bucket starts empty and drains at --rate units per unit of time. " +
				"A request pours in its cost and is rejected if that would overflow --capacity.",
			State:   "constant: the level and the time it was measured",
			Bursts:  "As the token bucket: the capacity at once, then the rate. It counts the capacity used where the token bucket counts the capacity left.",
			Explain: "\"level 1\": the level after the decision.",
			Choose:  "Rejecting overflow in front of a backend that needs a steady rate; leaky-queue delays instead of rejecting.",
			Example: "leaky-bucket.csv",
			Walkthrough: "Leaky bucket (meter form): starts empty, each request adds one unit, one unit drains every 5 seconds. " +
				"The same decisions as the token bucket, seen from the other side.",
		},
		params:  bucketParams,
		refusal: ReasonOverflow,
		ops:     ops[bucket, *bucket]{},
		fast:    fastOf((*bucket).decide),
		wait:    waitOf((*bucket).wait),
		narrow:  narrowBucket,
		shares:  "bucket",
		alike:   "meter",
		setup:   setupRate,
		bound:   meterBound,
		gauge:   gaugeSpec{quantity: "level"},
	},
	GCRA: {
		name:    "gcra",
		summary: "generic cell rate algorithm; decides as token-bucket",
		doc: Doc{
			How: "The generic cell rate algorithm: one theoretical arrival time per key, pushed forward by cost / rate for every allowed request. " +
				"A request passes if that time is no more than capacity / rate ahead of now. It decides exactly as token-bucket with the same capacity and rate.",
			State:   "constant: one timestamp",
			Bursts:  "As the token bucket: the capacity at once, then the rate.",
			Explain: "\"tat 15\": the theoretical arrival time after the decision.",
			Choose:  "A token bucket in a single number per key, cheap to update atomically in a shared store (as redis_rate and throttled do).",
		},
		params:   bucketParams,
		refusal:  ReasonTooEarly,
		ops:      ops[debt, *debt]{},
		fast:     fastOf((*debt).decide),
		alike:    "meter",
		validate: validateDrain,
		setup:    setupRate,
		bound:    meterBound,
		gauge:    gaugeSpec{quantity: "debt (tokens)"},
	},
	LeakyQueue: {
		name:    "leaky-queue",
		summary: "queue drained at a rate; admitted requests are delayed",
		doc: Doc{
			How: "The queue form of the leaky bucket: admitted requests wait in a per-key queue of --capacity and leave at --rate. " +
				"An admitted request gets a delay, its release time; only a full queue rejects. " +
				"C requests at once get delays 0, 1/rate, ..., (C-1)/rate (nginx limit_req with burst=C-1).",
			State: "constant: the time the queue empties",
			Bursts: "None downstream: work leaves at the rate; a burst turns into delay, up to (capacity-1) / rate. " +
				"Its max_in_interval is measured when requests leave the queue (timestamp + delay), not when they arrive.",
			Explain: "\"queue 2 until 15\": the units queued after the decision, and when the queue empties.",
			Choose:  "Smoothing traffic into a downstream that needs a steady pace, when callers can wait.",
		},
		params:   bucketParams,
		refusal:  ReasonQueueFull,
		ops:      ops[debt, *debt]{},
		fast:     fastOf((*debt).decide),
		delays:   true,
		validate: validateDrain,
		setup:    setupRate,
		bound: func(p Policy, interval int64) int64 {
			// Its releases are the ceilings of times cost/rate apart, so
			// those within an interval came in rate*(interval+1ns), after
			// at most the capacity.
			if interval < math.MaxInt64 {
				interval++
			}
			return meterBound(p, interval)
		},
		gauge: gaugeSpec{quantity: "queued"},
	},
	SlidingBuckets:  slidingBuckets,
	FixedWindowHits: fixedWindowHits,
	TickQueue:       tickQueue,
	BlockingCounter: blockingCounter,

	XTimeRate:      xTimeRate,
	RedisRate:      redisRate,
	Throttled:      throttled,
	EnvoyRateLimit: envoyRateLimit,
	NginxLimitReq:  nginxKind,
	HAProxyRate:    haproxyRate,
	SpringGateway:  springGateway,
}

var (
	windowParams = []string{"limit", "window"}
	bucketParams = []string{"capacity", "rate"}
)

// satMul returns k*n, or math.MaxInt64 when that is larger.
func satMul(k, n uint64) int64 {
	hi, lo := bits.Mul64(k, n)
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// alignedBound is the bound of an algorithm that admits at most the limit
// in an aligned window (and so at most twice that across an edge): an
// interval overlaps at most interval/W + 2 windows.
func alignedBound(p Policy, interval int64) int64 {
	return satMul(uint64(interval)/uint64(p.Window)+2, uint64(p.Limit))
}

// meterBound is the bound of a bucket: at most the capacity at the
// interval's start, and rate*interval more during it.
func meterBound(p Policy, interval int64) int64 {
	hi, lo := bits.Mul64(uint64(interval), uint64(p.Rate.N))
	if hi >= uint64(p.Rate.Per) {
		return math.MaxInt64
	}
	refill, _ := bits.Div64(hi, lo, uint64(p.Rate.Per))
	if refill > math.MaxInt64-uint64(p.Capacity) {
		return math.MaxInt64
	}
	return p.Capacity + int64(refill)
}

// validateDrain refuses a bucket kept as a time debt of up to
// Capacity/Rate (GCRA, LeakyQueue) when that debt does not fit.
func validateDrain(p Policy) error {
	hi, lo := bits.Mul64(uint64(p.Capacity), uint64(p.Rate.Per))
	if hi < uint64(p.Rate.N) {
		if q, _ := bits.Div64(hi, lo, uint64(p.Rate.N)); q <= math.MaxInt64 {
			return nil
		}
	}
	return policyErrorf("capacity", "capacity %d at rate %d per %dns takes longer than 2^63ns to drain", p.Capacity, p.Rate.N, int64(p.Rate.Per))
}

func (a Algorithm) kind() *kind {
	if a < numAlgorithms {
		return &kinds[a]
	}
	return nil
}

// String returns the algorithm's name, such as "fixed-window".
func (a Algorithm) String() string {
	if k := a.kind(); k != nil {
		return k.name
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// Summary returns a one-line description of the algorithm, suitable for
// shell completion.
func (a Algorithm) Summary() string {
	if k := a.kind(); k != nil {
		return k.summary
	}
	return ""
}

// Doc returns the algorithm's description for people choosing one.
func (a Algorithm) Doc() Doc {
	if k := a.kind(); k != nil {
		return k.doc
	}
	return Doc{}
}

// Refusal returns the reason the algorithm gives for its plain refusal
// (ReasonWindow for FixedWindow, ReasonNoTokens for TokenBucket, ...): a
// request it refuses for want of room, rather than for its cost or clock.
func (a Algorithm) Refusal() Reason {
	if k := a.kind(); k != nil {
		return k.refusal
	}
	return ReasonNone
}

// Params returns the names of the Policy parameters the algorithm takes,
// as Params names them ("limit", "window"), its limit first. The clock
// applies to every algorithm and is not listed.
func (a Algorithm) Params() []string {
	if k := a.kind(); k != nil {
		return append([]string(nil), k.params...)
	}
	return nil
}

// Windowed reports whether the algorithm is configured by Policy.Limit and
// Policy.Window; the others use Policy.Capacity and Policy.Rate.
func (a Algorithm) Windowed() bool {
	k := a.kind()
	return k != nil && k.params[0] == "limit"
}

// Library reports whether the algorithm is a library kind: one that
// reproduces a real library's limiter, floats and quirks included, rather
// than an exact textbook algorithm. Library kinds take Policy.Library and
// are reached through package presets; see LibraryAlgorithms.
func (a Algorithm) Library() bool {
	k := a.kind()
	return k != nil && k.library
}

// OwnClock reports whether the algorithm takes a request earlier than its
// key's latest as the library it reproduces does (x/time/rate refills
// nothing and moves its clock back, nginx takes up to 60 s back as no
// time passing, ...), so that Policy.Clock does not apply to it.
func (a Algorithm) OwnClock() bool {
	k := a.kind()
	return k != nil && k.ownClock
}

// KeysInteract reports whether one key's decisions under the algorithm
// depend on other keys' requests: nginx limit_req's zone expires the
// least recently used states when new keys arrive. Such an algorithm is
// decided exactly only where one store sees every key's requests in
// order (a Table, a Group or a Keyed); Rule.StepEncoded, which decides a
// key alone, refuses it.
func (a Algorithm) KeysInteract() bool {
	k := a.kind()
	return k != nil && k.zoned
}

// Delays reports whether the algorithm delays the requests it admits
// (Decision.Delay) rather than passing them on at once.
func (a Algorithm) Delays() bool {
	k := a.kind()
	return k != nil && k.delays
}

// Alike reports whether a and b make the same decisions at the same times
// whenever their policies are equal in the parameters they take: true for
// an algorithm and itself, and for TokenBucket, LeakyBucket and GCRA.
func (a Algorithm) Alike(b Algorithm) bool {
	ka, kb := a.kind(), b.kind()
	return ka != nil && kb != nil && (a == b || ka.alike != "" && ka.alike == kb.alike)
}

// MaxInInterval returns the most cost the algorithm, under a policy p
// valid for it, can admit for one key in any closed interval of length
// interval (interval+1 nanoseconds); for a delaying algorithm, the most it
// can release. It saturates at math.MaxInt64 and is tight for unit costs.
func (a Algorithm) MaxInInterval(p Policy, interval time.Duration) int64 {
	k := a.kind()
	if k == nil || interval < 0 {
		return math.MaxInt64
	}
	return k.bound(p, int64(interval))
}

// StateBytes returns the most memory one key's state takes under a policy
// p valid for a, in bytes: the state value, and for a state that keeps a
// log the log at the longest it can grow (a sliding log: an entry per
// request in the window, so at most Limit; sliding buckets: one entry per
// sub-window with a count, at most the lesser of the buckets and Limit). A log longer than the
// entries the state holds in itself takes a power of two entries. Stores
// add their own bookkeeping per key (a map entry for Keyed, the key's
// slot for Table and Group).
func (a Algorithm) StateBytes(p Policy) int64 {
	k := a.kind()
	if k == nil {
		return 0
	}
	size := int64(k.ops.stateType().Size())
	var entries int64
	if k.logEntries != nil {
		entries = k.logEntries(p)
	}
	if entries > inlineLog {
		ring := int64(1) << bits.Len64(uint64(entries-1))
		if ring > math.MaxInt64/int64(unsafe.Sizeof(logEntry{})) {
			return math.MaxInt64
		}
		size += ring * int64(unsafe.Sizeof(logEntry{}))
	}
	return size
}

// BackWithin returns, for a policy p valid for a, the length of the
// aligned spans [k*L, (k+1)*L) within which a key's state admits a request
// earlier than the key's newest as if the clock had not gone backwards,
// or 0 when every earlier request is a backwards clock.
func (a Algorithm) BackWithin(p Policy) time.Duration {
	if k := a.kind(); k != nil && k.backWithin != nil {
		return time.Duration(k.backWithin(p))
	}
	return 0
}

// ParseAlgorithm returns the algorithm named name, one of AllAlgorithms:
// a library kind is not parsed by name, as it needs its library's
// configuration (see package presets).
func ParseAlgorithm(name string) (Algorithm, error) {
	var names []string
	for a := range kinds {
		if kinds[a].library {
			continue
		}
		if kinds[a].name == name {
			return Algorithm(a), nil
		}
		names = append(names, kinds[a].name)
	}
	return 0, policyErrorf("", "unknown algorithm %q (valid: %s)", name, strings.Join(names, ", "))
}

// ClassicAlgorithms returns the five classic algorithms: FixedWindow,
// SlidingLog, SlidingCounter, TokenBucket and LeakyBucket.
func ClassicAlgorithms() []Algorithm {
	return []Algorithm{FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyBucket}
}

// AllAlgorithms returns every exact algorithm, in declaration order: all
// but the library kinds (see LibraryAlgorithms).
func AllAlgorithms() []Algorithm {
	var all []Algorithm
	for a := range kinds {
		if !kinds[a].library {
			all = append(all, Algorithm(a))
		}
	}
	return all
}

// LibraryAlgorithms returns the library kinds, in declaration order: the
// algorithms that reproduce real libraries (Algorithm.Library).
func LibraryAlgorithms() []Algorithm {
	var lib []Algorithm
	for a := range kinds {
		if kinds[a].library {
			lib = append(lib, Algorithm(a))
		}
	}
	return lib
}

// SeedAlgorithms returns ClassicAlgorithms().
//
// Deprecated: Use ClassicAlgorithms.
func SeedAlgorithms() []Algorithm { return ClassicAlgorithms() }
