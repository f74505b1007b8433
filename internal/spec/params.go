package spec

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/internal/choice"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// A Setting is one parameter's text as given and where it was given.
type Setting struct {
	Value string
	At    Source
	// Resolved, when not nil, is the value itself, which Value only
	// describes: an int64, a time.Duration, a limiters.Rate or a
	// limiters.Clock resolved elsewhere (a report passing its intent to
	// its sweep), taken as it is in every unit.
	Resolved any
}

// Params is one set of policy parameters as given, by name: the names of
// limiters.Params, and "clock".
type Params map[string]Setting

// ParamNames are the parameters a policy file, a --limiter or the policy
// flags may give: those of limiters.Params, then clock.
func ParamNames() []string {
	var names []string
	for _, prm := range limiters.Params() {
		names = append(names, prm.Name)
	}
	return append(names, "clock")
}

// CoreParams are the parameters every report states in columns and
// flags of their own; the others (buckets, tick, ...) come from
// limiters.Params as extra columns.
var CoreParams = []string{"limit", "window", "capacity", "rate", "clock"}

// Clocks are the clock rules, in the order of limiters' Clock constants.
var Clocks = choice.List{
	{Name: "reject", Description: "reject a request whose time goes backwards for its key"},
	{Name: "clamp", Description: "judge it at the key's last time"},
}

// ClockName is the name of a clock rule, as --clock takes it.
func ClockName(c limiters.Clock) string {
	if int(c) < len(Clocks) {
		return Clocks[c].Name
	}
	return strconv.Itoa(int(c))
}

// overlay returns p with the parameters set in q replacing p's.
func (p Params) overlay(q Params) Params {
	out := make(Params, len(p)+len(q))
	maps.Copy(out, p)
	maps.Copy(out, q)
	return out
}

// check checks the text of every parameter of p in a way that does not
// depend on the trace's unit: a count is a whole number in range, a
// duration or a rate parses in some unit, a clock is one of Clocks.
func (p Params) check() error {
	for _, name := range slices.Sorted(maps.Keys(p)) {
		s := p[name]
		if s.Resolved != nil {
			continue
		}
		if name == "clock" {
			if _, err := (Params{"clock": s}).clock(); err != nil {
				return err
			}
			continue
		}
		prm, ok := param(name)
		if !ok {
			continue
		}
		var pol limiters.Policy
		err := parseParam(&pol, prm, s, time.Second)
		if err != nil && prm.Kind != limiters.ParamCount {
			// A duration finer than a nanosecond in seconds may be whole
			// in a larger unit, one beyond range in seconds fine in ns.
			for _, unit := range []time.Duration{time.Nanosecond, time.Hour} {
				if parseParam(&pol, prm, s, unit) == nil {
					err = nil
					break
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// param returns the limiters parameter named name.
func param(name string) (limiters.Param, bool) {
	for _, prm := range limiters.Params() {
		if prm.Name == name {
			return prm, true
		}
	}
	return limiters.Param{}, false
}

// policy parses p into a limiters.Policy with durations in unit. The
// capacity defaults to the limit, the rate to the limit per window, the
// others to their own defaults.
func (p Params) policy(unit time.Duration) (limiters.Policy, error) {
	var pol limiters.Policy
	for _, prm := range limiters.Params() {
		s, ok := p[prm.Name]
		if !ok {
			switch {
			case prm.Name == "capacity":
				pol.Capacity = pol.Limit
				continue
			case prm.Name == "rate":
				pol.Rate = limiters.Rate{N: pol.Limit, Per: pol.Window}
				continue
			case prm.Default == "":
				continue
			}
			s = Setting{Value: prm.Default, At: Default}
		}
		if err := parseParam(&pol, prm, s, unit); err != nil {
			return pol, err
		}
	}
	c, err := p.clock()
	pol.Clock = c
	return pol, err
}

// clock parses p's clock.
func (p Params) clock() (limiters.Clock, error) {
	c := p["clock"]
	if r, ok := c.Resolved.(limiters.Clock); ok {
		return r, nil
	}
	i := Clocks.Index(c.Value)
	if i < 0 {
		return 0, errorf("%s: invalid clock %q (valid: %s)", c.At, c.Value, Clocks)
	}
	return limiters.Clock(i), nil
}

// parseParam parses the text of parameter prm into pol, or takes its
// resolved value.
func parseParam(pol *limiters.Policy, prm limiters.Param, s Setting, unit time.Duration) error {
	if s.Resolved != nil {
		switch v := pol.Field(prm.Name).(type) {
		case *int64:
			if r, ok := s.Resolved.(int64); ok {
				*v = r
				return nil
			}
		case *time.Duration:
			if r, ok := s.Resolved.(time.Duration); ok {
				*v = r
				return nil
			}
		case *limiters.Rate:
			if r, ok := s.Resolved.(limiters.Rate); ok {
				*v = r
				return nil
			}
		}
		return errorf("%s: %s has a resolved value of type %T", s.At, prm.Name, s.Resolved)
	}
	switch v := pol.Field(prm.Name).(type) {
	case *int64:
		n, err := strconv.ParseInt(s.Value, 10, 64)
		if err != nil {
			return paramError(prm.Name, s, "want a whole number")
		}
		if n < 0 && prm.Default == "0" {
			return errorf("%s: %s must not be negative, got %d", s.At, prm.Name, n)
		}
		if n <= 0 && prm.Default != "0" {
			return errorf("%s: %s must be positive, got %d", s.At, prm.Name, n)
		}
		*v = n
	case *time.Duration:
		d, err := traces.ParseDuration(s.Value, unit)
		if err != nil {
			return paramError(prm.Name, s, Text(err))
		}
		if d < 0 && prm.Default == "0" {
			return errorf("%s: %s must not be negative, got %s", s.At, prm.Name, s.Value)
		}
		if d <= 0 && prm.Default != "0" {
			return errorf("%s: %s must be positive, got %s", s.At, prm.Name, s.Value)
		}
		*v = d
	case *limiters.Rate:
		r, err := limiters.ParseRate(s.Value, unit)
		if err != nil {
			return errorf("%s: %s", s.At, Text(err)) // the error quotes the rate
		}
		*v = r
	}
	return nil
}

// sources names where the parameters that a uses came from, for an error
// about them together: "--capacity and --rate", "--limit and
// policy.yaml:3", or "the default policy".
func (p Params) sources(a limiters.Algorithm) string {
	var from []string
	add := func(name string) {
		if at := p[name].At; at != "" && at != Default && !slices.Contains(from, string(at)) {
			from = append(from, string(at))
		}
	}
	for _, name := range a.Params() {
		switch _, given := p[name]; {
		case given:
			add(name)
		case name == "capacity":
			add("limit") // the capacity defaults to the limit
		case name == "rate":
			add("limit")
			add("window")
		}
	}
	if len(from) == 0 {
		return "the default policy"
	}
	return strings.Join(from, " and ")
}
