package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ratesim/ratesim/internal/choice"

	"github.com/ratesim/ratesim/limiters"
)

// StackPolicy is one policy of a stack: a limiter, what it keys on, and
// whether it only watches.
type StackPolicy struct {
	Lane
	// KeyFields are the event attributes its key joins, as
	// Config.KeyFields; empty for one key for every request (a global
	// limit).
	KeyFields []string
	// Shadow policies never refuse: they count what they would have
	// refused.
	Shadow bool
	// Match, when not nil, says which requests the policy applies to
	// (a gateway's location or descriptor); the others pass it by, as if
	// it were not there. Nil applies it to every request.
	Match *Match
}

// A Match says which requests a policy of a stack applies to: those
// whose values of Fields (event attributes, in that order) Applies
// accepts. A request without one of the fields is an error, as a key's
// missing field is.
type Match struct {
	Fields []string
	// Applies reports whether the policy applies to a request with these
	// values of Fields; the slices are valid only during the call.
	Applies func(values [][]byte) bool
}

// StackMode says what the policies that allowed a request the stack
// refused do with it.
type StackMode uint8

const (
	// StackConsume counts it: each policy decides and takes the cost on
	// its own, as independent limiters in series do.
	StackConsume StackMode = iota
	// StackRefund does not: every policy is checked, then the request
	// is taken by all or none.
	StackRefund
)

// StackModes are the stack modes, in the order of their constants.
var StackModes = choice.List{
	{Name: "consume", Description: "policies that allowed a refused request still count it, as limiters in series do (default)"},
	{Name: "refund", Description: "all policies are checked, then the request is taken in all or none"},
}

// String returns the mode's name: consume or refund.
func (m StackMode) String() string {
	if int(m) < len(StackModes) {
		return StackModes[m].Name
	}
	return fmt.Sprintf("StackMode(%d)", m)
}

// ParseStackMode returns the mode named name.
func ParseStackMode(name string) (StackMode, error) {
	if m := StackModes.Index(name); m >= 0 {
		return StackMode(m), nil
	}
	return 0, fmt.Errorf("sim: unknown stack mode %q (valid: %s)", name, StackModes)
}

// Stack is a stack of policies: a request passes when every enforcing
// policy allows it.
type Stack struct {
	Policies []StackPolicy
	Mode     StackMode
}

// StackDecision is the stack's answer to one request.
type StackDecision struct {
	// Request is the request; its byte slices are valid only during the
	// emit callback.
	Request
	// Decision is the stack's answer, as one limiter's would be: allowed
	// when every enforcing policy allowed the request. Remaining is the
	// least the enforcing policies have left, ResetAfter the longest
	// until they are all back to fresh, Delay the longest wait in a queue
	// (an allowed request waits for each), Reason the refusal of the first
	// enforcing policy that refused it. RetryAfter is how long until the
	// same request would pass every enforcing policy, if nothing else
	// arrived, given what the policies took of this one: the earliest
	// time at which all allow it, not only the one that refused
	// (InfDuration when no wait cures a refusal, or the retry would come
	// after the latest time a trace can hold).
	Decision limiters.Decision
	// Exact holds Decision's durations in full.
	Exact limiters.Exact
	// Decisions are the policies' own, in stack order, as the stack
	// applied them: under StackRefund, a request the stack refused is
	// taken by none, so for a policy that allowed it Remaining and
	// ResetAfter describe its state untaken (limiters.Rule.DescribeEncoded),
	// and its Delay is 0.
	Decisions []limiters.Decision
	// Refused is the first enforcing policy that refused the request, -1
	// when none did.
	Refused int
	// Applies says, per policy in stack order, whether it applied to the
	// request (its Match, if any, accepted it). A policy that did not
	// has an allowed Decision of zeros, which says nothing of it.
	Applies []bool
	// Limited reports whether an enforcing policy applied to the
	// request. When none did, nothing limits it: it is allowed, and
	// Decision's Remaining and ResetAfter, which no limit gives, are 0
	// and are not counts or waits to show.
	Limited bool
}

