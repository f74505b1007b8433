package headers_test

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/sfv"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
)

const (
	sec          = int64(time.Second)
	maxSFInteger = 999_999_999_999_999
	inf          = limiters.InfDuration
)

func TestNames(t *testing.T) {
	want := []string{"ratelimit-policy", "ratelimit", "retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"}
	names := headers.Names()
	if len(names) != len(want) {
		t.Fatalf("Names() = %q, want %q", names, want)
	}
	for i, f := range headers.Fields() {
		if names[i] != want[i] || f.String() != want[i] {
			t.Errorf("field %d: Names()[%d] = %q, String() = %q, want %q", i, i, names[i], f.String(), want[i])
		}
		if k := f.Key(); k != http.CanonicalHeaderKey(want[i]) {
			t.Errorf("%v.Key() = %q, want %q", f, k, http.CanonicalHeaderKey(want[i]))
		}
		for _, spelling := range []string{want[i], http.CanonicalHeaderKey(want[i])} {
			if g, err := headers.ParseField(spelling); err != nil || g != f {
				t.Errorf("ParseField(%q) = %v, %v, want %v", spelling, g, err, f)
			}
		}
	}
	if _, err := headers.ParseField("ratelimit-reset"); err == nil {
		t.Error("ParseField(ratelimit-reset): want an error")
	}
	if s := headers.Field(200).String(); s != "Field(200)" {
		t.Errorf("Field(200).String() = %q", s)
	}
}

func TestQuotaOf(t *testing.T) {
	rate := func(n int64, per time.Duration) limiters.Rate { return limiters.Rate{N: n, Per: per} }
	tests := []struct {
		name string
		alg  limiters.Algorithm
		p    limiters.Policy
		want headers.Quota
	}{
		{"", limiters.FixedWindow, limiters.Policy{Limit: 100, Window: time.Minute}, headers.Quota{Name: "default", Limit: 100, WindowSeconds: 60}},
		{"per-min", limiters.SlidingLog, limiters.Policy{Limit: 3, Window: 10 * time.Second}, headers.Quota{Name: "per-min", Limit: 3, WindowSeconds: 10}},
		// A window of 1.5 s is advertised as 2 s: q/w never overstates the rate.
		{"", limiters.SlidingCounter, limiters.Policy{Limit: 3, Window: 1500 * time.Millisecond}, headers.Quota{Name: "default", Limit: 3, WindowSeconds: 2}},
		{"", limiters.SlidingBuckets, limiters.Policy{Limit: 5, Window: 10 * time.Millisecond}, headers.Quota{Name: "default", Limit: 5, WindowSeconds: 1}},
		// 3 tokens at 3 per 10 s refill in 10 s.
		{"", limiters.TokenBucket, limiters.Policy{Capacity: 3, Rate: rate(3, 10*time.Second)}, headers.Quota{Name: "default", Limit: 3, WindowSeconds: 10}},
		// 3 tokens at 0.2/s: 15 s.
		{"", limiters.LeakyBucket, limiters.Policy{Capacity: 3, Rate: rate(1, 5*time.Second)}, headers.Quota{Name: "default", Limit: 3, WindowSeconds: 15}},
		// 10 at 3/s take 3.33 s: 4.
		{"", limiters.GCRA, limiters.Policy{Capacity: 10, Rate: rate(3, time.Second)}, headers.Quota{Name: "default", Limit: 10, WindowSeconds: 4}},
		{"", limiters.LeakyQueue, limiters.Policy{Capacity: 5, Rate: rate(1, time.Second)}, headers.Quota{Name: "default", Limit: 5, WindowSeconds: 5}},
		// Far beyond an int64 of seconds.
		{"", limiters.TokenBucket, limiters.Policy{Capacity: math.MaxInt64, Rate: rate(1, math.MaxInt64)}, headers.Quota{Name: "default", Limit: math.MaxInt64, WindowSeconds: math.MaxInt64}},
		{"", limiters.TokenBucket, limiters.Policy{Capacity: 1, Rate: rate(math.MaxInt64, 1)}, headers.Quota{Name: "default", Limit: 1, WindowSeconds: 1}},
	}
	for _, tc := range tests {
		got, err := headers.QuotaOf(tc.name, tc.alg, tc.p)
		if err != nil || got != tc.want {
			t.Errorf("QuotaOf(%q, %v, %+v) = %+v, %v, want %+v", tc.name, tc.alg, tc.p, got, err, tc.want)
		}
	}
	for _, bad := range []struct {
		name string
		alg  limiters.Algorithm
		p    limiters.Policy
	}{
		{"", limiters.FixedWindow, limiters.Policy{}},
		{"", limiters.TokenBucket, limiters.Policy{Limit: 3, Window: time.Second}},
		{"tab\there", limiters.FixedWindow, limiters.Policy{Limit: 3, Window: time.Second}},
		{"naïve", limiters.FixedWindow, limiters.Policy{Limit: 3, Window: time.Second}},
		{"", limiters.Algorithm(200), limiters.Policy{Limit: 3, Window: time.Second}},
	} {
		if q, err := headers.QuotaOf(bad.name, bad.alg, bad.p); err == nil {
			t.Errorf("QuotaOf(%q, %v, %+v) = %+v, want an error", bad.name, bad.alg, bad.p, q)
		}
	}
}

