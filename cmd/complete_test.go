package cmd

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagCompletionsOfferNoFiles: of the flags that take a value, only
// --config (YAML files) and the -o of plot and report (pictures, HTML)
// complete file names; numbers, durations, rates and names never do.
func TestFlagCompletionsOfferNoFiles(t *testing.T) {
	root := NewRootCmd("test")
	var checked int
	cmds := root.Commands()
	for _, c := range root.Commands() {
		cmds = append(cmds, c.Commands()...)
	}
	for _, c := range cmds {
		path := strings.Fields(commandName(c))
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				return
			}
			checked++
			got := ratesim(t, "", append(append([]string{cobra.ShellCompRequestCmd}, path...), "--"+f.Name, "")...)
			lines := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
			last := lines[len(lines)-1]
			d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
			if got.code != 0 || err != nil {
				t.Errorf("%s --%s: exit %d, last line %q", c.Name(), f.Name, got.code, last)
				return
			}
			directive := cobra.ShellCompDirective(d)
			if f.Name == "policy-from" {
				if directive != cobra.ShellCompDirectiveDefault {
					t.Errorf("%s --policy-from: directive %d, want file names", c.Name(), d)
				}
				return
			}
			if f.Name == "config" || f.Name == "output" && (path[0] == "plot" || path[0] == "report") {
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

// TestFieldCompletions: the field flags and --key complete the fields of
// the trace on the command line, --key element by element.
func TestFieldCompletions(t *testing.T) {
	chdirLogged(t)
	dir := t.TempDir()
	csvPath := dir + "/logs.csv"
	jsonPath := dir + "/logs.jsonl"
	writeFile(t, csvPath, "ip,time,path,status\n1.2.3.4,2024-01-01T00:00:00Z,/,200\n")
	writeFile(t, jsonPath, `{"ts":1,"request":{"remote_ip":"1.2.3.4"}}`+"\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", csvPath, "--user-field", ""}, "ip\ntime\npath\nstatus\n:4\n"},
		{[]string{"compare", csvPath, "--key", "ip,p"}, "ip,path\n:4\n"},
		{[]string{"burst", jsonPath, "--time-field", ""}, "request\nrequest.remote_ip\nts\n:4\n"},
		{[]string{"run", "--tz", "Europe/Berl"}, "Europe/Berlin\n:4\n"},
		{[]string{"plot", "state", "traces/examples/multi-user.csv", "--user", ""}, "alice\nbob\ncarol\n:4\n"},
		{[]string{"plot", "s"}, "state\tOne key's state over time, a panel per limiter\nsweep\tA sweep's false allows and false rejects against the swept parameter\n:4\n"},
	} {
		got := ratesim(t, "", append([]string{cobra.ShellCompRequestCmd}, tt.args...)...)
		if got.stdout != tt.want {
			t.Errorf("%v: %q, want %q", tt.args, got.stdout, tt.want)
		}
	}
}

// writeFile writes text to path or fails the test.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
