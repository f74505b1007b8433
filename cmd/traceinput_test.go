package cmd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileYAML: a 1.6 MB YAML trace whose 20,000 aliases repeat a
// 1 MB user is refused before any output (it would write 20 GB), with the
// line of the alias that takes it past the cap; with --sort nothing
// reaches the temporary directory.
func TestHostileYAML(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var b strings.Builder
	b.WriteString("- {user: &u " + strings.Repeat("x", 1<<20) + ", timestamp: 0}\n")
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "- {user: *u, timestamp: %d}\n", i)
	}
	path := filepath.Join(t.TempDir(), "hostile.yaml")
	writeFile(t, path, b.String())
	for _, args := range [][]string{
		{"run", "--algo", "gcra", "-o", "csv", path},
		{"compare", "--sort", "--sort-mem", "64KiB", path},
		{"run", "--algo", "gcra", "--lenient", "-o", "csv", path},
	} {
		got := ratesim(t, "", args...)
		want := "ratesim: " + path + ":16:10: YAML trace larger than 16 MiB once its aliases are expanded (each alias counts as the size of what it repeats); YAML is parsed whole, so its size is capped: convert it to CSV or JSON Lines, which are read as a stream\n"
		if got.code != 1 || got.stdout != "" || got.stderr != want {
			t.Errorf("%v: exit %d, stdout %.60q, stderr %q", args, got.code, got.stdout, got.stderr)
		}
		emptyDir(t, tmp, fmt.Sprint(args))
	}
}

// TestTruncatedGzipTrace: a gzip-compressed trace cut short is reported
// as the early end of its compressed stream, naming the file, not as a
// bad timestamp in its last, cut, line.
func TestTruncatedGzipTrace(t *testing.T) {
	var text strings.Builder
	text.WriteString("user,timestamp\n")
	for i := range 2000 {
		fmt.Fprintf(&text, "u%d,%d\n", i%3, 1000+i)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text.String()))
	zw.Close()
	path := filepath.Join(t.TempDir(), "cut.csv.gz")
	if err := os.WriteFile(path, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	want := "ratesim: " + path + ": unexpected EOF in the gzip-compressed stream (the file is truncated)\n"
	for _, args := range [][]string{
		{"compare", "--summary", path},
		{"compare", "--sort", path},
		{"run", "--algo", "gcra", "--lenient", "-o", "csv", path},
	} {
		got := ratesim(t, "", args...)
		if got.code != 1 || got.stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", args, got.code, got.stderr, want)
		}
	}
}
