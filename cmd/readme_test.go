package cmd

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADME runs every command the README shows in a console block
// ("$ ratesim ..." on the first line, its output below) and checks that
// the output is still what the README says.
func TestREADME(t *testing.T) {
	chdirLogged(t)
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```console\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("README.md has no console blocks")
	}
	updated := string(data)
	for _, block := range blocks {
		end := strings.Index(block, "```\n")
		if end < 0 {
			t.Fatalf("unterminated console block: %.40q", block)
		}
		command, want, _ := strings.Cut(block[:end], "\n")
		args, ok := strings.CutPrefix(command, "$ ratesim ")
		if !ok {
			t.Errorf("console block starts with %q, not a ratesim command", command)
			continue
		}
		t.Run(args, func(t *testing.T) {
			got := ratesim(t, "", shellFields(args)...)
			if got.code != 0 || got.stderr != "" {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			if got.stdout != want {
				if *update {
					updated = strings.Replace(updated, "```console\n"+command+"\n"+want+"```\n", "```console\n"+command+"\n"+got.stdout+"```\n", 1)
					return
				}
				t.Errorf("README.md shows other output (-README +now):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.stdout, "\n")))
			}
		})
	}
	if *update && updated != string(data) {
		if err := os.WriteFile("README.md", []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// shellFields splits a command line as a shell would one without
// variables or escapes: at spaces, but not inside single quotes.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// TestREADMENumbers checks the counts the README states against the code
// that sets them, so that neither drifts from the other.
func TestREADMENumbers(t *testing.T) {
	chdirLogged(t)
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(data)), " ")
	for _, c := range []struct {
		re   string
		want int
	}{
		{`up to (\d+) candidates`, maxCandidates},
		{`Up to (\d+) limiters run in one pass`, maxLanes},
	} {
		m := regexp.MustCompile(c.re).FindAllStringSubmatch(text, -1)
		if len(m) == 0 {
			t.Errorf("README.md no longer says %q", c.re)
		}
		for _, g := range m {
			if g[1] != strconv.Itoa(c.want) {
				t.Errorf("README.md says %q, the code %d", g[0], c.want)
			}
		}
	}
}
