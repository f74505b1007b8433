package headers_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
)

// The fields of the token-bucket example: 3 tokens, 3 more per 10 s.
func Example() {
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 3, Per: 10 * time.Second}}
	lim, err := limiters.NewKeyed(limiters.TokenBucket, p)
	if err != nil {
		panic(err)
	}
	q, err := headers.QuotaOf("", limiters.TokenBucket, p)
	if err != nil {
		panic(err)
	}
	quotas := []headers.Quota{q}
	policy, _ := headers.RateLimitPolicy.Append(nil, quotas, nil)
	fmt.Printf("RateLimit-Policy: %s\n", policy)
	var buf []byte
	for _, t := range []time.Duration{0, 0, 0, 0, 5 * time.Second, 6 * time.Second} {
		ds := []limiters.Decision{lim.Allow("u1", int64(t), 1)}
		buf, _ = headers.RateLimit.Append(buf[:0], quotas, ds)
		fmt.Printf("t=%v allowed=%v RateLimit: %s", t, ds[0].Allowed, buf)
		if buf, ok := headers.RetryAfter.Append(buf[:0], quotas, ds); ok {
			fmt.Printf(" Retry-After: %s", buf)
		}
		fmt.Println()
	}
	// Output:
	// RateLimit-Policy: "default";q=3;w=10
	// t=0s allowed=true RateLimit: "default";r=2;t=4
	// t=0s allowed=true RateLimit: "default";r=1;t=7
	// t=0s allowed=true RateLimit: "default";r=0;t=10
	// t=0s allowed=false RateLimit: "default";r=0;t=10 Retry-After: 4
	// t=5s allowed=true RateLimit: "default";r=0;t=9
	// t=6s allowed=false RateLimit: "default";r=0;t=8 Retry-After: 1
}

// Two stacked limits: RateLimit puts the closest first, and the legacy
// fields describe it.
func ExampleSet() {
	perMin, _ := headers.QuotaOf("permin", limiters.FixedWindow, limiters.Policy{Limit: 50, Window: time.Minute})
	perHour, _ := headers.QuotaOf("perhr", limiters.SlidingLog, limiters.Policy{Limit: 1000, Window: time.Hour})
	quotas := []headers.Quota{perHour, perMin}
	ds := []limiters.Decision{
		{Allowed: true, Remaining: 900, ResetAfter: 50 * time.Minute},
		{Allowed: true, Remaining: 10, ResetAfter: 30 * time.Second},
	}
	h := http.Header{}
	headers.Set(h, headers.StyleBoth, quotas, ds)
	for _, name := range headers.Names() {
		if v := h.Get(name); v != "" {
			fmt.Printf("%s: %s\n", name, v)
		}
	}
	// Output:
	// ratelimit-policy: "perhr";q=1000;w=3600, "permin";q=50;w=60
	// ratelimit: "permin";r=10;t=30, "perhr";r=900;t=3000
	// x-ratelimit-limit: 50
	// x-ratelimit-remaining: 10
	// x-ratelimit-reset: 30
}

// For a token bucket, w is the time the rate takes to refill the whole
// capacity, rounded up.
func ExampleQuotaOf() {
	rate, _ := limiters.ParseRate("3", time.Second) // 3 per second
	q, err := headers.QuotaOf("api", limiters.GCRA, limiters.Policy{Capacity: 10, Rate: rate})
	fmt.Printf("%+v %v\n", q, err)
	// Output:
	// {Name:api Limit:10 WindowSeconds:4} <nil>
}
