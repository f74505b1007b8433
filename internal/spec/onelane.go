package spec

import (
	"slices"
	"strings"
)

// AsLane is what a replay of limiters side by side, each over every
// request under one key, makes of a file's stack (a policies: list, or a
// gateway's config): its one policy as a limiter of its own, and the
// key it is replayed under.
type AsLane struct {
	// File is the file with the policy as its one limiters: entry,
	// named as the policy is, and no policies.
	File *File
	// Key is the key to replay under: the policy's when it names one,
	// else key as given.
	Key []string
	// Warning, when not "", says what the replay does otherwise than
	// the gateway: it limits under the empty key the requests nginx
	// passes unaccounted.
	Warning string
}

// OneLane returns the file's stack as one limiter of its own, for a
// command that replays limiters side by side (see AsLane); what names
// the file in errors, key is the replay's key and keyGiven says it was
// given (--key), when it must be the policy's. A stack that cannot be
// replayed so (two policies that apply together, a policy that applies
// to some requests only, a shadow policy, one key for every request) is
// an *Error naming what, never a replay of something else.
func (pf *File) OneLane(what string, key []string, keyGiven bool) (*AsLane, error) {
	p := pf.Policies[0]
	where := ""
	if p.At != "" {
		where = " (" + string(p.At) + ")"
	}
	const only = "this command replays limiters side by side, each over every request; run and compare --summary replay a stack"
	switch {
	case len(pf.Policies) > 1:
		names := make([]string, len(pf.Policies))
		for i, q := range pf.Policies {
			names[i] = q.Name
		}
		return nil, errorf("%s: %d policies (%s) apply together as a stack: %s", what, len(pf.Policies), strings.Join(names, ", "), only)
	case p.Match != nil && !p.EmptyKeyOnly:
		return nil, errorf("%s: policy %s%s applies to some requests only (a location, descriptor or method): %s", what, p.Name, where, only)
	case p.Shadow:
		return nil, errorf("%s: policy %s%s is a shadow policy, which refuses nothing: %s", what, p.Name, where, only)
	case p.Key != nil && len(p.Key) == 0:
		return nil, errorf("%s: policy %s%s is one limit for every request (no key): %s", what, p.Name, where, only)
	case p.Key != nil && keyGiven && !slices.Equal(p.Key, key):
		return nil, errorf("--key %s: policy %s%s keys on %s", strings.Join(key, ","), p.Name, where, strings.Join(p.Key, ","))
	}
	out := &AsLane{Key: key}
	if p.Key != nil {
		out.Key = p.Key
	}
	if p.EmptyKeyOnly {
		out.Warning = "policy " + p.Name + where + ": a request whose " + strings.Join(p.Key, " and ") + " is empty passes nginx unaccounted; this command limits it under the empty key (run and compare pass it)"
	}
	lane := *pf
	lane.Policies, lane.Limiters = nil, []Limiter{p.Limiter}
	if lane.Limiters[0].Name == "" {
		lane.Limiters[0].Name = p.Name
	}
	out.File = &lane
	return out, nil
}
