//go:build !race

package cmd

// replayScale divides the sizes of the replay tests' traces.
const replayScale = 1
