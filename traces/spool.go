package traces

import (
	"context"
	"fmt"
	"io"
	"os"
)

// DefaultSpoolBytes is the most a Spool made with max 0 holds.
const DefaultSpoolBytes = 4 << 30

// A Spool keeps copies of the traces of a set that can be read only once
// (standard input, a pipe, a process substitution, a FIFO) for a caller
// that reads them more than once (SetOptions.Spool): each is copied whole
// into a temporary file the first time it is opened, as it comes
// (compressed if it is), and read from there every time. The copies hold
// at most the Spool's maximum in all: a larger input is refused with an
// error that says so, before a first event is read. Where the system
// allows (Unix) the files have no name from the moment they are made, so
// that nothing of them is left however the process ends; Close removes
// them, and must be called once the sets that read them are closed. A
// Spool is not safe for concurrent use.
type Spool struct {
	dir    string
	max    int64
	used   int64
	copies map[string]*spooled
}

// spooled is the copy of one trace.
type spooled struct {
	f    *os.File
	name string // the file's name until removed, "" after
	size int64
}

// NewSpool returns a Spool that makes its files in dir (os.TempDir() when
// "") and holds at most max bytes (DefaultSpoolBytes when 0).
func NewSpool(dir string, max int64) *Spool {
	if max <= 0 {
		max = DefaultSpoolBytes
	}
	return &Spool{dir: dir, max: max, copies: map[string]*spooled{}}
}

// readOnce reports whether the trace at path can be read only once:
// standard input, or anything that is not a regular file (a pipe, a FIFO,
// a terminal, a character device).
func readOnce(path string) bool {
	if path == "-" {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// copyOf returns a reader of the copy of the trace at path, named name,
// making it first if there is none yet; "-" copies stdin.
func (sp *Spool) copyOf(ctx context.Context, path, name string, stdin io.Reader) (io.Reader, error) {
	if c, ok := sp.copies[path]; ok {
		return io.NewSectionReader(c.f, 0, c.size), nil
	}
	var src io.Reader
	if path == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("traces: no standard input to read")
		}
		src = stdin
	} else {
		f, err := openFile(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("traces: %w", err)
		}
		defer f.Close()
		src = f
	}
	f, err := os.CreateTemp(sp.dir, "ratesim-spool-")
	if err != nil {
		return nil, fmt.Errorf("traces: %s is read more than once, so it is copied to a temporary file first: %w", name, err)
	}
	c := &spooled{f: f, name: f.Name()}
	if os.Remove(c.name) == nil {
		c.name = ""
	}
	room := sp.max - sp.used
	n, err := io.Copy(f, io.LimitReader(interruptible(ctx, src), room+1))
	if err == nil && n > room {
		err = fmt.Errorf("%s is read more than once, so it is copied to a temporary file first, and it is larger than the %s allowed: save it to a file and name the file instead", name, byteSize(sp.max))
	} else if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		c.close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("traces: %w", err)
	}
	c.size = n
	sp.used += n
	sp.copies[path] = c
	return io.NewSectionReader(c.f, 0, c.size), nil
}

// Close removes the copies.
func (sp *Spool) Close() error {
	for path, c := range sp.copies {
		c.close()
		delete(sp.copies, path)
	}
	return nil
}

func (c *spooled) close() {
	c.f.Close()
	if c.name != "" {
		os.Remove(c.name)
		c.name = ""
	}
}
