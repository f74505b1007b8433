package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/ratesim/ratesim/internal/render"
)

// An Output is where a figure is drawn: a file, in the format its
// extension names (Formats), or the terminal. Its fields are the flags
// AddFlags adds; Check reads them before any replay, Write draws.
type Output struct {
	File  string // -o: the file to draw to
	Term  bool   // --term: draw in the terminal
	ASCII bool   // --ascii: draw in the terminal in plain ASCII (implies Term)

	format string // the file's format, "" for the terminal; set by Check
}

// AddFlags adds -o, --term and --ascii to fs.
func (o *Output) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.File, "output", "o", "", "the file to draw to: .svg, .png or .pdf")
	fs.BoolVar(&o.Term, "term", false, "draw in the terminal (Unicode braille), not to a file")
	fs.BoolVar(&o.ASCII, "ascii", false, "draw in the terminal with plain ASCII characters (implies --term)")
}

// An OutputError is an Output given wrong: both a file and the terminal,
// neither, or a file whose extension names no format. It is a mistake in
// how the program was called.
type OutputError struct{ Msg string }

func (e *OutputError) Error() string { return e.Msg }

// Usage reports that the error is a mistake in how the program was
// called.
func (e *OutputError) Usage() bool { return true }

// Check checks where the figure goes, for the command named cmdName
// ("plot state") in its messages: the extension of File, or the
// terminal.
func (o *Output) Check(cmdName string) error {
	if o.ASCII {
		o.Term = true
	}
	switch {
	case o.Term && o.File != "":
		return &OutputError{cmdName + ": -o and --term exclude each other"}
	case o.Term:
		o.format = ""
		return nil
	case o.File == "":
		return &OutputError{fmt.Sprintf("%s needs -o FILE (%s) or --term", cmdName, render.JoinList(dotted(Formats), "or"))}
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(o.File), "."))
	if !slices.Contains(Formats, ext) {
		return &OutputError{fmt.Sprintf("-o %s: unsupported extension %q (valid: %s)", o.File, filepath.Ext(o.File), strings.Join(dotted(Formats), ", "))}
	}
	o.format = ext
	return nil
}

// dotted is the extensions exts with their dots: ".svg".
func dotted(exts []string) []string {
	d := make([]string, len(exts))
	for i, e := range exts {
		d[i] = "." + e
	}
	return d
}

// Write draws f where o says, once Check has passed: to the file, or to
// term, the terminal, as wide as TermWidth says.
func (o *Output) Write(f *Figure, term io.Writer) error {
	if o.format == "" {
		return WriteTerm(term, f, TermOptions{Width: TermWidth(term), ASCII: o.ASCII})
	}
	return WriteFileAtomic(o.File, func(w io.Writer) error { return Write(w, f, o.format) })
}

// TermWidth is the width to draw in on w: $COLUMNS, else the terminal's
// when w is one, else 80.
func TermWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok {
		// A file that is not a terminal has no window size.
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	return 80
}

// WriteFileAtomic writes a file through write, into a temporary file in
// the same directory renamed over path once complete, so that a failure
// leaves no partial file behind (and an older file as it was).
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("cannot write %s: %v", path, pe.Err)
		}
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// HTMLExtensions are the extensions of the file an HTML report is
// written to.
var HTMLExtensions = []string{".html", ".htm"}

// CheckHTMLFile checks path, the file an HTML report is to be written
// to, before any replay: named, with one of HTMLExtensions.
func CheckHTMLFile(path string) error {
	if path == "" {
		return &OutputError{"report needs -o FILE.html"}
	}
	if ext := strings.ToLower(filepath.Ext(path)); !slices.Contains(HTMLExtensions, ext) {
		return &OutputError{fmt.Sprintf("-o %s: unsupported extension %q (valid: %s)", path, filepath.Ext(path), strings.Join(HTMLExtensions, ", "))}
	}
	return nil
}
