package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// nginxKind is the kinds table's entry for NginxLimitReq.
var nginxKind = kind{
	name:    "nginx-limit-req",
	summary: "nginx limit_req (ngx_http_limit_req_module), its zone's expiry of idle states included",
	doc: Doc{
		How: "ngx_http_limit_req_module: time in whole milliseconds, the excess in thousandths of a request, " +
			"excess = max(0, excess - rate*ms/1000 + 1000) for a key with a node, refused above burst*1000; a key's first request " +
			"gets a node with excess 0. Requests past delay=N wait (excess - N*1000)*1000/rate ms. " +
			"The zone holds a node per key, least recently used last: a key without one first deletes up to two " +
			"unused nodes idle for 60 s, and with the zone full the least recently used node whatever it holds.",
		State:   "constant: the excess, the millisecond of the last allowed request, and the key's place in the zone",
		Bursts:  "burst+1 requests at once, then the rate; a node deleted from the zone lets its key start over with excess 0.",
		Explain: "\"excess 0.5 at 15.003\": the excess after the decision, in requests, and the millisecond it was counted at.",
		Choose:  "Reproducing nginx limit_req.",
	},
	params:   []string{"capacity", "rate", "delay"},
	refusal:  ReasonQueueFull,
	ops:      ops[NginxState, *NginxState]{},
	gauge:    gaugeSpec{none: "nginx's zone makes one key's state depend on the other keys' requests"},
	fast:     fastOf((*NginxState).decide),
	delays:   true,
	validate: validateNginx,
	setup: func(r *Rule) {
		r.lib.nRate, _ = nginxRate(r.pol.Rate)
		r.lib.nBurst = uint64(r.pol.Capacity-1) * 1000
		r.lib.nDelay = uint64(min(r.pol.Delay, r.pol.Capacity)) * 1000
	},
	bound:    noBound,
	library:  true,
	ownClock: true,
	zoned:    true,
}

// NginxConfig is NginxLimitReq's configuration beyond limit_req's burst
// (Policy.Capacity is burst + 1), delay (Policy.Delay; nodelay is a delay
// of burst or more) and the zone's rate (Policy.Rate, in whole thousandths
// of a request per second, as nginx keeps it).
type NginxConfig struct {
	// Nodes is how many keys' states the zone holds: with it full, a new
	// key deletes the least recently used state whatever it holds. It is
	// what the zone's size (zone=name:SIZE) fits; see package presets.
	Nodes int64
}

// nginxRate returns the rate in thousandths of a request per second, and
// whether it is a whole number of them.
func nginxRate(r Rate) (uint64, bool) {
	// N per Per ns is N * 1e12 / Per thousandths a second.
	hi, lo := bits.Mul64(uint64(r.N), 1e12)
	if hi >= uint64(r.Per) {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, uint64(r.Per))
	return q, rem == 0 && q > 0 && q <= math.MaxInt64/1000
}

func validateNginx(p Policy) error {
	if _, ok := nginxRate(p.Rate); !ok {
		return fmt.Errorf("limiters: nginx's rate is a whole number of thousandths of a request per second, got %d per %dns", p.Rate.N, int64(p.Rate.Per))
	}
	if p.Capacity > math.MaxInt64/4000 {
		return fmt.Errorf("limiters: nginx burst %d is out of range", p.Capacity-1)
	}
	if p.Delay < 0 {
		return fmt.Errorf("limiters: delay must not be negative, got %d", p.Delay)
	}
	if p.Library.Nginx.Nodes < 1 || p.Library.Nginx.Nodes > math.MaxUint32-1 {
		return fmt.Errorf("limiters: an nginx zone holds from 1 to %d nodes, got %d", uint32(math.MaxUint32-1), p.Library.Nginx.Nodes)
	}
	return nil
}

// NginxState is one key's state under NginxLimitReq: its node in the
// zone, as ngx_http_limit_req_node_t holds it, and its place in the
// zone's queue. The zero value is the fresh state: no node. It holds no
// pointers and may be copied freely; its place in a zone is kept by the
// Table, Group or Keyed that holds it.
type NginxState struct {
	excess     int64  // lr->excess, in thousandths of a request
	last       int64  // lr->last, a millisecond
	prev, next uint32 // the zone's queue, toward its head and its tail: ids + 1, 0 for none
	counted    bool   // the node has judged a request
	linked     bool   // the node is in the zone's queue
}

