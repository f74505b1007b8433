package partial

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// maxLine bounds one line of a partial: a row with its state texts, or a
// report with its lists.
const maxLine = 1 << 30

// record is one line after the header: a row or a report of a stream,
// the stream being the replay's place among the command's replays.
type record struct {
	Row  *rowJSON  `json:"row,omitempty"`
	Part *partJSON `json:"part,omitempty"`
}

// rowJSON is a sim.Row as JSON.
type rowJSON struct {
	Stream    int                 `json:"stream"`
	Pos       sim.Position        `json:"pos"`
	Seq       int64               `json:"seq"`
	Line      int                 `json:"line"`
	User      Bytes               `json:"user"`
	Key       *Bytes              `json:"key,omitempty"` // nil: the user
	Time      int64               `json:"time"`
	TimeText  Bytes               `json:"time_text"`
	Cost      int64               `json:"cost"`
	With      []Bytes             `json:"with,omitempty"`
	Allowed   []bool              `json:"allowed"`
	Oracle    bool                `json:"oracle"`
	Decisions []limiters.Decision `json:"decisions,omitempty"`
	Exact     []limiters.Exact    `json:"exact,omitempty"`
	States    []Bytes             `json:"states,omitempty"`
}

// partJSON is a sim.Part as JSON.
type partJSON struct {
	Stream            int            `json:"stream"`
	Requests          int64          `json:"requests"`
	Keys              int            `json:"keys"`
	KeysHeld          int            `json:"keys_held"`
	Interval          time.Duration  `json:"interval"`
	ClockBackwards    int64          `json:"clock_backwards"`
	FirstBackwards    *rejectionJSON `json:"first_backwards,omitempty"`
	FirstBackwardsPos sim.Position   `json:"first_backwards_pos"`
	Lanes             []laneJSON     `json:"lanes"`
	Agree             [][]int64      `json:"agree,omitempty"`
	Intervals         []intervalJSON `json:"intervals,omitempty"`
	HasIntervals      bool           `json:"has_intervals,omitempty"`
	OutOfOrder        int            `json:"intervals_out_of_order,omitempty"`
	Top               []topJSON      `json:"top,omitempty"`
	TopN              int            `json:"top_n"`
	MostRejectedN     int            `json:"most_rejected_n"`
	Events            int64          `json:"events"`
	Sum               uint64         `json:"sum"`
	// Skipped counts the records a lenient read of the trace had skipped
	// when the replay ended, and Shown are the messages it gave of the
	// first of them.
	Skipped int      `json:"skipped"`
	Shown   []string `json:"shown,omitempty"`
}

type laneJSON struct {
	Name         string              `json:"name"`
	Allowed      int64               `json:"allowed"`
	Rejected     int64               `json:"rejected"`
	FalseAllows  int64               `json:"false_allows"`
	FalseRejects int64               `json:"false_rejects"`
	KeysRejected int64               `json:"keys_rejected"`
	First        *rejectionJSON      `json:"first_rejection,omitempty"`
	FirstPos     sim.Position        `json:"first_rejection_pos"`
	Burst        spanJSON            `json:"burst"`
	BurstPos     sim.Position        `json:"burst_pos"`
	MostRejected []keyJSON           `json:"most_rejected,omitempty"`
	Waits        []sim.DurationCount `json:"waits,omitempty"`
}

type rejectionJSON struct {
	Seq      int64 `json:"seq"`
	Line     int   `json:"line"`
	Key      Bytes `json:"key"`
	Time     int64 `json:"time"`
	TimeText Bytes `json:"time_text"`
}

type spanJSON struct {
	Key   Bytes `json:"key"`
	From  int64 `json:"from"`
	To    int64 `json:"to"`
	Count int64 `json:"count"`
}

type topJSON struct {
	spanJSON
	Lane string       `json:"lane"`
	Pos  sim.Position `json:"pos"`
}

type keyJSON struct {
	Key            Bytes `json:"key"`
	Requests       int64 `json:"requests"`
	Rejected       int64 `json:"rejected"`
	FalseRejects   int64 `json:"false_rejects"`
	FirstRejection Bytes `json:"first_rejection"`
}

type intervalJSON struct {
	Start    int64            `json:"start"`
	Requests int64            `json:"requests"`
	Keys     int64            `json:"keys"`
	Lanes    []sim.LaneCounts `json:"lanes"`
}

func rejectionTo(r *sim.Rejection) *rejectionJSON {
	if r == nil {
		return nil
	}
	return &rejectionJSON{Seq: r.Seq, Line: r.Line, Key: Bytes(r.Key), Time: r.Time, TimeText: Bytes(r.TimeText)}
}

func (r *rejectionJSON) sim() *sim.Rejection {
	if r == nil {
		return nil
	}
	return &sim.Rejection{Seq: r.Seq, Line: r.Line, Key: string(r.Key), Time: r.Time, TimeText: string(r.TimeText)}
}

func spanTo(iv sim.Interval) spanJSON {
	return spanJSON{Key: Bytes(iv.Key), From: iv.From, To: iv.To, Count: iv.Count}
}

