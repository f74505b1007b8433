// Package sweep is a grid of candidate limiters, every combination of the
// parameter values given, each an algorithm's or a preset's, and the
// scoring of what a replay found of them against an intent: exact
// percentages and ratios for --pick's constraints, the best that meets
// them, the frontier of false allows against false rejects, and, when
// none meets them, the facts that show why.
//
// The replay itself is the engine's (sim.Run with the candidates as
// lanes and the intent's sliding log beside them); this package only
// builds the lanes and reads the report.
package sweep
