package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
)

// algoInfo describes one algorithm for "ratesim algos".
type algoInfo struct {
	how, params, state, bursts, choose string
}

var algoInfos = map[limiters.Algorithm]algoInfo{
	limiters.FixedWindow: {
		how: "Cuts time into aligned windows of --window ([0,10), [10,20), ...) and counts the cost each key spent in the current one. " +
			"A request passes while the count stays within --limit; the count starts over when the next window begins.",
		params: "--limit, --window",
		state:  "constant: the window start and a count",
		bursts: "Up to twice the limit across a window edge: a full window's worth just before the edge and another just after it " +
			"(6 requests in [7, 12] under 3 per 10).",
		choose: "A plain quota per calendar interval, where the smallest state matters more than rolling accuracy and an occasional double burst is harmless.",
	},
	limiters.SlidingLog: {
		how: "Keeps the time of every allowed request. A request passes if the cost allowed in the closed interval [now - window, now] " +
			"leaves room for it; entries older than that are dropped as time moves on.",
		params: "--limit, --window",
		state:  "grows with the limit: one timestamp per allowed request in the last window",
		bursts: "Never more than the limit in any closed interval of the window's length. This is the exact rolling policy, " +
			"the oracle ratesim measures the other algorithms against.",
		choose: "An exact rolling maximum, when the limit is small enough to store a timestamp per allowed request.",
	},
	limiters.SlidingCounter: {
		how: "Keeps the counts of the current and the previous fixed window and estimates the rolling count as " +
			"previous x (share of the previous window still inside the rolling interval) + current. " +
			"A request passes while the estimate leaves room for it; ratesim computes the estimate exactly, in integers.",
		params: "--limit, --window",
		state:  "constant: a window start and two counts",
		bursts: "Far smaller than a fixed window's, but not zero: the estimate assumes the previous window's requests were spread evenly, " +
			"so it lets a few too many through when they came late and rejects early when they came early.",
		choose: "A rolling limit in constant memory, when an estimate is good enough.",
	},
	limiters.TokenBucket: {
		how: "Each key has a bucket of up to --capacity tokens, full at first, refilled at --rate tokens per unit of time. " +
			"A request takes its cost in tokens if enough are there and is rejected otherwise. The refill is computed from the elapsed time when a request arrives, exactly.",
		params: "--capacity, --rate",
		state:  "constant: the tokens and the time they were counted",
		bursts: "The capacity at once after a quiet spell, then the rate: never more than capacity + rate x elapsed in any interval.",
		choose: "API traffic: a long-term rate with an explicit, bounded burst. A sound default.",
	},
	limiters.LeakyBucket: {
		how: "The meter form of the leaky bucket: each key's bucket starts empty and drains at --rate units per unit of time. " +
			"A request pours in its cost and is rejected if that would overflow --capacity.",
		params: "--capacity, --rate",
		state:  "constant: the level and the time it was measured",
		bursts: "As the token bucket: the capacity at once, then the rate. It counts the capacity used where the token bucket counts the capacity left.",
		choose: "Rejecting overflow in front of a backend that needs a steady rate; leaky-queue delays instead of rejecting.",
	},
	limiters.GCRA: {
		how: "The generic cell rate algorithm: one theoretical arrival time per key, pushed forward by cost / rate for every allowed request. " +
			"A request passes if that time is no more than capacity / rate ahead of now. It decides exactly as token-bucket with the same capacity and rate.",
		params: "--capacity, --rate",
		state:  "constant: one timestamp",
		bursts: "As the token bucket: the capacity at once, then the rate.",
		choose: "A token bucket in a single number per key, cheap to update atomically in a shared store (as redis_rate and throttled do).",
	},
	limiters.LeakyQueue: {
		how: "The queue form of the leaky bucket: admitted requests wait in a per-key queue of --capacity and leave at --rate. " +
			"An admitted request gets a delay, its release time; only a full queue rejects. " +
			"C requests at once get delays 0, 1/rate, ..., (C-1)/rate (nginx limit_req with burst=C-1).",
		params: "--capacity, --rate",
		state:  "constant: the time the queue empties",
		bursts: "None downstream: work leaves at the rate; a burst turns into delay, up to (capacity-1) / rate. " +
			"Its max_in_interval is measured when requests leave the queue (timestamp + delay), not when they arrive.",
		choose: "Smoothing traffic into a downstream that needs a steady pace, when callers can wait.",
	},
}

