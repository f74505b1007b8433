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
}

// prepare checks every flag, then opens the trace. interval is the --interval
// text ("" for the window). Usage errors come before the trace is touched,
// except those that depend on whether its times are RFC 3339.
//
// algos nil means the five classic algorithms, unless limiters are given
// with --limiter (specs) or in the config file.
func prepare(to *traceOptions, po *policyOptions, algos []limiters.Algorithm, specs []limiterSpec, interval string, s streams) (*replay, error) {
	if po.Config != "" {
		// The config file may give the key, unit and interval too; flags
		// given on the command line override it.
		pf, err := po.policyFile()
		if err != nil {
			return nil, err
		}
		if pf.key != nil && !po.set["key"] {
			to.Key = pf.key
		}
		if pf.unit != "" && !po.set["unit"] {
			to.Unit = pf.unit
		}
		if pf.interval != "" && !po.set["interval"] {
			interval = pf.interval
		}
	}
	if err := checkKeys(to.Key); err != nil {
		return nil, err
	}
	unit, err := parseUnit(to.Unit)
	if err != nil {
		return nil, err
	}
	if _, err := parseTraceFormat(to.Format); err != nil {
		return nil, err
	}
	spec, err := resolveSpec(po, algos, specs, interval, unit)
	// Durations of RFC 3339 traces are in seconds, whatever --unit says.
	// A duration refused in --unit but good in seconds ("1.5" with --unit
	// ns) is refused only once the trace turns out to be numeric.
	var unitErr error
	if err != nil && unit != time.Second {
		if _, errSeconds := resolveSpec(po, algos, specs, interval, time.Second); errSeconds == nil {
			unitErr, err = err, nil
		}
	}
	if err != nil {
		return nil, err
	}
	t, err := openTrace(to, s)
	if err != nil {
		if unitErr != nil {
			return nil, unitErr
		}
		return nil, err
	}
	switch {
	case t.RFC3339() && unit != time.Second:
		if spec, err = resolveSpec(po, algos, specs, interval, time.Second); err != nil {
			t.Close()
			return nil, err
		}
	case unitErr != nil:
		t.Close()
		return nil, unitErr
	}
	spec.rfc3339 = t.RFC3339()
	return &replay{trace: t, spec: spec, keys: to.Key, keepKeys: to.KeepKeys, given: po.set}, nil
}

func resolveSpec(po *policyOptions, algos []limiters.Algorithm, specs []limiterSpec, interval string, unit time.Duration) (*policySpec, error) {
	spec, err := po.resolve(algos, specs, unit)
	if err != nil {
		return nil, err
	}
	if interval != "" {
		d, err := traces.ParseDuration(interval, unit)
		if err != nil {
			return nil, usageErrorf("invalid --interval %q: %s", interval, ErrorText(err))
		}
		if d <= 0 {
			return nil, usageErrorf("--interval must be positive, got %s", interval)
		}
		spec.Interval = d
	}
	return spec, nil
}

