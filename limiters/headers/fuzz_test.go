package headers_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/sfv"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
)

// FuzzFields renders two policies' decisions with any values, in range or
// not, and checks what TestFieldsParse checks; a third, named anyhow,
// must still render as a Structured Field string.
func FuzzFields(f *testing.F) {
	f.Add(int64(3), int64(10), true, int64(2), int64(0), int64(3333333334), int64(50), int64(60), false, int64(0), int64(1e9), int64(1e10), "default")
	f.Add(int64(-1), int64(-1), false, int64(-5), int64(-1), int64(-1), int64(math.MaxInt64), int64(math.MaxInt64), false, int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), "a\"\\\x00é")
	f.Add(int64(0), int64(0), false, int64(0), int64(math.MaxInt64-1), int64(0), int64(1), int64(1), true, int64(1), int64(0), int64(math.MaxInt64-1), "")
	f.Fuzz(func(t *testing.T, q1, w1 int64, allowed1 bool, rem1, retry1, reset1 int64, q2, w2 int64, allowed2 bool, rem2, retry2, reset2 int64, name string) {
		quotas := []headers.Quota{{Name: "a", Limit: q1, WindowSeconds: w1}, {Name: "b", Limit: q2, WindowSeconds: w2}}
		ds := []limiters.Decision{
			decision(allowed1, rem1, retry1, reset1),
			decision(allowed2, rem2, retry2, reset2),
		}
		got := fields(quotas, ds) // renders every field; must not panic
		// The checks of TestFieldsParse hold for quotas QuotaOf could give.
		if q1 >= 0 && q2 >= 0 && w1 >= 1 && w2 >= 1 {
			checkFields(t, quotas, ds)
		} else if _, err := sfv.ParseList(got[headers.RateLimitPolicy]); err != nil {
			t.Errorf("RateLimit-Policy %s: %v", got[headers.RateLimitPolicy], err)
		}
		named := []headers.Quota{{Name: name, Limit: q1, WindowSeconds: w1}}
		for _, f := range []headers.Field{headers.RateLimitPolicy, headers.RateLimit} {
			v, _ := f.Append(nil, named, ds)
			list, err := sfv.ParseList(string(v))
			if err != nil || len(list) != 1 {
				t.Errorf("%v for the name %q: %s: %v", f, name, v, err)
				continue
			}
			// Each byte of the name renders as one character: itself, or
			// '?' where a string cannot hold it.
			if s, ok := list[0].Value.(string); !ok || name != "" && len(s) != len(name) || name == "" && s != headers.DefaultName {
				t.Errorf("%v for the name %q: %#v", f, name, list[0].Value)
			}
		}
	})
}

// decision returns a decision with these values, as a limiter would make
// one: RetryAfter 0 when allowed, a reason when refused.
func decision(allowed bool, remaining, retry, reset int64) limiters.Decision {
	d := limiters.Decision{Allowed: allowed, Remaining: remaining, ResetAfter: time.Duration(reset)}
	if !allowed {
		d.Reason, d.RetryAfter = limiters.ReasonNoTokens, time.Duration(retry)
	}
	return d
}