func (s spanJSON) sim(name string) sim.Interval {
	return sim.Interval{Name: name, Key: string(s.Key), From: s.From, To: s.To, Count: s.Count}
}

func partTo(stream int, p *sim.Part) *partJSON {
	r := p.Report
	j := &partJSON{Stream: stream, Requests: r.Requests, Keys: r.Keys, KeysHeld: r.KeysHeld, Interval: r.Interval,
		ClockBackwards: r.ClockBackwards, FirstBackwards: rejectionTo(r.FirstBackwards), FirstBackwardsPos: p.FirstBackwards,
		Agree: r.Agree, HasIntervals: r.Intervals != nil, OutOfOrder: r.IntervalsOutOfOrder,
		TopN: p.TopN, MostRejectedN: p.MostRejectedN, Events: p.Events, Sum: p.Sum}
	for a, st := range r.Algos {
		l := laneJSON{Name: st.Name, Allowed: st.Allowed, Rejected: st.Rejected, FalseAllows: st.FalseAllows,
			FalseRejects: st.FalseRejects, KeysRejected: st.KeysRejected, First: rejectionTo(st.FirstRejection), FirstPos: p.First[a],
			Burst: spanTo(st.Burst), BurstPos: p.Burst[a], Waits: st.Waits}
		for _, k := range st.MostRejected {
			l.MostRejected = append(l.MostRejected, keyJSON{Key: Bytes(k.Key), Requests: k.Requests, Rejected: k.Rejected,
				FalseRejects: k.FalseRejects, FirstRejection: Bytes(k.FirstRejection)})
		}
		j.Lanes = append(j.Lanes, l)
	}
	for _, ic := range r.Intervals {
		j.Intervals = append(j.Intervals, intervalJSON{Start: ic.Start, Requests: ic.Requests, Keys: ic.Keys, Lanes: ic.Lanes})
	}
	for i, iv := range r.Top {
		j.Top = append(j.Top, topJSON{spanJSON: spanTo(iv), Lane: iv.Name, Pos: p.Top[i]})
	}
	return j
}

// part returns the sim.Part of j. Its lanes have their names only: Bind
// gives them their algorithms and policies.
func (j *partJSON) part() (*sim.Part, error) {
	r := &sim.Report{Requests: j.Requests, Keys: j.Keys, KeysHeld: j.KeysHeld, Interval: j.Interval,
		ClockBackwards: j.ClockBackwards, FirstBackwards: j.FirstBackwards.sim(), Agree: j.Agree,
		IntervalsOutOfOrder: j.OutOfOrder}
	p := &sim.Part{Report: r, FirstBackwards: j.FirstBackwardsPos, TopN: j.TopN, MostRejectedN: j.MostRejectedN, Events: j.Events, Sum: j.Sum}
	if j.Agree != nil && len(j.Agree) != len(j.Lanes) {
		return nil, fmt.Errorf("an agreement matrix of %d rows for %d lanes", len(j.Agree), len(j.Lanes))
	}
	for _, l := range j.Lanes {
		st := sim.AlgoStats{Name: l.Name, Requests: j.Requests, Allowed: l.Allowed, Rejected: l.Rejected,
			FalseAllows: l.FalseAllows, FalseRejects: l.FalseRejects, KeysRejected: l.KeysRejected,
			FirstRejection: l.First.sim(), Burst: l.Burst.sim(l.Name), Waits: l.Waits}
		for _, k := range l.MostRejected {
			st.MostRejected = append(st.MostRejected, sim.KeyRejections{Key: string(k.Key), Requests: k.Requests,
				Rejected: k.Rejected, FalseRejects: k.FalseRejects, FirstRejection: string(k.FirstRejection)})
		}
		r.Algos = append(r.Algos, st)
		p.First, p.Burst = append(p.First, l.FirstPos), append(p.Burst, l.BurstPos)
	}
	if j.HasIntervals {
		r.Intervals = []sim.IntervalCounts{}
		for _, ic := range j.Intervals {
			if len(ic.Lanes) != len(j.Lanes) {
				return nil, fmt.Errorf("an interval of %d lanes' counts for %d lanes", len(ic.Lanes), len(j.Lanes))
			}
			r.Intervals = append(r.Intervals, sim.IntervalCounts{Start: ic.Start, Requests: ic.Requests, Keys: ic.Keys, Lanes: ic.Lanes})
		}
	}
	for _, t := range j.Top {
		r.Top = append(r.Top, t.spanJSON.sim(t.Lane))
		p.Top = append(p.Top, t.Pos)
	}
	return p, nil
}