// Step judges a request of cost at now for rule r (which must be an
// NginxLimitReq rule) and returns the new state and the decision, as
// though the zone held no other key (and so deleted nothing). It does not
// change s.
//
// now is read in whole milliseconds. A key with a node drains
// rate*ms/1000 thousandths since the node's last allowed request (ms is 0
// for a time up to 60 s earlier and 1 for one earlier still), then takes
// 1000 per request; a key without one gets a node with excess 0. A
// request of cost c counts as c requests at once, all passing or none.
// It is refused above burst*1000, changing nothing, and otherwise waits
// (excess - delay*1000) * 1000 / rate ms when its excess is above
// delay*1000. Remaining is how many more requests at the same
// millisecond would pass, RetryAfter when this one would, ResetAfter when
// the node has drained to what a new one holds.
func (s NginxState) Step(r *Rule, now, cost int64) (NginxState, Decision) {
	if !r.fits(NginxLimitReq) {
		return s, Decision{Reason: ReasonBadRule}
	}
	d := apply(&s, r, now, cost)
	return s, d
}

func (s *NginxState) boundary(*Rule, int64) (int64, bool) { return 0, false }

// nginxDrain returns excess - rate*ms/1000 as ngx_http_limit_req_lookup
// computes it: in unsigned arithmetic, read back signed.
func nginxDrain(r *Rule, excess, ms int64) int64 {
	return int64(uint64(excess) - r.lib.nRate*uint64(ms)/1000)
}

func (s *NginxState) decide(r *Rule, now, cost int64, commit bool, out *Decision, x *Exact) (allowed, back bool) {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	var excess, elapsed int64
	if s.counted {
		elapsed = ms - s.last // (ngx_msec_int_t) (now - lr->last)
		if elapsed < -60000 {
			elapsed = 1
		} else if elapsed < 0 {
			elapsed = 0
		}
		excess = max(0, nginxDrain(r, s.excess, elapsed)+1000)
	}
	excess += (cost - 1) * 1000 // the other requests at the same millisecond
	allowed = uint64(excess) <= r.lib.nBurst
	if out != nil {
		d := Decision{Allowed: allowed}
		if allowed {
			d.Remaining = int64((r.lib.nBurst - uint64(excess)) / 1000)
			if uint64(excess) > r.lib.nDelay {
				delay := (uint64(excess) - r.lib.nDelay) * 1000 / r.lib.nRate
				hi, lo := bits.Mul64(delay, uint64(time.Millisecond))
				setDelay(&d, x, Span{hi, lo})
			}
		} else {
			d.Reason = r.refusal
			// It passes once rate*d/1000 >= excess + 1000*cost - burst*1000
			// thousandths have drained since the last allowed request.
			need := uint64(s.excess) + uint64(cost)*1000 - r.lib.nBurst
			setRetry(&d, x, until(satAdd(s.last, nginxMs(r, need)), uint64(time.Millisecond), now))
		}
		// Back to what a new node holds once excess + 1000 has drained.
		last, held := s.last, s.excess
		if allowed && commit {
			held = excess
			if !s.counted || elapsed != 0 {
				last = ms
			}
		}
		if s.counted || allowed && commit {
			setReset(&d, x, until(satAdd(last, nginxMs(r, uint64(held)+1000)), uint64(time.Millisecond), now))
		}
		*out = d
	}
	if allowed && commit {
		if !s.counted || elapsed != 0 {
			s.last = ms // if (ms) lr->last = now
		}
		s.excess, s.counted = excess, true
	}
	return allowed, false
}

