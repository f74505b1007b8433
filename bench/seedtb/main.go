// Command seedtb is the reference for `ratesim run --algo token-bucket -o
// csv`: the token bucket exactly as the seed article writes it (float64
// tokens, a map of per-user state behind one mutex), fed by a plain
// bufio.Scanner and strings.Split reader, printing one bool per request.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

type tokenBucketState struct {
	tokens     float64
	lastRefill int64
}

type tokenBucketLimiter struct {
	mu         sync.Mutex
	capacity   float64
	refillRate float64
	users      map[string]*tokenBucketState
}

func (tb *tokenBucketLimiter) Allow(userID string, timestamp int64) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	state, exists := tb.users[userID]
	if !exists {
		state = &tokenBucketState{tokens: tb.capacity, lastRefill: timestamp}
		tb.users[userID] = state
	}
	if timestamp < state.lastRefill {
		return false
	}
	elapsed := timestamp - state.lastRefill
	state.tokens += float64(elapsed) * tb.refillRate
	if state.tokens > tb.capacity {
		state.tokens = tb.capacity
	}
	state.lastRefill = timestamp
	if state.tokens < 1 {
		return false
	}
	state.tokens--
	return true
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seedtb TRACE.csv")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "seedtb:", err)
		os.Exit(1)
	}
	defer f.Close()
	lim := &tokenBucketLimiter{capacity: 3, refillRate: 0.3, users: make(map[string]*tokenBucketState)}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		ts, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "seedtb:", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, lim.Allow(fields[0], ts))
	}
}
