package sim

import (
	"fmt"
	"io"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
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

// StackDecision is the stack's answer to one request.
type StackDecision struct {
	Seq       int64
	Line      int
	User      string
	Time      int64
	TimeText  string
	Cost      int64
	Allowed   bool
	Decisions []limiters.Decision // per policy, in stack order
	// Refused is the first enforcing policy that refused the request, -1
	// when none did.
	Refused int
}

// StackStats is what one policy of a stack did over a trace.
type StackStats struct {
	// Refused counts the requests it refused (for a shadow policy, would
	// have refused), Alone those no other enforcing policy refused.
	Refused, Alone int64
}

// RunStack replays src through a stack of policies: a request passes when
// every enforcing policy allows it. It calls emit for every request, in
// trace order, and returns per policy what it refused, and the requests
// allowed. A key's states stay to the end, so memory grows with the keys
// of every policy.
func RunStack(src Source, stack []StackPolicy, mode StackMode, emit func(*StackDecision) error) ([]StackStats, int64, error) {
	if len(stack) == 0 {
		return nil, 0, fmt.Errorf("sim: a stack needs a policy")
	}
	rules := make([]*limiters.Rule, len(stack))
	for i, p := range stack {
		r, err := limiters.NewRule(p.Algorithm, p.Policy)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", p.Name, err)
		}
		rules[i] = r
	}
	states := make([]map[string][]byte, len(stack))
	for i := range states {
		states[i] = map[string][]byte{}
	}
	next := make([][]byte, len(stack))
	keys := make([]string, len(stack))
	stats := make([]StackStats, len(stack))
	var file string
	if n, ok := src.(interface{ Name() string }); ok {
		file = n.Name()
	}
	d := &StackDecision{Decisions: make([]limiters.Decision, len(stack))}
	var allowed, seq int64
	var buf []byte
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		*d = StackDecision{Seq: seq, Line: ev.Line, User: string(ev.User), Time: ev.Time, TimeText: string(ev.TimeText), Cost: ev.Cost, Decisions: d.Decisions, Refused: -1, Allowed: true}
		seq++
		for i, p := range stack {
			buf = buf[:0]
			for j, name := range p.KeyFields {
				v, ok := ev.Attr(name)
				if !ok {
					f := file
					if ev.File != "" {
						f = ev.File
					}
					return nil, 0, &traces.ParseError{File: f, Line: ev.Line, Msg: fmt.Sprintf("policy %s: no %q field to key on", p.Name, name)}
				}
				if j > 0 {
					buf = append(buf, ':')
				}
				buf = appendKeyField(buf, v)
			}
			keys[i] = string(buf)
			st, dec, err := rules[i].StepEncoded(states[i][keys[i]], ev.Time, ev.Cost, next[i][:0])
			if err != nil {
				return nil, 0, fmt.Errorf("sim: policy %s: %w", p.Name, err)
			}
			next[i] = st
			d.Decisions[i] = dec
			if !dec.Allowed && !p.Shadow && d.Refused < 0 {
				d.Refused, d.Allowed = i, false
			}
		}
		for i, p := range stack {
			dec := &d.Decisions[i]
			if dec.Allowed && mode == StackRefund && !d.Allowed && !p.Shadow {
				// Not taken: the state stays as it was (bringing it
				// forward to now would change no later decision).
				continue
			}
			states[i][keys[i]] = append(states[i][keys[i]][:0], next[i]...)
			if dec.Allowed {
				continue
			}
			stats[i].Refused++
			alone := true
			for j, q := range stack {
				if j != i && !q.Shadow && !d.Decisions[j].Allowed {
					alone = false
					break
				}
			}
			if alone {
				stats[i].Alone++
			}
		}
		if d.Allowed {
			allowed++
		}
		if err := emit(d); err != nil {
			return nil, 0, err
		}
	}
	return stats, allowed, nil
}
