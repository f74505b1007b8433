package limiters

import (
	"testing"
	"time"
	"unsafe"
)

// TestStateBytes fills sliding logs and sliding buckets to their longest
// and checks that the memory they then hold is what StateBytes says, and
// that the other algorithms' states are their values.
func TestStateBytes(t *testing.T) {
	for _, limit := range []int64{1, 3, 4, 5, 8, 9, 100, 1000} {
		p := Policy{Limit: limit, Window: 10 * time.Second}
		r, err := NewRule(SlidingLog, p)
		if err != nil {
			t.Fatal(err)
		}
		var s SlidingLogState
		for i := range limit + 3 { // the last three are refused
			s, _ = s.Step(r, i, 1)
		}
		got := int64(unsafe.Sizeof(s)) + int64(cap(s.buf))*int64(unsafe.Sizeof(logEntry{}))
		if want := SlidingLog.StateBytes(p); got != want {
			t.Errorf("sliding log of limit %d holds %d bytes, StateBytes says %d", limit, got, want)
		}
	}
	for _, c := range []struct{ limit, buckets int64 }{{3, 10}, {100, 10}, {100, 60}, {5, 5}} {
		p := Policy{Limit: c.limit, Window: time.Duration(c.buckets) * time.Second, Buckets: c.buckets}
		r, err := NewRule(SlidingBuckets, p)
		if err != nil {
			t.Fatal(err)
		}
		var s SlidingBucketsState
		for i := range c.buckets { // one request in every sub-window
			s, _ = s.Step(r, i*int64(time.Second), 1)
		}
		got := int64(unsafe.Sizeof(s)) + int64(cap(s.log.buf))*int64(unsafe.Sizeof(logEntry{}))
		if want := SlidingBuckets.StateBytes(p); got > want {
			t.Errorf("sliding buckets %d/%d hold %d bytes, above StateBytes %d", c.limit, c.buckets, got, want)
		} else if c.limit >= c.buckets && got != want {
			t.Errorf("sliding buckets %d/%d at their longest hold %d bytes, StateBytes says %d", c.limit, c.buckets, got, want)
		}
	}
	// Buckets 0 is DefaultBuckets: a sub-window of a second each here.
	p := Policy{Limit: 100, Window: DefaultBuckets * time.Second}
	r, err := NewRule(SlidingBuckets, p)
	if err != nil {
		t.Fatal(err)
	}
	var s SlidingBucketsState
	for i := range int64(DefaultBuckets) {
		s, _ = s.Step(r, i*int64(time.Second), 1)
	}
	if got, want := int64(unsafe.Sizeof(s))+int64(cap(s.log.buf))*int64(unsafe.Sizeof(logEntry{})), SlidingBuckets.StateBytes(p); got != want {
		t.Errorf("sliding buckets of the default %d hold %d bytes at their longest, StateBytes says %d", DefaultBuckets, got, want)
	}
	if got, want := TokenBucket.StateBytes(Policy{Capacity: 3, Rate: Rate{N: 1, Per: time.Second}}), int64(unsafe.Sizeof(TokenBucketState{})); got != want {
		t.Errorf("token bucket StateBytes %d, want %d", got, want)
	}
	if got := Algorithm(200).StateBytes(Policy{}); got != 0 {
		t.Errorf("unknown algorithm StateBytes %d", got)
	}
}
