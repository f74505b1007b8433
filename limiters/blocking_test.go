package limiters

import (
	"testing"
	"time"
)

// TestBlockingCounterBlocks: the example of Cloudflare's "How Cloudflare
// determines the request rate" (developers.cloudflare.com/waf/
// rate-limiting-rules/request-rate): one request per 10 s, a mitigation
// timeout of 10 minutes. The second request of a key within the period
// is over and blocks the key; every request of it in the next 10 minutes
// is refused, however slow, and none counts; then it is judged again.
func TestBlockingCounterBlocks(t *testing.T) {
	sec := int64(time.Second)
	p := Policy{Limit: 1, Window: 10 * time.Second, Block: 10 * time.Minute}
	r, err := NewRule(BlockingCounter, p)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at      int64
		allowed bool
		reason  Reason
		retry   time.Duration
	}{
		{0, true, ReasonNone, 0},
		{1 * sec, false, ReasonEstimate, 10 * time.Minute}, // over: blocked from 1 s
		{1 * sec, false, ReasonEstimate, 10 * time.Minute}, // the same instant, the same refusal
		{2 * sec, false, ReasonBlocked, 10*time.Minute - time.Second},
		{300 * sec, false, ReasonBlocked, 301 * time.Second}, // slow, but blocked
		{601*sec - 1, false, ReasonBlocked, 1},               // the block's last nanosecond
		{601 * sec, true, ReasonNone, 0},                     // the block is over; nothing counted since 0
		{602 * sec, false, ReasonEstimate, 10 * time.Minute}, // over again
	}
	var s BlockingCounterState
	for i, st := range steps {
		var d Decision
		s, d = s.Step(r, st.at, 1)
		if d.Allowed != st.allowed || d.Reason != st.reason || d.RetryAfter != st.retry {
			t.Errorf("step %d: Step(%v) = %v %q retry %v, want %v %q retry %v", i, time.Duration(st.at), d.Allowed, d.Reason, d.RetryAfter, st.allowed, st.reason, st.retry)
		}
		if !d.Allowed && d.Remaining != 0 {
			t.Errorf("step %d: remaining %d while blocked", i, d.Remaining)
		}
	}
	// Without a block it is the sliding counter.
	p.Block = 0
	r0, _ := NewRule(BlockingCounter, p)
	c, _ := NewRule(SlidingCounter, p)
	var b BlockingCounterState
	var sc SlidingCounterState
	for i, at := range []int64{0, 1, 5 * sec, 9 * sec, 11 * sec, 12 * sec, 19 * sec, 30 * sec} {
		var db, dc Decision
		b, db = b.Step(r0, at, 1)
		sc, dc = sc.Step(c, at, 1)
		if db != dc {
			t.Errorf("block 0, step %d: %+v, sliding-counter %+v", i, db, dc)
		}
	}
}