// fields renders every field for quotas and ds, "-" for a field the
// response has not.
func fields(quotas []headers.Quota, ds []limiters.Decision) map[headers.Field]string {
	m := map[headers.Field]string{}
	for _, f := range headers.Fields() {
		v, ok := f.Append(nil, quotas, ds)
		if !ok {
			if v != nil {
				panic("Append grew dst for an absent field")
			}
			m[f] = "-"
			continue
		}
		m[f] = string(v)
	}
	return m
}

// TestAppend renders chosen decisions, one policy and several.
func TestAppend(t *testing.T) {
	def := headers.Quota{Name: "default", Limit: 3, WindowSeconds: 10}
	perMin := headers.Quota{Name: "permin", Limit: 50, WindowSeconds: 60}
	perHour := headers.Quota{Name: "perhr", Limit: 1000, WindowSeconds: 3600}
	tests := []struct {
		name   string
		quotas []headers.Quota
		ds     []limiters.Decision
		want   [6]string // in the order of Fields
	}{
		{"allowed", []headers.Quota{def}, []limiters.Decision{{Allowed: true, Remaining: 2, ResetAfter: 3333333334}},
			[6]string{`"default";q=3;w=10`, `"default";r=2;t=4`, "-", "3", "2", "4"}},
		{"refused", []headers.Quota{def}, []limiters.Decision{{Remaining: 0, RetryAfter: 3333333334, ResetAfter: 10 * time.Second, Reason: limiters.ReasonNoTokens}},
			[6]string{`"default";q=3;w=10`, `"default";r=0;t=10`, "4", "3", "0", "10"}},
		{"refused, a whole second", []headers.Quota{def}, []limiters.Decision{{RetryAfter: 2 * time.Second, ResetAfter: 2 * time.Second, Reason: limiters.ReasonWindow}},
			[6]string{`"default";q=3;w=10`, `"default";r=0;t=2`, "2", "3", "0", "2"}},
		{"refused, a nanosecond", []headers.Quota{def}, []limiters.Decision{{RetryAfter: 1, ResetAfter: 1, Reason: limiters.ReasonWindow}},
			[6]string{`"default";q=3;w=10`, `"default";r=0;t=1`, "1", "3", "0", "1"}},
		{"cost above the limit", []headers.Quota{def}, []limiters.Decision{{Remaining: 3, RetryAfter: inf, Reason: limiters.ReasonCost}},
			[6]string{`"default";q=3;w=10`, `"default";r=3;t=0`, "-", "3", "3", "0"}},
		{"bad cost", []headers.Quota{def}, []limiters.Decision{{Reason: limiters.ReasonBadCost}},
			[6]string{`"default";q=3;w=10`, `"default";r=0;t=0`, "-", "3", "0", "0"}},
		{"reset too far to tell", []headers.Quota{def}, []limiters.Decision{{Allowed: true, Remaining: 1, ResetAfter: inf}},
			[6]string{`"default";q=3;w=10`, `"default";r=1`, "-", "3", "1", "-"}},
		{"longest finite reset", []headers.Quota{def}, []limiters.Decision{{Remaining: 0, RetryAfter: inf - 1, ResetAfter: inf - 1, Reason: limiters.ReasonNoTokens}},
			[6]string{`"default";q=3;w=10`, `"default";r=0;t=9223372037`, "9223372037", "3", "0", "9223372037"}},
		{"negative values", []headers.Quota{{Name: "", Limit: -5, WindowSeconds: -1}}, []limiters.Decision{{Remaining: -7, RetryAfter: -time.Second, ResetAfter: -time.Second, Reason: limiters.ReasonWindow}},
			[6]string{`"default";q=0`, `"default";r=0;t=0`, "0", "0", "0", "0"}},
		{"huge values", []headers.Quota{{Name: "big", Limit: math.MaxInt64, WindowSeconds: math.MaxInt64}}, []limiters.Decision{{Allowed: true, Remaining: math.MaxInt64, ResetAfter: inf - 1}},
			[6]string{`"big";q=999999999999999;w=999999999999999`, `"big";r=999999999999999;t=9223372037`, "-", "9223372036854775807", "9223372036854775807", "9223372037"}},
		{"names escaped", []headers.Quota{{Name: `a"b\c` + "\x01é", Limit: 1, WindowSeconds: 1}}, []limiters.Decision{{Allowed: true}},
			[6]string{`"a\"b\\c???";q=1;w=1`, `"a\"b\\c???";r=0;t=0`, "-", "1", "0", "0"}},
		{"stacked: the closest first", []headers.Quota{perHour, perMin}, []limiters.Decision{
			{Allowed: true, Remaining: 900, ResetAfter: 3000 * time.Second},
			{Allowed: true, Remaining: 10, ResetAfter: 30 * time.Second}},
			[6]string{`"perhr";q=1000;w=3600, "permin";q=50;w=60`, `"permin";r=10;t=30, "perhr";r=900;t=3000`, "-", "50", "10", "30"}},
		{"stacked: a refusal first", []headers.Quota{perMin, perHour}, []limiters.Decision{
			{Allowed: true, Remaining: 0, ResetAfter: 30 * time.Second},
			{Remaining: 1, RetryAfter: 5 * time.Second, ResetAfter: 3000 * time.Second, Reason: limiters.ReasonWindow}},
			[6]string{`"permin";q=50;w=60, "perhr";q=1000;w=3600`, `"perhr";r=1;t=3000, "permin";r=0;t=30`, "5", "1000", "1", "3000"}},
		{"stacked: equal r, the later reset first", []headers.Quota{perMin, perHour}, []limiters.Decision{
			{Allowed: true, Remaining: 0, ResetAfter: 30 * time.Second},
			{Allowed: true, Remaining: 0, ResetAfter: inf}},
			[6]string{`"permin";q=50;w=60, "perhr";q=1000;w=3600`, `"perhr";r=0, "permin";r=0;t=30`, "-", "1000", "0", "-"}},
		{"stacked: the longest retry", []headers.Quota{perMin, perHour}, []limiters.Decision{
			{RetryAfter: 1500 * time.Millisecond, ResetAfter: 30 * time.Second, Reason: limiters.ReasonWindow},
			{RetryAfter: 2500 * time.Millisecond, ResetAfter: 60 * time.Second, Reason: limiters.ReasonWindow}},
			[6]string{`"permin";q=50;w=60, "perhr";q=1000;w=3600`, `"perhr";r=0;t=60, "permin";r=0;t=30`, "3", "1000", "0", "60"}},
		{"stacked: one refusal no wait cures", []headers.Quota{perMin, perHour}, []limiters.Decision{
			{RetryAfter: time.Second, Reason: limiters.ReasonWindow},
			{RetryAfter: inf, Reason: limiters.ReasonCost}},
			[6]string{`"permin";q=50;w=60, "perhr";q=1000;w=3600`, `"permin";r=0;t=0, "perhr";r=0;t=0`, "-", "50", "0", "0"}},
		{"extra decisions ignored", []headers.Quota{def}, []limiters.Decision{{Allowed: true, Remaining: 1}, {Reason: limiters.ReasonWindow, RetryAfter: time.Second}},
			[6]string{`"default";q=3;w=10`, `"default";r=1;t=0`, "-", "3", "1", "0"}},
		{"no policies", nil, []limiters.Decision{{Reason: limiters.ReasonWindow, RetryAfter: time.Second}},
			[6]string{"-", "-", "-", "-", "-", "-"}},
		{"no decisions", []headers.Quota{def}, nil,
			[6]string{`"default";q=3;w=10`, "-", "-", "-", "-", "-"}},
	}
	for _, tc := range tests {
		got := fields(tc.quotas, tc.ds)
		for i, f := range headers.Fields() {
			if got[f] != tc.want[i] {
				t.Errorf("%s: %v = %s, want %s", tc.name, f, got[f], tc.want[i])
			}
		}
	}
}

