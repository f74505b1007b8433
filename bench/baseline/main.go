// Command baseline is the yardstick of ratesim's performance targets: the
// tightest plain loop that reads a user,timestamp CSV trace with bufio.Reader.ReadSlice,
// parses both fields by hand and updates one map entry per row. ratesim's
// engine, doing far more per row, is measured as a ratio of its time.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline TRACE.csv")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	last := make(map[string]int64)
	rows := 0
	header := true
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if header {
				header = false
			} else {
				// No trimming of the line end: the number loop stops at
				// the first byte that is not a digit.
				comma := bytes.IndexByte(line, ',')
				if comma < 0 {
					fmt.Fprintln(os.Stderr, "baseline: bad row", rows+2)
					os.Exit(1)
				}
				var ts int64
				for _, c := range line[comma+1:] {
					if c < '0' || c > '9' {
						break
					}
					ts = ts*10 + int64(c-'0')
				}
				last[string(line[:comma])] = ts
				rows++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(1)
		}
	}
	fmt.Println(rows, "rows,", len(last), "keys")
}