// StackStats is what one policy of a stack did over a trace.
type StackStats struct {
	// Requests counts the requests it applied to (all of them when it
	// has no Match).
	Requests int64
	// Refused counts the requests it refused (for a shadow policy, would
	// have refused), Alone those no other enforcing policy refused.
	Refused, Alone int64
}

// StackReport is what a stack did over a whole trace.
type StackReport struct {
	Requests int64
	Allowed  int64 // requests every enforcing policy allowed
	// Unlimited counts the requests no enforcing policy applied to:
	// allowed, with nothing to limit them.
	Unlimited int64
	Policies  []StackStats
}

// maxRetryRounds bounds the search for a stack's retry time. Each round
// moves the candidate time to where every policy that still refuses
// would allow; the limiters' refusals only ever end (a state left alone
// allows at every time after the first it allows at), so the second round
// confirms the first and more are never needed.
const maxRetryRounds = 64

// StackCheck reports whether p can be a policy of a stack: a stack keeps
// each key's state apart (limiters.Rule.StepEncoded), so an algorithm
// whose keys share a zone (limiters.Algorithm.KeysInteract, nginx's
// limit_req) cannot be stacked without deciding otherwise than it does.
func StackCheck(p StackPolicy) error {
	if p.Algorithm.KeysInteract() {
		return fmt.Errorf("sim: policy %s: %s keeps its keys in one zone, where a new key expires others' states, and a stack decides each key alone: it cannot be stacked", p.Name, p.Algorithm)
	}
	return nil
}

