package traces

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// KeyStyle is how generated user keys look.
type KeyStyle uint8

// The key styles.
const (
	// KeysShort names users u1, u2, ... uN; u1 is the busiest.
	KeysShort KeyStyle = iota
	// KeysUUID names users with 36-character UUID-like keys
	// ("6f1c0b3e-…"), fixed by the seed: the honest case for benchmarks,
	// since short keys make interning look cheaper than it is.
	KeysUUID
)

// GenOptions configure Generate. The zero value of every field picks a
// default, so GenOptions{Pattern: "bursty", Seed: 7} is complete.
type GenOptions struct {
	// Pattern is the arrival pattern (see Patterns); "" means "steady".
	//   steady:   Poisson arrivals at a constant rate.
	//   bursty:   on/off: bursts of Burst requests by one user within a
	//             quarter of Window, the bursts starting at Poisson times.
	//   boundary: clusters of Burst requests by one user straddling the
	//             window boundaries (multiples of Window): half in the
	//             quarter window before a boundary, half in the quarter
	//             after, the boundary-burst that fixed windows let through.
	//   ramp:     Poisson arrivals whose rate rises linearly to a peak at
	//             half the span, then falls back.
	Pattern string
	// Users is the number of distinct users; 0 means 10.
	Users int
	// Requests is the number of requests written; 0 means 1000.
	Requests int
	// Seed fixes the trace: the same options give the same bytes.
	Seed int64
	// Span is about how long the trace lasts (arrivals are random, so the
	// last one is near Span, not at it). 0 means Requests/Rate when Rate is
	// set, else two seconds per request per user (each user averages one
	// request every two seconds).
	Span time.Duration
	// Rate is the mean number of requests per second over all users; used
	// only when Span is 0.
	Rate float64
	// Window is the window the boundary pattern aims at and the scale of
	// bursts; 0 means 10 s, the seed's window.
	Window time.Duration
	// Burst is the number of requests in a burst (bursty) or a cluster
	// (boundary); 0 means 6, twice the seed's limit of 3.
	Burst int
	// Skew is the exponent s of the users' popularity: the k-th user's share
	// of the requests is about proportional to 1/k^s, so a few users are
	// heavy and most are light, as in real traffic. 0 means 1.
	Skew float64
	// Uniform gives every user the same share instead of a skewed one.
	Uniform bool
	// Keys is the style of user keys.
	Keys KeyStyle
	// Start is the time of the trace's origin in nanoseconds (Unix
	// nanoseconds with RFC3339); arrivals come after it.
	Start int64
	// Resolution rounds times down to a multiple of it; 0 means 1 ms.
	Resolution time.Duration
	// Format is the output format; FormatAuto means CSV.
	Format Format
	// Unit is the unit of numeric timestamps written; 0 means seconds.
	Unit time.Duration
	// RFC3339 writes times as RFC 3339 UTC times instead of numbers.
	RFC3339 bool
}

// Patterns returns the names of the generator's patterns.
func Patterns() []string { return PatternChoices.Names() }

// maxBurst caps GenOptions.Burst.
const maxBurst = 1 << 20

// Generate writes a synthetic trace to w. The output is deterministic for
// the options (the seed included), its times never decrease, and it
// streams: memory does not grow with Requests (it follows the bursts or
// clusters in progress at one time).
func Generate(w io.Writer, opts GenOptions) error {
	g, err := newGenerator(opts)
	if err != nil {
		return err
	}
	out := NewWriter(w, opts.Format, opts.Unit)
	if opts.RFC3339 {
		out.SetTimeStyle(TimeRFC3339)
	}
	g.emit = func(user int, t int64) error {
		g.ev.User = g.key(g.ev.User[:0], user)
		g.ev.Time = g.round(t)
		return out.Write(&g.ev)
	}
	if err := g.run(); err != nil {
		return err
	}
	return out.Flush()
}

// generator holds the state shared by the patterns.
type generator struct {
	o     GenOptions
	rng   *rand.Rand
	span  float64 // ns
	ev    Event
	emit  func(user int, t int64) error
	skewA float64 // precomputed for the popularity sampler
	seedK uint64
}

