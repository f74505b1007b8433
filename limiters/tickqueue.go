package limiters

import (
	"math"
	"math/big"
	"math/bits"
	"time"
)

// tickQueue is the kinds table's entry for TickQueue.
var tickQueue = kind{
	name:    "tick-queue",
	summary: "leaky queue in whole ticks and parts of a request (nginx limit_req)",
	doc: Doc{
		How: "The queue form of the leaky bucket as nginx limit_req computes it: time is read in whole --tick (nginx: 1ms), " +
			"the queue is kept in whole parts of a request (--parts, nginx: 1000), and each request's drain is rounded down to a part. " +
			"A request passes when the queue ahead of it leaves room for it within --capacity; " +
			"the first --delay requests of the queue pass at once, the others wait until the queue ahead of them has drained to --delay, " +
			"rounded down to a tick.",
		State: "constant: the queue in parts and the tick it was measured at",
		Bursts: "The capacity at once after a quiet spell, then the rate, rounded down per request to a part; " +
			"with --delay below capacity - 1 the excess leaves the queue later, at the rate.",
		Explain: "\"queue 2.5 at 15.003\": the requests queued after the decision, and the tick they were counted at.",
		Choose:  "Reproducing nginx limit_req (tick 1ms, parts 1000) or a token bucket read in whole seconds with whole tokens (Spring Cloud Gateway).",
	},
	params:   []string{"capacity", "rate", "tick", "parts", "delay"},
	refusal:  ReasonQueueFull,
	ops:      ops[TickQueueState, *TickQueueState]{},
	fast:     fastOf((*TickQueueState).decide),
	delays:   true,
	validate: validateTickQueue,
	setup:    setupTickQueue,
	gauge:    gaugeSpec{quantity: "queued"},
	bound: func(p Policy, interval int64) int64 {
		if p.Delay < p.Capacity-1 {
			return math.MaxInt64 // releases follow the delays: no bound worked out
		}
		// Admitted in ticks k1..k2 with k2-k1 <= interval/tick+1: at most
		// the capacity plus the drain over those ticks.
		a, b, ok := tickLeak(p)
		if !ok {
			return math.MaxInt64
		}
		ticks := uint64(interval)/uint64(p.tickOf()) + 1
		hi, lo := bits.Mul64(ticks, a)
		if hi >= b {
			return math.MaxInt64
		}
		parts, _ := bits.Div64(hi, lo, b)
		more := parts / uint64(p.partsOf())
		if more > uint64(math.MaxInt64-p.Capacity) {
			return math.MaxInt64
		}
		return p.Capacity + int64(more)
	},
}

// Defaults of TickQueue's parameters, nginx limit_req's.
const (
	DefaultTick  = time.Millisecond // nginx reads the time in milliseconds
	DefaultParts = 1000             // nginx counts the queue in thousandths of a request
)

// tickOf returns p.Tick, or DefaultTick when it is 0.
func (p Policy) tickOf() time.Duration {
	if p.Tick == 0 {
		return DefaultTick
	}
	return p.Tick
}

// partsOf returns p.Parts, or DefaultParts when it is 0.
func (p Policy) partsOf() int64 {
	if p.Parts == 0 {
		return DefaultParts
	}
	return p.Parts
}

// tickLeak returns the drain per tick in parts as a/b in lowest terms:
// Rate * Parts * Tick; ok is false when a or b does not fit 63 bits.
func tickLeak(p Policy) (a, b uint64, ok bool) {
	num := new(big.Int).Mul(big.NewInt(p.Rate.N), big.NewInt(p.partsOf()))
	num.Mul(num, big.NewInt(int64(p.tickOf())))
	den := big.NewInt(int64(p.Rate.Per))
	g := new(big.Int).GCD(nil, nil, num, den)
	num.Quo(num, g)
	den.Quo(den, g)
	if !num.IsInt64() || !den.IsInt64() {
		return 0, 0, false
	}
	return num.Uint64(), den.Uint64(), true
}

