package presets

import "fmt"

// An Error is a preset given parameters it does not take or values it
// refuses. Its Error names the package; Text is the message alone.
type Error struct{ msg string }

func (e *Error) Error() string { return "presets: " + e.msg }

// Text returns the message without the package's name: "nginx: burst
// must be at least 0, got -1".
func (e *Error) Text() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }
