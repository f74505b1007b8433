package traces

import (
	"bytes"
	"io"
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
	// Room for all the lines, from the first one's length, so that the
	// log is not copied as it grows.
	out := make([]byte, 0, len(reqs)*(len(line(nil, &reqs[0]))+16))
	for i := range reqs {
		out = line(out, &reqs[i])
		out = append(out, '\n')
	}
	return out
}

// combinedLine writes r in the combined format, at its arrival in whole
// seconds.
func combinedLine(dst []byte, r *benchRequest) []byte { return combinedAt(dst, r, r.at) }

// combinedAt writes r in the combined format at t in whole seconds.
func combinedAt(dst []byte, r *benchRequest, t time.Time) []byte {
	dst = append(dst, r.ip...)
	dst = append(dst, " - - ["...)
	dst = t.Truncate(time.Second).AppendFormat(dst, clfLayout)
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

// nginxTimedFormat is combined with $request_time: its reader computes
// every arrival.
const nginxTimedFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time`

// benchFormats write the benchmark's requests in each log format.
var benchFormats = []struct {
	name string
	opts Options
	head string
	line func(dst []byte, r *benchRequest) []byte
}{
	{"combined", Options{}, "", combinedLine},
	{"nginx-request-time", Options{Format: Nginx, LogFormat: nginxTimedFormat}, "", func(dst []byte, r *benchRequest) []byte {
		dst = combinedAt(dst, r, r.at.Add(r.took))
		dst = append(dst, ' ')
		return AppendDecimal(dst, int64(r.took), time.Second)
	}},
	{"upstreaminfo", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		dst = combinedAt(dst, r, r.at.Add(r.took))
		dst = append(dst, " 312 "...)
		dst = AppendDecimal(dst, int64(r.took), time.Second)
		dst = append(dst, " [shop-api-8080] [] 10.244.1.17:8080 1450 "...)
		dst = AppendDecimal(dst, int64(r.took), time.Second)
		return append(dst, " 200 7f3a1c0e5b2d4f6a8e9c0b1d2e3f4a5b"...)
	}},
	{"alb", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		done := r.at.Add(r.took).UTC()
		dst = append(dst, "https "...)
		dst = done.AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
		dst = append(dst, " app/shop-lb/50dc6c495c0c9188 "...)
		dst = append(dst, r.ip...)
		dst = append(dst, ":2817 10.0.0.1:80 0.000 "...)
		dst = AppendDecimal(dst, int64(r.took), time.Second)
		dst = append(dst, " 0.000 "...)
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, " 34 "...)
		dst = strconv.AppendInt(dst, int64(r.bytes), 10)
		dst = append(dst, ` "GET https://www.example.com:443`...)
		dst = append(dst, r.path...)
		dst = append(dst, ` HTTP/1.1" "Mozilla/5.0 (X11; Linux x86_64)" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/shop/73e2d6bc24d8a067 "Root=1-67080a28-36d228ad5d99923122bbe354" "www.example.com" "-" 0 `...)
		dst = r.at.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000Z")
		return append(dst, ` "forward" "-" "-" "10.0.0.1:80" "200" "-" "-"`...)
	}},
	{"cloudfront", Options{}, "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query x-edge-result-type time-taken\n", func(dst []byte, r *benchRequest) []byte {
		done := r.at.Add(r.took).UTC().Truncate(time.Second)
		dst = done.AppendFormat(dst, "2006-01-02\t15:04:05")
		dst = append(dst, "\tFRA56-P1\t"...)
		dst = strconv.AppendInt(dst, int64(r.bytes), 10)
		dst = append(dst, '\t')
		dst = append(dst, r.ip...)
		dst = append(dst, "\tGET\td111111abcdef8.cloudfront.net\t"...)
		dst = append(dst, r.path...)
		dst = append(dst, '\t')
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, "\t-\tMozilla/5.0%20(X11;%20Linux%20x86_64)\t-\tHit\t"...)
		return AppendDecimal(dst, int64(r.took), time.Second)
	}},
	{"w3c", Options{}, "#Software: Microsoft Internet Information Services 10.0\n#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query c-ip cs(User-Agent) sc-status time-taken\n", func(dst []byte, r *benchRequest) []byte {
		done := r.at.Add(r.took).UTC().Truncate(time.Second)
		dst = done.AppendFormat(dst, "2006-01-02 15:04:05")
		dst = append(dst, " 10.0.0.5 GET "...)
		dst = append(dst, r.path...)
		dst = append(dst, " - "...)
		dst = append(dst, r.ip...)
		dst = append(dst, " Mozilla/5.0+(X11;+Linux+x86_64) "...)
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, ' ')
		return strconv.AppendInt(dst, int64(r.took/time.Millisecond), 10)
	}},
	{"envoy", Options{Format: Envoy, LogFormat: `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% "%REQ(USER-AGENT)%"`}, "", func(dst []byte, r *benchRequest) []byte {
		dst = append(dst, '[')
		dst = r.at.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
		dst = append(dst, `] "GET `...)
		dst = append(dst, r.path...)
		dst = append(dst, ` HTTP/1.1" `...)
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, " - 0 "...)
		dst = strconv.AppendInt(dst, int64(r.bytes), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(r.took/time.Millisecond), 10)
		dst = append(dst, ' ')
		dst = append(dst, r.ip...)
		return append(dst, ` "Mozilla/5.0 (X11; Linux x86_64)"`...)
	}},
	{"haproxy", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		dst = append(dst, r.ip...)
		dst = append(dst, ":48214 ["...)
		dst = r.at.UTC().AppendFormat(dst, haproxyLayout)
		dst = append(dst, "] www~ shop/srv1 0/0/1/10/"...)
		dst = strconv.AppendInt(dst, int64(r.took/time.Millisecond), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(r.bytes), 10)
		dst = append(dst, ` - - ---- 3/3/1/1/0 0/0 "GET `...)
		dst = append(dst, r.path...)
		return append(dst, ` HTTP/1.1"`...)
	}},
	{"traefik", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		dst = combinedLine(dst, r)
		dst = append(dst, ` 1 "shop@docker" "http://10.0.0.21:8080" `...)
		dst = strconv.AppendInt(dst, int64(r.took/time.Millisecond), 10)
		return append(dst, "ms"...)
	}},
	{"traefik-json", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		dst = append(dst, `{"ClientHost":"`...)
		dst = append(dst, r.ip...)
		dst = append(dst, `","DownstreamStatus":`...)
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		dst = append(dst, `,"Duration":`...)
		dst = strconv.AppendInt(dst, int64(r.took), 10)
		dst = append(dst, `,"RequestMethod":"GET","RequestPath":"`...)
		dst = append(dst, r.path...)
		dst = append(dst, `","StartUTC":"`...)
		dst = r.at.UTC().AppendFormat(dst, time.RFC3339Nano)
		return append(dst, `","request_User-Agent":"Mozilla/5.0 (X11; Linux x86_64)"}`...)
	}},
	{"caddy", Options{}, "", func(dst []byte, r *benchRequest) []byte {
		dst = append(dst, `{"level":"info","ts":`...)
		dst = AppendDecimal(dst, r.at.Add(r.took).UnixNano(), time.Second)
		dst = append(dst, `,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"`...)
		dst = append(dst, r.ip...)
		dst = append(dst, `","method":"GET","uri":"`...)
		dst = append(dst, r.path...)
		dst = append(dst, `","headers":{"User-Agent":["Mozilla/5.0 (X11; Linux x86_64)"]}},"duration":`...)
		dst = AppendDecimal(dst, int64(r.took), time.Second)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(r.bytes), 10)
		dst = append(dst, `,"status":`...)
		dst = strconv.AppendInt(dst, int64(r.status), 10)
		return append(dst, '}')
	}},
}

