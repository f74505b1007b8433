package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// Exit statuses, as documented in the root command's help.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitPartial     = 3
	exitInterrupted = 130 // as a shell reports a process ended by SIGINT
)

// interrupted is the error of a command stopped by an interrupt (its
// context cancelled). It exits with status 130.
type interrupted struct{ err error }

func (e interrupted) Error() string { return "interrupted" }
func (e interrupted) Unwrap() error { return e.err }

// usageError is a mistake in how ratesim was called: a bad flag, an unknown
// algorithm, a bad parameter. It exits with status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// usageMistake is an error of another package that reports whether it is
// a mistake in how ratesim was called (sweep's grid and constraints).
type usageMistake interface {
	error
	Usage() bool
}

// ExitCode maps an error returned by the root command to ratesim's exit
// status: 0 for nil, 2 for usage errors, 3 for a lenient read that skipped
// rows (*traces.SkippedError), 130 for an interrupt (a cancelled
// context), 1 for anything else.
func ExitCode(err error) int {
	var ue *usageError
	var se *spec.Error
	var ae usageMistake
	var pe *traces.SkippedError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &se), errors.As(err, &ae) && ae.Usage():
		return exitUsage
	case errors.As(err, &pe):
		return exitPartial
	default:
		return exitError
	}
}

// ErrorText is the message printed for err after "ratesim: ". Package
// prefixes ("traces: ", "limiters: ") are dropped: the user sees one prefix.
func ErrorText(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	var pe *traces.ParseError
	if errors.As(err, &pe) {
		// The message without the package's name, then the flags that
		// would read the trace.
		return strings.TrimPrefix(pe.Error(), "traces: ") + pe.FlagRemedy()
	}
	var fk *sim.ForgottenKeyError
	if errors.As(err, &fk) {
		return strings.TrimPrefix(fk.Error(), "sim: ") + "; rerun with --keep-keys"
	}
	msg := err.Error()
	for _, p := range []string{"limiters: ", "traces: ", "sim: ", "redisstore: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