// Bind gives the lanes of rep, a report merged from parts, their
// algorithms and policies: those of lanes, the replay's, which must have
// the same names in the same order.
func Bind(rep *sim.Report, lanes []sim.Lane) error {
	if len(rep.Algos) != len(lanes) {
		return fmt.Errorf("the partials have %d limiters, the replay %d", len(rep.Algos), len(lanes))
	}
	byName := map[string]sim.Lane{}
	for a, l := range lanes {
		if rep.Algos[a].Name != l.Name {
			return fmt.Errorf("the partials' limiter %d is %s, the replay's %s", a+1, rep.Algos[a].Name, l.Name)
		}
		st := &rep.Algos[a]
		st.Algorithm, st.Policy = l.Algorithm, l.Policy
		st.Burst.Algorithm, st.Burst.Name = l.Algorithm, l.Name
		byName[l.Name] = l
	}
	for i := range rep.Top {
		l, ok := byName[rep.Top[i].Name]
		if !ok {
			return fmt.Errorf("the partials list an interval of %s, which the replay has no limiter of", rep.Top[i].Name)
		}
		rep.Top[i].Algorithm = l.Algorithm
	}
	return nil
}

func rowTo(stream int, pos sim.Position, r *sim.Row) *rowJSON {
	j := &rowJSON{Stream: stream, Pos: pos, Seq: r.Seq, Line: r.Line, User: Bytes(r.User), Time: r.Time,
		TimeText: Bytes(r.TimeText), Cost: r.Cost, Allowed: r.Allowed, Oracle: r.Oracle, Decisions: r.Decisions, Exact: r.Exact}
	if string(r.Key) != string(r.User) {
		k := Bytes(r.Key)
		j.Key = &k
	}
	for _, w := range r.With {
		j.With = append(j.With, Bytes(w))
	}
	for _, s := range r.States {
		j.States = append(j.States, Bytes(s))
	}
	return j
}

func (j *rowJSON) row() sim.Row {
	r := sim.Row{Seq: j.Seq, Line: j.Line, User: j.User, Key: j.User, Time: j.Time, TimeText: j.TimeText, Cost: j.Cost,
		Allowed: j.Allowed, Oracle: j.Oracle, Decisions: j.Decisions, Exact: j.Exact}
	if j.Key != nil {
		r.Key = *j.Key
	}
	for _, w := range j.With {
		r.With = append(r.With, w)
	}
	if j.States != nil {
		r.States = make([][]byte, len(j.States))
		for i, s := range j.States {
			r.States[i] = s
		}
	}
	if r.Allowed == nil {
		r.Allowed = []bool{}
	}
	return r
}

// A Writer writes a partial: the header, then each stream's rows and
// report.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

// NewWriter writes h to w and returns the writer of the rest.
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 1<<16)}
	pw.enc = json.NewEncoder(pw.w)
	pw.enc.SetEscapeHTML(false)
	h.Format, h.Version = FormatName, Version
	if err := pw.enc.Encode(h); err != nil {
		return nil, err
	}
	return pw, nil
}

// Row writes a row of stream at pos.
func (w *Writer) Row(stream int, pos sim.Position, r *sim.Row) error {
	if w.err == nil {
		w.err = w.enc.Encode(record{Row: rowTo(stream, pos, r)})
	}
	return w.err
}

// Part writes the report of stream, when the trace's lenient read had
// skipped skipped records, the first of them with the messages shown.
func (w *Writer) Part(stream int, p *sim.Part, skipped int, shown []string) error {
	if w.err == nil {
		j := partTo(stream, p)
		j.Skipped, j.Shown = skipped, shown
		w.err = w.enc.Encode(record{Part: j})
	}
	return w.err
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// A Reader reads a partial.
type Reader struct {
	Name   string // for errors
	Header Header
	r      *bufio.Reader
	line   int
	next   *record // read ahead
}

// NewReader reads the header of the partial r, named name in errors,
// and checks its format and version.
func NewReader(name string, r io.Reader) (*Reader, error) {
	pr := &Reader{Name: name, r: bufio.NewReaderSize(r, 1<<16)}
	line, err := pr.readLine()
	if err == io.EOF {
		return nil, fmt.Errorf("partial: %s is empty: not a partial result (ratesim ... --shard I/N -o partial writes one)", name)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(line, &pr.Header); err != nil || pr.Header.Format != FormatName {
		return nil, fmt.Errorf("partial: %s is not a partial result of ratesim (ratesim ... --shard I/N -o partial writes one)", name)
	}
	if pr.Header.Version != Version {
		return nil, fmt.Errorf("partial: %s is in version %d of the partial format, which this ratesim does not read (it reads version %d): merge it with the ratesim that wrote it (%s)", name, pr.Header.Version, Version, pr.Header.Ratesim)
	}
	return pr, nil
}

func (pr *Reader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := pr.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("partial: %s:%d: a line longer than %d bytes", pr.Name, pr.line+1, maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return nil, fmt.Errorf("partial: %s:%d: the last line is cut short: the partial was not written whole", pr.Name, pr.line+1)
		}
		if err != nil {
			return nil, err
		}
		pr.line++
		return line, nil
	}
}

// peek returns the next record without consuming it; nil at the end.
func (pr *Reader) peek() (*record, error) {
	if pr.next != nil {
		return pr.next, nil
	}
	line, err := pr.readLine()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil || (rec.Row == nil) == (rec.Part == nil) {
		return nil, fmt.Errorf("partial: %s:%d: not a row or a report of a partial result", pr.Name, pr.line)
	}
	pr.next = &rec
	return pr.next, nil
}

func (pr *Reader) take() { pr.next = nil }

var errNoPart = errors.New("no report")
