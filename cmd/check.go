package cmd

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/check"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/traces"
)

var checkLong = helpText("check")

const checkExample = `  ratesim check --limiter nginx:rate=10r/s,burst=5,nodelay --format nginx \
      --log-format '$remote_addr [$time_local] "$request" $status $request_time $limit_req_status' access.log
  ratesim check --limiter envoy:requests_per_unit=100,unit=minute --format envoy envoy.log
  ratesim check --limiter redis-rate:rate=10,burst=20 --observed status=429 -o json app.log`

type checkOptions struct {
	trace         traceOptions
	policy        policyOptions
	Algos         []string
	Observed      string
	First         int
	ByKey         int
	Disagreements bool
	Output        string
}

func newCheckCmd() *cobra.Command {
	o := &checkOptions{}
	c := replayCmd(&cobra.Command{
		Use:     "check --limiter ... [--observed FIELD=VALUE,...] [flags] LOG|- [LOG...]",
		Short:   "Compare a model's decisions with what a log says production did",
		Long:    checkLong + policyHelp,
		Example: checkExample,
	}, &o.trace, &o.policy, nil, func(c *cobra.Command, s streams) error {
		return runCheck(o, s)
	})
	fs := c.Flags()
	fs.StringSliceVar(&o.Algos, "algos", nil, "algorithms to check, comma-separated, or all (default: the limiters given)")
	fs.StringVar(&o.Observed, "observed", "", "the field that records what the limiter did, and the values that mean limited: status=429, limit_req_status, response_flags=RL (default: the format's; see ratesim formats)")
	fs.IntVar(&o.First, "first", 10, "how many of the first disagreements to list per limiter")
	fs.IntVar(&o.ByKey, "by-key", 5, "how many keys to list per limiter, those that disagree most")
	fs.BoolVar(&o.Disagreements, "disagreements", false, "list every disagreement (limiter, file, line, user, key, timestamp, allowed, observed) instead of the summary")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

func runCheck(o *checkOptions, s streams) error {
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	switch {
	case o.First < 0:
		return usageErrorf("--first must be 0 or more, got %d", o.First)
	case o.ByKey < 0:
		return usageErrorf("--by-key must be 0 or more, got %d", o.ByKey)
	}
	algos, specs, err := o.policy.Lanes(o.Algos)
	if err != nil {
		return err
	}
	if algos == nil && len(specs) == 0 && !o.policy.hasFile() {
		return usageErrorf("check needs the model to check: --limiter (such as nginx:rate=10r/s,burst=5) or --algos")
	}
	var obs *traces.Observer
	if o.Observed != "" {
		if obs, err = traces.ParseObserved(o.Observed); err != nil {
			return usageErrorf("%s", ErrorText(err))
		}
	}
	if err := checkKeys(o.trace.Key); err != nil {
		return err
	}
	rp, err := prepare(&o.trace, &o.policy, algos, specs, "", s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	if obs == nil {
		if obs, err = traces.ParseObserved(rp.trace.set.DefaultObserved()); err != nil {
			return err
		}
	}
	cfg := rp.config(true, false)
	cfg.DecisionsOnly = true
	opts := check.Options{First: o.First, Keys: o.ByKey}
	var rw *render.RecordWriter
	if o.Disagreements {
		rw = render.NewRecordWriter(s.out, format, tables.DisagreementColumns)
		opts.Each = func(d *check.Disagreement) error {
			b := rw.Begin()
			for i, c := range tables.DisagreementRow(d) {
				if i > 0 {
					b = rw.Enc().Next(b)
				}
				b = rw.Enc().Cell(b, c)
			}
			return rw.End(b)
		}
	}
	chk := check.Observe(&cfg, obs, opts)
	rep, err := rp.run(cfg, s, chk.Emit)
	if err != nil {
		return err
	}
	lanes := chk.Report()
	if rw != nil {
		if err := rw.Close(); err != nil {
			return err
		}
		if rw.Textual() {
			w := render.NewTextWriter(s.out, format)
			w.Rows(rw, nil)
			if w.Err() != nil {
				return w.Err()
			}
		}
		return rp.trace.finish()
	}
	t, err := render.WriteRecords(s.out, format, tables.CheckColumns, tables.CheckRows(lanes, obs.String()))
	if err != nil || t == nil {
		return err
	}
	w := render.NewTextWriter(s.out, format)
	w.Line(fmt.Sprintf("check on %s: %s, %s; observed by %s", rp.trace.name, render.Plural(rep.Requests, "request"), render.Plural(int64(rep.Keys), "key"), obs))
	for _, l := range rp.spec.LaneLines() {
		w.Line(l)
	}
	w.Blank()
	w.Table(t)
	for i := range lanes {
		l := &lanes[i]
		if len(l.First) > 0 {
			t, _ := render.WriteRecords(nil, format, tables.FirstColumns, tables.FirstRows(l))
			w.Blank()
			w.Line(fmt.Sprintf("%s: the first %s of %s:", l.Name, render.Plural(int64(len(l.First)), "disagreement"), strconv.FormatInt(l.Observed()-l.Agree(), 10)))
			w.Blank()
			w.Table(t)
		}
		if len(l.Keys) > 0 {
			t, _ := render.WriteRecords(nil, format, tables.CheckKeyColumns, tables.CheckKeyRows(l))
			w.Blank()
			w.Line(fmt.Sprintf("%s: the keys that disagree most:", l.Name))
			w.Blank()
			w.Table(t)
		}
	}
	if w.Err() != nil {
		return w.Err()
	}
	return rp.trace.finish()
}