func newGenerator(o GenOptions) (*generator, error) {
	if o.Pattern == "" {
		o.Pattern = "steady"
	}
	o.Pattern = strings.ToLower(o.Pattern)
	known := false
	for _, p := range Patterns() {
		known = known || p == o.Pattern
	}
	if !known {
		return nil, fmt.Errorf("traces: unknown pattern %q (valid: %s)", o.Pattern, strings.Join(Patterns(), ", "))
	}
	switch {
	case o.Users < 0:
		return nil, fmt.Errorf("traces: users must be positive, got %d", o.Users)
	case o.Requests < 0:
		return nil, fmt.Errorf("traces: requests must not be negative, got %d", o.Requests)
	case o.Span < 0:
		return nil, fmt.Errorf("traces: span must be positive, got %v", o.Span)
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return nil, fmt.Errorf("traces: rate must be a positive number, got %v", o.Rate)
	case o.Window < 0:
		return nil, fmt.Errorf("traces: window must be positive, got %v", o.Window)
	case o.Burst < 0 || o.Burst > maxBurst:
		return nil, fmt.Errorf("traces: burst must be between 1 and %d, got %d", maxBurst, o.Burst)
	case o.Skew < 0 || math.IsNaN(o.Skew) || math.IsInf(o.Skew, 0):
		return nil, fmt.Errorf("traces: skew must be a positive number, got %v", o.Skew)
	case o.Resolution < 0:
		return nil, fmt.Errorf("traces: resolution must be positive, got %v", o.Resolution)
	case o.Unit < 0:
		return nil, fmt.Errorf("traces: time unit must be positive, got %v", o.Unit)
	case o.Keys > KeysUUID:
		return nil, errors.New("traces: unknown key style")
	}
	if o.Users == 0 {
		o.Users = 10
	}
	if o.Requests == 0 {
		o.Requests = 1000
	}
	if o.Window == 0 {
		o.Window = 10 * time.Second
	}
	if o.Burst == 0 {
		o.Burst = 6
	}
	if o.Skew == 0 {
		o.Skew = 1
	}
	if o.Resolution == 0 {
		o.Resolution = time.Millisecond
	}
	g := &generator{
		o:     o,
		rng:   rand.New(rand.NewPCG(uint64(o.Seed), 0x5eed_7ace_0f_ba5e)),
		seedK: mix64(uint64(o.Seed) ^ 0x243f6a8885a308d3),
	}
	switch {
	case o.Span > 0:
		g.span = float64(o.Span)
	case o.Rate > 0:
		g.span = float64(o.Requests) / o.Rate * 1e9
	default:
		g.span = float64(o.Requests) / float64(o.Users) * 2e9
	}
	g.span = math.Max(math.Min(g.span, 1<<62), 1)
	if o.Skew != 1 {
		g.skewA = math.Pow(float64(o.Users)+1, 1-o.Skew) - 1
	} else {
		g.skewA = math.Log(float64(o.Users) + 1)
	}
	g.ev.Cost = 1
	return g, nil
}

func (g *generator) run() error {
	switch g.o.Pattern {
	case "bursty":
		return g.bursty()
	case "boundary":
		return g.boundary()
	case "ramp":
		return g.ramp()
	}
	return g.steady()
}

// user draws a user index, 1-based, from the popularity distribution: a
// continuous power law with exponent Skew, inverted, which puts about a
// 1/k^s share on user k.
func (g *generator) user() int {
	n := g.o.Users
	if g.o.Uniform || n == 1 {
		return 1 + g.rng.IntN(n)
	}
	u := g.rng.Float64()
	var x float64
	if g.o.Skew == 1 {
		x = math.Exp(u * g.skewA)
	} else {
		x = math.Pow(u*g.skewA+1, 1/(1-g.o.Skew))
	}
	k := int(x)
	return max(1, min(k, n))
}

// exp draws an exponential gap of the given mean, in nanoseconds.
func (g *generator) exp(mean float64) float64 { return g.rng.ExpFloat64() * mean }

// round turns an offset from Start into an absolute time, rounded down to
// the resolution.
func (g *generator) round(off int64) int64 {
	t := g.o.Start + off
	if off > 0 && t < g.o.Start { // overflow: clamp
		t = math.MaxInt64
	}
	r := int64(g.o.Resolution)
	q := t / r
	if t%r != 0 && t < 0 {
		q--
	}
	return q * r
}

// toNanos converts a float64 offset, clamped to the int64 range.
func toNanos(f float64) int64 {
	if f >= 1<<63-1024 {
		return math.MaxInt64 - 1024
	}
	return int64(f)
}

func (g *generator) steady() error {
	mean := g.span / float64(g.o.Requests)
	t := 0.0
	for range g.o.Requests {
		t += g.exp(mean)
		if err := g.emit(g.user(), toNanos(t)); err != nil {
			return err
		}
	}
	return nil
}

// ramp makes a Poisson process whose intensity is a triangle over the
// span, by drawing a unit-rate process in "cumulative intensity" space and
// mapping it back through the inverse of the triangle's distribution
// function. The few arrivals past the end start the next triangle.
func (g *generator) ramp() error {
	n := float64(g.o.Requests)
	u := 0.0
	for range g.o.Requests {
		u += g.exp(1 / n)
		cycle := math.Floor(u)
		f := u - cycle
		var x float64
		if f < 0.5 {
			x = math.Sqrt(f / 2)
		} else {
			x = 1 - math.Sqrt((1-f)/2)
		}
		if err := g.emit(g.user(), toNanos((cycle+x)*g.span)); err != nil {
			return err
		}
	}
	return nil
}

// stream is a run of requests by one user: a burst or a cluster.
type stream struct {
	next int64 // time of its next request (offset from Start)
	user int
	left int // requests left in this part
	// boundary clusters: the part after the boundary still to come, and
	// where the current part's requests lie (sorted uniform order
	// statistics drawn one at a time).
	after    int
	pos      float64 // last order statistic in [0,1)
	from, to float64 // the part's interval, ns
}

