package httplimit_test

import (
	"context"
	"encoding/csv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/limiters/httplimit"
	"github.com/ratesim/ratesim/traces/examples"
)

const sec = int64(time.Second)

// fakeClock is a clock the test sets before each request.
type fakeClock struct{ ns int64 }

func (c *fakeClock) now() int64 { return c.ns }

// userKey keys requests by their X-User field.
func userKey(r *http.Request) string { return r.Header.Get("X-User") }

// costOf takes a request's cost from its X-Cost field.
func costOf(r *http.Request) int64 {
	c, err := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
	if err != nil {
		return 1
	}
	return c
}

// ok is the wrapped handler: it counts the requests it serves.
type ok struct{ served int }

func (h *ok) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.served++
	io.WriteString(w, "ok\n")
}

func serve(t *testing.T, h http.Handler, user string, cost int64) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-User", user)
	req.Header.Set("X-Cost", strconv.FormatInt(cost, 10))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// readExample returns the (user, time in ns) rows of a bundled trace
// whose times are whole or decimal seconds.
func readExample(t *testing.T, name string) (users []string, times []int64) {
	t.Helper()
	f, err := examples.FS.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || rows[0][0] != "user" || rows[0][1] != "timestamp" {
		t.Fatalf("%s: unexpected header %q", name, rows[0])
	}
	for _, row := range rows[1:] {
		d, err := time.ParseDuration(row[1] + "s")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		users, times = append(users, row[0]), append(times, int64(d))
	}
	return users, times
}

// TestTokenBucketExample replays the bundled token-bucket trace through
// the middleware, under the policy "ratesim run --algo token-bucket"
// gives it by default (capacity 3, rate 3 per 10 s). The decisions are the
// simulator's:
//
//	u1,0,1,true,2,0,3.333333334,
//	u1,0,1,true,1,0,6.666666667,
//	u1,0,1,true,0,0,10,
//	u1,0,1,false,0,3.333333334,10,no tokens
//	u1,5,1,true,0,0,8.333333334,
//	u1,6,1,false,0,0.666666667,7.333333334,no tokens
func TestTokenBucketExample(t *testing.T) {
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 3, Per: 10 * time.Second}}
	lim, err := limiters.NewKeyed(limiters.TokenBucket, p)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := limiters.NewKeyed(limiters.TokenBucket, p)
	clock := &fakeClock{}
	m, err := httplimit.New(lim, userKey, httplimit.WithClock(clock.now), httplimit.WithStyle(headers.StyleBoth))
	if err != nil {
		t.Fatal(err)
	}
	next := &ok{}
	h := m.Wrap(next)

	type want struct {
		status                           int
		rateLimit, retryAfter            string
		xLimit, xRemaining, xReset, body string
	}
	wants := []want{
		{200, `"default";r=2;t=4`, "", "3", "2", "4", "ok\n"},
		{200, `"default";r=1;t=7`, "", "3", "1", "7", "ok\n"},
		{200, `"default";r=0;t=10`, "", "3", "0", "10", "ok\n"},
		{429, `"default";r=0;t=10`, "4", "3", "0", "10", "Too Many Requests\n"},
		{200, `"default";r=0;t=9`, "", "3", "0", "9", "ok\n"},
		{429, `"default";r=0;t=8`, "1", "3", "0", "8", "Too Many Requests\n"},
	}
	users, times := readExample(t, "token-bucket.csv")
	if len(times) != len(wants) {
		t.Fatalf("token-bucket.csv has %d requests, want %d", len(times), len(wants))
	}
	served := 0
	for i, at := range times {
		clock.ns = at
		resp := serve(t, h, users[i], 1)
		d := ref.Allow(users[i], at, 1)
		body, _ := io.ReadAll(resp.Body)
		got := want{resp.StatusCode, resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After"),
			resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset"), string(body)}
		if got != wants[i] {
			t.Errorf("request %d at %v: got %+v, want %+v", i, time.Duration(at), got, wants[i])
		}
		if (resp.StatusCode == http.StatusOK) != d.Allowed {
			t.Errorf("request %d: status %d, Keyed.Allow says allowed=%v", i, resp.StatusCode, d.Allowed)
		}
		if p := resp.Header.Get("RateLimit-Policy"); p != `"default";q=3;w=10` {
			t.Errorf("request %d: RateLimit-Policy %q", i, p)
		}
		if d.Allowed {
			served++
		}
	}
	if next.served != served || served != 4 {
		t.Errorf("the handler served %d requests, want %d (4)", next.served, served)
	}
}

