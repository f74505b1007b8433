package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestPanicIsInternalError: a panic in a command is reported as an
// internal error with its stack and exits with status 1, not with the
// runtime's status 2, which means a usage error to ratesim's callers.
func TestPanicIsInternalError(t *testing.T) {
	root := NewRootCmd("test")
	root.AddCommand(&cobra.Command{
		Use: "explode",
		RunE: func(*cobra.Command, []string) error {
			panicInCommand()
			return nil
		},
	})
	var out, errb bytes.Buffer
	code := execute(context.Background(), root, []string{"explode"}, strings.NewReader(""), &out, &errb)
	if code != exitError {
		t.Errorf("exit status %d, want %d", code, exitError)
	}
	msg := errb.String()
	if !strings.HasPrefix(msg, "ratesim: internal error: runtime error: index out of range [3] with length 3\n") {
		t.Errorf("stderr does not start with the internal error:\n%s", msg)
	}
	if !strings.Contains(msg, "panicInCommand") {
		t.Errorf("stderr has no stack through the panicking function:\n%s", msg)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
}

// panicInCommand fails as a bug would: a runtime error.
func panicInCommand() {
	s := []int{1, 2, 3}
	i := len(s)
	_ = s[i]
}
