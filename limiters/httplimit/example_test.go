package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/limiters/httplimit"
)

// A token bucket per client address: 3 requests at once, 3 more every
// 10 seconds. The clock is fixed here so that the output is; a server
// leaves WithClock out.
func Example() {
	lim, err := limiters.NewKeyed(limiters.TokenBucket, limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 3, Per: 10 * time.Second}})
	if err != nil {
		panic(err)
	}
	m, err := httplimit.New(lim, func(r *http.Request) string { return r.RemoteAddr },
		httplimit.WithClock(func() int64 { return 0 }))
	if err != nil {
		panic(err)
	}
	h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	for range 4 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Println(rec.Code, rec.Header().Get("RateLimit-Policy"), rec.Header().Get("RateLimit"), rec.Header().Values("Retry-After"))
	}
	// Output:
	// 200 "default";q=3;w=10 "default";r=2;t=4 []
	// 200 "default";q=3;w=10 "default";r=1;t=7 []
	// 200 "default";q=3;w=10 "default";r=0;t=10 []
	// 429 "default";q=3;w=10 "default";r=0;t=10 [4]
}

// The legacy fields, for clients that know only those.
func ExampleWithStyle() {
	lim, err := limiters.NewKeyed(limiters.FixedWindow, limiters.Policy{Limit: 100, Window: time.Minute})
	if err != nil {
		panic(err)
	}
	at := int64(90 * time.Second) // 30 s into the window [60s, 120s)
	m, err := httplimit.New(lim, nil, httplimit.WithStyle(headers.StyleXRateLimit),
		httplimit.WithClock(func() int64 { return at }))
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	m.Wrap(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	for _, name := range headers.Names() {
		if v := rec.Header().Get(name); v != "" {
			fmt.Printf("%s: %s\n", name, v)
		}
	}
	// Output:
	// x-ratelimit-limit: 100
	// x-ratelimit-remaining: 99
	// x-ratelimit-reset: 30
}