// TestSameAsKeyed: for every algorithm, random requests through the
// middleware get the decisions Keyed.Allow makes at the same times, and
// the fields headers.Set writes for them.
func TestSameAsKeyed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, a := range limiters.AllAlgorithms() {
		p := limiters.Policy{Limit: 4, Window: 2 * time.Second, Capacity: 4, Rate: limiters.Rate{N: 3, Per: 2 * time.Second}, Buckets: 4}
		lim, err := limiters.NewKeyed(a, p)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := limiters.NewKeyed(a, p)
		clock := &fakeClock{ns: 1000 * sec}
		var slept []time.Duration
		m, err := httplimit.New(lim, userKey, httplimit.WithClock(clock.now), httplimit.WithCost(costOf),
			httplimit.WithStyle(headers.StyleBoth), httplimit.WithName("api"),
			httplimit.WithSleep(func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }))
		if err != nil {
			t.Fatal(err)
		}
		q, _ := headers.QuotaOf("api", a, p)
		if m.Quota() != q {
			t.Errorf("%v: Quota() = %+v, want %+v", a, m.Quota(), q)
		}
		next := &ok{}
		h := m.Wrap(next)
		served := 0
		var delays []time.Duration
		for i := 0; i < 400; i++ {
			switch rng.IntN(10) {
			case 0:
				clock.ns -= rng.Int64N(sec) // backwards
			case 1, 2, 3:
			default:
				clock.ns += rng.Int64N(sec)
			}
			user := "u" + strconv.Itoa(rng.IntN(3))
			cost := int64(1)
			if rng.IntN(8) == 0 {
				cost = rng.Int64N(7) - 1
			}
			resp := serve(t, h, user, cost)
			d := ref.Allow(user, clock.ns, cost)
			want := http.Header{}
			headers.Set(want, headers.StyleBoth, []headers.Quota{q}, []limiters.Decision{d})
			if (resp.StatusCode == http.StatusOK) != d.Allowed || !d.Allowed && resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("%v request %d (%s at %v, cost %d): status %d, Keyed.Allow %+v", a, i, user, time.Duration(clock.ns), cost, resp.StatusCode, d)
			}
			for _, name := range headers.Names() {
				if g, w := resp.Header.Get(name), want.Get(name); g != w {
					t.Errorf("%v request %d: %s = %q, want %q", a, i, name, g, w)
				}
			}
			if d.Allowed {
				served++
				if d.Delay > 0 {
					delays = append(delays, d.Delay)
				}
			}
		}
		if next.served != served {
			t.Errorf("%v: served %d, want %d", a, next.served, served)
		}
		if len(slept) != len(delays) || a.Delays() != (len(delays) > 0) {
			t.Errorf("%v: slept %v, want %v", a, slept, delays)
		}
		for i := range min(len(slept), len(delays)) {
			if slept[i] != delays[i] {
				t.Errorf("%v: sleep %d is %v, want %v", a, i, slept[i], delays[i])
			}
		}
	}
}

