package cmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// replay is a trace opened and a policy resolved, ready for sim.Run.
type replay struct {
	trace    *trace
	spec     *policySpec
	keys     []string
	keepKeys bool
	given    map[string]bool // the flags given on the command line
	labeler  *traces.Labeler // --legit, --abusive or --labels; nil: none
}

// prepare checks every flag, then opens the trace. interval is the
// --interval flag's text ("" for the intent's window). Usage errors come
// before the trace is touched, except those that depend on whether its
// times are RFC 3339.
//
// algos nil means the five classic algorithms, unless limiters are given
// with --limiter (specs) or in the config file.
func prepare(to *traceOptions, po *policyOptions, algos []limiters.Algorithm, specs []limiterSpec, interval string, s streams) (*replay, error) {
	if po.Config != "" {
		// The config file may give the key and unit too; flags given on
		// the command line override it.
		pf, err := po.policyFile()
		if err != nil {
			return nil, err
		}
		if pf.Key != nil && !po.set["key"] {
			to.Key = pf.Key
		}
		if pf.Unit != "" && !po.set["unit"] {
			to.Unit = pf.Unit
		}
	}
	if err := checkKeys(to.Key); err != nil {
		return nil, err
	}
	unit, err := parseUnit(to.Unit)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := to.logOptions(); err != nil {
		return nil, err
	}
	labeler, err := to.labels.labeler()
	if err != nil {
		return nil, err
	}
	plan, err := po.plan(algos, specs, intervalFlag(interval))
	if err != nil {
		return nil, err
	}
	// Durations of RFC 3339 traces are in seconds, whatever --unit says.
	// A duration refused in --unit but good in seconds ("1.5" with --unit
	// ns) is refused only once the trace turns out to be numeric.
	var unitErr error
	if _, err := plan.Bind(unit); err != nil {
		if unit == time.Second {
			return nil, err
		}
		if _, errSeconds := plan.Bind(time.Second); errSeconds != nil {
			return nil, err
		}
		unitErr = err
	}
	t, err := openTrace(to, s)
	if err != nil {
		if unitErr != nil {
			return nil, unitErr // the flags' mistake comes first
		}
		return nil, err
	}
	if t.RFC3339() {
		unit = time.Second
	}
	bound, err := plan.Bind(unit)
	if err != nil {
		t.Close()
		return nil, err
	}
	sp := &policySpec{Spec: bound, rfc3339: t.RFC3339(), times: t.timeWriter()}
	return &replay{trace: t, spec: sp, keys: to.Key, keepKeys: to.KeepKeys, given: po.set, labeler: labeler}, nil
}

// intervalFlag is the --interval flag's text as a setting, "" when it is
// not given.
func intervalFlag(text string) spec.Setting {
	if text == "" {
		return spec.Setting{}
	}
	return spec.Setting{Value: text, At: "--interval"}
}

// config is the sim configuration of the replay. State texts write the
// times of an RFC 3339 trace as RFC 3339 times.
func (rp *replay) config(rows, explain bool) sim.Config {
	unit := rp.spec.Unit
	if rp.trace.RFC3339() {
		unit = limiters.UnitRFC3339
	}
	cfg := sim.Config{
		Lanes:     rp.spec.Lanes,
		Policy:    rp.spec.Intent,
		KeyFields: rp.keys,
		KeepKeys:  rp.keepKeys,
		Rows:      rows,
		Explain:   explain,
		Interval:  rp.spec.Interval,
		Unit:      unit,
	}
	labelConfig(&cfg, rp.labeler)
	return cfg
}

// run replays the trace, showing progress on a terminal.
func (rp *replay) run(cfg sim.Config, s streams, emit func(*sim.Batch) error) (*sim.Report, error) {
	return rp.runFrom(rp.trace, cfg, s, emit)
}

// runFrom replays src, the trace or a part of it, as run does.
func (rp *replay) runFrom(src sim.Source, cfg sim.Config, s streams, emit func(*sim.Batch) error) (*sim.Report, error) {
	rp.warnUnused(cfg, s.err)
	if s.progress {
		p := startProgress(src, rp.trace.name, s.err)
		defer p.stop()
		src = p
	}
	if emit == nil {
		emit = func(*sim.Batch) error { return nil }
	}
	rep, err := sim.Run(src, cfg, emit)
	if err == nil {
		rp.warnResolution(s.err)
	}
	if err == nil && rep.Requests == 0 {
		warnf(s.err, "%s holds no request: every count is 0 and every share is empty", rp.trace.name)
	}
	if err == nil && rep.ClockBackwards > 0 {
		f := rep.FirstBackwards
		remedy := "replay it with --sort, or use --clock clamp to judge them at their key's latest time"
		if rp.spec.Intent.Clock == limiters.ClockClamp {
			remedy = "--clock clamp judged them at their key's latest time; --sort judges them at their own"
		}
		fmt.Fprintf(s.err, "ratesim: warning: %s came earlier than their key's latest request, the first at %s:%d: the trace is not in time order; %s\n",
			plural(rep.ClockBackwards, "request"), rp.trace.name, f.Line, remedy)
	}
	return rep, err
}

