package cmd

import (
	"os"
	"testing"
)

// TestIsTerminal: a character device that is not a terminal, /dev/null,
// gets no progress display, and neither does a plain file.
func TestIsTerminal(t *testing.T) {
	if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer f.Close()
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", os.DevNull)
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a file is taken for a terminal")
	}
}
