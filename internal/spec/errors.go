package spec

import (
	"errors"
	"fmt"
)

// A Source says where a value came from: a flag ("--limit"), a line of a
// file ("policy.yaml:3"), a --limiter ("--limiter \"tb=token-bucket\""),
// a preset, or "default".
type Source string

// Default is the source of a value nobody gave.
const Default Source = "default"

// An Error is a mistake in the policy as given: a bad parameter, an
// unknown algorithm, a malformed file. With Param set it is about one
// parameter's value.
type Error struct {
	Param  string // the parameter, or "" when the error is not about one
	Value  string // the parameter's text as given
	At     Source // where it was given
	Reason string // what is wrong: "want a whole number"
	msg    string // the whole message, when Param is ""
}

func (e *Error) Error() string {
	if e.Param == "" {
		return e.msg
	}
	return fmt.Sprintf("%s: invalid %s %q: %s", e.At, e.Param, e.Value, e.Reason)
}

// errorf returns an *Error with a message of its own.
func errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// paramError returns an *Error about the value of one parameter.
func paramError(param string, s Setting, reason string) error {
	return &Error{Param: param, Value: s.Value, At: s.At, Reason: reason}
}

// Text is the message of err for a person: the error's own text, without
// the name of the package that made it when err is one of the typed
// errors of the packages spec calls (limiters' policy and rate errors).
func Text(err error) string {
	var te interface{ Text() string }
	if errors.As(err, &te) {
		return te.Text()
	}
	return err.Error()
}
