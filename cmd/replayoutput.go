package cmd

import "io"

// interruptedError is a replay stopped by an interrupt: it unwraps to the
// context's error, which the root maps to its exit status.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }

// prefixWriter writes each line after "ratesim: ", as diagnostics are.
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	if len(b) == 0 || b[0] == '\n' {
		return len(b), nil // no blank lines among diagnostics
	}
	if _, err := io.WriteString(p.w, "ratesim: "); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