func TestAppendKeepsDst(t *testing.T) {
	q := []headers.Quota{{Name: "default", Limit: 3, WindowSeconds: 10}}
	d := []limiters.Decision{{Allowed: true, Remaining: 2}}
	dst := []byte("RateLimit: ")
	got, ok := headers.RateLimit.Append(dst, q, d)
	if !ok || string(got) != `RateLimit: "default";r=2;t=0` {
		t.Errorf("Append = %q, %v", got, ok)
	}
	if got, ok := headers.RetryAfter.Append(dst, q, d); ok || string(got) != "RateLimit: " {
		t.Errorf("RetryAfter.Append of an allowed request = %q, %v, want dst unchanged, false", got, ok)
	}
	if got, ok := headers.Field(99).Append(dst, q, d); ok || string(got) != "RateLimit: " {
		t.Errorf("Field(99).Append = %q, %v", got, ok)
	}
}

func TestAppendAllocations(t *testing.T) {
	q := []headers.Quota{{Name: "permin", Limit: 50, WindowSeconds: 60}, {Name: "perhr", Limit: 1000, WindowSeconds: 3600}}
	d := []limiters.Decision{{Remaining: 0, RetryAfter: time.Second, ResetAfter: 30 * time.Second}, {Allowed: true, Remaining: 9, ResetAfter: time.Hour}}
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		for _, f := range headers.Fields() {
			buf, _ = f.Append(buf[:0], q, d)
		}
	})
	if n > 1 { // Fields allocates its slice
		t.Errorf("rendering every field allocates %v times, want at most 1", n)
	}
}