// queueNote says how the report measures the bursts of the queue forms
// among algos: "leaky-queue's bursts are measured ...", or "" when none
// delays what it admits.
func queueNote(algos []limiters.Algorithm) string {
	var names []string
	for _, a := range algos {
		if a.Delays() && !slices.Contains(names, a.String()+"'s") {
			names = append(names, a.String()+"'s")
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + " bursts are measured when requests leave its queue (timestamp + delay)"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " bursts are measured when requests leave their queues (timestamp + delay)"
}

// backwardsLine is the line of a report's header that counts the requests
// earlier than their key's latest; empty when there are none.
func backwardsLine(rep *sim.Report) string {
	if rep.ClockBackwards == 0 {
		return ""
	}
	return fmt.Sprintf("clock_backwards: %s earlier than their key's latest, the first at line %d", plural(rep.ClockBackwards, "request"), rep.FirstBackwards.Line)
}

// warnUnused says on w, a line each, which flags given have no effect on
// the replay cfg describes: bucket flags when only window algorithms run,
// window flags that no algorithm uses (not even as a bucket's default)
// when there are no oracle or burst figures either, and --unit on an
// RFC 3339 trace.
func (rp *replay) warnUnused(cfg sim.Config, w io.Writer) {
	var windowed, buckets []string
	for _, a := range rp.spec.Algos() {
		list := &buckets
		if a.Windowed() {
			list = &windowed
		}
		if !slices.Contains(*list, a.String()) {
			*list = append(*list, a.String())
		}
	}
	if len(buckets) == 0 {
		if flags := rp.givenFlags("capacity", "rate"); flags != nil {
			warnf(w, "%s: only window algorithms run (%s), and they use --limit and --window",
				noEffect(flags), strings.Join(windowed, ", "))
		}
	}
	if cfg.DecisionsOnly && len(windowed) == 0 {
		var flags []string
		if !rp.spec.LimitUsed {
			flags = append(flags, rp.givenFlags("limit")...)
		}
		if !rp.spec.WindowUsed {
			flags = append(flags, rp.givenFlags("window")...)
		}
		given := "rate"
		if !rp.spec.LimitUsed {
			given = "capacity and rate"
		}
		its := "has its"
		if len(buckets) > 1 {
			its = "have their"
		}
		if flags != nil {
			warnf(w, "%s: %s %s %s given", noEffect(flags), strings.Join(buckets, ", "), its, given)
		}
	}
	for _, prm := range limiters.Params() {
		if slices.Contains(coreParams, prm.Name) || !rp.given[prm.Name] {
			continue
		}
		if !slices.ContainsFunc(rp.spec.Algos(), func(a limiters.Algorithm) bool { return slices.Contains(a.Params(), prm.Name) }) {
			warnf(w, "--%s has no effect: no limiter that runs takes it (%s do)", prm.Name, takers(prm.Name))
		}
	}
	if rp.given["sort-mem"] && !rp.trace.set.Sorted() {
		warnf(w, "--sort-mem has no effect: it bounds the memory of --sort, which is not given")
	}
	if rp.trace.RFC3339() && rp.given["unit"] {
		warnf(w, "--unit has no effect: the trace's times are RFC 3339, and its durations are in seconds")
	}
}

// givenFlags returns those of names given on the command line, as flags.
func (rp *replay) givenFlags(names ...string) []string {
	var flags []string
	for _, n := range names {
		if rp.given[n] {
			flags = append(flags, "--"+n)
		}
	}
	return flags
}

// noEffect says that flags have no effect: "--limit and --window have no
// effect".
func noEffect(flags []string) string {
	if len(flags) == 1 {
		return flags[0] + " has no effect"
	}
	return strings.Join(flags[:len(flags)-1], ", ") + " and " + flags[len(flags)-1] + " have no effect"
}

// warnf writes a warning line to w: the command goes on, and its exit
// status is not changed.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "ratesim: warning: %s\n", terminalSafe(fmt.Sprintf(format, args...)))
}

// lane returns the lane named name.
func (sp *policySpec) lane(name string) sim.Lane {
	for _, l := range sp.Lanes {
		if l.Name == name {
			return l
		}
	}
	return sim.Lane{Name: name}
}

// laneCells are the limit, window, capacity and rate of a lane for a
// report: a window lane's own limit and window; for a bucket the intent's
// limit and window (null when no intent was given) beside its capacity
// and rate.
func (sp *policySpec) laneCells(l sim.Lane) (limit, window, capacity, rate cell) {
	if l.Algorithm.Windowed() {
		return intCell(l.Policy.Limit), decCell(l.Policy.Window, sp.Unit), nullCell(), nullCell()
	}
	limit, window = sp.intentCells()
	return limit, window, intCell(l.Policy.Capacity), strCell(l.Policy.Rate.Format(sp.Unit))
}

// intentCells are the intent's limit and window, null when no intent was
// given.
func (sp *policySpec) intentCells() (limit, window cell) {
	if !sp.IntentNamed {
		return nullCell(), nullCell()
	}
	return intCell(sp.Intent.Limit), decCell(sp.Intent.Window, sp.Unit)
}

// againstIntent is a cell counted against the intent: v, or null when no
// intent was given.
func (sp *policySpec) againstIntent(v cell) cell {
	if !sp.IntentNamed {
		return nullCell()
	}
	return v
}

// ratioCell is the ratio of a burst count to the intent's limit, null
// when no intent was given.
func (sp *policySpec) ratioCell(count int64) cell {
	return sp.againstIntent(numCell(ratio(count, sp.Intent.Limit)))
}

// againstLine says what false allows, false rejects and ratios are
// counted against: "false allows and rejects are against the oracle, a
// sliding log of limit 3 per 10s", or that no intent was given.
func (sp *policySpec) againstLine() string {
	if !sp.IntentNamed {
		return "no intent given, so no false allows, false rejects or ratios (-): --intent LIMIT/WINDOW counts them against an exact rolling limit"
	}
	return fmt.Sprintf("false allows and rejects are against the oracle, a sliding log of limit %d per %s", sp.Intent.Limit, sp.duration(sp.Intent.Window))
}

// laneLines describe, a line each, the lanes whose parameters are their
// own, or who have names of their own; none in a plain run.
func (sp *policySpec) laneLines() []string {
	var lines []string
	for i, l := range sp.Lanes {
		if !sp.Own[i] && l.Name == l.Algorithm.String() {
			continue
		}
		text := fmt.Sprintf("limiter %s: ", l.Name)
		if l.Name != l.Algorithm.String() {
			text = fmt.Sprintf("limiter %s (%s): ", l.Name, l.Algorithm)
		}
		lines = append(lines, text+sp.describeLane(l, ", "))
	}
	return lines
}

// describeLane states lane l's parameters, joined by sep: "limit 3 per
// 10s; clock reject", "limit 3 per 10s, buckets 5, clock reject".
func (sp *policySpec) describeLane(l sim.Lane, sep string) string {
	p := l.Policy
	var parts []string
	if l.Algorithm.Windowed() {
		parts = append(parts, fmt.Sprintf("limit %d per %s", p.Limit, sp.duration(p.Window)))
	} else {
		parts = append(parts, fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, p.Rate.Format(sp.Unit), unitName(sp.Unit)))
	}
	if extra := sp.extraParams([]limiters.Algorithm{l.Algorithm}, p); extra != "" {
		parts = append(parts, extra[2:])
	}
	return strings.Join(append(parts, "clock "+clockName(p.Clock)), sep)
}