// streamHeap is a min-heap of streams by next time (then user, then
// insertion order, for determinism).
type streamHeap []stream

func (h streamHeap) less(i, j int) bool {
	if h[i].next != h[j].next {
		return h[i].next < h[j].next
	}
	return h[i].user < h[j].user
}

func (h *streamHeap) push(s stream) {
	*h = append(*h, s)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

// fix restores the heap after the top changed.
func (h streamHeap) fix() {
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h *streamHeap) pop() {
	a := *h
	a[0] = a[len(a)-1]
	*h = a[:len(a)-1]
	h.fix()
}

// bursty interleaves bursts: they start at Poisson times, each by one user,
// with Burst requests at exponential gaps averaging a quarter window over
// the burst size.
func (g *generator) bursty() error {
	burst := g.o.Burst
	startMean := g.span * float64(burst) / float64(g.o.Requests)
	gapMean := float64(g.o.Window) / 4 / float64(burst)
	var h streamHeap
	nextStart := g.exp(startMean)
	for emitted := 0; emitted < g.o.Requests; {
		if len(h) == 0 || toNanos(nextStart) <= h[0].next {
			h.push(stream{next: toNanos(nextStart), user: g.user(), left: burst})
			nextStart += g.exp(startMean)
			continue
		}
		s := &h[0]
		if err := g.emit(s.user, s.next); err != nil {
			return err
		}
		emitted++
		if s.left--; s.left == 0 {
			h.pop()
			continue
		}
		s.next += toNanos(g.exp(gapMean))
		h.fix()
	}
	return nil
}

// boundary puts clusters on the window boundaries after Start: at each,
// enough clusters for Requests over the span, each of Burst requests by
// one user, the first half in the quarter window before the boundary and
// the rest in the quarter window after it.
func (g *generator) boundary() error {
	w := int64(g.o.Window)
	burst := g.o.Burst
	boundaries := max(1, int(g.span/float64(w)))
	perBoundary := (g.o.Requests + boundaries*burst - 1) / (boundaries * burst) // clusters
	// The first boundary at least a quarter window after Start.
	first := g.o.Start + w/4
	b := first - first%w
	if b < first {
		b += w
	}
	quarter := float64(w / 4)
	var h streamHeap
	for emitted := 0; emitted < g.o.Requests; {
		off := float64(b - g.o.Start)
		h = h[:0]
		for range perBoundary {
			before := burst / 2
			s := stream{user: g.user(), left: before, after: burst - before, from: off - quarter, to: off}
			if before == 0 {
				s.left, s.after, s.from, s.to = s.after, 0, off, off+quarter
			}
			g.advance(&s)
			h.push(s)
		}
		for len(h) > 0 && emitted < g.o.Requests {
			s := &h[0]
			if err := g.emit(s.user, s.next); err != nil {
				return err
			}
			emitted++
			if s.left--; s.left == 0 {
				if s.after == 0 {
					h.pop()
					continue
				}
				s.left, s.after, s.pos, s.from, s.to = s.after, 0, 0, off, off+quarter
			}
			g.advance(s)
			h.fix()
		}
		if b > math.MaxInt64-w {
			break
		}
		b += w
	}
	return nil
}

// advance draws the next of the s.left sorted uniform points left in the
// part [s.from, s.to), after s.pos, and sets s.next to it.
func (g *generator) advance(s *stream) {
	// The minimum of n uniforms on [pos, 1) is pos + (1-pos)(1-V^(1/n)).
	v := g.rng.Float64()
	s.pos += (1 - s.pos) * (1 - math.Pow(v, 1/float64(s.left)))
	s.next = toNanos(s.from + s.pos*(s.to-s.from))
}

// key appends the key of user k.
func (g *generator) key(dst []byte, k int) []byte {
	if g.o.Keys == KeysShort {
		dst = append(dst, 'u')
		return strconv.AppendUint(dst, uint64(k), 10)
	}
	hi := mix64(g.seedK ^ uint64(k))
	lo := mix64(hi ^ 0x9e3779b97f4a7c15)
	hi = hi&^0xf000 | 0x4000 // version 4
	lo = lo&^(3<<62) | 2<<62 // RFC 4122 variant
	var b [36]byte
	hexN := func(i int, v uint64, n int) {
		for j := n - 1; j >= 0; j-- {
			b[i+j] = hexDigits[v&0xf]
			v >>= 4
		}
	}
	hexN(0, hi>>32, 8)
	b[8] = '-'
	hexN(9, hi>>16, 4)
	b[13] = '-'
	hexN(14, hi, 4)
	b[18] = '-'
	hexN(19, lo>>48, 4)
	b[23] = '-'
	hexN(24, lo, 12)
	return append(dst, b[:]...)
}

// mix64 is the SplitMix64 finalizer, a bijection of uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
