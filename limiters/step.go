package limiters

import "time"

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
	// storage the state shares with a copy.
	decide(r *Rule, now, cost int64, commit bool) Decision
	// idle reports whether the state decides every request at or after
	// now exactly as the fresh state does, so a store may forget it.
	idle(r *Rule, now int64) bool
}

// apply is the transition of principle 1: it judges a request of cost at
// now against the state *p for rule r and updates *p.
func apply[S any, P stateOps[S]](p P, r *Rule, now, cost int64) Decision {
	if cost < 1 {
		return Decision{Reason: ReasonBadCost}
	}
	at := now
	var off time.Duration
	b, back := p.boundary(r, now)
	if back {
		at = b
		off = sat(since(b, now))
	}
	if cost > r.limit {
		return refuse(p, r, at, off, cost, ReasonCost)
	}
	if back && r.pol.Clock == ClockReject {
		return refuse(p, r, at, off, cost, ReasonClock)
	}
	d := p.decide(r, at, cost, true)
	if off > 0 {
		if d.Allowed {
			if r.alg == LeakyQueue {
				d.Delay = addSat(d.Delay, off)
			}
		} else {
			d.RetryAfter = addSat(d.RetryAfter, off)
		}
		d.ResetAfter = addSat(d.ResetAfter, off)
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
// time, or the boundary when the clock went backwards).
func refuse[S any, P stateOps[S]](p P, r *Rule, at int64, off time.Duration, cost int64, reason Reason) Decision {
	c := *p
	base := P(&c).decide(r, at, 0, false)
	d := Decision{Reason: reason, Remaining: base.Remaining, ResetAfter: addSat(base.ResetAfter, off)}
	if reason == ReasonCost {
		d.RetryAfter = InfDuration // no wait makes it fit
	}
	if reason == ReasonClock {
		c = *p
		try := P(&c).decide(r, at, cost, false)
		d.RetryAfter = addSat(off, try.RetryAfter)
	}
	return d
}
