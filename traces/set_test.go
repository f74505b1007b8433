//go:build unix

package traces

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeTrace writes text to dir/name and returns the path.
func writeTrace(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSetEvents: a set counts the events it yields, so that a command
// can tell an empty trace (nothing, a CSV header alone, an empty YAML
// sequence, /dev/null) from one whose requests were all rejected.
func TestSetEvents(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("user,timestamp\n"))
	zw.Close()
	for _, c := range []struct {
		path string
		want int64
	}{
		{writeTrace(t, dir, "empty.csv", ""), 0},
		{writeTrace(t, dir, "header.csv", "user,timestamp\n"), 0},
		{writeTrace(t, dir, "header-crlf.csv", "user,timestamp\r\n\r\n"), 0},
		{writeTrace(t, dir, "header.csv.gz", z.String()), 0},
		{writeTrace(t, dir, "empty.yaml", "[]\n"), 0},
		{writeTrace(t, dir, "requests.yaml", "requests:\n"), 0},
		{writeTrace(t, dir, "empty.jsonl", "\n\n"), 0},
		{"/dev/null", 0},
		{writeTrace(t, dir, "three.csv", "user,timestamp\nu1,1\nu2,2\n\nu1,3\n"), 3},
	} {
		for _, sort := range []bool{false, true} {
			s, err := OpenSet(context.Background(), []string{c.path}, SetOptions{Sort: sort})
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			for {
				_, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
			}
			if got := s.Events(); got != c.want {
				t.Errorf("%s (sort %v): Events() = %d, want %d", c.path, sort, got, c.want)
			}
			s.Close()
		}
	}
}

// TestSetMergeAndSort: several traces merge by time, or, sorted, are
// read one after the other with no more than one open; traces with
// different kinds of times are refused, naming both.
func TestSetMergeAndSort(t *testing.T) {
	dir := t.TempDir()
	a := writeTrace(t, dir, "a.csv", "user,timestamp\nu1,1\nu1,4\n")
	b := writeTrace(t, dir, "b.csv", "user,timestamp\nu2,2\nu2,3\n")
	c := writeTrace(t, dir, "c.csv", "user,timestamp\nu3,0\n")
	rfc := writeTrace(t, dir, "r.csv", "user,timestamp\nu1,2024-01-01T00:00:00Z\n")
	read := func(paths []string, sort bool) (string, error) {
		s, err := OpenSet(context.Background(), paths, SetOptions{Sort: sort})
		if err != nil {
			return "", err
		}
		defer s.Close()
		var out []string
		for {
			ev, err := s.Next()
			if err == io.EOF {
				return strings.Join(out, " "), nil
			}
			if err != nil {
				return "", err
			}
			out = append(out, fmt.Sprintf("%s@%s", ev.User, ev.TimeText))
		}
	}
	for _, sort := range []bool{false, true} {
		got, err := read([]string{a, b, c}, sort)
		if want := "u3@0 u1@1 u2@2 u2@3 u1@4"; err != nil || got != want {
			t.Errorf("sort %v: %q, %v; want %q", sort, got, err, want)
		}
		_, err = read([]string{a, rfc}, sort)
		var mixed *MixedTimesError
		if !errors.As(err, &mixed) || mixed.First != a || mixed.Other != rfc {
			t.Errorf("sort %v: numbers and RFC 3339: %v", sort, err)
		}
		if _, err := read([]string{a, filepath.Join(dir, "missing.csv")}, sort); err == nil || !strings.Contains(err.Error(), "missing.csv") {
			t.Errorf("sort %v: a missing trace: %v", sort, err)
		}
	}
	// Sorted, a thousand traces are read under a limit of 64 open files.
	var paths []string
	for i := range 1000 {
		paths = append(paths, writeTrace(t, dir, fmt.Sprintf("many-%d.csv", i), fmt.Sprintf("user,timestamp\nu%d,%d\n", i, 1000-i)))
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	got, err := read(paths, true)
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	if err != nil || !strings.HasPrefix(got, "u999@1 u998@2 ") {
		t.Errorf("a thousand traces sorted: %.40q..., %v", got, err)
	}
}

// TestSetCanceled: once its context is done a set stops, with the
// context's error, even while a read of a pipe is blocked, and while its
// sort reads.
func TestSetCanceled(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	fmt.Fprintln(pw, "user,timestamp")
	for i := range 3000 {
		fmt.Fprintf(pw, "u%d,%d\n", i%3, i)
	}
	for _, sort := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			s, err := OpenSet(ctx, []string{"-"}, SetOptions{Stdin: pr, Sort: sort})
			for err == nil {
				_, err = s.Next()
			}
			done <- err
		}()
		time.Sleep(50 * time.Millisecond) // blocked in a read of the pipe by now
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("sort %v: %v, want the context's error", sort, err)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a timing
			t.Fatalf("sort %v: still reading a minute after the cancel", sort)
		}
	}
}

