package limiters

import "fmt"

// A PolicyError is a policy that is not valid for an algorithm, a rate
// that does not parse, or an unknown algorithm's name. Its Error names
// the package; Text is the message alone, for callers that put it in
// messages of their own.
type PolicyError struct {
	// Param is the parameter at fault ("limit", "rate"), or "" when the
	// error is not about one.
	Param string
	msg   string
}

func (e *PolicyError) Error() string { return "limiters: " + e.msg }

// Text returns the message without the package's name: "limit must be
// positive, got 0".
func (e *PolicyError) Text() string { return e.msg }

// policyErrorf returns a *PolicyError about param.
func policyErrorf(param, format string, args ...any) error {
	return &PolicyError{Param: param, msg: fmt.Sprintf(format, args...)}
}
