//go:build race

package cmd

// Under the race detector, which slows every replay down several times,
// the replay tests run shorter traces.
const replayScale = 4
