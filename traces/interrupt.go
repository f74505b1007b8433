package traces

import (
	"context"
	"io"
	"os"
)

// interruptible returns r, or, when r is a file that a read may block on
// for ever (a pipe, a FIFO, a terminal: anything but a regular file), a
// reader of it whose reads return ctx's error once ctx is done, blocked or
// not.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || ctx.Done() == nil {
		return r
	}
	if fi, err := f.Stat(); err != nil || fi.Mode().IsRegular() {
		return r
	}
	return &ctxReader{ctx: ctx, r: r, buf: make([]byte, 64<<10), want: make(chan struct{}, 1), got: make(chan readResult, 1)}
}

// ctxReader reads r in a goroutine of its own, a buffer at a time, so
// that a Read can return when the context is done though the read it
// waits for is blocked. Such a read may go on blocking: its goroutine
// then lives as long as the process, which, interrupted, is about to end.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte // the goroutine's, while a read is pending
	data    []byte // read and not yet returned
	err     error  // the read's error, returned after data
	want    chan struct{}
	got     chan readResult
	pending bool
	started bool
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(c.data) == 0 && c.err == nil {
		if !c.started {
			c.started = true
			go c.loop()
		}
		if !c.pending {
			c.pending = true
			c.want <- struct{}{}
		}
		select {
		case res := <-c.got:
			c.pending = false
			c.data, c.err = c.buf[:res.n], res.err
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		}
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	if len(c.data) == 0 && c.err != nil {
		return n, c.err
	}
	return n, nil
}

// loop reads into buf whenever asked, until the context is done.
func (c *ctxReader) loop() {
	for {
		select {
		case <-c.want:
			n, err := c.r.Read(c.buf)
			c.got <- readResult{n, err}
		case <-c.ctx.Done():
			return
		}
	}
}

// openFile opens path for reading. Opening a FIFO waits for a writer:
// that wait ends with ctx's error once ctx is done.
func openFile(ctx context.Context, path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 || ctx.Done() == nil {
		return os.Open(path)
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.Open(path)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
