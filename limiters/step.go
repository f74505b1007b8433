package limiters

import (
	"reflect"
	"time"
	"unsafe"
)

// stateOps is what every per-key state type provides. The methods are
// the time rule of one algorithm; apply adds what all share: cost checks
// and the clock rule, and the ops type below turns them into the kindOps
// the tables and groups dispatch through.
type stateOps[S any] interface {
	*S
	// boundary returns the earliest time the state accepts, and whether
	// now is before it (the clock went backwards for the key).
	boundary(r *Rule, now int64) (b int64, back bool)
	// decide judges a request of 0 <= cost <= r.limit and reports whether
	// it is allowed: one rule for both the allow-only path and the full
	// decision. If now is before the boundary it reports back and changes
	// and decides nothing: apply handles that case. It brings the state
	// forward to now (which never changes a later decision) and, when
	// commit is true and the request is allowed, takes the cost. With
	// commit false it never writes to storage the state shares with a
	// copy. With out nil that is all: the allow-only path. Otherwise it
	// sets *out to the full decision and, unless x is nil, *x to its
	// durations in full. out and x must be nil or point to memory on the
	// heap: called through a type parameter or a function value, a
	// pointer to a variable of the caller's would escape to the heap.
	decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool)
	// idle reports whether the state decides every request at or after
	// now exactly as the fresh state does, so a store may forget it.
	idle(r *Rule, now int64) bool
	// appendText appends the state text of Table.AllowExplain for the
	// state after a decision judged at at; pre is the state before it.
	appendText(r *Rule, pre *S, at int64, unit time.Duration, dst []byte) []byte
	// gauge returns the number the state stands for at now, which is not
	// before the state's boundary, and the first time after now at which
	// that number stops being linear in time (math.MaxInt64: never),
	// without changing the state. It is the side of the limit that is
	// used (a count, a level); the kind's gaugeSpec says whether the
	// number drawn is what is left instead (tokens). Between requests the
	// number never turns back.
	gauge(r *Rule, now int64) (used float64, until int64)
}

// kindOps is one algorithm's state operations on a state the caller holds
// as an unsafe.Pointer, so that a table or group keeps the states of
// several algorithms side by side in one block per key.
type kindOps interface {
	// stateType is the type of the state p points at.
	stateType() reflect.Type
	// allow is applyExact, with out as its scratch.
	allow(r *Rule, p unsafe.Pointer, now, cost int64, out *Decision, x *Exact) Decision
	// admit is allow reporting only whether the request was allowed: the
	// same decision and the same change to the state, without computing
	// the other fields.
	admit(r *Rule, p unsafe.Pointer, now, cost int64, out *Decision) bool
	// explain is allow that also appends the state text to dst.
	explain(r *Rule, p unsafe.Pointer, now, cost int64, unit time.Duration, dst []byte, out *Decision, x *Exact) (Decision, []byte)
	// text appends the state text for the state as it stands, after a
	// decision at now that another rule sharing it made.
	text(r *Rule, p unsafe.Pointer, now int64, unit time.Duration, dst []byte) []byte
	idle(r *Rule, p unsafe.Pointer, now int64) bool
	decidedAt(r *Rule, p unsafe.Pointer, now int64) int64
	// gauge is Table.Gauge.
	gauge(r *Rule, p unsafe.Pointer, now int64) (value float64, until int64)
	reset(p unsafe.Pointer)
	// stepEncoded is Rule.StepEncodedExact, with x nil or where the
	// durations go in full.
	stepEncoded(r *Rule, state []byte, now, cost int64, dst []byte, x *Exact) ([]byte, Decision, error)
	// describeEncoded is Rule.DescribeEncoded.
	describeEncoded(r *Rule, state []byte, now int64) (Decision, Exact, error)
	// decidedAtEncoded is Rule.DecidedAtEncoded.
	decidedAtEncoded(r *Rule, state []byte, now int64) (int64, error)
}

