package cmd

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

const runLong = `Replay a trace through one algorithm and print its decision on every
request, in trace order.

Columns: user, timestamp (as the trace wrote it), cost, allowed, remaining
(whole units left), retry_after (how long until this request would pass if
nothing else arrived; 0 when allowed), reset_after (how long until the key is
back to its fresh state) and reason (empty when allowed). leaky-queue adds
delay, --key adds key, --explain adds state: what the decision was based on.
Durations are exact numbers in the trace unit (seconds for RFC 3339 traces).

A table shows the first 1000 rows and a totals footer; -o csv, json or jsonl
stream every row.`

const runExample = `  ratesim run --algo token-bucket --capacity 3 --rate 0.2 --explain traces/examples/token-bucket.csv
  ratesim run --algo fixed-window --only rejected -o csv trace.csv
  zcat trace.csv.gz | ratesim run --algo gcra --rate 300/1m -`

// runOptions are the options of "ratesim run".
type runOptions struct {
	trace   traceOptions
	policy  policyOptions
	Algo    string
	Explain bool
	Only    string
	Output  string
}

func newRunCmd() *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:               "run --algo NAME [flags] TRACE|-",
		Short:             "Replay a trace through one algorithm, request by request",
		Long:              runLong + policyHelp,
		Example:           runExample,
		Args:              exactTrace,
		ValidArgsFunction: completeTraceFiles,
		Annotations:       map[string]string{exitStatusKey: replayExitStatus},
		RunE: func(c *cobra.Command, args []string) error {
			o.trace.Path = traceArg(args)
			o.policy.markSet(c.Flags())
			return runRun(o, streamsOf(c))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Algo, "algo", "", "algorithm: "+algorithmNames())
	fs.BoolVar(&o.Explain, "explain", false, "add the state column: what each decision was based on")
	fs.StringVar(&o.Only, "only", "", "show only allowed or rejected requests")
	addOutputFlag(fs, &o.Output)
	addPolicyFlags(fs, &o.policy)
	addTraceFlags(fs, &o.trace)
	registerCompletions(c)
	return c
}

