// Package httplimit is net/http middleware that limits requests with a
// limiter of package limiters and tells clients their limits in the
// response's rate-limit fields.
//
// A refused request gets 429 Too Many Requests, with RateLimit-Policy,
// RateLimit and Retry-After (or the legacy X-RateLimit-* fields; see
// WithStyle). An allowed request goes on to the wrapped handler with the
// rate-limit fields already set, so clients can slow down before they are
// refused. Package headers describes the fields' values.
//
// The limiter is in memory (a Limiter, such as *limiters.Keyed: New) or
// one that may fail (a ContextLimiter, such as *redisstore.Store, which
// keeps the limits of several servers in Redis: NewContext). A request its
// limiter could not judge, with an error, gets 503 Service Unavailable and
// no rate-limit field, or what WithUnavailable says; a store that is to
// let requests through when it cannot judge them says so itself
// (redisstore.FailOpen), and then returns no error.
//
// Unlike the rest of this module, the middleware reads the system clock,
// as a live server must; WithClock replaces it, for tests and replays.
package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
)

// A Limiter judges a request of cost at time now (in nanoseconds) for key.
// *limiters.Keyed is one, and is safe for the concurrent requests a server
// serves; a Limiter of one's own must be too.
type Limiter interface {
	Allow(key string, now, cost int64) limiters.Decision
}

// A ContextLimiter judges a request of cost at time now (in nanoseconds)
// for key with the request's context, and returns an error when it cannot:
// a limiter kept outside the process. *redisstore.Store is one. It must be
// safe for concurrent use.
type ContextLimiter interface {
	Allow(ctx context.Context, key string, now, cost int64) (limiters.Decision, error)
}

// local is a Limiter as a ContextLimiter: it never fails.
type local struct{ Limiter }

func (l local) Allow(_ context.Context, key string, now, cost int64) (limiters.Decision, error) {
	return l.Limiter.Allow(key, now, cost), nil
}

// A describer is a Limiter that says its algorithm and policy, as
// *limiters.Keyed does; the middleware derives its quota from them.
type describer interface {
	Algorithm() limiters.Algorithm
	Policy() limiters.Policy
}

// Middleware limits the requests of the handlers it wraps. It is safe for
// simultaneous use by multiple goroutines as long as its Limiter is. Use
// New to make one.
type Middleware struct {
	lim     ContextLimiter
	desc    any // the limiter as given, for its algorithm and policy
	key     func(*http.Request) string
	cost    func(*http.Request) int64
	now     func() int64
	sleep   func(context.Context, time.Duration) error
	style   headers.Style
	name    string
	quota   headers.Quota
	quotas  []headers.Quota
	given   bool // quota came from WithQuota
	refused http.Handler
	failed  func(w http.ResponseWriter, r *http.Request, err error)
}

// An Option configures a Middleware.
type Option func(*Middleware)

// WithClock makes the middleware take the time of each request from now,
// in nanoseconds, instead of from the system clock.
func WithClock(now func() int64) Option {
	return func(m *Middleware) {
		if now != nil {
			m.now = now
		}
	}
}

// WithStyle chooses the fields the middleware sends; the default is
// headers.StyleIETF: RateLimit-Policy, RateLimit and, on refusal,
// Retry-After. With headers.StyleNone it sends none, and refuses with a
// bare 429.
func WithStyle(s headers.Style) Option {
	return func(m *Middleware) { m.style = s }
}

// WithName names the policy in RateLimit-Policy and RateLimit; the default
// is headers.DefaultName. WithQuota's quota keeps its own name.
func WithName(name string) Option {
	return func(m *Middleware) { m.name = name }
}

// WithQuota sets the quota the fields advertise, for a Limiter that does
// not say its algorithm and policy (one without the Algorithm and Policy
// methods of *limiters.Keyed), or to advertise another.
func WithQuota(q headers.Quota) Option {
	return func(m *Middleware) { m.quota, m.given = q, true }
}

// WithCost gives the cost of each request; the default is 1. A cost of 0
// or less is refused, as the limiter refuses it, without a Retry-After.
func WithCost(cost func(*http.Request) int64) Option {
	return func(m *Middleware) {
		if cost != nil {
			m.cost = cost
		}
	}
}

// WithRefused sets the handler that answers a refused request, in place of
// a plain-text 429 Too Many Requests. The rate-limit fields are set when
// it is called; it should answer 429 too.
func WithRefused(h http.Handler) Option {
	return func(m *Middleware) {
		if h != nil {
			m.refused = h
		}
	}
}