// fastDecide is a state type's decide as a plain function of a pointer to
// the state: the hot path of the stores calls it directly. (Called
// through a type parameter, a method goes through the generic code's
// dictionary, and the calls inside it through the dictionary again; this
// is the concrete method itself, one indirect call.)
type fastDecide func(p unsafe.Pointer, r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool)

// fastOf returns the fastDecide of a state type from its decide method,
// given as a method expression ((*FixedWindowState).decide). A method
// with a pointer receiver is called exactly as a function with the pointer
// as its first argument, so the function value is reinterpreted as taking
// an unsafe.Pointer.
func fastOf[S any](decide func(s *S, r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool)) fastDecide {
	return *(*fastDecide)(unsafe.Pointer(&decide))
}

// fastWait is a state type's wait method (see waiter) as a plain function
// of a pointer to the state, as fastDecide is its decide.
type fastWait func(p unsafe.Pointer, r *Rule, now, cost int64) (wait Span, refused, back bool)

// A waiter is a state type that computes a refusal's RetryAfter alone,
// with less arithmetic than a full decision: where a replay needs only the
// waits of the requests it refused (a sweep's p99 of Retry-After), most of
// its work would otherwise be the rest of every refusal's decision. wait
// judges a request of 1 <= cost <= limit at now without changing the
// state and returns, when the state refuses it for want of room, the
// RetryAfter of decide's decision in full; back when now is before the
// state's boundary, which it leaves to decide.
type waiter interface {
	wait(r *Rule, now, cost int64) (wait Span, refused, back bool)
}

var _, _ waiter = (*bucket)(nil), (*bucketWords)(nil)

// waitOf returns the fastWait of a state type from its wait method, as
// fastOf does for decide.
func waitOf[S any](wait func(s *S, r *Rule, now, cost int64) (Span, bool, bool)) fastWait {
	return *(*fastWait)(unsafe.Pointer(&wait))
}

// ops is the kindOps of state type S.
type ops[S any, P stateOps[S]] struct{}

func (ops[S, P]) stateType() reflect.Type { return reflect.TypeFor[S]() }

func (ops[S, P]) allow(r *Rule, p unsafe.Pointer, now, cost int64, out *Decision, x *Exact) Decision {
	return applyExact(P((*S)(p)), r, now, cost, out, x)
}

func (ops[S, P]) admit(r *Rule, p unsafe.Pointer, now, cost int64, out *Decision) bool {
	if !validCost(r, cost) {
		return false // refused, and the state unchanged
	}
	return applyExact(P((*S)(p)), r, now, cost, out, nil).Allowed
}

func (ops[S, P]) explain(r *Rule, p unsafe.Pointer, now, cost int64, unit time.Duration, dst []byte, out *Decision, x *Exact) (Decision, []byte) {
	s := P((*S)(p))
	pre := *s
	at := decidedAt(P(&pre), r, now)
	d := applyExact(s, r, now, cost, out, x)
	return d, s.appendText(r, &pre, at, unit, dst)
}

func (ops[S, P]) text(r *Rule, p unsafe.Pointer, now int64, unit time.Duration, dst []byte) []byte {
	s := P((*S)(p))
	return s.appendText(r, (*S)(s), decidedAt(s, r, now), unit, dst)
}

func (ops[S, P]) idle(r *Rule, p unsafe.Pointer, now int64) bool {
	return P((*S)(p)).idle(r, now)
}

func (ops[S, P]) decidedAt(r *Rule, p unsafe.Pointer, now int64) int64 {
	return decidedAt(P((*S)(p)), r, now)
}

func (ops[S, P]) gauge(r *Rule, p unsafe.Pointer, now int64) (float64, int64) {
	s := P((*S)(p))
	v, until := s.gauge(r, decidedAt(s, r, now))
	if r.k.gauge.free {
		v = float64(gaugeLimit(r)) - v
	}
	return v, until
}

