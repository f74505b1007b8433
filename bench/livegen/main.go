// Command livegen writes a CSV trace in which every key is live at once:
// the yardstick of ratesim's memory per live key.
//
//	livegen -keys N [-seed S] [-span MS] [-gap MS]
//
// Each of the N keys, 36-character UUID-like texts fixed by the seed, sends
// two requests: the first at a time spread evenly over [0, span) (in
// milliseconds), the second gap milliseconds later, keys in the same order
// both times. With the defaults (span 4000, gap 5000) every request falls
// inside one 10 s window, so under --window 10s no key's state is ever
// fresh again before the trace ends, and nothing can be forgotten as
// idle: memory holds every key. The trace is written to stdout, so a
// large one needs no file:
//
//	livegen -keys 10000000 | ratesim compare --summary --unit ms --window 10s -
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
)

func main() {
	keys := flag.Int("keys", 1000000, "number of keys, each live to the end")
	seed := flag.Uint64("seed", 1, "seed of the keys")
	span := flag.Int64("span", 4000, "milliseconds over which the first requests are spread")
	gap := flag.Int64("gap", 5000, "milliseconds between a key's two requests")
	flag.Parse()
	if *keys < 1 || *span < 1 || *gap < 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: livegen [-keys N] [-seed S] [-span MS] [-gap MS] (N, span positive)")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	w.WriteString("user,timestamp\n")
	line := make([]byte, 0, 64)
	for pass := int64(0); pass < 2; pass++ {
		state := *seed
		for i := 0; i < *keys; i++ {
			hi, lo := next(&state), next(&state)
			t := int64(i) * *span / int64(*keys)
			line = appendUUID(line[:0], hi, lo)
			line = append(line, ',')
			line = strconv.AppendInt(line, t+pass**gap, 10)
			line = append(line, '\n')
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "livegen:", err)
		os.Exit(1)
	}
}

// next is splitmix64: distinct outputs for distinct states, so the keys
// of one seed differ (two 64-bit draws a key).
func next(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// appendUUID appends hi and lo as 32 hex digits in the 8-4-4-4-12 form.
func appendUUID(dst []byte, hi, lo uint64) []byte {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i], b[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
	}
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[c>>4], hex[c&15])
	}
	return dst
}