// WithUnavailable sets the function that answers a request the limiter
// could not judge, with its error, in place of a plain-text 503 Service
// Unavailable. No rate-limit field is set: the request was not judged.
// It is the place to log the error, and to answer otherwise (or to pass
// the request on: a failure policy of one's own).
func WithUnavailable(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(m *Middleware) {
		if f != nil {
			m.failed = f
		}
	}
}

// WithSleep sets how the middleware waits out the Delay of an admitted
// request (limiters.LeakyQueue delays requests instead of refusing them).
// Sleep returns early with an error when ctx, the request's context, is
// done; the request is then dropped unanswered, and its place in the
// queue is not given back (the limiters have no way to return one). The
// default waits on a timer.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(m *Middleware) {
		if sleep != nil {
			m.sleep = sleep
		}
	}
}

// New returns middleware that judges each request with lim, under the key
// that key returns for it (a nil key puts every request under one key "",
// a limit for the whole server).
//
// The fields advertise the quota of WithQuota or, when lim says its
// algorithm and policy as *limiters.Keyed does, the quota headers.QuotaOf
// derives from them. New fails when lim is nil, when there is no quota to
// advertise, or when the style is unknown.
//
// The default clock is the system's monotonic clock, counted from the
// wall-clock time at New: it never goes backwards, which the limiters
// would count against a key, when the wall clock is set back.
func New(lim Limiter, key func(*http.Request) string, opts ...Option) (*Middleware, error) {
	if lim == nil {
		return nil, errors.New("httplimit: no limiter")
	}
	return newMiddleware(local{lim}, lim, key, opts)
}

// NewContext is New for a limiter that takes the request's context and
// may fail, such as *redisstore.Store (which says its first limiter's
// algorithm and policy, for the quota). A request it could not judge is
// answered by WithUnavailable's function: 503 Service Unavailable by
// default.
func NewContext(lim ContextLimiter, key func(*http.Request) string, opts ...Option) (*Middleware, error) {
	if lim == nil {
		return nil, errors.New("httplimit: no limiter")
	}
	return newMiddleware(lim, lim, key, opts)
}

func newMiddleware(lim ContextLimiter, desc any, key func(*http.Request) string, opts []Option) (*Middleware, error) {
	m := &Middleware{
		lim:     lim,
		desc:    desc,
		key:     key,
		cost:    func(*http.Request) int64 { return 1 },
		now:     monotonicClock(),
		sleep:   sleepTimer,
		style:   headers.StyleIETF,
		refused: http.HandlerFunc(tooManyRequests),
		failed:  unavailable,
	}
	if m.key == nil {
		m.key = func(*http.Request) string { return "" }
	}
	for _, opt := range opts {
		if opt != nil {
			opt(m)
		}
	}
	if m.style > headers.StyleBoth {
		return nil, fmt.Errorf("httplimit: unknown style %v", m.style)
	}
	if !m.given {
		d, ok := m.desc.(describer)
		if !ok {
			return nil, errors.New("httplimit: the limiter does not say its algorithm and policy; give its quota WithQuota")
		}
		q, err := headers.QuotaOf(m.name, d.Algorithm(), d.Policy())
		if err != nil {
			return nil, fmt.Errorf("httplimit: %w", err)
		}
		m.quota = q
	}
	m.quotas = []headers.Quota{m.quota}
	return m, nil
}

// Quota returns the quota the fields advertise.
func (m *Middleware) Quota() headers.Quota { return m.quota }

// Wrap returns a handler that judges each request and passes the allowed
// ones on to next, after their Delay if they have one.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := m.lim.Allow(r.Context(), m.key(r), m.now(), m.cost(r))
		if err != nil {
			m.failed(w, r, err)
			return
		}
		ds := [1]limiters.Decision{d}
		headers.Set(w.Header(), m.style, m.quotas, ds[:])
		if !ds[0].Allowed {
			m.refused.ServeHTTP(w, r)
			return
		}
		if ds[0].Delay > 0 {
			if m.sleep(r.Context(), ds[0].Delay) != nil {
				return // the client is gone
			}
		}
		next.ServeHTTP(w, r)
	})
}

func unavailable(w http.ResponseWriter, _ *http.Request, _ error) {
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
}

func tooManyRequests(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}

// monotonicClock returns a clock in Unix nanoseconds that reads the
// monotonic clock, anchored at the wall-clock time of the call.
func monotonicClock() func() int64 {
	base := time.Now()
	wall := base.UnixNano()
	return func() int64 { return wall + int64(time.Since(base)) }
}

func sleepTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