func TestStyles(t *testing.T) {
	q := []headers.Quota{{Name: "default", Limit: 3, WindowSeconds: 10}}
	refused := []limiters.Decision{{RetryAfter: 3333333334, ResetAfter: 10 * time.Second, Reason: limiters.ReasonNoTokens}}
	allowed := []limiters.Decision{{Allowed: true, Remaining: 2, ResetAfter: 3333333334}}
	tests := []struct {
		style headers.Style
		name  string
		want  http.Header // after a refusal
	}{
		{headers.StyleNone, "none", http.Header{"Keep": {"x"}}},
		{headers.StyleIETF, "ietf", http.Header{"Keep": {"x"}, "Ratelimit-Policy": {`"default";q=3;w=10`}, "Ratelimit": {`"default";r=0;t=10`}, "Retry-After": {"4"}}},
		{headers.StyleXRateLimit, "x-ratelimit", http.Header{"Keep": {"x"}, "X-Ratelimit-Limit": {"3"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"10"}, "Retry-After": {"4"}}},
		{headers.StyleBoth, "both", http.Header{"Keep": {"x"}, "Ratelimit-Policy": {`"default";q=3;w=10`}, "Ratelimit": {`"default";r=0;t=10`}, "Retry-After": {"4"},
			"X-Ratelimit-Limit": {"3"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"10"}}},
	}
	for _, tc := range tests {
		if s, err := headers.ParseStyle(tc.name); err != nil || s != tc.style || s.String() != tc.name {
			t.Errorf("ParseStyle(%q) = %v, %v; want %v", tc.name, s, err, tc.style)
		}
		h := http.Header{"Keep": {"x"}}
		headers.Set(h, tc.style, q, refused)
		if !equalHeader(h, tc.want) {
			t.Errorf("%v: Set after a refusal = %v, want %v", tc.style, h, tc.want)
		}
		// An allowed request next: Retry-After goes, the rest is replaced.
		headers.Set(h, tc.style, q, allowed)
		if h.Get("Retry-After") != "" {
			t.Errorf("%v: Retry-After %q left after an allowed request", tc.style, h.Get("Retry-After"))
		}
		if tc.style.Has(headers.RateLimit) && h.Get("RateLimit") != `"default";r=2;t=4` {
			t.Errorf("%v: RateLimit = %q after an allowed request", tc.style, h.Get("RateLimit"))
		}
	}
	if _, err := headers.ParseStyle("IETF"); err == nil {
		t.Error("ParseStyle(IETF): want an error")
	}
	headers.Set(nil, headers.StyleBoth, q, refused) // no panic
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if len(b[k]) != len(v) {
			return false
		}
		for i := range v {
			if b[k][i] != v[i] {
				return false
			}
		}
	}
	return true
}