func (ops[S, P]) reset(p unsafe.Pointer) {
	var fresh S
	*(*S)(p) = fresh
}

// validCost reports whether a request of cost can ever pass rule r: a cost
// of zero, below zero or above the limit (or capacity) is refused and
// changes nothing.
func validCost(r *Rule, cost int64) bool {
	return uint64(cost-1) < uint64(r.limit)
}

// apply is the one transition of every algorithm, a pure function of the
// rule, the state, the time and the cost: it judges a request of cost at
// now against the state *p for rule r and updates *p.
func apply[S any, P stateOps[S]](p P, r *Rule, now, cost int64) Decision {
	return applyExact(p, r, now, cost, new(Decision), nil)
}

// applyExact is apply that also sets *x, unless x is nil, to the decision's
// durations in full. out is scratch for decide. (A pointer to a variable of
// the caller's would escape to the heap through the method of a type
// parameter: out points to memory on the heap already, and x is nil or
// does.)
func applyExact[S any, P stateOps[S]](p P, r *Rule, now, cost int64, out *Decision, x *Exact) Decision {
	if cost < 1 {
		if x != nil {
			*x = Exact{}
		}
		return Decision{Reason: ReasonBadCost}
	}
	at := now
	var off Span
	b, back := p.boundary(r, now)
	if back {
		at = b
		off = span64(since(b, now))
	}
	if cost > r.limit {
		return refuse(p, r, at, off, cost, ReasonCost, out, x)
	}
	if back && r.pol.Clock == ClockReject {
		return refuse(p, r, at, off, cost, ReasonClock, out, x)
	}
	if x != nil {
		*x = Exact{}
	}
	p.decide(r, at, cost, true, out, x)
	d := *out
	if back {
		// The durations count from the request's own time.
		var full Exact
		if x != nil {
			full = *x
		} else {
			full = Exact{span64(uint64(d.RetryAfter)), span64(uint64(d.ResetAfter)), span64(uint64(d.Delay))}
		}
		if d.Allowed {
			if r.k.delays {
				setDelay(&d, x, full.Delay.add(off))
			}
		} else {
			setRetry(&d, x, full.RetryAfter.add(off))
		}
		setReset(&d, x, full.ResetAfter.add(off))
	}
	return d
}

// decidedAt returns the time at which the state *p takes a request at now:
// now itself, or the boundary when the clock went backwards for the key,
// which is where ClockClamp judges it.
func decidedAt[S any, P stateOps[S]](p P, r *Rule, now int64) int64 {
	if b, back := p.boundary(r, now); back {
		return b
	}
	return now
}

// refuse builds a refusal that leaves *p unchanged. Remaining and
// ResetAfter describe the state as it stands at the time at (the request's
// time, or the boundary when the clock went backwards). Unless x is nil it
// gets the durations in full. out is scratch for decide.
func refuse[S any, P stateOps[S]](p P, r *Rule, at int64, off Span, cost int64, reason Reason, out *Decision, x *Exact) Decision {
	var retry Span
	c := *p
	if reason == ReasonClock {
		if x != nil {
			*x = Exact{}
		}
		P(&c).decide(r, at, cost, false, out, x)
		retry = span64(uint64(out.RetryAfter))
		if x != nil {
			retry = x.RetryAfter
		}
		retry = off.add(retry)
		c = *p
	}
	if x != nil {
		*x = Exact{}
	}
	P(&c).decide(r, at, 0, false, out, x)
	base := *out
	reset := span64(uint64(base.ResetAfter))
	if x != nil {
		reset = x.ResetAfter
		*x = Exact{}
	}
	d := Decision{Reason: reason, Remaining: base.Remaining}
	setReset(&d, x, reset.add(off))
	switch reason {
	case ReasonCost:
		setRetry(&d, x, maxSpan) // no wait makes it fit
	case ReasonClock:
		setRetry(&d, x, retry)
	}
	return d
}
