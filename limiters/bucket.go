package limiters

import (
	"math"
	"math/bits"
	"time"
)

// bucket is the shared state of TokenBucket and LeakyBucket, which are the
// two faces of one meter: the token bucket's missing tokens are the leaky
// bucket's level. The level is kept as level*per in 128 bits (per from the
// rule's rate in lowest terms), so refills and leaks are exact (ten refills
// of 0.1 token make exactly one token) and need no division: only the
// fields of a full Decision do.
type bucket struct {
	last   int64  // time of the key's last request
	lh, ll uint64 // level*per, high and low words; the level is <= Capacity
	seen   bool   // false only in the fresh state
}

func (b *bucket) boundary(r *Rule, now int64) (int64, bool) {
	if b.seen && now < b.last {
		return b.last, true
	}
	return 0, false
}

// drain brings the level forward to now >= b.last: it falls by
// (now-last)*n/per, not below 0.
func (b *bucket) drain(r *Rule, now int64) {
	if b.seen && (b.lh|b.ll) != 0 {
		dh, dl := bits.Mul64(since(now, b.last), r.n)
		if less128(dh, dl, b.lh, b.ll) {
			b.lh, b.ll = sub128(b.lh, b.ll, dh, dl)
		} else {
			b.lh, b.ll = 0, 0
		}
	}
	b.last, b.seen = now, true
}

// fill returns (level+cost)*per and Capacity*per. The request fits when
// the first is not above the second. Neither overflows: both are below
// 2*2^63*2^63.
func (b *bucket) fill(r *Rule, cost int64) (nh, nl, ch, cl uint64) {
	kh, kl := bits.Mul64(uint64(cost), r.per)
	nh, nl = add128(b.lh, b.ll, kh, kl)
	ch, cl = bits.Mul64(uint64(r.limit), r.per)
	return nh, nl, ch, cl
}

func (b *bucket) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if b.seen && now < b.last {
		return false, true
	}
	full := out != nil
	b.drain(r, now)
	nh, nl, ch, cl := b.fill(r, cost)
	var d Decision
	if !less128(ch, cl, nh, nl) {
		d.Allowed = true
		b.lh, b.ll = nh, nl
	}
	if !full {
		return d.Allowed, false
	}
	if !d.Allowed {
		d.Reason = r.refusal
		setRetry(&d, x, overflowWait(r, nh, nl, ch, cl))
	}
	// Remaining is floor(Capacity - level) = floor((C*per - level*per)/per);
	// the quotient is at most Capacity, so the high word is below per.
	rh, rl := sub128(ch, cl, b.lh, b.ll)
	q, _ := bits.Div64(rh, rl, r.per)
	d.Remaining = int64(q)
	setReset(&d, x, divCeilSpan(b.lh, b.ll, r.n))
	*out = d
	return d.Allowed, false
}

// overflowWait is the RetryAfter of a request that would take the level
// to n (as (level+cost)*per) above c (Capacity*per): until the level
// falls to Capacity-cost, as the excess drains at r.n per ns, rounded up.
func overflowWait(r *Rule, nh, nl, ch, cl uint64) Span {
	oh, ol := sub128(nh, nl, ch, cl)
	if r.n == 1 && oh == 0 {
		return span64(ol) // no division to round
	}
	return divCeilSpan(oh, ol, r.n)
}

// wait is decide's refusal wait alone, without the rest of the decision
// and without changing the state: see waiter.
func (b *bucket) wait(r *Rule, now, cost int64) (wait Span, refused, back bool) {
	if b.seen && now < b.last {
		return Span{}, false, true
	}
	c := *b
	c.drain(r, now)
	nh, nl, ch, cl := c.fill(r, cost)
	if !less128(ch, cl, nh, nl) {
		return Span{}, false, false
	}
	return overflowWait(r, nh, nl, ch, cl), true, false
}

func (b *bucket) idle(r *Rule, now int64) bool {
	if !b.seen {
		return true
	}
	if now < b.last {
		return false
	}
	c := *b
	c.drain(r, now)
	return c.lh|c.ll == 0
}

// gauge is the level at now, falling at the rate until the bucket is
// empty (for a token bucket: the tokens missing from a full one).
func (b *bucket) gauge(r *Rule, now int64) (float64, int64) {
	c := *b
	c.drain(r, now)
	if c.lh|c.ll == 0 {
		return 0, math.MaxInt64
	}
	return ratio(c.lh, c.ll, r.per), laterSpan(now, divCeilSpan(c.lh, c.ll, r.n))
}

