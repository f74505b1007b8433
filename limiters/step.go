package limiters

// stateOps is what every per-key state type provides to apply. The methods
// are the time rule of one algorithm; apply adds what all share: cost
// checks and the clock rule.
type stateOps[S any] interface {
	*S
	// boundary returns the earliest time the state accepts, and whether
	// now is before it (the clock went backwards for the key).
	boundary(r *Rule, now int64) (b int64, back bool)
	// decide judges a request of 0 <= cost <= r.limit at a time now not
	// before the boundary. It brings the state forward to now (which never
	// changes a later decision) and, when commit is true and the request
	// is allowed, takes the cost. With commit false it never writes to
	// storage the state shares with a copy. Unless x is nil, it sets *x to
	// the decision's durations in full.
	decide(r *Rule, now, cost int64, commit bool, x *Exact) Decision
	// idle reports whether the state decides every request at or after
	// now exactly as the fresh state does, so a store may forget it.
	idle(r *Rule, now int64) bool
}

// apply is the one transition of every algorithm, a pure function of the
// rule, the state, the time and the cost: it judges a request of cost at
// now against the state *p for rule r and updates *p.
func apply[S any, P stateOps[S]](p P, r *Rule, now, cost int64) Decision {
	return applyExact(p, r, now, cost, nil)
}

// applyExact is apply that also sets *x, unless x is nil, to the decision's
// durations in full. (A pointer to a variable of the caller's would escape
// to the heap through the method of a type parameter: x is nil or points
// to memory that is on the heap already.)
func applyExact[S any, P stateOps[S]](p P, r *Rule, now, cost int64, x *Exact) Decision {
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
		return refuse(p, r, at, off, cost, ReasonCost, x)
	}
	if back && r.pol.Clock == ClockReject {
		return refuse(p, r, at, off, cost, ReasonClock, x)
	}
	if x != nil {
		*x = Exact{}
	}
	d := p.decide(r, at, cost, true, x)
	if back {
		// The durations count from the request's own time.
		var full Exact
		if x != nil {
			full = *x
		} else {
			full = Exact{span64(uint64(d.RetryAfter)), span64(uint64(d.ResetAfter)), span64(uint64(d.Delay))}
		}
		if d.Allowed {
			if r.alg == LeakyQueue {
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
// gets the durations in full.
func refuse[S any, P stateOps[S]](p P, r *Rule, at int64, off Span, cost int64, reason Reason, x *Exact) Decision {
	var retry Span
	c := *p
	if reason == ReasonClock {
		if x != nil {
			*x = Exact{}
		}
		try := P(&c).decide(r, at, cost, false, x)
		retry = span64(uint64(try.RetryAfter))
		if x != nil {
			retry = x.RetryAfter
		}
		retry = off.add(retry)
		c = *p
	}
	if x != nil {
		*x = Exact{}
	}
	base := P(&c).decide(r, at, 0, false, x)
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
