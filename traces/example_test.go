package traces_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ratesim/ratesim/traces"
)

func ExampleNewReader() {
	trace := "user,timestamp,cost,endpoint\nu1,0.4,1,/search\nu2,1.3,2,/upload\n"
	r, err := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		endpoint, _ := e.Attr("endpoint")
		fmt.Printf("line %d: %s at %dns cost %d on %s\n", e.Line, e.User, e.Time, e.Cost, endpoint)
	}
	// Output:
	// line 2: u1 at 400000000ns cost 1 on /search
	// line 3: u2 at 1300000000ns cost 2 on /upload
}

func ExampleNewReader_error() {
	trace := "user,timestamp\nu1,7\nu1,8\nu2\n"
	r, _ := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	for {
		_, err := r.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// traces: trace.csv:4: expected 2 fields, got 1
}

func ExampleNewWriter() {
	r, _ := traces.NewReader(strings.NewReader("user,timestamp\nu1,7\nu1,8.25\n"), "in.csv", traces.Options{})
	w := traces.NewWriter(os.Stdout, traces.JSONL, time.Millisecond)
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		w.Write(e)
	}
	w.Flush()
	// Output:
	// {"user":"u1","timestamp":7000}
	// {"user":"u1","timestamp":8250}
}

func ExampleGenerate() {
	err := traces.Generate(os.Stdout, traces.GenOptions{
		Pattern:  "boundary",
		Users:    3,
		Requests: 6,
		Seed:     1,
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// user,timestamp
	// u1,7.629
	// u1,8.168
	// u1,8.721
	// u1,10.869
	// u1,11.397
	// u1,11.857
}

func ExampleAppendDecimal() {
	fmt.Println(string(traces.AppendDecimal(nil, 12_000_000_000, time.Second)))
	fmt.Println(string(traces.AppendDecimal(nil, 1_500_000_000, time.Second)))
	fmt.Println(string(traces.AppendDecimal(nil, -250_000, time.Millisecond)))
	// Output:
	// 12
	// 1.5
	// -0.25
}

func ExampleParseDuration() {
	for _, s := range []string{"10", "2.5", "1m", "250ms"} {
		d, err := traces.ParseDuration(s, time.Second)
		fmt.Println(d, err)
	}
	// Output:
	// 10s <nil>
	// 2.5s <nil>
	// 1m0s <nil>
	// 250ms <nil>
}