// RunStack replays src through a stack of policies. cfg says what each
// request carries: its key (KeyFields, for StackDecision.Key; the
// policies have keys of their own) and attributes (With); its other fields
// do not apply. It calls emit for every request, in trace order, and
// returns what the stack and each policy refused. A key's states stay to
// the end, so memory grows with the keys of every policy.
func RunStack(src Source, cfg Config, stack Stack, emit func(*StackDecision) error) (*StackReport, error) {
	policies := stack.Policies
	if len(policies) == 0 {
		return nil, fmt.Errorf("sim: a stack needs a policy")
	}
	n := len(policies)
	rules := make([]*limiters.Rule, n)
	cfg.keySets = make([]keySet, n)
	matchAt := make([]int, n) // where a policy's match fields begin among the key sets
	for i, p := range policies {
		if err := StackCheck(p); err != nil {
			return nil, err
		}
		r, err := limiters.NewRule(p.Algorithm, p.Policy)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		rules[i] = r
		cfg.keySets[i] = keySet{name: "policy " + p.Name, fields: p.KeyFields}
	}
	for i, p := range policies {
		matchAt[i] = len(cfg.keySets)
		if p.Match == nil {
			continue
		}
		if p.Match.Applies == nil {
			return nil, fmt.Errorf("sim: policy %s: a match needs its Applies", p.Name)
		}
		for _, f := range p.Match.Fields {
			cfg.keySets = append(cfg.keySets, keySet{name: "policy " + p.Name + " (to match on)", fields: []string{f}})
		}
	}
	sets := len(cfg.keySets)
	cfg.Lanes = nil
	e := newEngine(src, cfg)
	s := &stackRun{
		name:     e.name,
		policies: policies,
		mode:     stack.Mode,
		rules:    rules,
		states:   make([]map[string]*[]byte, n),
		next:     make([][]byte, n),
		keys:     make([][]byte, n),
		exact:    make([]limiters.Exact, n),
		rep:      &StackReport{Policies: make([]StackStats, n)},
		skip:     make([]bool, n),
	}
	for i := range s.states {
		s.states[i] = map[string]*[]byte{}
	}
	s.d.Decisions = make([]limiters.Decision, n)
	s.d.Applies = make([]bool, n)
	var values [][]byte
	requests, err := e.start(src, nil).each(func(b *batch) error {
		b.expose()
		for i := range b.Requests {
			for p := range n {
				s.keys[p] = b.key(i, p, sets)
				if m := policies[p].Match; m != nil {
					values = values[:0]
					for f := range m.Fields {
						values = append(values, b.key(i, matchAt[p]+f, sets))
					}
					s.skip[p] = !m.Applies(values)
				}
			}
			if err := s.decide(&b.Requests[i]); err != nil {
				return err
			}
			if err := emit(&s.d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.rep.Requests = requests
	return s.rep, nil
}

// stackRun is a RunStack in progress.
type stackRun struct {
	name     string // the trace's, for errors
	policies []StackPolicy
	mode     StackMode
	rules    []*limiters.Rule
	states   []map[string]*[]byte // per policy, each key's state
	next     [][]byte             // per policy, its state after the request
	keys     [][]byte             // per policy, the request's key
	exact    []limiters.Exact     // per policy, its decision's durations
	skip     []bool               // per policy, whether its match leaves the request out
	probe    []byte
	d        StackDecision
	rep      *StackReport
}

// state returns where policy p keeps the state of key, nil when it has
// none yet.
func (s *stackRun) state(p int, key []byte) *[]byte {
	return s.states[p][string(key)]
}

// decide judges request q under every policy, takes it as the mode says,
// and fills s.d with the stack's answer.
func (s *stackRun) decide(q *Request) error {
	d, ps := &s.d, s.policies
	d.Request, d.Refused, d.Limited = *q, -1, false
	for p := range ps {
		d.Applies[p] = !s.skip[p]
		if s.skip[p] {
			d.Decisions[p], s.exact[p] = limiters.Decision{Allowed: true}, limiters.Exact{}
			continue
		}
		s.rep.Policies[p].Requests++
		d.Limited = d.Limited || !ps[p].Shadow
		var old []byte
		if st := s.state(p, s.keys[p]); st != nil {
			old = *st
		}
		next, dec, x, err := s.rules[p].StepEncodedExact(old, q.Time, q.Cost, s.next[p][:0])
		if err != nil {
			return fmt.Errorf("sim: policy %s: %w", ps[p].Name, err)
		}
		s.next[p], d.Decisions[p], s.exact[p] = next, dec, x
		if !dec.Allowed && !ps[p].Shadow && d.Refused < 0 {
			d.Refused = p
		}
	}
	allowed := d.Refused < 0
	for p := range ps {
		if s.skip[p] {
			continue
		}
		dec := &d.Decisions[p]
		if dec.Allowed && s.mode == StackRefund && !allowed && !ps[p].Shadow {
			// Not taken: the state stays as it was (bringing it
			// forward to now would change no later decision), and the
			// decision says what it is.
			var old []byte
			if st := s.state(p, s.keys[p]); st != nil {
				old = *st
			}
			desc, x, err := s.rules[p].DescribeEncoded(old, q.Time)
			if err != nil {
				return fmt.Errorf("sim: policy %s: %w", ps[p].Name, err)
			}
			dec.Remaining, dec.ResetAfter, dec.Delay = desc.Remaining, desc.ResetAfter, 0
			s.exact[p].ResetAfter, s.exact[p].Delay = x.ResetAfter, limiters.Span{}
			continue
		}
		if st := s.state(p, s.keys[p]); st != nil {
			*st = append((*st)[:0], s.next[p]...)
		} else {
			st := slices.Clone(s.next[p])
			s.states[p][string(s.keys[p])] = &st
		}
		if dec.Allowed {
			continue
		}
		s.rep.Policies[p].Refused++
		alone := true
		for j, o := range ps {
			if j != p && !o.Shadow && !d.Decisions[j].Allowed {
				alone = false
				break
			}
		}
		if alone {
			s.rep.Policies[p].Alone++
		}
	}
	if allowed {
		s.rep.Allowed++
	}
	if !d.Limited {
		s.rep.Unlimited++
	}
	return s.answer(q, allowed)
}

// answer sets s.d.Decision and s.d.Exact from the policies' decisions.
func (s *stackRun) answer(q *Request, allowed bool) error {
	d := &s.d
	d.Decision = limiters.Decision{Allowed: allowed, Remaining: -1}
	d.Exact = limiters.Exact{}
	for p, pol := range s.policies {
		if pol.Shadow || s.skip[p] {
			continue
		}
		pd, x := &d.Decisions[p], &s.exact[p]
		if d.Decision.Remaining < 0 || pd.Remaining < d.Decision.Remaining {
			d.Decision.Remaining = pd.Remaining
		}
		if spanLess(d.Exact.ResetAfter, x.ResetAfter) {
			d.Exact.ResetAfter = x.ResetAfter
		}
		if allowed && spanLess(d.Exact.Delay, x.Delay) {
			d.Exact.Delay = x.Delay
		}
	}
	d.Decision.Remaining = max(d.Decision.Remaining, 0)
	if !allowed {
		d.Decision.Reason = d.Decisions[d.Refused].Reason
		retry, err := s.retry(q)
		if err != nil {
			return err
		}
		d.Exact.RetryAfter = retry
	}
	d.Decision.RetryAfter = d.Exact.RetryAfter.Duration()
	d.Decision.ResetAfter = d.Exact.ResetAfter.Duration()
	d.Decision.Delay = d.Exact.Delay.Duration()
	return nil
}

// never is the RetryAfter of a request no wait lets through.
var never = limiters.Span{Hi: math.MaxUint64, Lo: math.MaxUint64}

// errNoRetry reports a stack whose retry time the search did not settle.
var errNoRetry = errors.New("no retry time settles every policy: an internal error")

// retry returns how long after request q, which the stack refused, the
// same request would pass every enforcing policy if nothing else arrived,
// each policy's state being what q left: the earliest wait at which none
// refuses. It asks each policy at a candidate wait, starting from none,
// and moves the candidate to the latest of the waits those that refuse
// name, until none refuses.
func (s *stackRun) retry(q *Request) (limiters.Span, error) {
	var wait limiters.Span
	for range maxRetryRounds {
		at, ok := addSpan(q.Time, wait)
		if !ok {
			return never, nil
		}
		later, refused := wait, false
		for p, pol := range s.policies {
			if pol.Shadow || s.skip[p] {
				continue
			}
			var st []byte
			if ptr := s.state(p, s.keys[p]); ptr != nil {
				st = *ptr
			}
			var d limiters.Decision
			var x limiters.Exact
			var err error
			s.probe, d, x, err = s.rules[p].StepEncodedExact(st, at, q.Cost, s.probe[:0])
			if err != nil {
				return never, fmt.Errorf("sim: policy %s: %w", pol.Name, err)
			}
			if d.Allowed {
				continue
			}
			if x.RetryAfter.Never() {
				return never, nil
			}
			refused = true
			if w := spanAdd(wait, x.RetryAfter); spanLess(later, w) {
				later = w
			}
		}
		if !refused {
			return wait, nil
		}
		wait = later
	}
	return never, fmt.Errorf("sim: %s:%d: %w", s.name, q.Line, errNoRetry)
}

// addSpan returns t+s, and whether it is a time an int64 holds.
func addSpan(t int64, s limiters.Span) (int64, bool) {
	// The room above t, in unsigned arithmetic, where it always fits.
	room := uint64(math.MaxInt64) - uint64(t)
	if s.Hi != 0 || s.Lo > room {
		return 0, false
	}
	return int64(uint64(t) + s.Lo), true
}

// spanAdd returns a+b, saturating at never.
func spanAdd(a, b limiters.Span) limiters.Span {
	lo, c := bits.Add64(a.Lo, b.Lo, 0)
	hi, c := bits.Add64(a.Hi, b.Hi, c)
	if c != 0 {
		return never
	}
	return limiters.Span{Hi: hi, Lo: lo}
}

// spanLess reports whether a is shorter than b.
func spanLess(a, b limiters.Span) bool {
	return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo
}
