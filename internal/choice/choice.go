// Package choice describes the values a setting takes, once, where the
// setting is owned (the clock rules in spec, the client models in sim,
// the output formats in render): a name and what it means each. The
// command line draws its parsing, its "(valid: ...)" lists, its help and
// its completion from them, so that none is written by hand.
package choice

import (
	"fmt"
	"strings"
)

// A Choice is one value a setting takes.
type Choice struct {
	Name        string
	Description string
}

// A List is the values of one setting, in the order they are offered.
type List []Choice

// Names are the choices' names.
func (l List) Names() []string {
	names := make([]string, len(l))
	for i, c := range l {
		names[i] = c.Name
	}
	return names
}

// String lists the names: "reject, clamp".
func (l List) String() string { return strings.Join(l.Names(), ", ") }

// Join joins names as a sentence does, with conj ("and", "or"): "a, b
// or c".
func Join(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Index returns the place of the choice named name, or -1.
func (l List) Index(name string) int {
	for i, c := range l {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// A UsageError is a flag given a value it does not take, or flags that
// exclude each other given together: a mistake in how the program was
// called. The packages that own a setting's flags return it (as their
// FlagError) for the command line to map to its usage exit status.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usage reports that the error is a mistake in how the program was
// called.
func (e *UsageError) Usage() bool { return true }

// Usagef returns a *UsageError of the formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}
