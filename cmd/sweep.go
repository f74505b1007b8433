package cmd

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

const sweepLong = `Replay a trace through every combination of the parameter values given,
each combination one candidate limiter, all in one pass over the trace, and
score every candidate against the intent: the exact rolling policy you mean,
--intent LIMIT/WINDOW (default: --limit per --window), as compare scores
its algorithms against its oracle.

Values: a list (--capacity 5,10,20), a range of whole numbers (--capacity
5..50, or 5..50:5 with a step), and lists of rates (--rate 1/1s,2/1s,5/1s)
and windows (--window 10s,1m). --algos names the algorithms (default
token-bucket); each takes the parameters that apply to it, and its
candidates are every combination of their values. A bucket given no
capacity or rate takes the intent's limit, and its limit per window. At
most 4096 candidates run in one sweep.

Per candidate: limiter (the --limiter text that replays it alone, beside
--intent's limit and window), algo and its parameters, requests, allowed,
allow %, false allows and rejects against the intent and false_reject_pct
(false rejects per 100 requests), keys_rejected (keys it rejected at least
once), max_in_interval (the most cost one key got through in any interval
of the intent's window) and its ratio to the intent's limit,
p99_retry_after (the 99th percentile, nearest rank, of the Retry-After told
to the requests it rejected, in the trace unit; "never" when that is a
request no wait cures, above every number for --pick; empty when it
rejected none, which meets p99_retry_after<=x), state_bytes (the most memory one key's state takes
in ratesim's limiters) and frontier (no other candidate has both fewer or
as many false allows and false rejects, and fewer of one; with --pick, no
other candidate that meets it, and only those that meet it are on it).

--pick 'false_reject_pct<=1,ratio<=1.2' keeps the candidates that meet every
constraint (<, <=, >, >= against a number, on any numeric column; a comma is
AND), compared exactly rather than as rounded for display, best first:
fewest false allows, then fewest false rejects, then the smallest
parameters. The best is marked; in CSV and JSON every candidate carries
meets and best. When none meets them, sweep says so, gives for each
constraint the best value any candidate reached, and why, where that can be
shown exactly. --by-key N then lists the best candidate's N most rejected
keys, from a second pass over the trace. --frontier keeps only the frontier;
with --pick, the frontier of the candidates that meet it, on which the best
always is.`

const sweepExample = `  ratesim sweep --capacity 1..20 --rate 1/1s,2/1s --intent 10/10s trace.csv
  ratesim sweep --algos token-bucket,gcra --capacity 5..50:5 --pick 'false_reject_pct<=1,ratio<=1.2' trace.csv
  ratesim sweep --algos fixed-window,sliding-counter --limit 50..150:10 --window 1m --intent 100/1m -o json trace.csv`

// maxCandidates is the most candidates one sweep runs: one replay's lanes.
const maxCandidates = maxLanes - 1 // and the intent's own sliding log

// sweepOptions are the options of "ratesim sweep".
type sweepOptions struct {
	trace    traceOptions
	Algos    []string
	values   map[string]*string // per parameter, its --flag text
	Clock    string
	Intent   string
	Pick     string
	Frontier bool
	ByKey    int
	Output   string
	set      map[string]bool
	// inherit, when not nil, is the intent of the replay the sweep is
	// part of (a report's), which it takes unless its own flags say
	// otherwise.
	inherit *inheritedIntent
}

func newSweepCmd() *cobra.Command {
	o := &sweepOptions{values: map[string]*string{}}
	c := &cobra.Command{
		Use:               "sweep [--algos a,b] [--capacity 1..64] [--rate 1/1s,2/1s] [flags] TRACE|- [TRACE...]",
		Short:             "Replay a trace through a grid of parameters in one pass, and pick the best",
		Long:              sweepLong,
		Example:           sweepExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path, o.trace.More = traceArg(args), moreTraces(args)
			o.set = map[string]bool{}
			c.Flags().Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
			return runSweep(o, streamsOf(c))
		},
	}
	addSweepFlags(c.Flags(), o)
	addOutputFlag(c.Flags(), &o.Output)
	addTraceFlags(c.Flags(), &o.trace)
	registerCompletions(c)
	return c
}

