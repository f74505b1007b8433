package cmd

import (
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/tables"

	"io"
	"strconv"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// BenchmarkRunRowCSV measures the hot path of run -o csv: one row of run's
// columns through the encoder into the output buffer. It must not
// allocate.
func BenchmarkRunRowCSV(b *testing.B) {
	const n = 4096
	reqs := make([]sim.Request, n)
	decisions := make([]limiters.Decision, n)
	exact := make([]limiters.Exact, n)
	for i := range reqs {
		user := []byte("u" + strconv.Itoa(i*37%100000))
		reqs[i] = sim.Request{User: user, Key: user, TimeText: []byte(strconv.Itoa(i * 3)), Cost: 1}
		d := &decisions[i]
		d.Allowed = i%3 != 0
		d.Remaining = int64(i % 4)
		d.ResetAfter = time.Duration(i%7) * 1500 * time.Millisecond
		if !d.Allowed {
			d.RetryAfter = time.Duration(i%5) * 700 * time.Millisecond
			d.Reason = "no tokens"
		}
	}
	row := tables.RunRow{Unit: time.Second}
	rw := render.NewRecordWriter(io.Discard, render.FormatCSV, row.Columns(false))
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		i := k % n
		row.Req, row.D, row.Exact = &reqs[i], &decisions[i], &exact[i]
		if err := rw.End(row.AppendTo(rw.Enc(), rw.Begin())); err != nil {
			b.Fatal(err)
		}
	}
}
