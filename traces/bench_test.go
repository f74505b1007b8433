package traces

import (
	"bytes"
	"encoding/csv"
	"io"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// benchRows is the size of the reading benchmarks' CSV traces: five million
// requests of 100,000 users, the size the performance goal is set for.
const benchRows = 5_000_000

var (
	benchOnce  sync.Once
	benchShort []byte // user,timestamp with keys u0..u99999
	benchUUID  []byte // the same with 36-character keys
)

// benchCSV builds the benchmark traces once: keys spread over 100,000
// users, integer timestamps in seconds rising by one every 50 rows.
func benchCSV() (short, uuid []byte) {
	benchOnce.Do(func() {
		g, _ := newGenerator(GenOptions{Keys: KeysUUID})
		benchShort = make([]byte, 0, benchRows*20)
		benchUUID = make([]byte, 0, benchRows*50)
		benchShort = append(benchShort, "user,timestamp\n"...)
		benchUUID = append(benchUUID, "user,timestamp\n"...)
		for i := range benchRows {
			k := int(mix64(uint64(i)) % 100_000)
			ts := uint64(1_700_000_000 + i/50)
			benchShort = append(benchShort, 'u')
			benchShort = strconv.AppendUint(benchShort, uint64(k), 10)
			benchShort = append(benchShort, ',')
			benchShort = strconv.AppendUint(benchShort, ts, 10)
			benchShort = append(benchShort, '\n')
			benchUUID = g.key(benchUUID, k)
			benchUUID = append(benchUUID, ',')
			benchUUID = strconv.AppendUint(benchUUID, ts, 10)
			benchUUID = append(benchUUID, '\n')
		}
	})
	return benchShort, benchUUID
}

// reportRows reports the wall time per row and, where it can be measured,
// the CPU time per row (the process's, since cpu0 was taken): on a shared
// machine the second says what the code costs.
func reportRows(b *testing.B, rows int, cpu0 int64) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	if cpu0 > 0 {
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(rows), "cpu-ns/row")
	}
}

// startCPU collects the garbage of a benchmark's setup and returns the
// process's CPU time. Without it a collection that building the input
// started runs during the measurement, and the time of its workers (on
// the idle processor, too) is charged to the code measured: the more so
// the larger the input, which made a log format of long lines look
// slower per line than it is.
func startCPU() int64 {
	runtime.GC()
	return cpuTime()
}

func benchRead(b *testing.B, data []byte, name string, rows int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := startCPU()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), name, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		var sum int64
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			sum += e.Time + int64(len(e.User))
			n++
		}
		if n != rows || sum == 0 {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
	}
	reportRows(b, rows, cpu0)
}

// BenchmarkReadCSV reads 5,000,000 rows of user,timestamp (about 90 MB).
func BenchmarkReadCSV(b *testing.B) {
	short, _ := benchCSV()
	benchRead(b, short, "bench.csv", benchRows)
}

// BenchmarkReadCSVUUID reads the same trace with 36-character keys.
func BenchmarkReadCSVUUID(b *testing.B) {
	_, uuid := benchCSV()
	benchRead(b, uuid, "bench.csv", benchRows)
}

// BenchmarkEncodingCSV reads the trace of BenchmarkReadCSV with plain
// encoding/csv and ReuseRecord, the yardstick; it neither checks nor
// converts the fields.
func BenchmarkEncodingCSV(b *testing.B) {
	short, _ := benchCSV()
	b.SetBytes(int64(len(short)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		r := csv.NewReader(bytes.NewReader(short))
		r.ReuseRecord = true
		n := 0
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(rec[0])
		}
		if n == 0 {
			b.Fatal("nothing read")
		}
	}
	reportRows(b, benchRows+1, cpu0)
}

// genTrace generates rows requests of 100,000 users in format f.
func genTrace(b *testing.B, f Format, rows int) []byte {
	var buf bytes.Buffer
	if err := Generate(&buf, GenOptions{Users: 100_000, Requests: rows, Seed: 1, Format: f}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadJSONL reads 1,000,000 generated JSON Lines requests.
func BenchmarkReadJSONL(b *testing.B) {
	data := genTrace(b, JSONL, 1_000_000)
	benchRead(b, data, "bench.jsonl", 1_000_000)
}

// BenchmarkReadYAML reads 100,000 generated YAML requests.
func BenchmarkReadYAML(b *testing.B) {
	data := genTrace(b, YAML, 100_000)
	benchRead(b, data, "bench.yaml", 100_000)
}

// BenchmarkGenerate generates 5,000,000 steady CSV requests of 100,000
// users to a discarding writer.
func BenchmarkGenerate(b *testing.B) {
	for _, keys := range []struct {
		name  string
		style KeyStyle
	}{{"short", KeysShort}, {"uuid", KeysUUID}} {
		b.Run(keys.name, func(b *testing.B) {
			b.ReportAllocs()
			var cw countWriter
			cpu0 := cpuTime()
			for b.Loop() {
				cw = 0
				err := Generate(&cw, GenOptions{Users: 100_000, Requests: benchRows, Seed: 1, Keys: keys.style})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(cw))
			reportRows(b, benchRows, cpu0)
		})
	}
}

// BenchmarkGeneratePatterns generates 1,000,000 requests of each pattern.
func BenchmarkGeneratePatterns(b *testing.B) {
	for _, p := range Patterns() {
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := Generate(io.Discard, GenOptions{Pattern: p, Users: 100_000, Requests: 1_000_000, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			reportRows(b, 1_000_000, cpu0)
		})
	}
}

// BenchmarkWriteCSV writes 1,000,000 events with an attribute.
func BenchmarkWriteCSV(b *testing.B) {
	var e Event
	e.User = []byte("a3f1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b")
	e.Cost = 1
	e.SetAttrs("endpoint", "/search")
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		w := NewWriter(io.Discard, CSV, time.Second)
		for i := range 1_000_000 {
			e.Time = int64(i) * 1_234_567
			if err := w.Write(&e); err != nil {
				b.Fatal(err)
			}
		}
		w.Flush()
	}
	reportRows(b, 1_000_000, cpu0)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
