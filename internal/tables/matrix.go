package tables

import (
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
}

// Columns are the columns of the decision matrix, in the order appendTo
// writes them: user, timestamp, then one per lane, the key with --key and
// the diff marker in tables.
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
