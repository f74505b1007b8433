package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/report"
	"github.com/ratesim/ratesim/sim"
)

var plotStateLong = helpText("plot-state")

// plotStateOptions are the options of "ratesim plot state".
type plotStateOptions struct {
	plotReplayOptions
	User string
}

func newPlotStateCmd() *cobra.Command {
	o := &plotStateOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "state --user U [flags] TRACE -o FILE",
		Short:   "One key's state over time, a panel per limiter",
		Long:    plotStateLong + policyHelp,
		Example: "  ratesim plot state --user u1 traces/examples/boundary.csv -o boundary.svg\n  ratesim plot state --user u1 --algos all --term traces/examples/boundary.csv",
	}, &o.trace, &o.policy, nil, func(c *cobra.Command, s streams) error {
		if o.User == "" {
			return usageErrorf("plot state needs --user, the key to draw")
		}
		return o.draw(c, s, func(rp *replay) (*report.Figure, error) {
			return stateFigure(rp, o.User, s)
		})
	})
	fs := c.Flags()
	fs.StringVar(&o.User, "user", "", "the key whose state to draw (its user, or with --key the composite key)")
	addPlotReplayFlags(fs, &o.plotReplayOptions)
	_ = c.RegisterFlagCompletionFunc("user", completeUsers)
	registerPlotCompletions(c, "svg", "png", "pdf")
	return c
}

// keyStates replays the requests of users through rp's limiters, the
// other users' passed over, and returns what a state figure is drawn
// from, and the report of that replay.
func keyStates(rp *replay, users []string, s streams) (*report.States, *sim.Report, error) {
	if len(rp.keys) > 0 {
		return nil, nil, usageErrorf("plot state draws a user's state: it does not take --key")
	}
	if why := report.Undrawable(rp.spec.Lanes); why != "" {
		return nil, nil, usageErrorf("%s", why)
	}
	st, err := report.NewStates(rp.spec.Lanes, users)
	if err != nil {
		return nil, nil, err
	}
	cfg := rp.config(false, false)
	st.Configure(&cfg)
	rep, err := rp.runFrom(st.Filter(rp.trace), cfg, s, st.Emit)
	if err != nil {
		return nil, nil, err
	}
	return st, rep, nil
}

// stateFigure replays user's requests and draws their state.
func stateFigure(rp *replay, user string, s streams) (*report.Figure, error) {
	st, rep, err := keyStates(rp, []string{user}, s)
	if err != nil {
		return nil, err
	}
	if !st.Has(user) {
		msg := fmt.Sprintf("no request of user %q in %s", user, rp.trace.name)
		if other := st.Others(); len(other) > 0 {
			msg += fmt.Sprintf(" (users seen include %s)", strings.Join(other, ", "))
		}
		return nil, usageErrorf("%s", msg)
	}
	bursts := make([]sim.Interval, len(rep.Algos))
	for l, a := range rep.Algos {
		bursts[l] = a.Burst
	}
	return st.Figure(rp.frame(), user, bursts), nil
}
