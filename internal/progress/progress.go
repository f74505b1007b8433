// Package progress shows, on a terminal, how far a long command has got:
// the bytes of its input read of their total (a percentage, the rate and
// the time left), the requests read, counts of its own (attempts), and the
// stage it is in. Nothing is shown for the first second of a command, and
// nothing at all when its diagnostics do not go to a terminal: the caller
// starts a Meter only then. time.Now is used here, for the display, and
// nowhere in the engine.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratesim/ratesim/traces"
)

// Delay is how long a command runs before its progress is shown.
const Delay = time.Second

// tick is how often the display is redrawn.
const tick = 200 * time.Millisecond

// A Counter is a count a command keeps as it goes, shown beside the
// requests: "1200 attempts".
type Counter struct {
	Noun string // plural: "attempts"
	N    *atomic.Int64
}

// Options say what a Meter shows.
type Options struct {
	// Name is what is being read: the trace's name.
	Name string
	// Bytes, when not nil, returns the bytes read so far and their total
	// (-1 when not known), as traces.Set.Progress does.
	Bytes func() (read, total int64)
	// Counts are shown after the requests.
	Counts []Counter
}

// A Meter draws a command's progress on one line of a terminal until it
// is stopped. Its methods are safe for concurrent use.
type Meter struct {
	w      io.Writer
	opts   Options
	events atomic.Int64
	stage  atomic.Pointer[string]
	start  time.Time
	quit   chan struct{}
	wg     sync.WaitGroup
	shown  bool // written by the drawing goroutine only
}

// Start starts drawing progress on w, a terminal.
func Start(w io.Writer, opts Options) *Meter {
	m := &Meter{w: w, opts: opts, start: time.Now(), quit: make(chan struct{})}
	m.wg.Add(1)
	go m.run()
	return m
}

func (m *Meter) run() {
	defer m.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			if m.shown {
				// The line it ends on has the true counts.
				fmt.Fprintf(m.w, "\r%s\033[K\n", m.line(time.Since(m.start), true))
			}
			return
		case <-t.C:
			el := time.Since(m.start)
			if el < Delay {
				continue
			}
			m.shown = true
			fmt.Fprintf(m.w, "\r%s\033[K", m.line(el, false))
		}
	}
}

// line is the progress line after el: "ratesim: trace.csv: 42% of 615 MB
// at 120 MB/s, 3s left; 2100000 requests, 12 attempts (5s)".
func (m *Meter) line(el time.Duration, done bool) string {
	var b strings.Builder
	b.WriteString("ratesim: ")
	b.WriteString(m.opts.Name)
	if s := m.stage.Load(); s != nil && !done {
		b.WriteString(" (" + *s + ")")
	}
	b.WriteString(": ")
	if m.opts.Bytes != nil && !done {
		read, total := m.opts.Bytes()
		rate := float64(read) / el.Seconds()
		switch {
		case total > 0 && read <= total:
			fmt.Fprintf(&b, "%d%% of %s", read*100/total, size(total))
			if rate > 0 {
				fmt.Fprintf(&b, " at %s/s, %.0fs left", size(int64(rate)), float64(total-read)/rate)
			}
			b.WriteString("; ")
		case read > 0:
			fmt.Fprintf(&b, "%s at %s/s; ", size(read), size(int64(rate)))
		}
	}
	fmt.Fprintf(&b, "%d requests", m.events.Load())
	for _, c := range m.opts.Counts {
		fmt.Fprintf(&b, ", %d %s", c.N.Load(), c.Noun)
	}
	fmt.Fprintf(&b, " (%.0fs)", el.Seconds())
	return b.String()
}

// size writes a byte count for people: "615 MB".
func size(n int64) string {
	const k = 1000
	switch {
	case n >= k*k*k:
		return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
	case n >= k*k:
		return fmt.Sprintf("%.0f MB", float64(n)/(k*k))
	case n >= k:
		return fmt.Sprintf("%.0f kB", float64(n)/k)
	}
	return fmt.Sprintf("%d B", n)
}

// Stage names the stage the command is in: "second read: the worst
// keys' states", "drawing"; "" for none.
func (m *Meter) Stage(s string) {
	if s == "" {
		m.stage.Store(nil)
		return
	}
	m.stage.Store(&s)
}

// A Source yields trace events, as sim.Source does.
type Source interface {
	Next() (*traces.Event, error)
}

// Count returns src counting the events it yields into m. The returned
// source has the Name method sim names its errors' source by.
func (m *Meter) Count(src Source) Source { return &counting{src: src, m: m} }

type counting struct {
	src Source
	m   *Meter
}

func (c *counting) Next() (*traces.Event, error) {
	ev, err := c.src.Next()
	if err == nil {
		c.m.events.Add(1)
	}
	return ev, err
}

// Name is the source's name, which sim puts in its errors.
func (c *counting) Name() string {
	if n, ok := c.src.(interface{ Name() string }); ok {
		return n.Name()
	}
	return c.m.opts.Name
}

// Stop stops drawing; a line shown is left with the final counts.
func (m *Meter) Stop() {
	close(m.quit)
	m.wg.Wait()
}