// randomPolicy returns a valid policy for a, small or huge.
func randomPolicy(rng *rand.Rand, a limiters.Algorithm) limiters.Policy {
	for {
		var p limiters.Policy
		switch rng.IntN(4) {
		case 0: // huge
			p = limiters.Policy{Limit: math.MaxInt64 - rng.Int64N(10), Window: time.Duration(math.MaxInt64 - rng.Int64N(10)),
				Capacity: math.MaxInt64 - rng.Int64N(10), Rate: limiters.Rate{N: 1 + rng.Int64N(3), Per: time.Duration(math.MaxInt64 - rng.Int64N(10))}}
		case 1: // sub-second
			p = limiters.Policy{Limit: 1 + rng.Int64N(5), Window: time.Duration(1 + rng.Int64N(int64(time.Second))),
				Capacity: 1 + rng.Int64N(5), Rate: limiters.Rate{N: 1 + rng.Int64N(1000), Per: time.Duration(1 + rng.Int64N(int64(time.Second)))}}
		default:
			p = limiters.Policy{Limit: 1 + rng.Int64N(10), Window: time.Duration(1+rng.Int64N(20)) * time.Second,
				Capacity: 1 + rng.Int64N(10), Rate: limiters.Rate{N: 1 + rng.Int64N(5), Per: time.Duration(1+rng.Int64N(20)) * time.Second}}
		}
		if a == limiters.SlidingBuckets {
			p.Buckets = 1 + rng.Int64N(4)
			p.Window -= p.Window % time.Duration(p.Buckets)
		}
		if rng.IntN(4) == 0 {
			p.Clock = limiters.ClockClamp
		}
		if p.Validate(a) == nil {
			return p
		}
	}
}

