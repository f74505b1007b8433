package limiters

import (
	"math"
	"math/bits"
	"time"
)

// A Gauge describes the number that stands for a key's state under an
// algorithm: what a state plot draws (the tokens of a token bucket, the
// count in a fixed window, a sliding counter's estimate), and the limit it
// is drawn against. Table.Gauge evaluates it.
type Gauge struct {
	// Quantity names the number: "tokens", "count in window",
	// "estimate", "cost in log", "level", "queued", ...
	Quantity string
	// Limit names the parameter the number is measured against, the
	// algorithm's limit (Algorithm.Limit): "limit" or "capacity".
	Limit string
	// Left reports whether the number is what is left of the limit (a
	// token bucket's tokens), which a request lowers, rather than what is
	// used of it (a count, a level), which a request raises.
	Left bool
	// None says why the algorithm has no gauge to draw, or is "" when it
	// has one (every exact algorithm has). Quantity is then "" and
	// Table.Gauge reads 0.
	None string
}

// gaugeSpec is a kind's entry for its Gauge.
type gaugeSpec struct {
	quantity string
	// free: the number is what is left of the limit (tokens), not what is
	// used of it; the state's gauge method gives what is used.
	free bool
	// limit, when set, is the limit the number is drawn against, for a
	// kind whose first parameter is not it (Algorithm.Limit).
	limit func(p Policy) int64
	// limitName names that limit (Gauge.Limit) when limit is set.
	limitName string
	// none, when set, says why the kind has no gauge (Gauge.None).
	none string
}

// gaugeLimit is the limit rule r's gauge is measured against.
func gaugeLimit(r *Rule) int64 {
	if r.k.gauge.limit != nil {
		return r.k.gauge.limit(r.pol)
	}
	return r.limit
}

// Gauge describes the number that stands for the algorithm's state.
func (a Algorithm) Gauge() Gauge {
	k := a.kind()
	if k == nil {
		return Gauge{}
	}
	if k.gauge.none != "" {
		return Gauge{None: k.gauge.none}
	}
	name := k.params[0]
	if k.gauge.limitName != "" {
		name = k.gauge.limitName
	}
	return Gauge{Quantity: k.gauge.quantity, Limit: name, Left: k.gauge.free}
}

// Limit returns the most cost one request may have under a policy p for
// a: its value of the parameter a.Params() lists first (Limit for the
// window algorithms, Capacity for the buckets). It is the line the gauge
// is drawn against.
func (a Algorithm) Limit(p Policy) int64 {
	k := a.kind()
	if k == nil {
		return 0
	}
	if k.gauge.limit != nil {
		return k.gauge.limit(p)
	}
	if v, ok := p.Field(k.params[0]).(*int64); ok {
		return *v
	}
	return 0
}

// Aligned returns, for a policy p valid for a, the length L of the aligned
// spans [k*L, (k+1)*L) at whose edges a key's gauge changes of itself (a
// fixed window's count falls to 0 at the window's end, a sliding bucket
// leaves the span at a sub-window's), or 0 when the algorithm keeps no
// aligned spans.
func (a Algorithm) Aligned(p Policy) time.Duration {
	if k := a.kind(); k != nil && k.aligned != nil {
		return time.Duration(k.aligned(p))
	}
	return 0
}

// Gauge returns the number that stands for id's state (Algorithm.Gauge
// names it) as it is at time now, and the first time after now at which
// that number stops being a linear function of time: a window's edge, a
// logged request leaving the window, a bucket becoming full or empty
// (math.MaxInt64 when it never does). Between now and that time, with no
// request for the key, the number moves on a straight line; it never
// turns back between two requests. It changes nothing, so it never
// changes a later decision.
//
// After a request at now, Gauge(id, now) is the number the decision left.
// A time now earlier than the state accepts (the clock went backwards for
// the key) is read as the time the state would judge a request at, as
// DecidedAt gives it. The number is exact but for the rounding of the
// division that makes it a float64 (a token bucket's 2.2 tokens).
func (t *Table) Gauge(id uint32, now int64) (value float64, until int64) {
	if len(t.s.members) == 0 {
		return 0, math.MaxInt64
	}
	m := &t.s.members[0]
	return m.ops.gauge(&m.rule, t.s.blocks.At(id), now)
}

// ratio returns (hi<<64|lo)/den as a float64, den > 0.
func ratio(hi, lo, den uint64) float64 {
	if hi < den {
		q, r := bits.Div64(hi, lo, den)
		return float64(q) + float64(r)/float64(den)
	}
	return (float64(hi)*0x1p64 + float64(lo)) / float64(den)
}

// later returns t+d, or math.MaxInt64 when that does not fit.
func later(t int64, d uint64) int64 {
	if room := uint64(math.MaxInt64) - uint64(t); d >= room { // wraps to the exact room for t < 0
		return math.MaxInt64
	}
	return int64(uint64(t) + d)
}

// laterSpan is later for a Span.
func laterSpan(t int64, d Span) int64 {
	if d.Hi != 0 {
		return math.MaxInt64
	}
	return later(t, d.Lo)
}

// edgeAfter returns the end of the aligned span of length w that holds now.
func edgeAfter(now, w int64) int64 {
	_, m := floorDivMod(now, w)
	return later(now, uint64(w-m))
}