// addSweepFlags adds the flags that describe a sweep's grid, intent and
// pick.
func addSweepFlags(fs *pflag.FlagSet, o *sweepOptions) {
	fs.StringSliceVar(&o.Algos, "algos", []string{limiters.TokenBucket.String()}, "algorithms to sweep, comma-separated, or all")
	for _, prm := range limiters.Params() {
		v := new(string)
		o.values[prm.Name] = v
		def := prm.Default
		switch prm.Name {
		case "limit":
			def = strconv.Itoa(defaultLimit)
		case "window":
			def = defaultWindow
		}
		usage := prm.Usage + ": values, comma-separated"
		if prm.Kind == limiters.ParamCount {
			usage += ", or a range A..B or A..B:STEP"
		}
		fs.StringVar(v, prm.Name, def, takers(prm.Name)+": "+usage)
	}
	fs.StringVar(&o.Clock, "clock", "reject", "when time goes backwards for a key: reject, or clamp to the key's last time")
	fs.StringVar(&o.Intent, "intent", "", "the policy meant, LIMIT/WINDOW such as 100/1m: the exact rolling limit candidates are scored against (default: --limit per --window)")
	fs.StringVar(&o.Pick, "pick", "", "constraints a candidate must meet, such as 'false_reject_pct<=1,ratio<=1.2': those that do, best first")
	fs.BoolVar(&o.Frontier, "frontier", false, "only the candidates no other beats on both false allows and false rejects")
	fs.IntVar(&o.ByKey, "by-key", 0, "with --pick, the N keys the best candidate rejected most, from a second pass over the trace")
}

// candidate is one limiter of a sweep: an algorithm with one combination
// of the values given, and what the replay found of it.
type candidate struct {
	spec   limiterSpec
	index  int // in grid order
	values map[string]string
	lane   sim.Lane
	stats  *sim.AlgoStats
	num    map[string]*big.Rat // the numeric columns, exactly; nil: null
	never  bool                // p99_retry_after is a wait no request can end
	meets  bool
	best   bool
	front  bool
}

// grid is the parameter values of a sweep, per parameter in
// limiters.Params order.
type grid struct {
	names  []string
	values map[string][]string
}

// parseGrid parses the value flags. A flag not given on the command line
// is one value, its default, and only matters as the default of another
// parameter (a bucket's capacity is the limit) unless an algorithm takes it.
func (o *sweepOptions) parseGrid() (*grid, error) {
	g := &grid{values: map[string][]string{}}
	for _, prm := range limiters.Params() {
		text := *o.values[prm.Name]
		if !o.set[prm.Name] {
			continue
		}
		vals, err := parseValues(prm, text)
		if err != nil {
			return nil, err
		}
		g.names = append(g.names, prm.Name)
		g.values[prm.Name] = vals
	}
	return g, nil
}

// parseValues parses one value flag: a comma-separated list of values,
// and for whole numbers ranges A..B and A..B:STEP. A value given twice is
// an error, as it would make two candidates alike.
func parseValues(prm limiters.Param, text string) ([]string, error) {
	flag := "--" + prm.Name
	bad := func(format string, args ...any) error {
		return usageErrorf("%s %q: %s", flag, text, fmt.Sprintf(format, args...))
	}
	var out []string
	seen := map[string]bool{}
	add := func(v string) error {
		if seen[v] {
			return bad("%s given twice", v)
		}
		seen[v] = true
		out = append(out, v)
		if len(out) > maxCandidates {
			return bad("more than %d values; use a coarser step", maxCandidates)
		}
		return nil
	}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, bad("an empty value")
		}
		from, rest, isRange := strings.Cut(item, "..")
		if !isRange {
			if err := add(item); err != nil {
				return nil, err
			}
			continue
		}
		if prm.Kind != limiters.ParamCount {
			return nil, bad("ranges A..B take whole numbers; list the %s values instead", prm.Name)
		}
		to, stepText, stepped := strings.Cut(rest, ":")
		lo, err1 := strconv.ParseInt(from, 10, 64)
		hi, err2 := strconv.ParseInt(to, 10, 64)
		switch {
		case from == "" || to == "":
			return nil, bad("range %q needs a start and an end, as in 5..50", item)
		case err1 != nil || err2 != nil:
			return nil, bad("range %q: want whole numbers, as in 5..50", item)
		case hi < lo:
			return nil, bad("range %q is empty: its end is below its start", item)
		}
		step := int64(1)
		if stepped {
			s, err := strconv.ParseInt(stepText, 10, 64)
			switch {
			case err != nil:
				return nil, bad("range %q: the step %q is not a whole number", item, stepText)
			case s <= 0:
				return nil, bad("range %q: the step must be positive, got %d", item, s)
			}
			step = s
		}
		if n := (uint64(hi)-uint64(lo))/uint64(step) + 1; n > maxCandidates {
			return nil, bad("range %q has %d values, more than the %d candidates a sweep runs; use a coarser step", item, n, maxCandidates)
		}
		for v := lo; ; v += step {
			if err := add(strconv.FormatInt(v, 10)); err != nil {
				return nil, err
			}
			if hi-v < step {
				break
			}
		}
	}
	return out, nil
}

