package cmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exitStatusEnd is an EXIT STATUS section at the end of a help text.
var exitStatusEnd = regexp.MustCompile(`\n\nEXIT STATUS\n(  ([0-3]|130)  \S.*\n)+$`)

// TestHelpEndsWithExitStatus: the help of ratesim and of every command
// under it, through --help and through the help command, ends with its
// EXIT STATUS section, and every status a command can return is in it.
func TestHelpEndsWithExitStatus(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				walk(sub, append(path[:len(path):len(path)], sub.Name()))
			}
		}
	}
	root := NewRootCmd("test")
	root.InitDefaultHelpCmd()
	walk(root, nil)
	if len(paths) < 12 {
		t.Fatalf("found only %d commands: %v", len(paths), paths)
	}
	for _, path := range paths {
		for _, args := range [][]string{append(path[:len(path):len(path)], "--help"), append([]string{"help"}, path...)} {
			got := ratesim(t, "", args...)
			if got.code != 0 || got.stderr != "" {
				t.Errorf("ratesim %s: exit %d, stderr %q", strings.Join(args, " "), got.code, got.stderr)
				continue
			}
			m := exitStatusEnd.FindString(got.stdout)
			if m == "" {
				t.Errorf("ratesim %s: help does not end with an EXIT STATUS section:\n%s", strings.Join(args, " "), got.stdout)
				continue
			}
			for _, status := range []string{"  0  success", "  1  error", "  2  usage error"} {
				if !strings.Contains(m, status) {
					t.Errorf("ratesim %s: EXIT STATUS lacks %q:\n%s", strings.Join(args, " "), status, m)
				}
			}
		}
	}
}
