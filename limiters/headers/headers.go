// Package headers renders a limiter's decisions as the rate-limit fields of
// an HTTP response.
//
// Two families of fields are written. The RateLimit-Policy and RateLimit
// fields of draft-ietf-httpapi-ratelimit-headers-11 are Structured Field
// lists (RFC 8941, RFC 9651), one member per policy:
//
//	RateLimit-Policy: "default";q=3;w=10
//	RateLimit: "default";r=0;t=10
//
// The legacy fields X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset are plain integers describing one policy. Retry-After
// goes with a refusal.
//
// A Quota says what q and w are for a limiter (see QuotaOf); a Decision
// gives r, t and the retry. Every value is a whole number:
//
//   - q is the quota in cost units, w the window in whole seconds, rounded
//     up, so the average rate q/w a client reads never exceeds the
//     limiter's.
//   - r is Decision.Remaining, not below 0.
//   - t is Decision.ResetAfter in whole seconds, rounded up: how long until
//     the key is back to its full quota. It is left out when ResetAfter is
//     limiters.InfDuration, a time too far to tell.
//   - Retry-After is the longest Decision.RetryAfter in whole seconds,
//     rounded up, so a client that waits that long never retries too
//     early, and waits less than a second longer than it must. It is sent
//     only when a request is refused and a wait can cure the refusal: not
//     when RetryAfter is limiters.InfDuration (a cost above the limit), nor
//     for a bad cost or rule.
//
// For the bucket algorithms and the rolling windows a retry passes before
// the key is back to its full quota, so a refusal's Retry-After may come
// before the end of its effective window t. The draft asks servers not to
// send that (its Section 6), and lets Retry-After take precedence over t
// in clients (its Section 7); this package keeps both values exact rather
// than stretch Retry-After past the time a retry passes.
//
// Structured Field integers have at most 15 digits: q, w, r and t
// saturate at 999999999999999. The legacy fields do not.
//
// Several policies (stacked limiters, each with its own decision) make
// several list members. RateLimit-Policy lists them in the order given, so
// it stays the same from response to response. RateLimit lists the closest
// limit first: the decisions that refused before those that allowed, then
// the smallest r, then the longest t (a missing t counting as longest),
// then the order given. The legacy fields describe that first, closest
// policy alone.
package headers

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/choice"

	"github.com/ratesim/ratesim/limiters"
)

// DefaultName is the name of a policy that is given none.
const DefaultName = "default"

// maxSFInteger is the largest Structured Field integer: 15 digits.
const maxSFInteger = 999_999_999_999_999

// A Field is one of the response fields this package writes.
type Field uint8

// The fields, in the order Fields lists them.
const (
	RateLimitPolicy     Field = iota // ratelimit-policy: the policies' q and w
	RateLimit                        // ratelimit: each policy's r and t
	RetryAfter                       // retry-after: seconds until a refused request would pass
	XRateLimitLimit                  // x-ratelimit-limit: the closest policy's q
	XRateLimitRemaining              // x-ratelimit-remaining: its r
	XRateLimitReset                  // x-ratelimit-reset: its t, as delta seconds (not a Unix time)

	numFields
)

// fieldNames are the fields' names in lower case, and canonical as
// http.Header keys them.
var fieldNames = [numFields]struct{ lower, canonical string }{
	RateLimitPolicy:     {"ratelimit-policy", "Ratelimit-Policy"},
	RateLimit:           {"ratelimit", "Ratelimit"},
	RetryAfter:          {"retry-after", "Retry-After"},
	XRateLimitLimit:     {"x-ratelimit-limit", "X-Ratelimit-Limit"},
	XRateLimitRemaining: {"x-ratelimit-remaining", "X-Ratelimit-Remaining"},
	XRateLimitReset:     {"x-ratelimit-reset", "X-Ratelimit-Reset"},
}