// appendText appends "tokens T" (TokenBucket) or "level L" (LeakyBucket)
// for the state after a decision at at.
func (b *bucket) appendText(r *Rule, _ *bucket, at int64, _ time.Duration, dst []byte) []byte {
	c := *b
	if !c.seen {
		c.drain(r, at)
	}
	tokens := r.alg == TokenBucket
	if tokens {
		dst = append(dst, "tokens "...)
	} else {
		dst = append(dst, "level "...)
	}
	hi, lo := c.lh, c.ll
	if tokens {
		ch, cl := bits.Mul64(uint64(r.limit), r.per)
		hi, lo = sub128(ch, cl, hi, lo)
	}
	return appendRat(dst, false, hi, lo, r.per)
}

// TokenBucketState is one key's state under TokenBucket. The zero value is
// the fresh state: a full bucket. It holds no pointers and may be copied
// freely.
type TokenBucketState struct{ b bucket }

// Step judges a request of cost at now for rule r (which must be a
// TokenBucket rule) and returns the new state and the decision. It does
// not change s. A request earlier than the key's last request is a
// backwards clock; the bucket never refills for time it has already seen.
func (s TokenBucketState) Step(r *Rule, now, cost int64) (TokenBucketState, Decision) {
	if !r.fits(TokenBucket) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s.b, r, now, cost)
	return s, d
}

// LeakyBucketState is one key's state under LeakyBucket. The zero value is
// the fresh state: an empty bucket. It holds no pointers and may be copied
// freely.
type LeakyBucketState struct{ b bucket }

// Step judges a request of cost at now for rule r (which must be a
// LeakyBucket rule) and returns the new state and the decision. It does
// not change s. A request earlier than the key's last request is a
// backwards clock.
func (s LeakyBucketState) Step(r *Rule, now, cost int64) (LeakyBucketState, Decision) {
	if !r.fits(LeakyBucket) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s.b, r, now, cost)
	return s, d
}

// debt is the shared state of GCRA and LeakyQueue. GCRA keeps the
// theoretical arrival time TAT; debt holds TAT-last, which is at most
// Capacity emission intervals and so never overflows however close the
// times come to the ends of the int64 range. The debt is ns + frac/n
// nanoseconds, exact for any rate.
type debt struct {
	last int64  // time of the key's last request
	ns   uint64 // TAT - last, whole nanoseconds
	frac uint64 // TAT - last, fraction in 1/n ns, < n
	seen bool   // false only in the fresh state
}

func (g *debt) boundary(r *Rule, now int64) (int64, bool) {
	if g.seen && now < g.last {
		return g.last, true
	}
	return 0, false
}

// advance brings the debt forward to now >= g.last: TAT = max(TAT, now).
func (g *debt) advance(now int64) {
	if g.seen {
		e := since(now, g.last)
		if e <= g.ns {
			g.ns -= e
		} else {
			g.ns, g.frac = 0, 0
		}
	}
	g.last, g.seen = now, true
}

func (g *debt) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if g.seen && now < g.last {
		return false, true
	}
	full := out != nil
	g.advance(now)
	// Allowed when TAT + cost*T - Capacity*T <= now, that is when the debt
	// is at most (Capacity-cost)*T.
	lns, lfr := r.burst1Ns, r.burst1Fr
	incNs, incFr := r.tNs, r.tFrac
	if cost != 1 {
		lns, lfr = r.interval(uint64(r.limit - cost))
		incNs, incFr = r.interval(uint64(cost))
	}
	var d Decision
	if g.ns < lns || g.ns == lns && g.frac <= lfr {
		d.Allowed = true
		if full && r.k.delays {
			setDelay(&d, x, span64(g.ceil()))
		}
		g.take(r, incNs, incFr)
	}
	if !full {
		return d.Allowed, false
	}
	if !d.Allowed {
		d.Reason = r.refusal
		// Wait until the debt falls to (Capacity-cost)*T.
		wait := g.ns - lns
		if g.frac > lfr {
			wait++
		}
		setRetry(&d, x, span64(wait))
	}
	// Tokens left: floor(Capacity - debt/T) = Capacity - ceil(debt*n/per).
	hi, lo := bits.Mul64(g.ns, r.n)
	hi, lo = add128(hi, lo, 0, g.frac)
	d.Remaining = r.limit - int64(divCeil128(hi, lo, r.per))
	setReset(&d, x, span64(g.ceil()))
	*out = d
	return d.Allowed, false
}

// ceil returns the debt rounded up to a whole nanosecond.
func (g *debt) ceil() uint64 {
	if g.frac != 0 {
		return g.ns + 1
	}
	return g.ns
}

func (g *debt) idle(r *Rule, now int64) bool {
	if !g.seen {
		return true
	}
	if now < g.last {
		return false
	}
	e := since(now, g.last)
	return e > g.ns || e == g.ns && g.frac == 0
}

