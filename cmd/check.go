package cmd

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/internal/check"
	"github.com/ratesim/ratesim/traces"
)

const checkLong = `Replay a log through limiters and compare each decision with what the log
says production did: does the model reproduce the gateway? A request the
model allowed and the log shows limited, or the reverse, is a
disagreement.

--observed names the field that records what the limiter did, and the
values that mean it limited the request: status=429 (the default of most
formats is status=429,503), limit_req_status (nginx's $limit_req_status:
REJECTED and REJECTED_DRY_RUN limited; PASSED, DELAYED and
DELAYED_DRY_RUN passed), response_flags (Envoy's RL flag). A request the
log says nothing of ("-", or no such field) is unobserved: neither
agreement nor disagreement.

Per limiter: the requests observed, how many decisions agree, and the
confusion of allowed and refused against passed and limited; then the
first disagreements with their file and line, and the keys that disagree
most. -o csv, json, jsonl and markdown give the summary; --disagreements
lists every disagreement instead, for joining back to the log.`

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
	c := &cobra.Command{
		Use:               "check --limiter ... [--observed FIELD=VALUE,...] [flags] LOG|- [LOG...]",
		Short:             "Compare a model's decisions with what a log says production did",
		Long:              checkLong + policyHelp,
		Example:           checkExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.policy.markSet(c.Flags())
			return runCheck(o, streamsOf(c))
		},
	}
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

var checkColumns = []column{
	{name: "limiter"},
	{name: "requests", right: true},
	{name: "observed", right: true},
	{name: "agree", right: true},
	{name: "agree_pct", right: true, title: "agree %", suffix: "%"},
	{name: "disagree", right: true},
	{name: "allowed_passed", right: true, title: "allowed & passed"},
	{name: "allowed_limited", right: true, title: "allowed & limited"},
	{name: "refused_passed", right: true, title: "refused & passed"},
	{name: "refused_limited", right: true, title: "refused & limited"},
	{name: "unobserved", right: true, machineOnly: true},
	{name: "observed_by", machineOnly: true},
}

var disagreementColumns = []column{
	{name: "limiter"},
	{name: "file"},
	{name: "line", right: true},
	{name: "user"},
	{name: "key"},
	{name: "timestamp"},
	{name: "allowed"},
	{name: "observed"},
}

var checkKeyColumns = []column{
	{name: "limiter"},
	{name: "key"},
	{name: "requests", right: true},
	{name: "disagree", right: true},
	{name: "allowed_limited", right: true, title: "allowed & limited"},
	{name: "refused_passed", right: true, title: "refused & passed"},
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
	algos, specs, err := o.policy.lanesGiven(o.Algos)
	if err != nil {
		return err
	}
	if algos == nil && len(specs) == 0 && o.policy.Config == "" {
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
	var rw *recordWriter
	if o.Disagreements {
		rw = newRecordWriter(s.out, format, disagreementColumns)
		opts.Each = func(d *check.Disagreement) error {
			row := []cell{strCell(d.Lane), strCell(d.File), intCell(int64(d.Line)), strCell(d.User), strCell(d.Key), timeCell(d.TimeText),
				boolCell(d.Allowed), strCell(observedText(d.Allowed))}
			b := rw.begin()
			for i, c := range row {
				if i > 0 {
					b = rw.enc.next(b)
				}
				b = rw.enc.cell(b, c)
			}
			return rw.end(b)
		}
	}
	chk := check.Observe(&cfg, obs, opts)
	rep, err := rp.run(cfg, s, chk.Emit)
	if err != nil {
		return err
	}
	lanes := chk.Report()
	if rw != nil {
		if err := rw.close(); err != nil {
			return err
		}
		if rw.textual() {
			w := &textWriter{w: s.out, format: format}
			w.rows(rw, nil)
			if w.err != nil {
				return w.err
			}
		}
		return rp.trace.finish()
	}
	var rows [][]cell
	for i := range lanes {
		l := &lanes[i]
		rows = append(rows, []cell{strCell(l.Name), intCell(l.Requests), intCell(l.Observed()), intCell(l.Agree()), pctCell(l.Agree(), l.Observed()),
			intCell(l.Observed() - l.Agree()), intCell(l.AllowedPassed), intCell(l.AllowedLimited), intCell(l.RefusedPassed), intCell(l.RefusedLimited),
			intCell(l.Unobserved), strCell(obs.String())})
	}
	t, err := writeRecords(s.out, format, checkColumns, rows)
	if err != nil || t == nil {
		return err
	}
	w := &textWriter{w: s.out, format: format}
	w.line(fmt.Sprintf("check on %s: %s, %s; observed by %s", rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key"), obs))
	for _, l := range rp.spec.laneLines() {
		w.line(l)
	}
	w.blank()
	w.table(t)
	for i := range lanes {
		l := &lanes[i]
		if len(l.First) > 0 {
			var rows [][]cell
			for _, d := range l.First {
				rows = append(rows, []cell{strCell(d.File), intCell(int64(d.Line)), strCell(d.Key), timeCell(d.TimeText), strCell(decisionText(d.Allowed)), strCell(observedText(d.Allowed))})
			}
			t, _ := writeRecords(nil, format, []column{{name: "file"}, {name: "line", right: true}, {name: "key"}, {name: "timestamp"}, {name: "model"}, {name: "log"}}, rows)
			w.blank()
			w.line(fmt.Sprintf("%s: the first %s of %s:", l.Name, plural(int64(len(l.First)), "disagreement"), strconv.FormatInt(l.Observed()-l.Agree(), 10)))
			w.blank()
			w.table(t)
		}
		if len(l.Keys) > 0 {
			var rows [][]cell
			for _, k := range l.Keys {
				rows = append(rows, []cell{strCell(l.Name), strCell(k.Key), intCell(k.Requests), intCell(k.Disagreements), intCell(k.AllowedLimited), intCell(k.RefusedPassed)})
			}
			t, _ := writeRecords(nil, format, checkKeyColumns[1:], trimFirst(rows))
			w.blank()
			w.line(fmt.Sprintf("%s: the keys that disagree most:", l.Name))
			w.blank()
			w.table(t)
		}
	}
	if w.err != nil {
		return w.err
	}
	return rp.trace.finish()
}

// trimFirst drops the first cell of every row.
func trimFirst(rows [][]cell) [][]cell {
	for i := range rows {
		rows[i] = rows[i][1:]
	}
	return rows
}

func decisionText(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "refused"
}

// observedText is what the log says of a disagreement the model decided
// as allowed says: the opposite.
func observedText(allowed bool) string {
	if allowed {
		return "limited"
	}
	return "passed"
}