func TestStyleNone(t *testing.T) {
	lim, _ := limiters.NewKeyed(limiters.FixedWindow, limiters.Policy{Limit: 1, Window: time.Second})
	m, err := httplimit.New(lim, nil, httplimit.WithStyle(headers.StyleNone), httplimit.WithClock(func() int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(&ok{})
	for i, wantStatus := range []int{200, 429} {
		resp := serve(t, h, "anyone", 1)
		if resp.StatusCode != wantStatus {
			t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, wantStatus)
		}
		for _, name := range headers.Names() {
			if v := resp.Header.Get(name); v != "" {
				t.Errorf("request %d: %s = %q with StyleNone", i, name, v)
			}
		}
	}
}

// countLimiter is a Limiter that does not say its policy: it allows the
// first n requests.
type countLimiter struct{ n int64 }

func (c *countLimiter) Allow(key string, now, cost int64) limiters.Decision {
	if c.n <= 0 {
		return limiters.Decision{Reason: "spent", RetryAfter: limiters.InfDuration, ResetAfter: limiters.InfDuration}
	}
	c.n--
	return limiters.Decision{Allowed: true, Remaining: c.n, ResetAfter: limiters.InfDuration}
}

func TestWithQuotaAndRefused(t *testing.T) {
	if _, err := httplimit.New(&countLimiter{1}, nil); err == nil || !strings.Contains(err.Error(), "WithQuota") {
		t.Errorf("New without a quota: %v, want an error naming WithQuota", err)
	}
	refused := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded"}`)
	})
	m, err := httplimit.New(&countLimiter{1}, nil,
		httplimit.WithQuota(headers.Quota{Name: "total", Limit: 1}), httplimit.WithRefused(refused))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(&ok{})
	resp := serve(t, h, "", 1)
	if resp.StatusCode != 200 || resp.Header.Get("RateLimit") != `"total";r=0` || resp.Header.Get("RateLimit-Policy") != `"total";q=1` {
		t.Errorf("allowed: %d %v", resp.StatusCode, resp.Header)
	}
	resp = serve(t, h, "", 1)
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != "application/problem+json" ||
		resp.Header.Get("Retry-After") != "" || resp.Header.Get("RateLimit") != `"total";r=0` {
		t.Errorf("refused: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestNewErrors(t *testing.T) {
	var zero limiters.Keyed
	good, _ := limiters.NewKeyed(limiters.FixedWindow, limiters.Policy{Limit: 1, Window: time.Second})
	for _, tc := range []struct {
		name string
		lim  httplimit.Limiter
		opts []httplimit.Option
	}{
		{"nil limiter", nil, nil},
		{"zero Keyed", &zero, nil},
		{"bad name", good, []httplimit.Option{httplimit.WithName("tab\there")}},
		{"bad style", good, []httplimit.Option{httplimit.WithStyle(headers.Style(9))}},
	} {
		if _, err := httplimit.New(tc.lim, nil, tc.opts...); err == nil {
			t.Errorf("%s: New succeeded", tc.name)
		}
	}
	// Nil options and option arguments keep the defaults.
	m, err := httplimit.New(good, nil, nil, httplimit.WithClock(nil), httplimit.WithCost(nil), httplimit.WithRefused(nil), httplimit.WithSleep(nil))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(&ok{})
	if resp := serve(t, h, "", 1); resp.StatusCode != 200 || resp.Header.Get("RateLimit") == "" {
		t.Errorf("first request: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := serve(t, h, "", 1); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second request within the second: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestDelay: a leaky queue's delayed request waits on the real timer by
// default, and is dropped when its client goes away first.
func TestDelay(t *testing.T) {
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: 50 * time.Millisecond}}
	lim, _ := limiters.NewKeyed(limiters.LeakyQueue, p)
	m, err := httplimit.New(lim, nil, httplimit.WithClock(func() int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	next := &ok{}
	h := m.Wrap(next)
	serve(t, h, "", 1) // no delay
	start := time.Now()
	if resp := serve(t, h, "", 1); resp.StatusCode != 200 {
		t.Fatalf("second request: %d", resp.StatusCode)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("the second request waited %v, want 50ms", waited)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if next.served != 2 {
		t.Errorf("served %d, want 2: a request whose client left is dropped", next.served)
	}
}

// TestDefaultClock: the default clock runs in Unix nanoseconds and never
// goes backwards.
func TestDefaultClock(t *testing.T) {
	var times []int64
	rec := limiterFunc(func(key string, now, cost int64) limiters.Decision {
		times = append(times, now)
		return limiters.Decision{Allowed: true}
	})
	m, err := httplimit.New(rec, nil, httplimit.WithQuota(headers.Quota{Limit: 1}))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Wrap(&ok{})
	before := time.Now().UnixNano()
	for range 100 {
		serve(t, h, "", 1)
	}
	after := time.Now().UnixNano()
	for i, at := range times {
		if at < before-int64(time.Second) || at > after+int64(time.Second) || i > 0 && at < times[i-1] {
			t.Fatalf("time %d is %d, outside [%d, %d] or before %d", i, at, before, after, times[max(i-1, 0)])
		}
	}
}

type limiterFunc func(key string, now, cost int64) limiters.Decision

func (f limiterFunc) Allow(key string, now, cost int64) limiters.Decision { return f(key, now, cost) }
