package tables

import (
	"slices"
	"strconv"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/sim"
)

// MatrixRow is one request of the decision matrix, and which of the
// optional columns it has.
type MatrixRow struct {
	batch  *sim.Batch
	i      int  // the request's index in batch
	differ bool // the algorithms decided it differently

	Lanes  int
	Keyed  bool // the key column
	Marked bool // the diff column, which only tables have
	// Attrs are the --with columns the engine carries (sim.Config.With):
	// every one of them but line.
	Attrs []string
	with  []string // the --with columns: file, line, or attributes
}

// WithColumns sets the --with columns of the matrix (file and line, where
// a request is in the traces, or attributes) and returns them, to follow
// Columns; r.Attrs are then those sim.Config.With is to carry.
func (r *MatrixRow) WithColumns(with []string) ([]render.Column, error) {
	r.with, r.Attrs = nil, nil
	var cols []render.Column
	for _, w := range with {
		switch {
		case w == "":
			return nil, errorf("--with has an empty name")
		case slices.Contains(r.with, w):
			return nil, errorf("--with names %s twice", w)
		}
		r.with = append(r.with, w)
		cols = append(cols, render.Column{Name: w, Right: w == "line"})
		if w != "line" {
			r.Attrs = append(r.Attrs, w)
		}
	}
	return cols, nil
}

// Columns are the columns of the decision matrix, in the order AppendTo
// writes them: user, timestamp, then one per lane, the key with --key and
// the diff marker in tables (the --with columns follow them).
func (r *MatrixRow) Columns(lanes []sim.Lane, rfc3339 bool) []render.Column {
	cols := []render.Column{{Name: "user"}, {Name: "timestamp", Right: !rfc3339}}
	for _, l := range lanes {
		cols = append(cols, render.Column{Name: l.Name})
	}
	if r.Keyed {
		cols = append(cols, render.Column{Name: "key"})
	}
	if r.Marked {
		cols = append(cols, render.Column{Name: "diff"})
	}
	return cols
}

// AppendTo appends the values of r's columns through e.
func (r *MatrixRow) AppendTo(e *render.Encoder, b []byte) []byte {
	req := &r.batch.Requests[r.i]
	b = e.Bytes(b, req.User)
	b = e.Time(e.Next(b), req.TimeText)
	for a := range r.Lanes {
		b = strconv.AppendBool(e.Next(b), r.batch.Allowed(r.i, a))
	}
	if r.Keyed {
		b = e.Bytes(e.Next(b), req.Key)
	}
	if r.Marked {
		b = e.Next(b)
		if r.differ {
			b = append(b, '*')
		}
	}
	j := 0
	for _, w := range r.with {
		if w == "line" {
			b = strconv.AppendInt(e.Next(b), int64(req.Line), 10)
			continue
		}
		b = e.Bytes(e.Next(b), r.batch.With(r.i, j))
		j++
	}
	return b
}

// WriteMatrix writes one batch of the decision matrix, counting the
// requests the lanes decide differently; with onlyDiff it writes only
// those.
func WriteMatrix(rw *render.RecordWriter, row *MatrixRow, b *sim.Batch, onlyDiff bool, disagree *int64) error {
	row.batch = b
	for i := range b.Requests {
		first := b.Allowed(i, 0)
		differ := false
		for a := 1; a < row.Lanes; a++ {
			if b.Allowed(i, a) != first {
				differ = true
				break
			}
		}
		if differ {
			*disagree++
		} else if onlyDiff {
			continue
		}
		row.i, row.differ = i, differ
		if err := rw.End(row.AppendTo(rw.Enc(), rw.Begin())); err != nil {
			return err
		}
	}
	return nil
}
