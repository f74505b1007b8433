package traces

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// logBenchRows is the size of the log readers' benchmark traces.
const logBenchRows = 1_000_000

// benchRequest is one request of the log benchmarks: the same requests
// are written in every format, so that their readers' speeds per line
// compare.
type benchRequest struct {
	ip     []byte
	at     time.Time // arrival
	took   time.Duration
	path   []byte
	status int
	bytes  int
}

var (
	benchLogOnce sync.Once
	benchReqs    []benchRequest
)

// benchRequests returns logBenchRows requests of 100,000 clients, 50 a
// second.
func benchRequests() []benchRequest {
	benchLogOnce.Do(func() {
		base := time.Date(2024, 10, 10, 13, 55, 36, 0, time.FixedZone("", 2*3600))
		benchReqs = make([]benchRequest, logBenchRows)
		for i := range benchReqs {
			k := mix64(uint64(i)) % 100_000
			ip := []byte("10.")
			ip = strconv.AppendUint(ip, k>>16, 10)
			ip = append(ip, '.')
			ip = strconv.AppendUint(ip, (k>>8)&255, 10)
			ip = append(ip, '.')
			ip = strconv.AppendUint(ip, k&255, 10)
			status := 200
			if mix64(uint64(i)+7)%20 == 0 {
				status = 429
			}
			benchReqs[i] = benchRequest{
				ip:     ip,
				at:     base.Add(time.Duration(i) * 20 * time.Millisecond),
				took:   time.Duration(mix64(uint64(i)+3)%300) * time.Millisecond,
				path:   strconv.AppendUint([]byte("/api/items/"), k%1000, 10),
				status: status,
				bytes:  int(mix64(uint64(i)+5) % 20000),
			}
		}
	})
	return benchReqs
}

// benchLog writes the benchmark's requests with line.
func benchLog(line func(dst []byte, r *benchRequest) []byte) []byte {
	reqs := benchRequests()
	out := make([]byte, 0, len(reqs)*200)
	for i := range reqs {
		out = line(out, &reqs[i])
		out = append(out, '\n')
	}
	return out
}

// combinedLine writes r in the combined format, at whole seconds.
func combinedLine(dst []byte, r *benchRequest) []byte {
	dst = append(dst, r.ip...)
	dst = append(dst, " - - ["...)
	dst = r.at.Truncate(time.Second).AppendFormat(dst, clfLayout)
	dst = append(dst, `] "GET `...)
	dst = append(dst, r.path...)
	dst = append(dst, ` HTTP/1.1" `...)
	dst = strconv.AppendInt(dst, int64(r.status), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(r.bytes), 10)
	dst = append(dst, ` "-" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"`...)
	return dst
}

// BenchmarkReadCombined reads 1,000,000 lines of the combined format: the
// yardstick of every log format's reader.
func BenchmarkReadCombined(b *testing.B) {
	data := benchLog(combinedLine)
	benchRead(b, data, "access.log", logBenchRows)
}
