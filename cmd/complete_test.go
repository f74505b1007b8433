package cmd

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagCompletionsOfferNoFiles: of the flags that take a value, only
// --config completes file names (YAML ones); numbers, durations, rates
// and names never do.
func TestFlagCompletionsOfferNoFiles(t *testing.T) {
	root := NewRootCmd("test")
	var checked int
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				return
			}
			checked++
			got := ratesim(t, "", cobra.ShellCompRequestCmd, c.Name(), "--"+f.Name, "")
			lines := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
			last := lines[len(lines)-1]
			d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
			if got.code != 0 || err != nil {
				t.Errorf("%s --%s: exit %d, last line %q", c.Name(), f.Name, got.code, last)
				return
			}
			directive := cobra.ShellCompDirective(d)
			if f.Name == "config" {
				if directive != cobra.ShellCompDirectiveFilterFileExt {
					t.Errorf("%s --config: directive %d, want YAML files only", c.Name(), d)
				}
				return
			}
			if directive&cobra.ShellCompDirectiveNoFileComp == 0 {
				t.Errorf("%s --%s: directive %d lets the shell offer file names", c.Name(), f.Name, d)
			}
		})
	}
	if checked < 20 {
		t.Errorf("checked only %d flags", checked)
	}
}