// TestFieldsParse replays random requests through random stacks of
// limiters of every algorithm and checks that every RateLimit-Policy and
// RateLimit value parses as a Structured Field list and says what the
// decisions say, in the documented order, and that Retry-After is never
// earlier than the true retry and less than a second later.
func TestFieldsParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	algs := limiters.AllAlgorithms()
	for round := 0; round < 300; round++ {
		n := 1 + rng.IntN(3)
		if round < 2*len(algs) {
			n = 1 // each algorithm alone, twice
		}
		var (
			quotas []headers.Quota
			keyed  []*limiters.Keyed
		)
		for i := 0; i < n; i++ {
			a := algs[rng.IntN(len(algs))]
			if round < 2*len(algs) {
				a = algs[round%len(algs)]
			}
			p := randomPolicy(rng, a)
			q, err := headers.QuotaOf("p"+strconv.Itoa(i), a, p)
			if err != nil {
				t.Fatal(err)
			}
			k, err := limiters.NewKeyed(a, p)
			if err != nil {
				t.Fatal(err)
			}
			quotas, keyed = append(quotas, q), append(keyed, k)
		}
		now := rng.Int64N(1<<40) - 1<<39
		if rng.IntN(10) == 0 {
			now = math.MaxInt64 - 1000*sec
		}
		ds := make([]limiters.Decision, n)
		for step := 0; step < 60; step++ {
			switch r := rng.IntN(20); {
			case r == 0:
				now -= rng.Int64N(5 * sec) // backwards
			case r < 8:
				// the same instant
			default:
				if gap := rng.Int64N(3 * sec); now < math.MaxInt64-gap {
					now += gap
				}
			}
			cost := int64(1)
			switch rng.IntN(12) {
			case 0:
				cost = 0
			case 1:
				cost = -1
			case 2:
				cost = 1 + rng.Int64N(4)
			case 3:
				cost = math.MaxInt64
			}
			for i, k := range keyed {
				ds[i] = k.Allow("u", now, cost)
			}
			checkFields(t, quotas, ds)
			if t.Failed() {
				t.Fatalf("round %d step %d: quotas %+v decisions %+v", round, step, quotas, ds)
			}
		}
	}
}

