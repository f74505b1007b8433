package traces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// collect reads every event of src as a line of all its fields.
func collect(t *testing.T, src Source) ([]string, error) {
	t.Helper()
	var out []string
	for {
		ev, err := src.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		line := fmt.Sprintf("%s|%s|%d|%d|%d|%s", ev.User, ev.TimeText, ev.Time, ev.Cost, ev.Line, ev.File)
		if c, ok := ev.Attr("cost"); ok {
			line += "|cost=" + string(c)
		}
		for i := range ev.NumAttrs() {
			k, v := ev.AttrAt(i)
			line += "|" + k + "=" + string(v)
		}
		out = append(out, line)
	}
}

// csvTrace returns a CSV trace of the given rows (user, time, cost,
// endpoint) and the rows as a Reader would give them.
func csvTrace(rows [][4]string) string {
	var b strings.Builder
	b.WriteString("user,timestamp,cost,endpoint\n")
	for _, r := range rows {
		b.WriteString(strings.Join(r[:], ",") + "\n")
	}
	return b.String()
}

func reader(t *testing.T, name, text string) *Reader {
	t.Helper()
	r, err := NewReader(strings.NewReader(text), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSortEqualsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rows [][4]string
	for i := range 3000 {
		cost := ""
		if i%3 == 0 {
			cost = fmt.Sprint(1 + i%4)
		}
		rows = append(rows, [4]string{fmt.Sprintf("u%d", rng.IntN(50)), fmt.Sprint(rng.IntN(500)), cost, fmt.Sprintf("/e%d", i%7)})
	}
	text := csvTrace(rows)
	// The reference: a stable sort of the reader's own events.
	want, err := collect(t, reader(t, "t.csv", text))
	if err != nil {
		t.Fatal(err)
	}
	times := make([]int, len(rows))
	for i, r := range rows {
		fmt.Sscan(r[1], &times[i])
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sortStable(idx, func(a, b int) bool { return times[a] < times[b] })
	var sorted []string
	for _, i := range idx {
		sorted = append(sorted, want[i])
	}
	for _, mem := range []int64{0, 4 << 10, 300} {
		dir := t.TempDir()
		s := Sort(reader(t, "t.csv", text), SortOptions{MaxMemory: mem, TempDir: dir})
		got, err := collect(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") != strings.Join(sorted, "\n") {
			t.Errorf("MaxMemory %d: sorted events differ", mem)
		}
		if mem != 0 && s.Runs() < 3 {
			t.Errorf("MaxMemory %d: %d runs, want several", mem, s.Runs())
		}
		if mem == 0 && s.Runs() != 0 {
			t.Errorf("in memory: %d runs", s.Runs())
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("MaxMemory %d: %d files left in the temporary directory", mem, len(left))
		}
	}
}

// TestSortCascade: runs merge a few at a time, as a counter carries, and
// the result is the stable sort whatever the fan-in, the memory, and the
// events larger than the whole buffer; the runs waiting stay few.
func TestSortCascade(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var rows [][4]string
	for i := range 2000 {
		endpoint := fmt.Sprintf("/e%d", i%5)
		if i%97 == 0 {
			endpoint = strings.Repeat("x", 700) // larger than a 300-byte buffer
		}
		rows = append(rows, [4]string{fmt.Sprintf("u%d", rng.IntN(20)), fmt.Sprint(rng.IntN(300)), "", endpoint})
	}
	text := csvTrace(rows)
	want, err := collect(t, Sort(reader(t, "t.csv", text), SortOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mem   int64
		fanIn int
	}{{300, 2}, {300, 3}, {1000, 4}, {4 << 10, 32}, {64 << 10, 2}} {
		dir := t.TempDir()
		s := Sort(reader(t, "t.csv", text), SortOptions{MaxMemory: c.mem, TempDir: dir, fanIn: c.fanIn})
		var got []string
		most := 0
		for {
			ev, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				most = s.mostRuns
			}
			got = append(got, fmt.Sprintf("%s|%s|%d|%d|%d|%s", ev.User, ev.TimeText, ev.Time, ev.Cost, ev.Line, ev.File)+attrs(ev))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("MaxMemory %d, fan-in %d: sorted events differ", c.mem, c.fanIn)
		}
		// At most fanIn-1 runs wait per level, one more arrives: with
		// levels of log(runs)/log(fanIn), a handful of files.
		levels := 1
		for n := 1; n < s.Runs(); n *= c.fanIn {
			levels++
		}
		if bound := levels*(c.fanIn-1) + 1; most > bound {
			t.Errorf("MaxMemory %d, fan-in %d: %d runs waiting at once of %d written, want at most %d", c.mem, c.fanIn, most, s.Runs(), bound)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("MaxMemory %d, fan-in %d: %d files left", c.mem, c.fanIn, len(left))
		}
	}
}

// attrs renders ev's attributes as collect does.
func attrs(ev *Event) string {
	var b strings.Builder
	if c, ok := ev.Attr("cost"); ok {
		b.WriteString("|cost=" + string(c))
	}
	for i := range ev.NumAttrs() {
		k, v := ev.AttrAt(i)
		b.WriteString("|" + k + "=" + string(v))
	}
	return b.String()
}

// TestEncodedSize: the size the sort reserves for an event is the size of
// its encoding.
func TestEncodedSize(t *testing.T) {
	var enc eventEncoder
	ev := &Event{User: []byte("u1"), TimeText: []byte("7"), Time: 7e9, Cost: 1, Line: 2}
	for i := range 300 {
		ev.Line, ev.Cost, ev.File = i*i*i, int64(i*1000), strings.Repeat("f", i%3)
		if i%2 == 0 {
			ev.costText = []byte(strconv.Itoa(i))
		} else {
			ev.costText = nil
		}
		ev.attrs = append(ev.attrs, attr{name: strings.Repeat("n", i), value: []byte(strings.Repeat("v", i*3))})
		if got, want := encodedSize(ev), len(enc.encode(nil, ev)); got != want {
			t.Fatalf("event %d: encodedSize %d, encoding %d", i, got, want)
		}
	}
}

// genSource yields n events of many users in a scrambled order of time,
// allocating nothing per event.
type genSource struct {
	n, i int
	ev   Event
	user []byte
	text []byte
}

func (g *genSource) Next() (*Event, error) {
	if g.i == g.n {
		return nil, io.EOF
	}
	g.i++
	t := int64(uint64(g.i)*0x9e3779b97f4a7c15>>40) % 1_000_000
	g.user = strconv.AppendInt(append(g.user[:0], "user-"...), int64(g.i%50000), 10)
	g.text = strconv.AppendInt(g.text[:0], t, 10)
	g.ev = Event{User: g.user, TimeText: g.text, Time: t * 1e9, Cost: 1, Line: g.i + 1, File: "gen.csv"}
	return &g.ev, nil
}

func (g *genSource) Name() string { return "gen.csv" }

// TestSortMemoryBound: a sort takes its buffer once and a fixed amount
// for merging, whatever the trace's length: what it allocates in all,
// spilling or not, is MaxMemory and a few MiB, never the doubling of a
// growing buffer.
func TestSortMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 600,000 events")
	}
	const mem = 8 << 20
	for _, n := range []int{100_000, 600_000} { // in memory; spilling
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := Sort(&genSource{n: n}, SortOptions{MaxMemory: mem, TempDir: t.TempDir()})
		got, lastTime, lastLine := 0, int64(-1), 0
		for {
			ev, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Time < lastTime || ev.Time == lastTime && ev.Line <= lastLine {
				t.Fatalf("%d events: line %d at %d after line %d at %d", n, ev.Line, ev.Time, lastLine, lastTime)
			}
			lastTime, lastLine = ev.Time, ev.Line
			got++
		}
		runtime.ReadMemStats(&after)
		if got != n {
			t.Fatalf("%d events of %d", got, n)
		}
		if n == 600_000 && s.Runs() == 0 || n == 100_000 && s.Runs() != 0 {
			t.Fatalf("%d events: %d runs", n, s.Runs())
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > mem+4<<20 {
			t.Errorf("%d events (%d runs) through %d MiB: %d bytes allocated", n, s.Runs(), mem>>20, alloc)
		}
	}
}

// TestSortCanceled: a done context stops the sort while it reads and
// while it merges, with the context's error, and leaves no file.
func TestSortCanceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	src := &cancelAt{Source: &genSource{n: 200_000}, at: 50_000, cancel: cancel}
	s := SortContext(ctx, src, SortOptions{MaxMemory: 64 << 10, TempDir: dir})
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled while reading: %v", err)
	}
	if src.read > 50_000+1024 {
		t.Errorf("%d events read after the cancel", src.read-50_000)
	}
	// While merging: cancel once the first event is out.
	ctx, cancel = context.WithCancel(context.Background())
	s = SortContext(ctx, &genSource{n: 100_000}, SortOptions{MaxMemory: 64 << 10, TempDir: dir})
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	n := 0
	var err error
	for err == nil {
		_, err = s.Next()
		n++
	}
	if !errors.Is(err, context.Canceled) || n > 4096 {
		t.Errorf("canceled while merging: %v after %d events", err, n)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left", len(left))
	}
}

