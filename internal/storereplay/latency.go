package storereplay

import (
	"context"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Latencies is a histogram of wall-clock durations, in buckets of a
// sixteenth of a power of two of nanoseconds: quantiles within 7%, in
// fixed memory however long the replay. A replay counts, for each
// request, the time the store took to decide it: the round trip of the
// call that carried it (a pipeline of several requests and limiters), or
// under --naive its limiters' GETs and SETs one after another. These
// durations are for the report only; no decision depends on them.
type Latencies struct {
	counts [64 * 16]int64
	n      int64
	max    time.Duration
}

// bucketOf is the bucket of d: its power of two and the next four bits.
func bucketOf(d time.Duration) int {
	v := uint64(max(d, 1))
	exp := bits.Len64(v) - 1
	if exp < 4 {
		return int(v)
	}
	return exp*16 + int(v>>(exp-4)&15)
}

// bucketTop is the largest duration of bucket b.
func bucketTop(b int) time.Duration {
	exp, frac := b/16, uint64(b%16)
	if exp < 4 {
		return time.Duration(b)
	}
	return time.Duration((16+frac+1)<<(exp-4) - 1)
}

// add counts n requests that took d each.
func (h *Latencies) add(d time.Duration, n int64) {
	h.counts[bucketOf(d)] += n
	h.n += n
	h.max = max(h.max, d)
}

func (h *Latencies) merge(o *Latencies) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count returns the number of durations counted.
func (h *Latencies) Count() int64 { return h.n }

// Max returns the longest duration counted.
func (h *Latencies) Max() time.Duration { return h.max }

// Quantile returns the top of the bucket holding quantile q (0 < q <=
// 1), no more than the largest duration counted; 0 when there are none.
func (h *Latencies) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for b, c := range h.counts {
		if seen += c; seen >= rank {
			return min(bucketTop(b), h.max)
		}
	}
	return h.max
}

// tripCounter counts the round trips a go-redis client makes: each
// command sent alone and each pipeline (a cluster client's pipeline, which
// goes to each node concerned at once, counts once).
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}