// config is the sim configuration of the replay. State texts write the
// times of an RFC 3339 trace as RFC 3339 times.
func (rp *replay) config(rows, explain bool) sim.Config {
	unit := rp.spec.Unit
	if rp.trace.RFC3339() {
		unit = limiters.UnitRFC3339
	}
	return sim.Config{
		Lanes:     rp.spec.Lanes,
		Policy:    rp.spec.Oracle,
		KeyFields: rp.keys,
		KeepKeys:  rp.keepKeys,
		Rows:      rows,
		Explain:   explain,
		Interval:  rp.spec.Interval,
		Unit:      unit,
	}
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
	if err == nil && rep.ClockBackwards > 0 {
		f := rep.FirstBackwards
		remedy := "replay it with --sort, or use --clock clamp to judge them at their key's latest time"
		if rp.spec.Oracle.Clock == limiters.ClockClamp {
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
	for _, a := range rp.spec.algos() {
		if a.Windowed() {
			windowed = append(windowed, a.String())
		} else {
			buckets = append(buckets, a.String())
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
		if !rp.spec.limitUsed {
			flags = append(flags, rp.givenFlags("limit")...)
		}
		if !rp.spec.windowUsed {
			flags = append(flags, rp.givenFlags("window")...)
		}
		given := "rate"
		if !rp.spec.limitUsed {
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
		if !slices.ContainsFunc(rp.spec.algos(), func(a limiters.Algorithm) bool { return slices.Contains(a.Params(), prm.Name) }) {
			warnf(w, "--%s has no effect: no limiter that runs takes it (%s do)", prm.Name, takers(prm.Name))
		}
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
	fmt.Fprintf(w, "ratesim: warning: "+format+"\n", args...)
}

// interval is the effective burst interval.
func (sp *policySpec) interval() time.Duration {
	if sp.Interval > 0 {
		return sp.Interval
	}
	return sp.Oracle.Window
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
// report: a window lane's own limit and window, and for a bucket its
// capacity and rate beside the oracle's limit and window.
func (sp *policySpec) laneCells(l sim.Lane) (limit, window, capacity, rate cell) {
	if l.Algorithm.Windowed() {
		return intCell(l.Policy.Limit), decCell(l.Policy.Window, sp.Unit), nullCell(), nullCell()
	}
	return intCell(sp.Oracle.Limit), decCell(sp.Oracle.Window, sp.Unit), intCell(l.Policy.Capacity), strCell(l.Policy.Rate.Format(sp.Unit))
}

// laneLines describe, a line each, the lanes whose parameters differ from
// the ones the header states; none in a plain run.
func (sp *policySpec) laneLines() []string {
	var lines []string
	for _, l := range sp.Lanes {
		if !sp.own(l) && l.Name == l.Algorithm.String() {
			continue
		}
		p := l.Policy
		text := fmt.Sprintf("limiter %s: ", l.Name)
		if l.Name != l.Algorithm.String() {
			text = fmt.Sprintf("limiter %s (%s): ", l.Name, l.Algorithm)
		}
		if l.Algorithm.Windowed() {
			text += fmt.Sprintf("limit %d per %s", p.Limit, sp.duration(p.Window))
		} else {
			text += fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, p.Rate.Format(sp.Unit), unitName(sp.Unit))
		}
		text += sp.extraParams([]limiters.Algorithm{l.Algorithm}, p)
		if l.Algorithm.OwnClock() {
			lines = append(lines, text+", earlier times as the library takes them")
			continue
		}
		lines = append(lines, text+", clock "+clockName(p.Clock))
	}
	return lines
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
	return sp.Policy.Rate.Format(sp.Unit)
}

// describe states the effective parameters in one line. With burst, it adds
// the burst interval and the oracle's limit and window.
func (sp *policySpec) describe(burst bool) string {
	var windowed, bucket bool
	for _, a := range sp.algos() {
		if a.Windowed() {
			windowed = true
		} else {
			bucket = true
		}
	}
	var parts []string
	p := sp.Policy
	if windowed {
		parts = append(parts, fmt.Sprintf("limit %d per %s", p.Limit, sp.duration(p.Window)))
	}
	if bucket {
		parts = append(parts, fmt.Sprintf("capacity %d, rate %s per %s", p.Capacity, sp.rate(), unitName(sp.Unit)))
	}
	if extra := sp.extraParams(sp.algos(), p); extra != "" {
		parts = append(parts, extra[2:])
	}
	clock := "reject"
	if p.Clock == limiters.ClockClamp {
		clock = "clamp"
	}
	parts = append(parts, "clock "+clock)
	if burst {
		parts = append(parts, "burst interval "+sp.duration(sp.interval()))
		if !windowed || sp.Oracle.Limit != p.Limit || sp.Oracle.Window != p.Window {
			parts = append(parts, fmt.Sprintf("oracle limit %d per %s", sp.Oracle.Limit, sp.duration(sp.Oracle.Window)))
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
		_, tw.err = io.WriteString(tw.w, s+"\n")
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