// extraColumns are the columns a report's rows about lanes add when the
// lanes need them: algorithm when a lane has a name of its own (its
// column shows the name), and each parameter beyond coreParams that a
// lane takes (buckets), null for the lanes that do not.
func (sp *policySpec) extraColumns() []column {
	var cols []column
	if sp.named() {
		cols = append(cols, column{name: "algorithm", machineOnly: true})
	}
	for _, prm := range sp.extraParamList() {
		cols = append(cols, column{name: prm.Name, omitNull: true, machineOnly: true})
	}
	return cols
}

// extraCells are lane l's cells of extraColumns.
func (sp *policySpec) extraCells(l sim.Lane) []cell {
	var cells []cell
	if sp.named() {
		cells = append(cells, strCell(l.Algorithm.String()))
	}
	for _, prm := range sp.extraParamList() {
		if !slices.Contains(l.Algorithm.Params(), prm.Name) {
			cells = append(cells, nullCell())
			continue
		}
		switch v := l.Policy.Field(prm.Name).(type) {
		case *int64:
			cells = append(cells, intCell(*v))
		case *time.Duration:
			cells = append(cells, decCell(*v, sp.Unit))
		default:
			cells = append(cells, strCell(sp.paramText(l.Policy, prm.Name)))
		}
	}
	return cells
}

// named reports whether a lane has a name other than its algorithm's.
func (sp *policySpec) named() bool {
	return slices.ContainsFunc(sp.Lanes, func(l sim.Lane) bool { return l.Name != l.Algorithm.String() })
}

// extraParamList lists the parameters beyond coreParams that a lane takes.
func (sp *policySpec) extraParamList() []limiters.Param {
	var out []limiters.Param
	for _, prm := range limiters.Params() {
		if !slices.Contains(coreParams, prm.Name) && slices.ContainsFunc(sp.Lanes, func(l sim.Lane) bool { return slices.Contains(l.Algorithm.Params(), prm.Name) }) {
			out = append(out, prm)
		}
	}
	return out
}

// extraParams states, each after ", ", the parameters beyond coreParams
// that any of algos takes, with their values in p: ", buckets 10".
func (sp *policySpec) extraParams(algos []limiters.Algorithm, p limiters.Policy) string {
	var b strings.Builder
	for _, prm := range limiters.Params() {
		if slices.Contains(coreParams, prm.Name) || !slices.ContainsFunc(algos, func(a limiters.Algorithm) bool { return slices.Contains(a.Params(), prm.Name) }) {
			continue
		}
		b.WriteString(", " + prm.Name + " " + sp.paramText(p, prm.Name))
	}
	return b.String()
}

// paramText renders the value of parameter name in p, durations and
// rates in the unit: "10", "2.5s", "0.2".
func (sp *policySpec) paramText(p limiters.Policy, name string) string {
	switch v := p.Field(name).(type) {
	case *int64:
		return strconv.FormatInt(*v, 10)
	case *time.Duration:
		return sp.duration(*v)
	case *limiters.Rate:
		return v.Format(sp.Unit)
	}
	return ""
}

// duration renders d with the unit's name: "10s", "2.5s", "10000ms".
func (sp *policySpec) duration(d time.Duration) string {
	return string(traces.AppendDecimal(nil, int64(d), sp.Unit)) + unitName(sp.Unit)
}

// rate renders the bucket rate per unit.
func (sp *policySpec) rate() string {
	return sp.Shared.Rate.Format(sp.Unit)
}

