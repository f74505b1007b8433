package limiters

import (
	"math"
	"strconv"
	"time"
)

// A logEntry is the time and total cost of the admitted requests of one
// key at one instant.
type logEntry struct {
	t    int64
	cost int64
}

// SlidingLogState is one key's state under SlidingLog: the admitted
// requests still inside the window, oldest first, with their costs. The
// zero value is the fresh state (an empty log).
//
// The entries live in a ring whose size follows the number of entries the
// key holds, not the limit, and requests at the same instant share one
// entry. Up to four entries fit inside the state itself, so a small log
// (the classic example's limit of 3) needs no other memory; a longer one moves to a
// ring of its own that doubles when full and halves when a quarter full
// (never below 8). A key with a limit of 10,000 that sends a request a
// minute holds one or two entries. The ring is reused in place, so in a
// steady state a decision allocates nothing.
//
// The classic sliding log also drops expired entries when it refuses a request;
// this one drops them only when it admits one. For cost-1 requests that
// makes no difference (a refusal finds no expired entries). With costs it
// matters for a request that goes back in time past a refusal, which the
// classic rule could admit beyond the limit; this log never admits more than
// the limit in any closed interval of the window's length.
//
// Unlike the other state types, a SlidingLogState refers to storage: Step
// may reuse s's ring, so s must not be used after Step returns.
type SlidingLogState struct {
	buf    []logEntry // the ring once it outgrows inline; a power of two long
	head   int        // index of the oldest entry
	n      int        // number of entries
	sum    int64      // total cost of the entries
	inline [inlineLog]logEntry
}

const (
	inlineLog    = 4 // entries held in the state itself; a power of two
	minShrinkLog = 8
)

// ring returns the entries' storage: buf, or inline before it is needed.
// Its length is a power of two.
func (s *SlidingLogState) ring() []logEntry {
	if s.buf != nil {
		return s.buf
	}
	return s.inline[:]
}

// Step judges a request of cost at now for rule r (which must be a
// SlidingLog rule) and returns the new state and the decision. The window
// is the closed interval [now-W, now]: an entry exactly W old still counts.
// A request earlier than the newest logged one is a backwards clock.
func (s SlidingLogState) Step(r *Rule, now, cost int64) (SlidingLogState, Decision) {
	if !r.fits(SlidingLog) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

// Len returns the number of entries in the log.
func (s *SlidingLogState) Len() int { return s.n }

func (s *SlidingLogState) at(i int) *logEntry {
	r := s.ring()
	return &r[(s.head+i)&(len(r)-1)]
}

func (s *SlidingLogState) newest() int64 {
	return s.at(s.n - 1).t
}

func (s *SlidingLogState) boundary(r *Rule, now int64) (int64, bool) {
	if s.n == 0 {
		return 0, false
	}
	if t := s.newest(); now < t {
		return t, true
	}
	return 0, false
}

func (s *SlidingLogState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	if s.n > 0 && now < s.newest() {
		return false, true
	}
	full := out != nil
	w := uint64(r.window)
	// Find the entries still inside [now-W, now]. They are dropped from the
	// ring only when a request is admitted: a refusal leaves the log as it
	// was, so a later request that goes back in time (but not before the
	// newest entry) still sees every entry of its own window.
	head, n, sum := s.expire(r, now)
	ring := s.ring()
	mask := len(ring) - 1
	var d Decision
	if cost > r.limit-sum {
		if !full {
			return d.Allowed, false
		}
		d.Reason = r.refusal
		d.Remaining = r.limit - sum
		// The retry waits until enough of the oldest entries have left the
		// window: an entry at t leaves it at t+W+1.
		need := sum + cost - r.limit
		for i := 0; i < n; i++ {
			e := &ring[(head+i)&mask]
			need -= e.cost
			if need <= 0 {
				setRetry(&d, x, span64(w+1-since(now, e.t)))
				break
			}
		}
		setReset(&d, x, span64(w+1-since(now, s.newest())))
		*out = d
		return d.Allowed, false
	}
	d.Allowed = true
	if full {
		d.Remaining = r.limit - sum - cost
		switch {
		case cost > 0:
			setReset(&d, x, span64(w+1))
		case n > 0:
			setReset(&d, x, span64(w+1-since(now, s.newest())))
		}
	}
	if commit && cost > 0 {
		s.take(head, n, sum, now, cost)
	}
	if full {
		*out = d
	}
	return true, false
}

// expire returns the ring position, count and cost of the entries still
// inside [now-W, now], without dropping the others.
func (s *SlidingLogState) expire(r *Rule, now int64) (head, n int, sum int64) {
	w := uint64(r.window)
	head, n, sum = s.head, s.n, s.sum
	ring := s.ring()
	mask := len(ring) - 1
	for n > 0 {
		e := &ring[head]
		if since(now, e.t) <= w {
			break
		}
		sum -= e.cost
		head = (head + 1) & mask
		n--
	}
	return head, n, sum
}

// take admits a request: it drops the expired entries (the log is then
// head, n, sum, as expire found it) and logs cost at now.
func (s *SlidingLogState) take(head, n int, sum, now, cost int64) {
	s.head, s.n, s.sum = head, n, sum
	if s.n == 0 {
		s.head = 0
	}
	if len(s.buf) > minShrinkLog && s.n < len(s.buf)/4 {
		s.resize(len(s.buf) / 2)
	}
	s.push(now, cost)
}

func (s *SlidingLogState) push(now, cost int64) {
	s.sum += cost
	if s.n > 0 {
		if e := s.at(s.n - 1); e.t == now {
			e.cost += cost
			return
		}
	}
	if n := len(s.ring()); s.n == n {
		s.resize(2 * n)
	}
	*s.at(s.n) = logEntry{t: now, cost: cost}
	s.n++
}

// resize moves the entries to a new ring of size size >= s.n.
func (s *SlidingLogState) resize(size int) {
	buf := make([]logEntry, size)
	for i := 0; i < s.n; i++ {
		buf[i] = *s.at(i)
	}
	s.buf, s.head = buf, 0
}

func (s *SlidingLogState) idle(r *Rule, now int64) bool {
	if s.n == 0 {
		return true
	}
	t := s.newest()
	return now >= t && since(now, t) > uint64(r.window)
}

// gauge is the cost logged in [now-W, now], until its oldest entry leaves
// it, W+1 ns after the entry's time.
func (s *SlidingLogState) gauge(r *Rule, now int64) (float64, int64) {
	head, n, sum := s.expire(r, now)
	if n == 0 {
		return 0, math.MaxInt64
	}
	return float64(sum), later(s.ring()[head].t, uint64(r.window)+1)
}

// logTextEntries is the most entries a state text shows; longer logs show
// their first and last entries around an ellipsis.
const logTextEntries = 7

func (s *SlidingLogState) appendText(_ *Rule, _ *SlidingLogState, _ int64, unit time.Duration, dst []byte) []byte {
	dst = append(dst, "log ["...)
	for i := 0; i < s.n; i++ {
		if s.n > logTextEntries && i == 3 {
			dst = append(dst, " ..."...)
			i = s.n - 3
		}
		if i > 0 {
			dst = append(dst, ' ')
		}
		e := s.at(i)
		dst = appendTime(dst, e.t, unit)
		if e.cost != 1 {
			dst = append(dst, 'x')
			dst = strconv.AppendUint(dst, uint64(e.cost), 10)
		}
	}
	dst = append(dst, ']')
	if s.n > logTextEntries {
		dst = append(dst, " ("...)
		dst = strconv.AppendUint(dst, uint64(s.n), 10)
		dst = append(dst, " entries)"...)
	}
	return dst
}