// BenchmarkReadLogs reads the same 1,000,000 requests in every log
// format; the target is at most twice combined's time per line.
func BenchmarkReadLogs(b *testing.B) {
	for _, f := range benchFormats {
		b.Run(f.name, func(b *testing.B) {
			data := append([]byte(f.head), benchLog(f.line)...)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := startCPU()
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), "bench.log", f.opts)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					e, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += len(e.User)
				}
				if n == 0 {
					b.Fatal("nothing read")
				}
			}
			reportRows(b, logBenchRows, cpu0)
		})
	}
}

// TestBenchLogs checks that the benchmark's logs read as their formats,
// with the same users and arrivals as the requests they were written
// from (to the resolution each format has).
func TestBenchLogs(t *testing.T) {
	reqs := benchRequests()[:2000]
	for _, f := range benchFormats {
		var data []byte
		data = append(data, f.head...)
		for i := range reqs {
			data = append(f.line(data, &reqs[i]), '\n')
		}
		r, err := NewReader(bytes.NewReader(data), "bench.log", f.opts)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for i := range reqs {
			e, err := r.Next()
			if err != nil {
				t.Fatalf("%s: line %d: %v", f.name, i+1, err)
			}
			if string(e.User) != string(reqs[i].ip) {
				t.Fatalf("%s: line %d: user %q, want %q", f.name, i+1, e.User, reqs[i].ip)
			}
			if d := e.Time - reqs[i].at.UnixNano(); d > int64(time.Second) || d < -int64(time.Second) {
				t.Fatalf("%s: line %d: arrival %v, want %v", f.name, i+1, time.Unix(0, e.Time), reqs[i].at)
			}
		}
		if f.name != "combined" && f.name != "upstreaminfo" && f.name != "traefik" && r.Format().String() == "combined" {
			t.Errorf("%s read as combined", f.name)
		}
	}
}
