package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"fmt"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
	"github.com/ratesim/ratesim/traces/examples"
)

var demoIntro = helpText("demo")

var demoOutro = helpText("demo-next", "COUNT", countWord(len(limiters.AllAlgorithms())))

// exampleArgs are the arguments of the command that replays a's example
// trace (Doc.Example) with the parameters its walk-through assumes: 3 per
// 10 seconds, or a bucket of 3 that refills at 0.2 per second.
func exampleArgs(a limiters.Algorithm) []string {
	args := []string{"run", "--algo", a.String()}
	if !a.Windowed() {
		args = append(args, "--capacity", "3", "--rate", "0.2")
	}
	return append(args, "--explain", "traces/examples/"+a.Doc().Example)
}

func newDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "A tour: each algorithm on its example, then compare and burst",
		Long: "A newcomer's tour, with no arguments: each of the five classic algorithms on its example trace " +
			"with --explain states, then compare and burst on the boundary-burst example.",
		Annotations: exitStatus("an argument or a bad flag"),
		Args:        noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runDemo(streamsOf(c))
		},
	}
}

// runDemo prints the tour. Its output is the same on every run.
func runDemo(s streams) error {
	s.progress = false
	w := render.NewTextWriter(s.out, render.FormatTable)
	w.Line(demoIntro)
	example := func(name string) traceOptions {
		return traceOptions{ReadFlags: traces.ReadFlags{Unit: "s"}, Path: name, fsys: examples.FS, display: "traces/examples/" + name}
	}
	steps := limiters.ClassicAlgorithms()
	for i, algo := range steps {
		policy := policyOptions{Flags: spec.Flags{Limit: 3, Window: "10", Clock: "reject"}, set: map[string]bool{}}
		if !algo.Windowed() {
			policy.Capacity, policy.Rate = 3, "0.2"
			policy.set["capacity"], policy.set["rate"] = true, true
		}
		w.Blank()
		w.Line(fmt.Sprintf("%d. %s", i+1, algo))
		w.Blank()
		w.Line(render.WrapText(algo.Doc().Walkthrough, "", 78))
		w.Blank()
		w.Line(exampleCommand(algo))
		if w.Err() != nil {
			return w.Err()
		}
		o := &runOptions{trace: example(algo.Doc().Example), policy: policy, Algo: algo.String(), Explain: true, Output: "table"}
		if err := runRun(o, s); err != nil {
			return err
		}
	}

	w.Blank()
	w.Line(fmt.Sprintf("%d. compare: all five on the boundary burst", len(steps)+1))
	w.Blank()
	w.Line(render.WrapText("u1 sends at 7, 8, 9, 10, 11 and 12. The fixed window lets all six through: three before the edge at 10 and three after it. "+
		"The sliding log, the exact rolling limit, stops at three. Here the buckets use the default rate, the limit per window (0.3 per second).", "", 78))
	w.Blank()
	w.Line("$ ratesim compare traces/examples/boundary.csv")
	if w.Err() != nil {
		return w.Err()
	}
	co := &compareOptions{trace: example("boundary.csv"), policy: defaultPolicy(), Output: "table"}
	if err := runCompare(co, s); err != nil {
		return err
	}

	w.Blank()
	w.Line(fmt.Sprintf("%d. burst: the worst 10 seconds each algorithm let through", len(steps)+2))
	w.Blank()
	w.Line("$ ratesim burst traces/examples/boundary.csv")
	if w.Err() != nil {
		return w.Err()
	}
	bo := &burstOptions{trace: example("boundary.csv"), policy: defaultPolicy(), Output: "table"}
	if err := runBurst(bo, s); err != nil {
		return err
	}
	w.Blank()
	w.Line(demoOutro)
	return w.Err()
}

func defaultPolicy() policyOptions {
	return policyOptions{Flags: spec.Flags{Limit: defaultLimit, Window: defaultWindow, Clock: "reject"}, set: map[string]bool{}}
}
