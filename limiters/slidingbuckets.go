package limiters

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// slidingBuckets is the kinds table's entry for SlidingBuckets.
var slidingBuckets = kind{
	name:    "sliding-buckets",
	summary: "rolling window kept as N sub-window counters",
	doc: Doc{
		How: "Cuts time into aligned sub-windows of --window / --buckets and counts the cost each key spent in each. " +
			"A request passes while the cost in its own sub-window and the --buckets - 1 before it, plus its own, stays within --limit. " +
			"One bucket is the fixed window; the more buckets, the closer it comes to the sliding log.",
		State: "grows with the buckets: one count per non-empty sub-window of the last window",
		Bursts: "Never more than the limit in any --buckets consecutive sub-windows. A window's length can still hold twice the limit " +
			"when a key spends it all in one sub-window and again a window less one sub-window later; " +
			"what a full window lets through beyond the limit is at most what one sub-window took.",
		Choose: "A rolling limit with bounded state and error, as metrics systems and API gateways keep it: " +
			"the rolling window of buckets.",
		Explain: "\"span [1,11) count 2\": the buckets' span the request was judged in, ending with its own sub-window, " +
			"and the cost counted in it after the decision.",
		Example: "sliding-buckets.csv",
		Walkthrough: "Sliding buckets: 10 buckets of 1 second make the window of 10. At 20, 21 and 22 the span holds 3; " +
			"at 23 it is full. At 30 the span [21,31) has let go of the bucket [20,21), and there is room for one more, " +
			"where the sliding log would still count the request at 20, exactly 10 seconds before. " +
			"At 30.5 the span is full again; at 31 the bucket [21,22) leaves it.",
	},
	params:   []string{"limit", "window", "buckets"},
	refusal:  ReasonBuckets,
	ops:      ops[SlidingBucketsState, *SlidingBucketsState]{},
	fast:     fastOf((*SlidingBucketsState).decide),
	validate: validateBuckets,
	setup: func(r *Rule) {
		r.buckets = r.pol.bucketCount()
		r.sub = r.window / r.buckets
	},
	bound: func(p Policy, interval int64) int64 {
		// Any n consecutive sub-windows hold at most the limit, and an
		// interval of interval+1 ns touches at most interval/sub + 2.
		n := uint64(p.bucketCount())
		touched := uint64(interval)/(uint64(p.Window)/n) + 2
		return satMul((touched+n-1)/n, uint64(p.Limit))
	},
	backWithin: func(p Policy) int64 { return int64(p.Window) / p.bucketCount() },
	gauge:      gaugeSpec{quantity: "count in span"},
	aligned:    func(p Policy) int64 { return int64(p.Window) / p.bucketCount() },
	// An entry per sub-window with a count in the span.
	logEntries: func(p Policy) int64 { return min(p.bucketCount(), p.Limit) },
}

// ReasonBuckets is SlidingBuckets' plain refusal.
const ReasonBuckets Reason = "buckets full"

// DefaultBuckets is the number of sub-windows of SlidingBuckets when the
// policy gives none.
const DefaultBuckets = 10

// bucketCount returns p.Buckets, or DefaultBuckets when it is 0.
func (p Policy) bucketCount() int64 {
	if p.Buckets == 0 {
		return DefaultBuckets
	}
	return p.Buckets
}

// validateBuckets checks that the window divides into the buckets.
func validateBuckets(p Policy) error {
	n := p.bucketCount()
	if int64(p.Window)%n != 0 {
		return policyErrorf("buckets", "window %dns does not divide into %d buckets of whole nanoseconds", int64(p.Window), n)
	}
	return nil
}

// SlidingBucketsState is one key's state under SlidingBuckets: the cost
// counted in each non-empty sub-window of the last window, oldest first.
// The zero value is the fresh state. It keeps its counts as a log of
// (sub-window, cost) entries, in the ring of a SlidingLogState, so a key
// holds only the sub-windows it used: never more than the buckets, nor
// more than the limit. Like a SlidingLogState, it may refer to storage:
// s must not be used after Step returns.
type SlidingBucketsState struct {
	log SlidingLogState // entries' t is a sub-window's index
}

// Step judges a request of cost at now for rule r (which must be a
// SlidingBuckets rule) and returns the new state and the decision. It
// does not change s.
//
// Sub-windows are [k*S, (k+1)*S) for S = Window/Buckets, by floor
// division. A request in sub-window k is allowed when the cost in
// sub-windows k-Buckets+1 to k, its own included, stays within Limit. A
// request in an earlier sub-window than the newest counted is a
// backwards clock.
func (s SlidingBucketsState) Step(r *Rule, now, cost int64) (SlidingBucketsState, Decision) {
	if !r.fits(SlidingBuckets) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *SlidingBucketsState) boundary(r *Rule, now int64) (int64, bool) {
	if s.log.n == 0 {
		return 0, false
	}
	k, _ := floorDivMod(now, r.sub)
	if newest := s.log.newest(); k < newest {
		return newest * r.sub, true
	}
	return 0, false
}

