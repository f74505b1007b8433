// Package check compares the decisions of modelled limiters with what a
// log says production did: per limiter, how many decisions agree, the
// confusion of allowed and refused against passed and limited, the first
// disagreements and the keys that disagree most.
package check

import (
	"cmp"
	"slices"

	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// Options say what a check keeps beside its counts.
type Options struct {
	// First is how many disagreements to keep per limiter, the first in
	// the log.
	First int
	// Keys is how many keys to list per limiter, those with the most
	// disagreements.
	Keys int
	// Each, when not nil, is called with every disagreement, in log
	// order: a caller that lists them all streams them from here.
	Each func(*Disagreement) error
}

// A Lane is what a check found of one limiter.
type Lane struct {
	Name     string
	Requests int64
	// Unobserved are the requests the log says nothing of (no field, or
	// "-"): neither agreement nor disagreement.
	Unobserved int64
	// The confusion of the model's decisions (allowed, refused) and what
	// the log says (passed, limited).
	AllowedPassed, AllowedLimited, RefusedPassed, RefusedLimited int64
	// First are the first disagreements (Options.First of them).
	First []Disagreement
	// Keys are the keys that disagree most (Options.Keys of them): most
	// disagreements, then most requests, then by key; keys with none
	// are left out.
	Keys []KeyCount
}

// Agree returns the requests the model decided as the log says.
func (l *Lane) Agree() int64 { return l.AllowedPassed + l.RefusedLimited }

// Observed returns the requests the log says something of.
func (l *Lane) Observed() int64 { return l.Requests - l.Unobserved }

// A Disagreement is a request the model decided otherwise than the log
// says.
type Disagreement struct {
	Lane     string
	File     string
	Line     int
	User     string
	Key      string
	TimeText string
	// Allowed is the model's decision; the log says the opposite.
	Allowed bool
}

// A KeyCount is one key's disagreements under one limiter.
type KeyCount struct {
	Key           string
	Requests      int64 // its observed requests
	Disagreements int64
	// AllowedLimited: the model allowed, the log says limited;
	// RefusedPassed: the reverse.
	AllowedLimited, RefusedPassed int64
}

// A Check is a comparison in progress: Observe sets it up, the replay
// calls Emit with every batch, and Report returns what it found.
type Check struct {
	lanes []Lane
	opts  Options
	// keys holds per key its observed requests, then per lane its
	// allowed-but-limited and refused-but-passed.
	keys map[string][]int64
}

// Observe sets cfg up to label every request with what obs reads of its
// log line, and to give the rows a check needs (the trace's file of
// each); the replay then passes every batch to the returned Check's
// Emit.
func Observe(cfg *sim.Config, obs *traces.Observer, opts Options) *Check {
	cfg.Rows = true
	cfg.Labels = 3
	cfg.Label = func(ev *traces.Event, _ []byte) (uint8, error) { return uint8(obs.Outcome(ev)), nil }
	cfg.WithFile = true
	c := &Check{opts: opts}
	if opts.Keys > 0 {
		c.keys = map[string][]int64{}
	}
	for _, l := range cfg.Lanes {
		c.lanes = append(c.lanes, Lane{Name: l.Name})
	}
	if len(cfg.Lanes) == 0 {
		for _, a := range cfg.Algorithms {
			c.lanes = append(c.lanes, Lane{Name: a.String()})
		}
	}
	return c
}

// Emit takes the decisions of one batch.
func (c *Check) Emit(b *sim.Batch) error {
	withFile := b.NumWith() - 1
	for i := range b.Requests {
		r := &b.Requests[i]
		o := traces.Outcome(b.Label(i))
		var kc []int64
		if c.keys != nil && o != traces.OutcomeUnknown {
			if kc = c.keys[string(r.Key)]; kc == nil {
				kc = make([]int64, 1+2*len(c.lanes))
				c.keys[string(r.Key)] = kc
			}
			kc[0]++
		}
		for a := range c.lanes {
			l := &c.lanes[a]
			l.Requests++
			allowed := b.Allowed(i, a)
			switch {
			case o == traces.OutcomeUnknown:
				l.Unobserved++
				continue
			case allowed && o == traces.OutcomePassed:
				l.AllowedPassed++
				continue
			case !allowed && o == traces.OutcomeLimited:
				l.RefusedLimited++
				continue
			case allowed:
				l.AllowedLimited++
				if kc != nil {
					kc[1+2*a]++
				}
			default:
				l.RefusedPassed++
				if kc != nil {
					kc[2+2*a]++
				}
			}
			if len(l.First) >= c.opts.First && c.opts.Each == nil {
				continue
			}
			d := Disagreement{Lane: l.Name, File: string(b.With(i, withFile)), Line: r.Line, User: string(r.User),
				Key: string(r.Key), TimeText: string(r.TimeText), Allowed: allowed}
			if len(l.First) < c.opts.First {
				l.First = append(l.First, d)
			}
			if c.opts.Each != nil {
				if err := c.opts.Each(&d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Report returns what the check found, per limiter.
func (c *Check) Report() []Lane {
	if c.keys == nil {
		return c.lanes
	}
	for a := range c.lanes {
		var list []KeyCount
		for k, kc := range c.keys {
			if d := kc[1+2*a] + kc[2+2*a]; d > 0 {
				list = append(list, KeyCount{Key: k, Requests: kc[0], Disagreements: d, AllowedLimited: kc[1+2*a], RefusedPassed: kc[2+2*a]})
			}
		}
		slices.SortFunc(list, func(x, y KeyCount) int {
			if c := cmp.Compare(y.Disagreements, x.Disagreements); c != 0 {
				return c
			}
			if c := cmp.Compare(y.Requests, x.Requests); c != 0 {
				return c
			}
			return cmp.Compare(x.Key, y.Key)
		})
		c.lanes[a].Keys = list[:min(len(list), c.opts.Keys)]
	}
	return c.lanes
}