const algosGuide = `Which one?
  a simple quota per interval            fixed-window
  an exact rolling maximum               sliding-log
  a cheap rolling approximation          sliding-counter
  an average rate with bounded bursts    token-bucket (or gcra)
  rejecting overflow at a steady rate    leaky-bucket
  smoothing work for a downstream        leaky-queue`

type algosOptions struct {
	Output string
	// Names are the algorithms to describe; none means all of them.
	Names []string
}

func newAlgosCmd() *cobra.Command {
	o := &algosOptions{}
	c := &cobra.Command{
		Use:   "algos [NAME...]",
		Short: "Describe the algorithms and when to choose each",
		Long: `Describe each algorithm, or those named: how it works, its parameters, its
state per key, how it lets bursts through and when to choose it.`,
		Example:     "  ratesim algos\n  ratesim algos token-bucket\n  ratesim algos -o json gcra leaky-queue",
		Annotations: exitStatus("a bad flag, an unknown algorithm name"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, a := range limiters.AllAlgorithms() {
				if !slices.Contains(args, a.String()) {
					out = append(out, cobra.CompletionWithDesc(a.String(), a.Summary()))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Names = args
			return runAlgos(o, streamsOf(c))
		},
	}
	addOutputFlag(c.Flags(), &o.Output)
	registerCompletions(c)
	return c
}

var algosColumns = []column{
	{name: "name"},
	{name: "summary", machineOnly: true},
	{name: "parameters"},
	{name: "how"},
	{name: "state"},
	{name: "bursts"},
	{name: "choose"},
}

func runAlgos(o *algosOptions, s streams) error {
	algos := limiters.AllAlgorithms()
	if len(o.Names) > 0 {
		algos = nil
		for _, name := range o.Names {
			a, err := limiters.ParseAlgorithm(name)
			if err != nil {
				return usageErrorf("unknown algorithm %q (valid: %s)", name, algorithmNames())
			}
			if !slices.Contains(algos, a) {
				algos = append(algos, a)
			}
		}
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if format != outTable {
		var rows [][]cell
		for _, a := range algos {
			in := algoInfos[a]
			rows = append(rows, []cell{strCell(a.String()), strCell(a.Summary()), strCell(in.params),
				strCell(in.how), strCell(in.state), strCell(in.bursts), strCell(in.choose)})
		}
		t, err := writeRecords(s.out, format, algosColumns, rows)
		if err != nil || t == nil {
			return err
		}
		return t.render(s.out, format)
	}
	var b strings.Builder
	for i, a := range algos {
		in := algoInfos[a]
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %s\n", a, a.Summary())
		for _, l := range []struct{ label, text string }{
			{"how", in.how}, {"parameters", in.params}, {"state", in.state}, {"bursts", in.bursts}, {"choose", in.choose},
		} {
			writeWrapped(&b, "  "+l.label+":", l.text, 14, 78)
		}
	}
	if len(o.Names) == 0 {
		b.WriteString("\n" + algosGuide + "\n")
	}
	_, err = fmt.Fprint(s.out, b.String())
	return err
}

// writeWrapped writes label then text, wrapped at width with continuation
// lines indented to indent columns.
func writeWrapped(b *strings.Builder, label, text string, indent, width int) {
	line := label + strings.Repeat(" ", max(1, indent-len(label)))
	col := len(line)
	b.WriteString(line)
	first := true
	for _, w := range strings.Fields(text) {
		if !first && col+1+len(w) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
			first = true
		}
		if !first {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
		first = false
	}
	b.WriteByte('\n')
}