// runRun replays o.trace through one algorithm and writes a row per request.
func runRun(o *runOptions, s streams) error {
	specs, err := o.policy.specs()
	if err != nil {
		return err
	}
	var algos []limiters.Algorithm
	switch {
	case len(specs) > 1:
		return usageErrorf("run replays one limiter: give one --limiter, or compare several")
	case len(specs) == 1 && o.Algo != "":
		return usageErrorf("give --algo or --limiter, not both")
	case len(specs) == 0:
		algo, err := parseAlgorithm(o.Algo)
		if err != nil {
			return err
		}
		algos = []limiters.Algorithm{algo}
	}
	format, err := parseOutput(o.Output)
	if err != nil {
		return err
	}
	var keepAllowed, keepRejected = true, true
	switch o.Only {
	case "":
	case "allowed":
		keepRejected = false
	case "rejected":
		keepAllowed = false
	default:
		return usageErrorf("invalid --only %q (valid: allowed, rejected)", o.Only)
	}
	if err := checkKeys(o.trace.Key); err != nil {
		return err
	}
	o.policy.single = true // the config file's limiters: and algos: do not join
	rp, err := prepare(&o.trace, &o.policy, algos, specs, "", s)
	if err != nil {
		return err
	}
	defer rp.trace.Close()
	unit := rp.spec.Unit

	cols := []column{
		{"user", false}, {"timestamp", !rp.trace.RFC3339()}, {"cost", true}, {"allowed", false},
		{"remaining", true}, {"retry_after", true}, {"reset_after", true}, {"reason", false},
	}
	algo := rp.spec.Lanes[0].Algorithm
	queue := algo.Delays()
	if queue {
		cols = append(cols, column{"delay", true})
	}
	keyed := len(o.trace.Key) > 0
	if keyed {
		cols = append(cols, column{"key", false})
	}
	if o.Explain {
		cols = append(cols, column{"state", false})
	}
	rw := newRecordWriter(s.out, format, cols)
	var totalCost costSum
	emit := func(b *sim.Batch) error {
		for i := range b.Requests {
			r := &b.Requests[i]
			d := b.Decision(i, 0)
			totalCost.add(r.Cost)
			if d.Allowed {
				if !keepAllowed {
					continue
				}
			} else if !keepRejected {
				continue
			}
			if rw.format == outCSV {
				// The hot path of "run -o csv" on millions of rows.
				var key, state []byte
				if keyed {
					key = r.Key
				}
				if o.Explain {
					state = b.State(i, 0)
				}
				if err := rw.runCSV(r, d, b.Exact(i, 0), unit, queue, keyed, key, o.Explain, state); err != nil {
					return err
				}
				continue
			}
			rw.begin()
			rw.str(r.User)
			rw.time(r.TimeText)
			rw.int(r.Cost)
			rw.bool(d.Allowed)
			rw.int(d.Remaining)
			x := b.Exact(i, 0)
			if d.Reason == limiters.ReasonCost {
				rw.null("never")
			} else {
				rw.wait(d.RetryAfter, x.RetryAfter, unit)
			}
			rw.wait(d.ResetAfter, x.ResetAfter, unit)
			rw.text(string(d.Reason))
			if queue {
				rw.wait(d.Delay, x.Delay, unit)
			}
			if keyed {
				rw.str(r.Key)
			}
			if o.Explain {
				rw.state(b.State(i, 0))
			}
			if err := rw.end(); err != nil {
				return err
			}
		}
		return nil
	}
	cfg := rp.config(true, o.Explain)
	cfg.DecisionsOnly = true // run shows no oracle or burst figures
	cfg.Detail = true
	rep, err := rp.run(cfg, s, emit)
	if err != nil {
		return err
	}
	if err := rw.close(); err != nil {
		return err
	}
	if rw.textual() {
		st := rep.Algos[0]
		footer := make([]string, len(cols))
		footer[0] = "total"
		// The footer counts the whole trace; when the table lists fewer
		// rows (--only, or past maxTableRows) it says how many it shows.
		footer[1] = plural(rep.Requests, "request")
		if shown := int64(len(rw.cells)); shown != rep.Requests {
			which := ""
			if o.Only != "" {
				which = o.Only + " "
			}
			footer[1] += ", " + formatInt(shown) + " " + which + "shown"
		}
		footer[2] = totalCost.String()
		footer[3] = formatInt(st.Allowed) + " allowed"
		footer[7] = formatInt(st.Rejected) + " rejected"
		if rep.Requests == 0 {
			footer = nil
		}
		w := &textWriter{w: s.out, format: format}
		name := algo.String()
		if lane := rp.spec.Lanes[0]; lane.Name != name {
			name = fmt.Sprintf("%s (%s)", lane.Name, algo)
		}
		w.line(fmt.Sprintf("%s on %s: %s", name, rp.trace.name, rp.spec.describe(false)))
		w.line(fmt.Sprintf("%s, %s", plural(rep.Requests, "request"), plural(int64(rep.Keys), "key")))
		if line := backwardsLine(rep); line != "" {
			w.line(line)
		}
		w.blank()
		t := &table{header: rw.header(), right: rw.aligns(), rows: rw.cells, footer: footer}
		w.table(t)
		if rw.hidden > 0 {
			w.blank()
			w.line(fmt.Sprintf("%s more not shown; -o csv lists every row", plural(rw.hidden, "row")))
		}
		if err := w.err; err != nil {
			return err
		}
	}
	return rp.trace.finish()
}

// costSum is a sum of costs in 128 bits, two's complement: a few huge
// costs pass int64, and the footer shows the exact total.
type costSum struct {
	hi int64
	lo uint64
}

func (s *costSum) add(cost int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(cost), 0)
	s.hi += cost>>63 + int64(carry)
}

func (s costSum) String() string {
	n := big.NewInt(s.hi)
	n.Lsh(n, 64)
	return n.Add(n, new(big.Int).SetUint64(s.lo)).String()
}