// describe states in one line the shared parameters, those of the lanes
// that have none of their own (laneLines lists the others), or that each
// has its own. With burst, it adds the burst interval and the intent,
// when that is not the shared limit and window, or that none was given.
func (sp *policySpec) describe(burst bool) string {
	var windowed, bucket bool
	var shared []limiters.Algorithm
	for i, l := range sp.Lanes {
		if sp.Own[i] {
			continue
		}
		shared = append(shared, l.Algorithm)
		if l.Algorithm.Windowed() {
			windowed = true
		} else {
			bucket = true
		}
	}
	var parts []string
	p := sp.Shared
	if len(shared) == 0 {
		parts = append(parts, "each limiter has its own (below)")
	}
	if windowed {
		parts = append(parts, fmt.Sprintf("limit %d per %s", p.Limit, sp.duration(p.Window)))
	}
	if bucket {
		parts = append(parts, fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, sp.rate(), unitName(sp.Unit)))
	}
	if extra := sp.extraParams(shared, p); extra != "" {
		parts = append(parts, extra[2:])
	}
	if len(shared) > 0 {
		parts = append(parts, "clock "+clockName(p.Clock))
	}
	if burst {
		parts = append(parts, "burst interval "+sp.duration(sp.Interval))
		switch {
		case !sp.IntentNamed:
			parts = append(parts, "no intent given, so no false allows, false rejects or ratios: --intent LIMIT/WINDOW counts them against an exact rolling limit")
		case !windowed || sp.Intent.Limit != p.Limit || sp.Intent.Window != p.Window:
			parts = append(parts, fmt.Sprintf("oracle limit %d per %s", sp.Intent.Limit, sp.duration(sp.Intent.Window)))
		}
	}
	return strings.Join(parts, "; ")
}

// textWriter writes the text parts of a report and keeps the first error.
type textWriter struct {
	w      io.Writer
	format outputFormat
	err    error
}

func (tw *textWriter) line(s string) {
	if tw.err == nil {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = terminalSafe(l)
		}
		_, tw.err = io.WriteString(tw.w, strings.Join(lines, "\n")+"\n")
	}
}

func (tw *textWriter) blank() { tw.line("") }

// compareHeader writes the lines that open compare's reports: the trace
// and its requests and keys, the policy (with the burst interval and the
// oracle when burst is set), the lanes of their own and the requests that
// went back in time.
func (tw *textWriter) compareHeader(rp *replay, rep *sim.Report, burst bool) {
	tw.line(fmt.Sprintf("compare on %s: %s, %s", rp.trace.name, plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
	tw.line("policy: " + rp.spec.describe(burst))
	for _, l := range rp.spec.laneLines() {
		tw.line(l)
	}
	if line := backwardsLine(rep); line != "" {
		tw.line(line)
	}
}

// rows writes the table of rw's rows, with footer, and says how many more
// rows it left out.
func (tw *textWriter) rows(rw *recordWriter, footer map[string]string) {
	tw.table(rw.table(footer))
	if rw.hidden > 0 {
		tw.blank()
		tw.line(fmt.Sprintf("%s more not shown; -o csv lists every row", plural(rw.hidden, "row")))
	}
}

func (tw *textWriter) table(t *table) {
	if tw.err == nil {
		tw.err = t.render(tw.w, tw.format)
	}
}

// progress counts the events read and, after a moment, shows the count on
// a terminal. time.Now is used here and, as the live clock of an HTTP
// server, in limiters/httplimit; nowhere else in ratesim.
type progress struct {
	src  sim.Source
	name string
	n    atomic.Int64
	quit chan struct{}
	wg   sync.WaitGroup
}

// progressDelay is how long a replay runs before progress is shown.
const progressDelay = time.Second

func startProgress(src sim.Source, name string, w io.Writer) *progress {
	p := &progress{src: src, name: name, quit: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		start := time.Now()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-p.quit:
				if shown {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case <-tick.C:
				el := time.Since(start)
				if el < progressDelay {
					continue
				}
				shown = true
				fmt.Fprintf(w, "\rratesim: %s: %d requests (%.0fs)\033[K", name, p.n.Load(), el.Seconds())
			}
		}
	}()
	return p
}

func (p *progress) Next() (*traces.Event, error) {
	p.n.Add(1)
	return p.src.Next()
}

// Name is the trace's name, which sim puts in its errors.
func (p *progress) Name() string { return p.name }

func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
}