// validateTickQueue checks that the queue in parts and the drain per tick
// fit the integers TickQueue computes in.
func validateTickQueue(p Policy) error {
	if p.Delay < 0 {
		return policyErrorf("delay", "delay must not be negative, got %d", p.Delay)
	}
	parts := p.partsOf()
	if p.Capacity > math.MaxInt64/4/parts {
		return policyErrorf("capacity", "capacity %d in %d parts a request does not fit 62 bits", p.Capacity, parts)
	}
	if _, _, ok := tickLeak(p); !ok {
		return policyErrorf("rate", "rate %d per %dns in %d parts per tick of %dns does not reduce to numbers below 2^63",
			p.Rate.N, int64(p.Rate.Per), parts, int64(p.tickOf()))
	}
	return nil
}

// setupTickQueue derives a TickQueue rule's fields.
func setupTickQueue(r *Rule) {
	p := r.pol
	r.tick = int64(p.tickOf())
	r.parts = p.partsOf()
	r.capParts = p.Capacity * r.parts
	r.delayParts = min(p.Delay, p.Capacity) * r.parts
	r.leakA, r.leakB, _ = tickLeak(p)
}

// TickQueueState is one key's state under TickQueue: the queue in parts
// of a request, the last admitted request included, and the tick it was
// measured at. The zero value is the fresh state: an empty queue. It holds
// no pointers and may be copied freely.
type TickQueueState struct {
	last  int64 // the tick of the last admitted request
	level int64 // the queue in parts, at most Capacity*Parts
	seen  bool  // false only in the fresh state
}

// Step judges a request of cost at now for rule r (which must be a
// TickQueue rule) and returns the new state and the decision. It does not
// change s.
//
// With time read in whole ticks k = floor(now/Tick) and the drain over e
// ticks D(e) = floor(e * Rate * Parts * Tick) parts, the queue ahead of a
// request is A = max(0, level - D(k - last)). A request of cost c passes
// when A + c*Parts <= Capacity*Parts; the queue becomes A + c*Parts at
// tick k. Its Delay is 0 while A <= Delay*Parts, and otherwise the whole
// ticks in which the queue ahead drains to Delay*Parts, rounded down. A
// refused request changes nothing, not even the time a backwards clock is
// judged against: the rounding down happens only when a request is
// admitted, as in nginx. For Parts = 1000, Tick = 1ms and cost
// 1 this is ngx_http_limit_req_lookup's
// excess = max(0, excess - rate*ms/1000 + 1000), refused above burst*1000,
// with capacity = burst + 1 and excess = A.
func (s TickQueueState) Step(r *Rule, now, cost int64) (TickQueueState, Decision) {
	if !r.fits(TickQueue) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *TickQueueState) boundary(r *Rule, now int64) (int64, bool) {
	if !s.seen {
		return 0, false
	}
	if k, _ := floorDivMod(now, r.tick); k < s.last {
		return s.last * r.tick, true
	}
	return 0, false
}

// drained returns the parts drained over e ticks, saturating.
func (r *Rule) drained(e uint64) uint64 {
	hi, lo := bits.Mul64(e, r.leakA)
	if hi >= r.leakB {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, r.leakB)
	return q
}

// ticksToDrain returns the fewest whole ticks that drain n parts, as a
// Span (it may pass 64 bits for a slow drain).
func (r *Rule) ticksToDrain(n uint64) Span {
	hi, lo := bits.Mul64(n, r.leakB)
	return divCeilSpan(hi, lo, r.leakA)
}

// ahead returns the queue ahead of a request at tick k >= s.last.
func (s *TickQueueState) ahead(r *Rule, k int64) int64 {
	if !s.seen || s.level == 0 {
		return 0
	}
	d := r.drained(since(k, s.last))
	if d >= uint64(s.level) {
		return 0
	}
	return s.level - int64(d)
}

// untilTick returns how long after now, in tick km, tick last+e begins,
// for last+e > km; saturating.
func (r *Rule) untilTick(last, km, m int64, e Span) Span {
	passed := since(km, last) // km >= last
	if e.Hi == 0 && e.Lo <= passed {
		return Span{}
	}
	// (last + e - km) * tick - m
	dl, borrow := bits.Sub64(e.Lo, passed, 0)
	dh := e.Hi - borrow
	if dh != 0 {
		return maxSpan
	}
	hi, lo := bits.Mul64(dl, uint64(r.tick))
	lo, borrow = bits.Sub64(lo, uint64(m), 0)
	hi -= borrow
	return Span{hi, lo}
}