// dur writes a duration as an exact number in unit.
func (rw *recordWriter) dur(ns int64, unit time.Duration) {
	rw.next()
	switch rw.format {
	case outCSV, outJSON, outJSONL:
		rw.buf = appendDuration(rw.buf, ns, unit)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, string(traces.AppendDecimal(nil, ns, unit)))
		}
	}
}

// text writes a text field held in a string.
func (rw *recordWriter) text(s string) {
	rw.next()
	switch rw.format {
	case outCSV:
		rw.buf = appendCSV(rw.buf, s)
	case outJSON, outJSONL:
		rw.buf = appendJSONString(rw.buf, s)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, s)
		}
	}
}

// plural writes "1 request", "2 requests".
func plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}

// checkKeys checks the --key attribute names.
func checkKeys(keys []string) error {
	for _, k := range keys {
		if k == "" {
			return usageErrorf("--key has an empty attribute name")
		}
	}
	return nil
}

// runCSV writes one CSV row of run's output without going field by field.
func (rw *recordWriter) runCSV(r *sim.Request, d *limiters.Decision, x *limiters.Exact, unit time.Duration, queue, keyed bool, key []byte, explain bool, state []byte) error {
	b := appendCSVBytes(rw.buf, r.User)
	b = append(b, ',')
	b = appendCSVBytes(b, r.TimeText)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.Cost, 10)
	if d.Allowed {
		b = append(b, ",true,"...)
	} else {
		b = append(b, ",false,"...)
	}
	b = strconv.AppendInt(b, d.Remaining, 10)
	b = append(b, ',')
	if d.Reason != limiters.ReasonCost {
		b = appendWait(b, d.RetryAfter, x.RetryAfter, unit)
	}
	b = append(b, ',')
	b = appendWait(b, d.ResetAfter, x.ResetAfter, unit)
	b = append(b, ',')
	b = appendCSV(b, string(d.Reason))
	if queue {
		b = append(b, ',')
		b = appendWait(b, d.Delay, x.Delay, unit)
	}
	if keyed {
		b = append(b, ',')
		b = appendCSVBytes(b, key)
	}
	if explain {
		b = append(b, ',')
		b = appendCSVBytes(b, state)
	}
	rw.buf = append(b, '\n')
	rw.rows++
	if len(rw.buf) >= flushAt {
		return rw.flush()
	}
	return nil
}

// appendWait appends a decision's duration d as an exact number in unit.
// A d of limiters.InfDuration stands for a wait longer than a Duration
// holds (about 292 years); full has it exactly.
func appendWait(dst []byte, d time.Duration, full limiters.Span, unit time.Duration) []byte {
	if d != limiters.InfDuration {
		return appendDuration(dst, int64(d), unit)
	}
	q, r := new(big.Int).QuoRem(full.Big(), big.NewInt(int64(unit)), new(big.Int))
	dst = q.Append(dst, 10)
	if r.Sign() != 0 {
		frac := traces.AppendDecimal(nil, r.Int64(), unit) // "0.xyz"
		dst = append(dst, frac[1:]...)
	}
	return dst
}

// wait writes a decision's duration d, exactly; see appendWait.
func (rw *recordWriter) wait(d time.Duration, full limiters.Span, unit time.Duration) {
	if d != limiters.InfDuration {
		rw.dur(int64(d), unit)
		return
	}
	rw.next()
	text := appendWait(nil, d, full, unit)
	switch rw.format {
	case outCSV, outJSON, outJSONL:
		rw.buf = append(rw.buf, text...)
	default:
		if rw.row != nil {
			rw.row = append(rw.row, string(text))
		}
	}
}

// appendDuration appends ns as an exact number in unit; zero, the common
// case, without the general conversion.
func appendDuration(dst []byte, ns int64, unit time.Duration) []byte {
	if ns == 0 {
		return append(dst, '0')
	}
	return traces.AppendDecimal(dst, ns, unit)
}
