package traces

import (
	"fmt"
	"slices"
	"strings"
)

// An Outcome is what a log says a limiter in production did with a
// request.
type Outcome uint8

// The outcomes.
const (
	OutcomeUnknown Outcome = iota // the log does not say (no field, "-")
	OutcomePassed                 // the request was let through (delayed ones too)
	OutcomeLimited                // the request was refused (or, in a dry run, would have been)
)

// String returns "unknown", "passed" or "limited".
func (o Outcome) String() string {
	switch o {
	case OutcomePassed:
		return "passed"
	case OutcomeLimited:
		return "limited"
	}
	return "unknown"
}

// An Observer reads the outcome of a request from a field of its log
// line: the field's value is one of Limited, or one of Passed (any other
// value, when Passed is empty), or else unknown. Its zero value is not
// useful; use ParseObserved.
type Observer struct {
	Field   string
	Limited []string
	Passed  []string
	// list: the field holds comma-separated flags (Envoy's
	// %RESPONSE_FLAGS%), of which one being of Limited limits; "-" is no
	// flag.
	list bool
}

// observedFields are the fields whose values ratesim knows: an
// --observed that names one of them alone takes these values.
var observedFields = map[string]Observer{
	"limit_req_status": {Field: "limit_req_status", Limited: []string{"REJECTED", "REJECTED_DRY_RUN"}, Passed: []string{"PASSED", "DELAYED", "DELAYED_DRY_RUN"}},
	"status":           {Field: "status", Limited: []string{"429", "503"}},
	"response_flags":   {Field: "response_flags", Limited: []string{"RL"}, list: true},
}

// ParseObserved parses --observed: FIELD=VALUE,... (the values that mean
// the request was limited), or a FIELD alone whose values are known
// (limit_req_status, status, response_flags).
func ParseObserved(spec string) (*Observer, error) {
	field, values, hasValues := strings.Cut(strings.TrimSpace(spec), "=")
	field = strings.TrimSpace(field)
	if field == "" {
		return nil, &ValueError{fmt.Sprintf("--observed %q names no field (want FIELD=VALUE,..., such as status=429)", spec)}
	}
	known, isKnown := observedFields[field]
	o := &Observer{Field: field, list: known.list}
	if !hasValues {
		if !isKnown {
			return nil, &ValueError{fmt.Sprintf("--observed %s: give the values that mean a request was limited, as %s=429 (the fields whose values are known: %s)", field, field, strings.Join(knownObserved(), ", "))}
		}
		cp := known
		return &cp, nil
	}
	for _, v := range strings.Split(values, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.Limited = append(o.Limited, v)
		}
	}
	if len(o.Limited) == 0 {
		return nil, &ValueError{fmt.Sprintf("--observed %q lists no value", spec)}
	}
	if isKnown {
		// The other values ratesim knows still mean passed.
		for _, v := range known.Passed {
			if !slices.Contains(o.Limited, v) {
				o.Passed = append(o.Passed, v)
			}
		}
		for _, v := range known.Limited {
			if !slices.Contains(o.Limited, v) && len(known.Passed) > 0 {
				o.Passed = append(o.Passed, v)
			}
		}
	}
	return o, nil
}

func knownObserved() []string {
	var names []string
	for n := range observedFields {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// String returns the observer as --observed takes it.
func (o *Observer) String() string { return o.Field + "=" + strings.Join(o.Limited, ",") }

// Outcome returns what ev's log line says was done with it.
func (o *Observer) Outcome(ev *Event) Outcome {
	v, ok := ev.Attr(o.Field)
	if !ok || len(v) == 0 {
		return OutcomeUnknown
	}
	if o.list {
		if string(v) == "-" {
			return OutcomePassed
		}
		for _, flag := range strings.Split(string(v), ",") {
			if slices.Contains(o.Limited, strings.TrimSpace(flag)) {
				return OutcomeLimited
			}
		}
		return OutcomePassed
	}
	if string(v) == "-" {
		return OutcomeUnknown
	}
	for _, l := range o.Limited {
		if string(v) == l {
			return OutcomeLimited
		}
	}
	if len(o.Passed) == 0 {
		return OutcomePassed
	}
	for _, p := range o.Passed {
		if string(v) == p {
			return OutcomePassed
		}
	}
	return OutcomeUnknown
}

// DefaultObserved returns the --observed of the trace's format: its field
// that records what a limiter did, and the values that mean it limited.
func (r *Reader) DefaultObserved() string {
	if t, ok := r.p.(*tmplParser); ok {
		switch {
		case slices.Contains(t.t.attrs, "limit_req_status"):
			return "limit_req_status"
		case slices.Contains(t.t.attrs, "response_flags"):
			return "response_flags"
		}
	}
	if info, ok := r.format.Info(); ok && info.Observed != "" && !strings.Contains(info.Observed, " ") {
		return info.Observed
	}
	return "status=429,503"
}
