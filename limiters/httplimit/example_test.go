package httplimit_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/limiters/httplimit"
	"github.com/ratesim/ratesim/limiters/redisstore"
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

// A limit shared by every server of a service: the middleware over a
// redisstore.Store, which keeps the limiters in Redis. A request the
// store cannot judge (Redis down, under redisstore.FailError) gets 503;
// with redisstore.FailOpen it would pass instead.
func ExampleNewContext() {
	ctx := context.Background()
	client, err := redisstore.Connect(ctx, []string{"127.0.0.1:6379"}, 2*time.Second)
	if err != nil {
		panic(err)
	}
	store, err := redisstore.New(client, []redisstore.Limiter{
		{Name: "api", Algorithm: limiters.GCRA, Policy: limiters.Policy{Capacity: 20, Rate: limiters.Rate{N: 10, Per: time.Second}}},
	}, redisstore.Options{Prefix: "rl:", Clock: redisstore.ServerClock})
	if err != nil {
		panic(err)
	}
	m, err := httplimit.NewContext(store, func(r *http.Request) string { return r.Header.Get("X-Api-Key") },
		httplimit.WithUnavailable(func(w http.ResponseWriter, r *http.Request, err error) {
			log.Printf("rate limit unavailable: %v", err)
			http.Error(w, "try again later", http.StatusServiceUnavailable)
		}))
	if err != nil {
		panic(err)
	}
	http.Handle("/", m.Wrap(http.NotFoundHandler()))
}
