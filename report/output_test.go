package report

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomic: a write that fails leaves neither the file nor a
// temporary one, and an older file stays as it was.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return io.ErrShortWrite
	})
	if err == nil {
		t.Fatal("no error")
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("p.svg holds %q, want the old file", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left, want 1", len(entries))
	}
}

// TestOutputCheck: a figure goes to a file of a format Write draws, or
// to the terminal, never to both or neither.
func TestOutputCheck(t *testing.T) {
	for _, tc := range []struct {
		out  Output
		want string // the error, "" for none
	}{
		{Output{File: "a.svg"}, ""},
		{Output{File: "a.PDF"}, ""},
		{Output{Term: true}, ""},
		{Output{ASCII: true}, ""},
		{Output{}, "plot burst needs -o FILE (.svg, .png or .pdf) or --term"},
		{Output{File: "a.svg", ASCII: true}, "plot burst: -o and --term exclude each other"},
		{Output{File: "a.gif"}, `-o a.gif: unsupported extension ".gif" (valid: .svg, .png, .pdf)`},
	} {
		err := tc.out.Check("plot burst")
		got := ""
		if err != nil {
			got = err.Error()
			if u, ok := err.(interface{ Usage() bool }); !ok || !u.Usage() {
				t.Errorf("%+v: %v is not a usage error", tc.out, err)
			}
		}
		if got != tc.want {
			t.Errorf("%+v: Check = %q, want %q", tc.out, got, tc.want)
		}
	}
}
