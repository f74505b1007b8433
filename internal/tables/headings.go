package tables

import (
	"fmt"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/sim"
)

// The headings of the reports in a table format: the lines above a
// report's tables, "" for a blank line (render.TextWriter.Lines).

// requestsAndKeys is "4000 requests, 38 keys".
func requestsAndKeys(rep *sim.Report) string {
	return render.Plural(rep.Requests, "request") + ", " + render.Plural(int64(rep.Keys), "key")
}

// CompareHeading are the lines that open compare's reports: the trace
// and its requests and keys, the policy (with the burst interval and the
// oracle when burst is set), the lanes of their own and the requests
// that went back in time.
func CompareHeading(trace string, rep *sim.Report, sp *Policy, burst bool) []string {
	lines := append([]string{"compare on " + trace + ": " + requestsAndKeys(rep), "policy: " + sp.Describe(burst)}, sp.LaneLines()...)
	if line := BackwardsLine(rep); line != "" {
		lines = append(lines, line)
	}
	return lines
}

// SummaryHeading are the lines above compare's summary table: what
// max_in_interval counts, what false allows and rejects are against,
// and the leaky queue's note.
func SummaryHeading(sp *Policy) []string {
	lines := []string{fmt.Sprintf("summary: max_in_interval is the most cost one key got through in any %s;", sp.Duration(sp.Interval)), sp.AgainstLine()}
	if note := QueueNote(sp.Algos()); note != "" {
		lines = append(lines, note)
	}
	return lines
}

// BurstHeading are the lines above burst's table: the trace, the policy
// and lanes, and what the table lists, the top intervals or the worst of
// each algorithm.
func BurstHeading(trace string, rep *sim.Report, sp *Policy, top int) []string {
	lines := []string{"burst on " + trace + ": " + requestsAndKeys(rep)}
	if line := BackwardsLine(rep); line != "" {
		lines = append(lines, line)
	}
	lines = append(lines, "policy: "+sp.Describe(true))
	lines = append(lines, sp.LaneLines()...)
	lines = append(lines, "")
	if top > 0 {
		lines = append(lines, fmt.Sprintf("the %d worst intervals of %s (at most one per algorithm and key)", top, sp.Duration(sp.Interval)))
	} else {
		lines = append(lines, fmt.Sprintf("worst interval of %s per algorithm: the most cost allowed for one key,", sp.Duration(sp.Interval)),
			"from its first to its last allowed request in it")
	}
	if note := QueueNote(sp.Algos()); note != "" {
		lines = append(lines, note)
	}
	return lines
}

// SweepHeading are the lines that open sweep's report: the trace, the
// grid of candidates (and deployed, when not "", the line of the
// deployed config's candidate, the last), the intent and the requests
// that went back in time.
func SweepHeading(trace string, rep *sim.Report, sp *Policy, grid int, describe, deployed string) []string {
	lines := []string{"sweep on " + trace + ": " + requestsAndKeys(rep), fmt.Sprintf("grid: %s: %s", render.Plural(int64(grid), "candidate"), describe)}
	if deployed != "" {
		lines = append(lines, deployed)
	}
	lines = append(lines, fmt.Sprintf("intent: limit %d per %s, clock %s (a sliding log: false allows and rejects are against it; max_in_interval is over %s)",
		sp.Intent.Limit, sp.Duration(sp.Intent.Window), spec.ClockName(sp.Intent.Clock), sp.Duration(sp.Interval)))
	if line := BackwardsLine(rep); line != "" {
		lines = append(lines, line)
	}
	return lines
}

// PickedLine says how many of cands meet cons, above the table of those
// that do.
func PickedLine(picked, cands []*sweep.Candidate, cons sweep.Constraints) string {
	verb := "meet"
	if len(picked) == 1 {
		verb = "meets"
	}
	return fmt.Sprintf("%s of %d %s %s; best first, the best marked *:", render.Plural(int64(len(picked)), "candidate"), len(cands), verb, cons)
}

// DeployedLine says which row of a sweep is the deployed config's, read
// from path: c, the last.
func DeployedLine(c *sweep.Candidate, path string) string {
	at := ""
	if c.Limiter.At != "" {
		at = " (" + string(c.Limiter.At) + ")"
	}
	return fmt.Sprintf("deployed: %s's policy %s%s, replayed beside the grid as its last row", path, c.Limiter.Name, at)
}

// StackHeading are the lines that open a stack's reports: the requests
// and how many every enforcing policy allowed, and the policies.
func StackHeading(trace string, sp *Policy, policies []sim.StackPolicy, rep *sim.StackReport, mode sim.StackMode) []string {
	line := fmt.Sprintf("stack on %s: %s, %d allowed by every enforcing policy (--stack %s)", trace, render.Plural(rep.Requests, "request"), rep.Allowed, StackModeName(mode))
	if rep.Unlimited > 0 {
		line += fmt.Sprintf("; %d under no enforcing policy", rep.Unlimited)
	}
	return append([]string{line}, StackLines(sp, policies)...)
}

// ClientSummaryHeading are the lines above compare --clients' summary:
// the trace, the clients and the policy.
func ClientSummaryHeading(trace string, sp *Policy, c sim.Clients, stats []sim.ClientStats) []string {
	var unique int64
	if len(stats) > 0 {
		unique = stats[0].Unique
	}
	lines := []string{fmt.Sprintf("compare on %s with %s clients: %s", trace, c.Model, render.Plural(unique, "request")), "policy: " + sp.Describe(false)}
	lines = append(lines, sp.LaneLines()...)
	return append(lines, ClientLine(c, sp.Lanes))
}

// ClientRowsHeading are the lines above run --clients' attempts: the
// limiter and its clients, the requests, attempts and what became of
// them.
func ClientRowsHeading(trace string, sp *Policy, lane sim.Lane, c sim.Clients, st sim.ClientStats) []string {
	return []string{
		fmt.Sprintf("%s on %s with %s clients: %s", lane.Name, trace, c.Model, sp.Describe(false)),
		fmt.Sprintf("%s, %s (amplification %s), %d allowed in the end, %d given up", render.Plural(st.Unique, "request"), render.Plural(st.Attempts, "attempt"), render.Ratio(st.Attempts, st.Unique), st.Goodput, st.GaveUp),
		ClientLine(c, []sim.Lane{lane}),
	}
}

// ByKeyHeading is the line above compare --by-key's table of the n keys
// each limiter rejected most, saying what false rejects are against.
func ByKeyHeading(rep *sim.Report, n int, sp *Policy) string {
	if sp.IntentNamed {
		return fmt.Sprintf("%s (false rejects are against the oracle, a sliding log of limit %d per %s)",
			ByKeyTitle(rep, n), sp.Intent.Limit, sp.Duration(sp.Intent.Window))
	}
	return fmt.Sprintf("%s (no intent given: --intent LIMIT/WINDOW counts false rejects)", ByKeyTitle(rep, n))
}