// nginxMs returns the fewest whole milliseconds over which rate*ms/1000
// reaches n thousandths.
func nginxMs(r *Rule, n uint64) int64 {
	hi, lo := bits.Mul64(n, 1000)
	q := divCeil128(hi, lo, r.lib.nRate)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

func (s *NginxState) idle(*Rule, int64) bool { return !s.linked }

// appendText appends "excess E at T": the excess after a decision, in
// requests, and the millisecond it was counted at; "no node" without one.
func (s *NginxState) appendText(_ *Rule, _ *NginxState, _ int64, unit time.Duration, dst []byte) []byte {
	if !s.counted {
		return append(dst, "no node"...)
	}
	dst = append(dst, "excess "...)
	dst = appendRat(dst, false, 0, uint64(s.excess), 1000)
	dst = append(dst, " at "...)
	hi, lo := bits.Mul64(abs64(s.last), uint64(time.Millisecond))
	return appendPoint(dst, s.last < 0, hi, lo, unit)
}

func (s *NginxState) appendBinary(dst []byte) []byte {
	dst = appendWords(dst, uint64(s.excess), uint64(s.last))
	if s.counted {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func (s *NginxState) readBinary(r *Rule, b []byte) bool {
	w, ok := words(b, 2, 1)
	if !ok || b[16] > 1 || w[0] > r.lib.nBurst {
		return false
	}
	s.excess, s.last, s.counted = int64(w[0]), int64(w[1]), b[16] == 1
	return true
}

// nginxZone is an nginx zone: the nodes of one store member's keys, in
// the order ngx_http_limit_req_module keeps them, most recently looked up
// first, and how many it holds. The links are in the keys' states.
type nginxZone struct {
	head, tail uint32 // ids + 1; 0 when empty
	n, max     int64
}

func newNginxZone(r *Rule) *nginxZone {
	return &nginxZone{max: r.pol.Library.Nginx.Nodes}
}

// node returns key id's state in member m of store s.
func (z *nginxZone) node(s *store, m *member, id uint32) *NginxState {
	return (*NginxState)(unsafe.Add(s.blocks.At(id), m.off))
}

// enter readies key id for a request of cost at now, as the lookup does
// (a cost that can never pass touches nothing): a key with a node moves
// to the head of the queue; for one without, the zone first deletes what
// ngx_http_limit_req_expire deletes (up to two idle nodes, and with the
// zone full the least recently used one before them), then the key gets
// a node at the head.
func (z *nginxZone) enter(s *store, m *member, id uint32, now, cost int64) {
	if !validCost(&m.rule, cost) {
		return
	}
	st := z.node(s, m, id)
	if st.linked {
		z.unlink(s, m, st)
		z.push(s, m, id, st)
		return
	}
	z.expire(s, m, now, 1)
	if z.n >= z.max {
		z.expire(s, m, now, 0) // the allocation failed: the zone is full
	}
	z.push(s, m, id, st)
}

// expire is ngx_http_limit_req_expire(ctx, n): from the tail, it deletes
// nodes idle for 60 s or more whose excess has drained, stopping at the
// first other, while n < 3, n counting up from 1; from 0, the first goes
// whatever it holds.
func (z *nginxZone) expire(s *store, m *member, now int64, n int) {
	ms, _ := floorDivMod(now, int64(time.Millisecond))
	for n < 3 {
		if z.tail == 0 {
			return
		}
		st := z.node(s, m, z.tail-1)
		check := n != 0
		n++
		if check {
			idle := ms - st.last
			if idle < 0 {
				idle = -idle // ngx_abs
			}
			if idle < 60000 || nginxDrain(&m.rule, st.excess, idle) > 0 {
				return
			}
		}
		z.unlink(s, m, st)
		*st = NginxState{}
	}
}

// push links key id, whose state is st, at the head.
func (z *nginxZone) push(s *store, m *member, id uint32, st *NginxState) {
	st.prev, st.next, st.linked = 0, z.head, true
	if z.head != 0 {
		z.node(s, m, z.head-1).prev = id + 1
	} else {
		z.tail = id + 1
	}
	z.head = id + 1
	z.n++
}

// unlink takes st out of the queue.
func (z *nginxZone) unlink(s *store, m *member, st *NginxState) {
	if st.prev != 0 {
		z.node(s, m, st.prev-1).next = st.next
	} else {
		z.head = st.next
	}
	if st.next != 0 {
		z.node(s, m, st.next-1).prev = st.prev
	} else {
		z.tail = st.prev
	}
	st.prev, st.next, st.linked = 0, 0, false
	z.n--
}

// forget takes key id out of the zone, if it is in it, before its state
// is reset.
func (z *nginxZone) forget(s *store, m *member, id uint32) {
	if st := z.node(s, m, id); st.linked {
		z.unlink(s, m, st)
	}
}

// gauge: NginxLimitReq declares no gauge (its zone makes one key's state
// depend on the others' requests, and a plot replays one key alone).
func (s *NginxState) gauge(*Rule, int64) (float64, int64) { return 0, math.MaxInt64 }