// span returns the ring position, count and cost of the entries inside the
// span of sub-window k, the buckets ending with it, without dropping the
// others.
func (s *SlidingBucketsState) span(r *Rule, k int64) (head, n int, sum int64) {
	head, n, sum = s.log.head, s.log.n, s.log.sum
	ring := s.log.ring()
	mask := len(ring) - 1
	for n > 0 && since(k, ring[head].t) >= uint64(r.buckets) {
		sum -= ring[head].cost
		head = (head + 1) & mask
		n--
	}
	return head, n, sum
}

func (s *SlidingBucketsState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	k, m := floorDivMod(now, r.sub)
	if s.log.n > 0 && k < s.log.newest() {
		return false, true
	}
	head, n, sum := s.span(r, k)
	// leave is how long after now the entry of sub-window e leaves the
	// span: at the start of sub-window e+Buckets. e+Buckets-k is between 1
	// and Buckets, so the product is at most the window.
	leave := func(e int64) Span {
		return span64(uint64(r.buckets-int64(since(k, e)))*uint64(r.sub) - uint64(m))
	}
	if cost > r.limit-sum {
		if out == nil {
			return false, false
		}
		d := Decision{Reason: r.refusal, Remaining: r.limit - sum}
		// The retry waits until enough of the oldest sub-windows have
		// left the span.
		need := sum + cost - r.limit
		ring := s.log.ring()
		for i := 0; i < n; i++ {
			e := &ring[(head+i)&(len(ring)-1)]
			if need -= e.cost; need <= 0 {
				setRetry(&d, x, leave(e.t))
				break
			}
		}
		setReset(&d, x, leave(s.log.newest()))
		*out = d
		return false, false
	}
	if out != nil {
		d := Decision{Allowed: true, Remaining: r.limit - sum - cost}
		switch {
		case cost > 0:
			setReset(&d, x, leave(k))
		case n > 0:
			setReset(&d, x, leave(s.log.newest()))
		}
		*out = d
	}
	if commit && cost > 0 {
		s.log.take(head, n, sum, k, cost)
	}
	return true, false
}

func (s *SlidingBucketsState) idle(r *Rule, now int64) bool {
	if s.log.n == 0 {
		return true
	}
	k, _ := floorDivMod(now, r.sub)
	newest := s.log.newest()
	return k >= newest && since(k, newest) >= uint64(r.buckets)
}

// gauge is the cost counted in the span of the sub-window that holds now,
// until the oldest of its sub-windows leaves the span.
func (s *SlidingBucketsState) gauge(r *Rule, now int64) (float64, int64) {
	k, m := floorDivMod(now, r.sub)
	head, n, sum := s.span(r, k)
	if n == 0 {
		return 0, math.MaxInt64
	}
	// The entry of sub-window e leaves when sub-window e+Buckets begins.
	e := s.log.ring()[head].t
	return float64(sum), later(now, uint64(r.buckets-int64(since(k, e)))*uint64(r.sub)-uint64(m))
}

func (s *SlidingBucketsState) appendText(r *Rule, _ *SlidingBucketsState, at int64, unit time.Duration, dst []byte) []byte {
	k, _ := floorDivMod(at, r.sub)
	_, _, sum := s.span(r, k)
	// The span [(k-Buckets+1)*S, (k+1)*S), in 128 bits.
	end := func(k int64) (neg bool, hi, lo uint64) {
		a := uint64(k)
		if k < 0 {
			a = -a
		}
		hi, lo = bits.Mul64(a, uint64(r.sub))
		return k < 0, hi, lo
	}
	dst = append(dst, "span ["...)
	first := k - r.buckets + 1
	if first > k { // wrapped past the smallest index
		first = k
	}
	neg, hi, lo := end(first)
	dst = appendPoint(dst, neg, hi, lo, unit)
	dst = append(dst, ',')
	neg, hi, lo = end(k)
	if neg {
		hi, lo = sub128(hi, lo, 0, uint64(r.sub))
		if hi == 0 && lo == 0 {
			neg = false
		}
	} else {
		hi, lo = add128(hi, lo, 0, uint64(r.sub))
	}
	dst = appendPoint(dst, neg, hi, lo, unit)
	dst = append(dst, ") count "...)
	return strconv.AppendUint(dst, uint64(sum), 10)
}
