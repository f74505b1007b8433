package sim

import "math/bits"

// MaxLabels is the most labels Config.Label may give requests.
const MaxLabels = 16

// LabelCount is what one lane did with the requests of one label.
type LabelCount struct {
	Requests int64
	Allowed  int64
}

// Rejected is the requests of the label the lane rejected.
func (c LabelCount) Rejected() int64 { return c.Requests - c.Allowed }

// Label returns request i's label (Config.Label); 0 without one. It is
// valid only during the emit callback.
func (b *Batch) Label(i int) uint8 {
	if b.labels == nil {
		return 0
	}
	return b.labels[i]
}

// labelCounts are one worker's counts of its requests by label: how many
// of each, and per lane how many it allowed. Only runs given a
// Config.Label pay for them: a few additions per request, one per lane
// that allowed it.
type labelCounts struct {
	lanes    int
	requests []int64 // by label
	allowed  []int64 // by label, then lane
}

func newLabelCounts(labels, lanes int) *labelCounts {
	return &labelCounts{lanes: lanes, requests: make([]int64, labels), allowed: make([]int64, labels*lanes)}
}

// add counts a request of label lab: the lanes that allowed it are those
// of mask, the first n0, then those of more, a word each (see wordOf).
func (lc *labelCounts) add(lab uint8, mask uint64, n0 int, more []uint64) {
	lc.requests[lab]++
	row := lc.allowed[int(lab)*lc.lanes:]
	for m := mask; m != 0; m &= m - 1 {
		row[bits.TrailingZeros64(m)]++
	}
	for k, m := range more {
		base := n0 + k*wordLanes
		for ; m != 0; m &= m - 1 {
			row[base+bits.TrailingZeros64(m)]++
		}
	}
}

// merge adds the counts of the workers into the lanes' stats.
func mergeLabels(stats []AlgoStats, workers []*worker, labels int) {
	for a := range stats {
		stats[a].ByLabel = make([]LabelCount, labels)
	}
	for _, wk := range workers {
		lc := wk.labels
		if lc == nil {
			continue
		}
		for lab := range labels {
			for a := range stats {
				c := &stats[a].ByLabel[lab]
				c.Requests += lc.requests[lab]
				c.Allowed += lc.allowed[lab*lc.lanes+a]
			}
		}
	}
}

// NumWith returns the number of values each request carries
// (Config.With, and the trace file with Config.WithFile).
func (b *Batch) NumWith() int { return b.nwith }