func checkFields(t *testing.T, quotas []headers.Quota, ds []limiters.Decision) {
	t.Helper()
	got := fields(quotas, ds)

	policy, err := sfv.ParseList(got[headers.RateLimitPolicy])
	if err != nil || len(policy) != len(quotas) {
		t.Errorf("RateLimit-Policy %s: %v, %d members, want %d", got[headers.RateLimitPolicy], err, len(policy), len(quotas))
		return
	}
	for i, it := range policy {
		q := quotas[i]
		if name, ok := it.Value.(string); !ok || name != q.Name {
			t.Errorf("RateLimit-Policy member %d is %#v, want the string %q", i, it.Value, q.Name)
		}
		wantW := any(min(q.WindowSeconds, maxSFInteger))
		if w, ok := it.Get("w"); !ok || w != wantW || q.WindowSeconds < 1 {
			t.Errorf("RateLimit-Policy member %d: w = %v, want %v (>= 1)", i, w, wantW)
		}
		if v, ok := it.Get("q"); !ok || v != any(min(q.Limit, maxSFInteger)) || len(it.Params) != 2 {
			t.Errorf("RateLimit-Policy member %d: params %+v, want q=%d and w", i, it.Params, q.Limit)
		}
	}

	limits, err := sfv.ParseList(got[headers.RateLimit])
	if err != nil || len(limits) != len(quotas) {
		t.Errorf("RateLimit %s: %v, %d members, want %d", got[headers.RateLimit], err, len(limits), len(quotas))
		return
	}
	seen := map[int]bool{}
	prev := -1
	for _, it := range limits {
		name, _ := it.Value.(string)
		i := -1
		for j, q := range quotas {
			if q.Name == name {
				i = j
			}
		}
		if i < 0 || seen[i] {
			t.Errorf("RateLimit member %#v names no policy, or one twice", it.Value)
			return
		}
		seen[i] = true
		d := ds[i]
		if r, ok := it.Get("r"); !ok || r != any(min(max(d.Remaining, 0), maxSFInteger)) {
			t.Errorf("RateLimit %s: r = %v, want Remaining %d", name, r, d.Remaining)
		}
		tv, hasT := it.Get("t")
		if hasT != (d.ResetAfter != inf) {
			t.Errorf("RateLimit %s: t = %v with ResetAfter %v", name, tv, d.ResetAfter)
		}
		if hasT {
			ts, _ := tv.(int64)
			if !ceiling(ts, d.ResetAfter) {
				t.Errorf("RateLimit %s: t = %v is not ResetAfter %v rounded up", name, tv, d.ResetAfter)
			}
		}
		if want := 2 + b2i(hasT) - 1; len(it.Params) != want {
			t.Errorf("RateLimit %s: params %+v", name, it.Params)
		}
		if prev >= 0 && !inOrder(ds[prev], ds[i], prev, i) {
			t.Errorf("RateLimit: %s (%+v) follows %s (%+v)", name, d, quotas[prev].Name, ds[prev])
		}
		prev = i
	}
	first := firstIndex(limits, quotas)
	if got[headers.XRateLimitLimit] != strconv.FormatInt(max(quotas[first].Limit, 0), 10) ||
		got[headers.XRateLimitRemaining] != strconv.FormatInt(max(ds[first].Remaining, 0), 10) {
		t.Errorf("X-RateLimit-Limit %s, -Remaining %s: want the first of RateLimit, %s", got[headers.XRateLimitLimit], got[headers.XRateLimitRemaining], quotas[first].Name)
	}
	if reset := got[headers.XRateLimitReset]; ds[first].ResetAfter == inf {
		if reset != "-" {
			t.Errorf("X-RateLimit-Reset %s with ResetAfter InfDuration", reset)
		}
	} else if s, err := strconv.ParseInt(reset, 10, 64); err != nil || !ceiling(s, ds[first].ResetAfter) {
		t.Errorf("X-RateLimit-Reset %s, ResetAfter %v", reset, ds[first].ResetAfter)
	}

	// Retry-After: on a refusal that a wait cures; the longest wait.
	refused, curable := false, true
	var wait time.Duration
	for _, d := range ds {
		if !d.Allowed {
			refused = true
			curable = curable && d.RetryAfter != inf && d.Reason != limiters.ReasonBadCost && d.Reason != limiters.ReasonBadRule
			wait = max(wait, d.RetryAfter)
		}
	}
	ra := got[headers.RetryAfter]
	if !refused || !curable {
		if ra != "-" {
			t.Errorf("Retry-After %s, want none", ra)
		}
		return
	}
	s, err := strconv.ParseInt(ra, 10, 64)
	if err != nil || s < 0 || strconv.FormatInt(s, 10) != ra {
		t.Errorf("Retry-After %q is not delay-seconds", ra)
		return
	}
	// s*1e9 >= wait and < wait+1s, in uint64: s*1e9 may pass 2^63.
	if ns := uint64(s) * uint64(sec); ns < uint64(wait) || ns >= uint64(wait)+uint64(sec) {
		t.Errorf("Retry-After %s for a wait of %v", ra, wait)
	}
}

// ceiling reports whether s seconds is d rounded up to whole seconds
// (0 for d <= 0).
func ceiling(s int64, d time.Duration) bool {
	if d <= 0 {
		return s == 0
	}
	ns := uint64(s) * uint64(sec)
	return s >= 0 && ns >= uint64(d) && ns < uint64(d)+uint64(sec)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inOrder reports whether a (the i-th decision) may come before b (the
// j-th) in RateLimit: refusals first, then fewer remaining, then the later
// reset, then the order given.
func inOrder(a, b limiters.Decision, i, j int) bool {
	type key struct {
		allowed   int
		remaining int64
		reset     int64 // negated, so that later comes first
		index     int
	}
	ka := key{b2i(a.Allowed), max(a.Remaining, 0), -int64(max(a.ResetAfter, 0)), i}
	kb := key{b2i(b.Allowed), max(b.Remaining, 0), -int64(max(b.ResetAfter, 0)), j}
	switch {
	case ka.allowed != kb.allowed:
		return ka.allowed < kb.allowed
	case ka.remaining != kb.remaining:
		return ka.remaining < kb.remaining
	case ka.reset != kb.reset:
		return ka.reset < kb.reset
	}
	return ka.index < kb.index
}

func firstIndex(limits []sfv.Item, quotas []headers.Quota) int {
	for i, q := range quotas {
		if limits[0].Value == any(q.Name) {
			return i
		}
	}
	return -1
}