// cancelAt is a Source that cancels a context after at events.
type cancelAt struct {
	Source
	at, read int
	cancel   func()
}

func (c *cancelAt) Next() (*Event, error) {
	c.read++
	if c.read == c.at {
		c.cancel()
	}
	return c.Source.Next()
}

func sortStable(idx []int, less func(a, b int) bool) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

func TestSortErrorsAndClose(t *testing.T) {
	// An error of the source comes through unchanged, and the runs go.
	dir := t.TempDir()
	bad := "user,timestamp\n" + strings.Repeat("u,5\nu,1\n", 200) + "u,x\n"
	s := Sort(reader(t, "bad.csv", bad), SortOptions{MaxMemory: 200, TempDir: dir})
	_, err := s.Next()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 402 {
		t.Fatalf("error %v, want the reader's at line 402", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left after an error", len(left))
	}
	// Close in the middle removes the runs; Next then fails.
	dir = t.TempDir()
	s = Sort(reader(t, "t.csv", "user,timestamp\n"+strings.Repeat("u,5\nu,1\n", 200)), SortOptions{MaxMemory: 200, TempDir: dir})
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if s.Runs() < 2 {
		t.Fatalf("%d runs", s.Runs())
	}
	// On Unix the runs' files have no names: nothing to see, and nothing
	// that a killed process could leave.
	if left, _ := os.ReadDir(dir); runtime.GOOS != "windows" && len(left) != 0 {
		t.Fatalf("%d entries in the temporary directory during the merge, want none", len(left))
	}
	s.Close()
	s.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left after Close", len(left))
	}
	if _, err := s.Next(); err == nil {
		t.Error("Next after Close: no error")
	}
}