// candidates are the grid's combinations for each algorithm, in algorithm
// order, then by the parameters in limiters.Params order, the last
// varying fastest.
func (g *grid) candidates(algos []limiters.Algorithm) ([]*candidate, error) {
	var out []*candidate
	total := 0
	for _, a := range algos {
		var names []string
		n := 1
		for _, name := range g.names {
			if slices.Contains(a.Params(), name) {
				names = append(names, name)
				n *= len(g.values[name])
				if n > maxCandidates {
					break
				}
			}
		}
		total += n
		if n > maxCandidates || total > maxCandidates {
			return nil, usageErrorf("the grid has more than %d candidates; give fewer values or a coarser step", maxCandidates)
		}
		idx := make([]int, len(names))
		for {
			c := &candidate{index: len(out), values: map[string]string{}}
			c.spec.alg = a
			var args []string
			for i, name := range names {
				v := g.values[name][idx[i]]
				c.values[name] = v
				args = append(args, name+"="+v)
				if err := c.spec.set(name, v, "--"+name); err != nil {
					return nil, usageErrorf("--%s: %s", name, ErrorText(err))
				}
			}
			c.spec.args = strings.Join(args, ",")
			c.spec.name = a.String()
			if c.spec.args != "" {
				c.spec.name += ":" + c.spec.args
			}
			out = append(out, c)
			// The next combination, the last parameter fastest.
			i := len(idx) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(g.values[names[i]]) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	return out, nil
}

// parseIntent parses --intent LIMIT/WINDOW into the limit and the window's
// text.
func parseIntent(s string) (limit int64, window string, err error) {
	l, w, ok := strings.Cut(s, "/")
	n, perr := strconv.ParseInt(strings.TrimSpace(l), 10, 64)
	switch {
	case !ok || strings.TrimSpace(w) == "":
		return 0, "", usageErrorf("--intent %q: want LIMIT/WINDOW, such as 100/1m", s)
	case perr != nil:
		return 0, "", usageErrorf("--intent %q: the limit %q is not a whole number", s, l)
	case n <= 0:
		return 0, "", usageErrorf("--intent %q: the limit must be positive", s)
	}
	return n, strings.TrimSpace(w), nil
}

// intentLane names the sliding log of the intent's own policy that a sweep
// replays beside its candidates: what it allowed, the intent allowed.
const intentLane = "intent"

// sweepResult is what a sweep's replay found.
type sweepResult struct {
	rp     *replay // its trace is open until the caller closes it
	po     *policyOptions
	g      *grid
	algos  []limiters.Algorithm
	rep    *sim.Report
	cands  []*candidate
	cons   constraints
	picked []*candidate   // the candidates that meet cons, best first
	intent *sim.AlgoStats // the intent's own sliding log
	// intentFrom says where the intent came from: "--intent", or per
	// parameter for an inherited one.
	intentFrom string
}

// check checks the flags of a sweep that do not depend on the
// output.
func (o *sweepOptions) check() (*grid, []limiters.Algorithm, constraints, error) {
	algos, err := parseAlgorithms(o.Algos)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(algos) == 0 {
		return nil, nil, nil, usageErrorf("--algos names no algorithm")
	}
	g, err := o.parseGrid()
	if err != nil {
		return nil, nil, nil, err
	}
	cons, err := parsePick(o.Pick)
	if err != nil {
		return nil, nil, nil, err
	}
	return g, algos, cons, nil
}

// sweepReplay replays the trace through the sweep's candidates and scores
// them. The caller closes res.rp.trace.
func sweepReplay(o *sweepOptions, g *grid, algos []limiters.Algorithm, cons constraints, s streams) (*sweepResult, error) {
	var err error
	po := &policyOptions{Clock: o.Clock, single: true, set: map[string]bool{"clock": true, "limit": true, "window": true}}
	intentFrom := "--intent"
	switch {
	case o.inherit != nil:
		if intentFrom, err = o.takeIntent(po, g); err != nil {
			return nil, err
		}
	case o.Intent != "":
		if po.Limit, po.Window, err = parseIntent(o.Intent); err != nil {
			return nil, err
		}
	default:
		intentFrom = "--limit and --window"
		for _, name := range []string{"limit", "window"} {
			if len(g.values[name]) > 1 {
				return nil, usageErrorf("--%s gives %d values: say which policy you mean with --intent LIMIT/WINDOW", name, len(g.values[name]))
			}
		}
		if po.Limit, err = strconv.ParseInt(strings.TrimSpace(*o.values["limit"]), 10, 64); err != nil {
			return nil, usageErrorf("--limit: invalid limit %q: want a whole number", *o.values["limit"])
		}
		po.Window = strings.TrimSpace(*o.values["window"])
	}
	cands, err := g.candidates(algos)
	if err != nil {
		return nil, err
	}
	specs := make([]limiterSpec, 0, len(cands)+1)
	for _, c := range cands {
		specs = append(specs, c.spec)
	}
	specs = append(specs, limiterSpec{name: intentLane, alg: limiters.SlidingLog})
	rp, err := prepare(&o.trace, po, nil, specs, po.Window, s)
	if err != nil {
		return nil, err
	}
	if o.inherit != nil && o.inherit.interval > 0 {
		rp.spec.Interval = o.inherit.interval
	}
	cfg := rp.config(false, false)
	cfg.Rejections = true
	rep, err := rp.run(cfg, s, nil)
	if err != nil {
		rp.trace.Close()
		return nil, err
	}
	sp := rp.spec
	for i, c := range cands {
		c.lane, c.stats = sp.Lanes[i], &rep.Algos[i]
		c.score(sp)
	}
	picked := pick(cands, cons)
	if cons != nil {
		markFrontier(cands, picked)
	} else {
		markFrontier(cands, cands)
	}
	return &sweepResult{rp: rp, po: po, g: g, algos: algos, rep: rep, cands: cands, cons: cons,
		picked: picked, intent: &rep.Algos[len(cands)], intentFrom: intentFrom}, nil
}

func runSweep(o *sweepOptions, s streams) error {
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	if _, err := parseAlgorithms(o.Algos); err != nil {
		return err
	}
	switch {
	case o.ByKey < 0:
		return usageErrorf("--by-key must be positive, got %d", o.ByKey)
	case o.ByKey > 0 && o.Pick == "":
		return usageErrorf("--by-key lists the best candidate's keys: it needs --pick")
	case o.ByKey > 0 && (o.trace.Path == "-" || slices.Contains(o.trace.More, "-")):
		return usageErrorf("--by-key reads the trace twice: it needs trace files, not standard input")
	case o.ByKey > 0 && format != outTable && format != outMarkdown:
		return usageErrorf("--by-key in sweep adds a table to the report; for CSV or JSON, run compare --by-key N with the best candidate's --limiter")
	}
	g, algos, cons, err := o.check()
	if err != nil {
		return err
	}
	res, err := sweepReplay(o, g, algos, cons, s)
	if err != nil {
		return err
	}
	rp, po, rep, cands, picked, intent := res.rp, res.po, res.rep, res.cands, res.picked, res.intent
	defer rp.trace.Close()
	sp := rp.spec

	rows := cands
	if o.Frontier {
		rows = slices.DeleteFunc(slices.Clone(rows), func(c *candidate) bool { return !c.front })
	}
	cols := sweepColumns(sp, cands, cons != nil)
	machine := format != outTable && format != outMarkdown
	if machine {
		if _, err := writeRecords(s.out, format, cols, sweepRows(rows, sp, cols, false)); err != nil {
			return err
		}
		return rp.trace.finish()
	}

	w := &textWriter{w: s.out, format: format}
	w.line(fmt.Sprintf("sweep on %s: %s, %s", rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
	w.line(fmt.Sprintf("grid: %s%s", plural(int64(len(cands)), "candidate"), g.describe(algos)))
	w.line(fmt.Sprintf("intent: limit %d per %s, clock %s (a sliding log: false allows and rejects are against it; max_in_interval is over %s)",
		sp.Oracle.Limit, sp.duration(sp.Oracle.Window), clockName(sp.Oracle.Clock), sp.duration(sp.interval())))
	if line := backwardsLine(rep); line != "" {
		w.line(line)
	}
	w.blank()
	if cons != nil {
		if len(picked) == 0 {
			for _, l := range unreachable(cands, cons, intent, sp) {
				w.line(l)
			}
		} else {
			verb := "meet"
			if len(picked) == 1 {
				verb = "meets"
			}
			w.line(fmt.Sprintf("%s of %d %s %s; best first, the best marked *:", plural(int64(len(picked)), "candidate"), len(cands), verb, cons.text()))
			w.blank()
			rows = picked
			if o.Frontier {
				rows = slices.DeleteFunc(slices.Clone(rows), func(c *candidate) bool { return !c.front })
			}
		}
	}
	if cons == nil || len(picked) > 0 {
		t, _ := writeRecords(nil, format, cols, sweepRows(rows, sp, cols, true))
		w.table(t)
	}
	if w.err != nil {
		return w.err
	}
	if err := rp.trace.finish(); err != nil {
		return err
	}
	if o.ByKey > 0 && len(picked) > 0 {
		return sweepByKey(o, po, picked[0], s)
	}
	return nil
}

// describe states the values of the grid, per algorithm the parameters it
// takes: ": token-bucket capacity 1..64 (64) × rate 1/1s".
func (g *grid) describe(algos []limiters.Algorithm) string {
	var parts []string
	for _, a := range algos {
		var dims []string
		for _, name := range g.names {
			if !slices.Contains(a.Params(), name) {
				continue
			}
			vals := g.values[name]
			text := strings.Join(vals, ",")
			if len(vals) > 4 {
				text = fmt.Sprintf("%s,%s,...,%s (%d values)", vals[0], vals[1], vals[len(vals)-1], len(vals))
			}
			dims = append(dims, name+" "+text)
		}
		if len(dims) == 0 {
			dims = append(dims, "as the intent")
		}
		parts = append(parts, a.String()+" "+strings.Join(dims, " × "))
	}
	return ": " + strings.Join(parts, "; ")
}

// sweepByKey replays the trace again through the best candidate alone and
// writes its most rejected keys.
func sweepByKey(o *sweepOptions, po *policyOptions, best *candidate, s streams) error {
	rp, err := prepare(&o.trace, po, nil, []limiterSpec{best.spec}, po.Window, s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	format, _ := parseOutput(o.Output)
	_, rows, err := replayByKey(rp, o.ByKey, s)
	if err != nil {
		return err
	}
	t, _ := writeRecords(nil, format, byKeyColumns, rows)
	w := &textWriter{w: s.out, format: format}
	w.blank()
	w.line(fmt.Sprintf("the %d keys the best candidate, %s, rejected most:", o.ByKey, best.spec.name))
	w.blank()
	if len(rows) == 0 {
		w.line("it rejected no request")
	} else {
		w.table(t)
	}
	if w.err != nil {
		return w.err
	}
	return rp.trace.finish()
}