// Fields returns every field, in a fixed order: RateLimitPolicy,
// RateLimit, RetryAfter, XRateLimitLimit, XRateLimitRemaining,
// XRateLimitReset.
func Fields() []Field {
	fs := make([]Field, numFields)
	for i := range fs {
		fs[i] = Field(i)
	}
	return fs
}

// Names returns the names of the fields in lower case, in the order of
// Fields: "ratelimit-policy", "ratelimit", "retry-after",
// "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset".
func Names() []string {
	names := make([]string, numFields)
	for i := range names {
		names[i] = fieldNames[i].lower
	}
	return names
}

// String returns the field's name in lower case, such as "ratelimit".
func (f Field) String() string {
	if f < numFields {
		return fieldNames[f].lower
	}
	return "Field(" + strconv.Itoa(int(f)) + ")"
}

// Key returns the field's name as http.Header keys it
// (http.CanonicalHeaderKey), such as "Ratelimit-Policy"; "" for a Field
// that is none of the fields.
func (f Field) Key() string {
	if f < numFields {
		return fieldNames[f].canonical
	}
	return ""
}

// ParseField returns the field named name, in any case.
func ParseField(name string) (Field, error) {
	for f := range fieldNames {
		if strings.EqualFold(name, fieldNames[f].lower) {
			return Field(f), nil
		}
	}
	return 0, fmt.Errorf("headers: unknown field %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// A Quota is a limiter's policy as the fields advertise it: its name, the
// quota q and the window w. QuotaOf derives one from an algorithm and its
// policy. A Quota built by hand renders too: an empty Name as DefaultName,
// a negative Limit as 0, a WindowSeconds of 0 or less by leaving w out.
type Quota struct {
	// Name identifies the policy in RateLimit-Policy and RateLimit. It is
	// written as a Structured Field string: bytes outside printable ASCII
	// are written as '?'.
	Name string
	// Limit is q: the most cost the policy admits per window.
	Limit int64
	// WindowSeconds is w: the window, in whole seconds.
	WindowSeconds int64
}

// QuotaOf returns the quota of algorithm a under policy p, named name
// (DefaultName when name is empty). Name must be printable ASCII, and p
// valid for a.
//
// For the window algorithms (FixedWindow, SlidingLog, SlidingCounter,
// SlidingBuckets) q is Limit and w is Window. For the bucket algorithms
// (TokenBucket, LeakyBucket, GCRA) q is Capacity, the burst, and w the
// time Rate takes to refill (or drain) a whole Capacity: an emptied bucket
// is full again after w. A bucket can admit up to 2q within w (a full
// bucket, then its refill), and q + rate x w' in any span w'. For
// LeakyQueue q is the queue's Capacity and w the time a full queue takes
// to drain. w is rounded up to whole seconds, and is at least 1.
func QuotaOf(name string, a limiters.Algorithm, p limiters.Policy) (Quota, error) {
	if name == "" {
		name = DefaultName
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e {
			return Quota{}, fmt.Errorf("headers: policy name %q: want printable ASCII", name)
		}
	}
	if err := p.Validate(a); err != nil {
		return Quota{}, fmt.Errorf("headers: %w", err)
	}
	if a.Windowed() {
		return Quota{Name: name, Limit: p.Limit, WindowSeconds: ceilSeconds(p.Window)}, nil
	}
	// Capacity/Rate seconds = Capacity*Per / (N*1e9), rounded up; the
	// product does not fit 64 bits in general.
	num := new(big.Int).Mul(big.NewInt(p.Capacity), big.NewInt(int64(p.Rate.Per)))
	den := new(big.Int).Mul(big.NewInt(p.Rate.N), big.NewInt(int64(time.Second)))
	num.Add(num, den).Sub(num, big.NewInt(1))
	w := num.Quo(num, den)
	if !w.IsInt64() {
		return Quota{Name: name, Limit: p.Capacity, WindowSeconds: math.MaxInt64}, nil
	}
	return Quota{Name: name, Limit: p.Capacity, WindowSeconds: w.Int64()}, nil
}

// ceilSeconds returns d in whole seconds, rounded up; 0 for d <= 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// Append appends the value of field f for a response to a request judged
// by several policies, quotas[i] deciding ds[i], and reports whether the
// response has the field; when it has not, dst is returned unchanged.
// RateLimitPolicy depends on the quotas alone, and lists them all (ds may
// be nil); for the other fields, elements of the longer slice without a
// partner are ignored. It allocates nothing beyond growing dst.
//
// RateLimitPolicy and RateLimit are present when there is at least one
// policy; RetryAfter when a decision refused and waiting can cure every
// refusal; the legacy fields describe the closest policy, and
// XRateLimitReset is absent when its ResetAfter is InfDuration.
func (f Field) Append(dst []byte, quotas []Quota, ds []limiters.Decision) ([]byte, bool) {
	if f == RateLimitPolicy {
		if len(quotas) == 0 {
			return dst, false
		}
		return appendPolicy(dst, quotas), true
	}
	n := min(len(quotas), len(ds))
	quotas, ds = quotas[:n], ds[:n]
	switch f {
	case RateLimit:
		if n == 0 {
			return dst, false
		}
		return appendRateLimit(dst, quotas, ds), true
	case RetryAfter:
		s, ok := retrySeconds(ds)
		if !ok {
			return dst, false
		}
		return strconv.AppendInt(dst, s, 10), true
	case XRateLimitLimit, XRateLimitRemaining, XRateLimitReset:
		if n == 0 {
			return dst, false
		}
		i := closest(ds, -1)
		switch f {
		case XRateLimitLimit:
			return strconv.AppendInt(dst, max(quotas[i].Limit, 0), 10), true
		case XRateLimitRemaining:
			return strconv.AppendInt(dst, max(ds[i].Remaining, 0), 10), true
		}
		if ds[i].ResetAfter == limiters.InfDuration {
			return dst, false
		}
		return strconv.AppendInt(dst, ceilSeconds(ds[i].ResetAfter), 10), true
	}
	return dst, false
}

// appendPolicy appends the RateLimit-Policy list.
func appendPolicy(dst []byte, quotas []Quota) []byte {
	for i, q := range quotas {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendName(dst, q.Name)
		dst = appendParam(dst, 'q', max(q.Limit, 0))
		if q.WindowSeconds > 0 {
			dst = appendParam(dst, 'w', q.WindowSeconds)
		}
	}
	return dst
}

// appendRateLimit appends the RateLimit list, closest limit first.
func appendRateLimit(dst []byte, quotas []Quota, ds []limiters.Decision) []byte {
	prev := -1
	for range ds {
		i := closest(ds, prev)
		if prev >= 0 {
			dst = append(dst, ", "...)
		}
		dst = appendName(dst, quotas[i].Name)
		dst = appendParam(dst, 'r', max(ds[i].Remaining, 0))
		if ds[i].ResetAfter != limiters.InfDuration {
			dst = appendParam(dst, 't', ceilSeconds(ds[i].ResetAfter))
		}
		prev = i
	}
	return dst
}

// closest returns the index of the first decision in the order of the
// RateLimit field that comes after ds[prev], or the first of all when
// prev is -1. Selecting one at a time sorts without allocating; the
// lists are short.
func closest(ds []limiters.Decision, prev int) int {
	next := -1
	for i := range ds {
		if prev >= 0 && !before(ds, prev, i) {
			continue
		}
		if next < 0 || before(ds, i, next) {
			next = i
		}
	}
	return next
}

// before reports whether ds[i] comes before ds[j] in the RateLimit field:
// a refusal first, then the fewer remaining, then the later reset, then
// the lower index. It is a strict total order.
func before(ds []limiters.Decision, i, j int) bool {
	a, b := &ds[i], &ds[j]
	if a.Allowed != b.Allowed {
		return !a.Allowed
	}
	if ra, rb := max(a.Remaining, 0), max(b.Remaining, 0); ra != rb {
		return ra < rb
	}
	// InfDuration is the largest Duration, so it counts as the latest.
	if ta, tb := max(a.ResetAfter, 0), max(b.ResetAfter, 0); ta != tb {
		return ta > tb
	}
	return i < j
}

// retrySeconds returns the Retry-After of a request judged by ds, and
// whether it has one: when some decision refused it and a wait cures
// every refusal.
func retrySeconds(ds []limiters.Decision) (int64, bool) {
	var wait time.Duration
	refused := false
	for i := range ds {
		d := &ds[i]
		if d.Allowed {
			continue
		}
		refused = true
		if d.RetryAfter == limiters.InfDuration || d.Reason == limiters.ReasonBadCost || d.Reason == limiters.ReasonBadRule {
			return 0, false
		}
		wait = max(wait, d.RetryAfter)
	}
	return ceilSeconds(wait), refused
}

// appendName appends name as a Structured Field string.
func appendName(dst []byte, name string) []byte {
	if name == "" {
		name = DefaultName
	}
	dst = append(dst, '"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c > 0x7e:
			dst = append(dst, '?')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendParam appends the parameter ;key=v, v saturating at the largest
// Structured Field integer.
func appendParam(dst []byte, key byte, v int64) []byte {
	dst = append(dst, ';', key, '=')
	return strconv.AppendInt(dst, min(v, maxSFInteger), 10)
}

// A Style is a set of fields a server sends.
type Style uint8

// The styles. Every style but StyleNone sends Retry-After with a refusal.
const (
	StyleNone       Style = 0                           // no fields
	StyleIETF       Style = 1                           // RateLimit-Policy, RateLimit and Retry-After
	StyleXRateLimit Style = 2                           // X-RateLimit-Limit, -Remaining, -Reset and Retry-After
	StyleBoth             = StyleIETF | StyleXRateLimit // all six fields
)

var styleNames = [...]string{StyleNone: "none", StyleIETF: "ietf", StyleXRateLimit: "x-ratelimit", StyleBoth: "both"}

// Styles are the styles, as ParseStyle takes them.
var Styles = choice.List{
	{Name: "ietf", Description: "RateLimit-Policy, RateLimit and Retry-After (draft-ietf-httpapi-ratelimit-headers)"},
	{Name: "x-ratelimit", Description: "X-RateLimit-Limit, -Remaining, -Reset and Retry-After"},
	{Name: "both", Description: "all six fields"},
	{Name: "none", Description: "no fields (default)"},
}

// ParseStyle returns the style named name: "ietf", "x-ratelimit", "both"
// or "none".
func ParseStyle(name string) (Style, error) {
	for s, n := range styleNames {
		if n == name {
			return Style(s), nil
		}
	}
	return 0, errors.New(`headers: unknown style "` + name + `" (valid: ` + Styles.String() + `)`)
}

// String returns the style's name, as ParseStyle reads it.
func (s Style) String() string {
	if int(s) < len(styleNames) {
		return styleNames[s]
	}
	return "Style(" + strconv.Itoa(int(s)) + ")"
}

// Has reports whether the style sends field f.
func (s Style) Has(f Field) bool {
	switch f {
	case RateLimitPolicy, RateLimit:
		return s&StyleIETF != 0
	case XRateLimitLimit, XRateLimitRemaining, XRateLimitReset:
		return s&StyleXRateLimit != 0
	case RetryAfter:
		return s&StyleBoth != 0
	}
	return false
}

// Set sets in h the fields of style s for a response to a request judged
// by several policies, quotas[i] deciding ds[i], as Field.Append writes
// them, and deletes from h the fields of s that this response has not
// (such as Retry-After when the request was allowed). Other fields are
// left as they are.
func Set(h http.Header, s Style, quotas []Quota, ds []limiters.Decision) {
	if h == nil {
		return
	}
	var buf [128]byte
	for f := Field(0); f < numFields; f++ {
		if !s.Has(f) {
			continue
		}
		if v, ok := f.Append(buf[:0], quotas, ds); ok {
			h[f.Key()] = []string{string(v)}
		} else {
			delete(h, f.Key())
		}
	}
}
