package traces

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
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
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Fatalf("%d entries in the temporary directory during the merge, want the runs' one", len(left))
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