// GCRAState is one key's state under GCRA. The zero value is the fresh
// state. It holds no pointers and may be copied freely.
type GCRAState struct{ g debt }

// Step judges a request of cost at now for rule r (which must be a GCRA
// rule) and returns the new state and the decision. It does not change s.
//
// With emission interval T = 1/Rate and burst Capacity, a request is
// allowed when max(TAT, now) + cost*T - Capacity*T <= now, and then TAT
// becomes max(TAT, now) + cost*T. Every field of the decision equals
// TokenBucket's for the same capacity, rate and requests.
func (s GCRAState) Step(r *Rule, now, cost int64) (GCRAState, Decision) {
	if !r.fits(GCRA) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s.g, r, now, cost)
	return s, d
}

// LeakyQueueState is one key's state under LeakyQueue. The zero value is
// the fresh state: an empty queue. It holds no pointers and may be copied
// freely.
type LeakyQueueState struct{ g debt }

// Step judges a request of cost at now for rule r (which must be a
// LeakyQueue rule) and returns the new state and the decision. It does not
// change s.
//
// The queue releases cost units at Rate. An admitted request is released
// when the queue ahead of it has drained: Delay is that wait, rounded up to
// a nanosecond. Capacity requests at once get delays 0, 1/Rate, ...,
// (Capacity-1)/Rate and the next is refused: the queue is full.
func (s LeakyQueueState) Step(r *Rule, now, cost int64) (LeakyQueueState, Decision) {
	if !r.fits(LeakyQueue) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s.g, r, now, cost)
	return s, d
}

// gauge is the debt at now in tokens (for LeakyQueue: the units queued),
// falling at the rate until it is paid.
func (g *debt) gauge(r *Rule, now int64) (float64, int64) {
	c := *g
	c.advance(now)
	if c.ns|c.frac == 0 {
		return 0, math.MaxInt64
	}
	hi, lo := bits.Mul64(c.ns, r.n)
	hi, lo = add128(hi, lo, 0, c.frac)
	return ratio(hi, lo, r.per), later(now, c.ceil())
}

// appendText appends "tat T" (GCRA) or "queue Q until T" (LeakyQueue)
// for the state after a decision at at.
func (g *debt) appendText(r *Rule, _ *debt, at int64, unit time.Duration, dst []byte) []byte {
	if !g.seen {
		c := *g
		c.advance(at)
		g = &c
	}
	if r.k.delays {
		hi, lo := bits.Mul64(g.ns, r.n)
		hi, lo = add128(hi, lo, 0, g.frac)
		dst = append(dst, "queue "...)
		dst = appendRat(dst, false, hi, lo, r.per)
		dst = append(dst, " until "...)
	} else {
		dst = append(dst, "tat "...)
	}
	return g.appendTAT(r, unit, dst)
}

// appendTAT appends last + debt as an exact decimal number of units.
func (g *debt) appendTAT(r *Rule, unit time.Duration, dst []byte) []byte {
	if unit == UnitRFC3339 {
		// The time rounded up to a nanosecond, marked when it was not
		// whole.
		if g.frac != 0 {
			dst = append(dst, '~')
		}
		return appendTime(dst, int64(uint64(g.last)+g.ceil()), unit)
	}
	if unit <= 0 {
		unit = time.Second
	}
	// TAT = (last*n + ns*n + frac) / (n*unit)
	dh, dl := bits.Mul64(uint64(unit), r.n)
	if dh != 0 {
		// n*unit overflows: show TAT rounded up to a nanosecond.
		t := appendTime(nil, int64(uint64(g.last)+g.ceil()), unit)
		if g.frac != 0 && t[0] != '~' {
			dst = append(dst, '~')
		}
		return append(dst, t...)
	}
	neg := g.last < 0
	a := uint64(g.last)
	if neg {
		a = -a
	}
	lh, ll := bits.Mul64(a, r.n)
	nh, nl := bits.Mul64(g.ns, r.n)
	nh, nl = add128(nh, nl, 0, g.frac)
	var hi, lo uint64
	switch {
	case !neg:
		hi, lo = add128(lh, ll, nh, nl)
	case less128(lh, ll, nh, nl):
		hi, lo = sub128(nh, nl, lh, ll)
		neg = false
	default:
		hi, lo = sub128(lh, ll, nh, nl)
	}
	return appendRat(dst, neg, hi, lo, dl)
}

// take adds incNs + incFr/n nanoseconds to the debt.
func (g *debt) take(r *Rule, incNs, incFr uint64) {
	g.ns += incNs
	g.frac += incFr
	if g.frac >= r.n {
		g.frac -= r.n
		g.ns++
	}
}
