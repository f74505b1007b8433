package traces

import (
	"io"
	"os"
	"sync/atomic"
)

// countingReader counts the bytes read through it, for a progress display
// that reads the count from another goroutine.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// counted returns in counting into the set's count of bytes read.
func (s *Set) counted(in io.Reader) io.Reader {
	return countingReader{r: in, n: &s.read}
}

// sizes sets the total size of the set's traces, when every one of them
// is a regular file (a compressed trace counts as its compressed bytes).
func (s *Set) sizes() {
	var total int64
	for _, p := range s.paths {
		if p == "-" || s.opts.FS != nil {
			s.total = -1
			return
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			s.total = -1
			return
		}
		total += fi.Size()
	}
	s.total = total
}

// Progress returns how many bytes of the traces have been read so far,
// and their total; total is -1 when it is not known (standard input, a
// pipe). It may be called from another goroutine than the one reading.
func (s *Set) Progress() (read, total int64) { return s.read.Load(), s.total }
