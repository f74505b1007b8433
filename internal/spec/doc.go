// Package spec resolves the policy of a replay once: the defaults, a
// --config file, the policy flags and each --limiter, layered in that
// order, with presets and stacks, into the lanes a replay runs, the
// intent their false allows and rejects are counted against, and the
// burst interval, as values the engine takes.
//
// Resolution has two steps. Resolve reads every input and checks all that
// does not depend on the trace, with the source of each value kept for
// messages ("--limit", "policy.yaml:3", "--limiter ..."). Durations given
// as plain numbers are in the trace's unit, which is known only once the
// trace is open (an RFC 3339 trace's durations are in seconds), so
// Plan.Bind turns the plan into a Spec for that unit.
//
// Every error of this package is a *Error: a mistake in how the policy was
// given, which the command line reports as a usage error.
package spec