func TestMerge(t *testing.T) {
	a := "user,timestamp,endpoint\nu1,1,/a\nu2,3,/b\nu1,3,/c\nu1,9,/d\n"
	b := "user,timestamp,endpoint\nu3,0,/x\nu1,3,/y\nu4,10,/z\n"
	got, err := collect(t, Merge(reader(t, "a.csv", a), reader(t, "b.csv", b)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"u3|0|0|1|2|b.csv|endpoint=/x",
		"u1|1|1000000000|1|2|a.csv|endpoint=/a",
		"u2|3|3000000000|1|3|a.csv|endpoint=/b", // ties: the earlier source first,
		"u1|3|3000000000|1|4|a.csv|endpoint=/c", // in its own order
		"u1|3|3000000000|1|3|b.csv|endpoint=/y",
		"u1|9|9000000000|1|5|a.csv|endpoint=/d",
		"u4|10|10000000000|1|4|b.csv|endpoint=/z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("merged:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if name := Merge(reader(t, "a.csv", a), reader(t, "b.csv", b)).Name(); name != "a.csv, b.csv" {
		t.Errorf("Name() = %q", name)
	}
	// A source out of time order is an error naming it and the line.
	_, err = collect(t, Merge(reader(t, "a.csv", a), reader(t, "c.csv", "user,timestamp\nu,5\nu,4\n")))
	if err == nil || err.Error() != "traces: c.csv:3: earlier than the line before it: merged traces must each be in time order (--sort sorts them)" {
		t.Errorf("out of order: %v", err)
	}
}

// BenchmarkSort sorts 5,000,000 events in at most 64 MiB.
func BenchmarkSort(b *testing.B) {
	n := 5_000_000
	if testing.Short() {
		n = 200_000
	}
	var sb strings.Builder
	sb.WriteString("user,timestamp\n")
	rng := rand.New(rand.NewPCG(3, 4))
	for range n {
		fmt.Fprintf(&sb, "u%d,%d\n", rng.IntN(100000), rng.IntN(1_000_000_000))
	}
	text := sb.String()
	for b.Loop() {
		r, _ := NewReader(strings.NewReader(text), "t.csv", Options{})
		s := Sort(r, SortOptions{MaxMemory: 64 << 20, TempDir: b.TempDir()})
		rows := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		if rows != n {
			b.Fatalf("%d rows", rows)
		}
		b.ReportMetric(float64(s.Runs()), "runs")
	}
}