func (s *TickQueueState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	k, m := floorDivMod(now, r.tick)
	if s.seen && k < s.last {
		return false, true
	}
	ahead := s.ahead(r, k)
	need := cost * r.parts // cost <= Capacity, so this fits
	allowed = ahead <= r.capParts-need
	if allowed && commit {
		s.last, s.level, s.seen = k, ahead+need, true
	}
	if out == nil {
		return allowed, false
	}
	var d Decision
	d.Allowed = allowed
	level := ahead
	if allowed {
		level += need
		if r.k.delays && ahead > r.delayParts {
			t := r.ticksToDrainFloor(uint64(ahead - r.delayParts))
			hi, lo := bits.Mul64(t, uint64(r.tick))
			setDelay(&d, x, Span{hi, lo})
		}
	} else {
		d.Reason = r.refusal
		// The state is unchanged: wait for the tick at which the queue
		// ahead has drained to Capacity*Parts - need.
		e := r.ticksToDrain(uint64(s.level - (r.capParts - need)))
		setRetry(&d, x, r.untilTick(s.last, k, m, e))
	}
	d.Remaining = (r.capParts - level) / r.parts
	// Fresh again once the queue has drained, counted from the state's
	// own tick: an uncommitted decision leaves the state where it was,
	// since bringing it forward would round its drain down.
	if s.seen && s.level > 0 {
		setReset(&d, x, r.untilTick(s.last, k, m, r.ticksToDrain(uint64(s.level))))
	}
	*out = d
	return allowed, false
}

// ticksToDrainFloor returns the whole ticks n parts take to drain,
// rounded down, saturating: nginx's delay.
func (r *Rule) ticksToDrainFloor(n uint64) uint64 {
	hi, lo := bits.Mul64(n, r.leakB)
	if hi >= r.leakA {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, r.leakA)
	return q
}

func (s *TickQueueState) idle(r *Rule, now int64) bool {
	if !s.seen {
		return true
	}
	k, _ := floorDivMod(now, r.tick)
	return k >= s.last && s.ahead(r, k) == 0
}

// gauge is the queue ahead of a request at now, in requests: it stays
// until the drain since the state's tick passes another whole part.
func (s *TickQueueState) gauge(r *Rule, now int64) (float64, int64) {
	k, m := floorDivMod(now, r.tick)
	ahead := s.ahead(r, k)
	if ahead == 0 {
		return 0, math.MaxInt64
	}
	next := r.ticksToDrain(r.drained(since(k, s.last)) + 1) // ticks after s.last
	return float64(ahead) / float64(r.parts), laterSpan(now, r.untilTick(s.last, k, m, next))
}

// appendText appends "queue Q at T": the requests queued after a decision
// at at, and the time of the tick they were counted at.
func (s *TickQueueState) appendText(r *Rule, _ *TickQueueState, at int64, unit time.Duration, dst []byte) []byte {
	k, _ := floorDivMod(at, r.tick)
	level, tick := int64(0), k
	if s.seen && k >= s.last {
		level, tick = s.level, s.last
	}
	dst = append(dst, "queue "...)
	dst = appendRat(dst, false, 0, uint64(level), uint64(r.parts))
	dst = append(dst, " at "...)
	hi, lo := bits.Mul64(uint64(abs64(tick)), uint64(r.tick))
	return appendPoint(dst, tick < 0, hi, lo, unit)
}

// abs64 returns |v| as a uint64 (MinInt64's too).
func abs64(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

func (s *TickQueueState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.last), uint64(s.level))
	if s.seen {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *TickQueueState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 || int64(w[1]) < 0 || int64(w[1]) > r.capParts {
		return false
	}
	s.last, s.level, s.seen = int64(w[0]), int64(w[1]), b[16] == 1
	return true
}