// TestSpool: with a Spool, a trace that can be read only once (standard
// input here, a pipe, a FIFO) is copied once and read again from the
// copy, as often as asked, and the copy is bounded.
func TestSpool(t *testing.T) {
	tmp := t.TempDir()
	text := "user,timestamp\nu1,1\nu2,2\nu1,3\n"
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text))
	zw.Close()
	for _, in := range []string{text, z.String()} {
		sp := NewSpool(tmp, 0)
		stdin := strings.NewReader(in)
		for pass := range 3 {
			s, err := OpenSet(context.Background(), []string{"-"}, SetOptions{Stdin: stdin, Spool: sp})
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(t, s)
			s.Close()
			if err != nil || len(got) != 3 || !strings.HasPrefix(got[0], "u1|1|1000000000|1|2|stdin") {
				t.Errorf("pass %d: %q, %v", pass, got, err)
			}
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%d names in the temporary directory while the copy is in use", len(left))
		}
		sp.Close()
	}
	// Larger than the spool allows: an error naming the trace, before
	// any event.
	sp := NewSpool(tmp, 20)
	_, err := OpenSet(context.Background(), []string{"-"}, SetOptions{Stdin: strings.NewReader(text), Spool: sp})
	if err == nil || !strings.Contains(err.Error(), "stdin is read more than once, so it is copied to a temporary file first, and it is larger than the 20 bytes allowed") {
		t.Errorf("over the bound: %v", err)
	}
	sp.Close()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d files left", len(left))
	}
	// Regular files are read again from themselves: nothing is copied.
	path := writeTrace(t, t.TempDir(), "t.csv", text)
	sp = NewSpool(tmp, 1)
	for range 2 {
		s, err := OpenSet(context.Background(), []string{path}, SetOptions{Spool: sp})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := collect(t, s); err != nil || len(got) != 3 {
			t.Errorf("a regular file: %q, %v", got, err)
		}
		s.Close()
	}
	sp.Close()
}

// TestSpoolFIFO: a FIFO is read once, whole, into the spool; a second set
// reads the copy rather than waiting for a writer that will not come.
func TestSpoolFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString("user,timestamp\nu1,1\nu1,2\n")
		f.Close()
	}()
	sp := NewSpool(t.TempDir(), 0)
	defer sp.Close()
	for pass := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := OpenSet(ctx, []string{fifo}, SetOptions{Spool: sp})
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		got, err := collect(t, s)
		s.Close()
		cancel()
		if err != nil || len(got) != 2 || !strings.Contains(got[1], "|"+fifo) {
			t.Errorf("pass %d: %q, %v", pass, got, err)
		}
	}
	// Without a writer, opening a FIFO waits: until the context is done.
	lonely := filepath.Join(dir, "lonely")
	if err := syscall.Mkfifo(lonely, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := OpenSet(ctx, []string{lonely}, SetOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a FIFO without a writer: %v", err)
	}
}
