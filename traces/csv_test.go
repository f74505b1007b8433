package traces

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestSplitPlain checks the word-at-a-time splitter against splitting
// byte by byte, on lines of every length up to 40 with commas, quotes,
// carriage returns and non-ASCII bytes anywhere.
func TestSplitPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab,,\"\r\x80\xc3z9")
	p := &csvParser{}
	for n := 1; n <= 40; n++ {
		for range 300 {
			line := make([]byte, n)
			for i := range line {
				if rng.IntN(3) == 0 {
					line[i] = alphabet[rng.IntN(len(alphabet))]
				} else {
					line[i] = 'a' + byte(rng.IntN(26))
				}
			}
			quoted, ascii := p.splitPlain(line, 7)

			body := line
			if body[len(body)-1] == '\r' {
				body = body[:len(body)-1]
			}
			if bytes.IndexByte(body, '"') >= 0 {
				if !quoted {
					t.Fatalf("%q: quote not reported", line)
				}
				continue
			}
			if quoted {
				t.Fatalf("%q: reported a quote", line)
			}
			wantASCII := true
			for _, c := range body {
				wantASCII = wantASCII && c < 0x80
			}
			if ascii != wantASCII {
				t.Fatalf("%q: ascii %v, want %v", line, ascii, wantASCII)
			}
			want := bytes.Split(body, []byte(","))
			if len(p.fields) != len(want) {
				t.Fatalf("%q: %d fields, want %d", line, len(p.fields), len(want))
			}
			col := 1
			for i, f := range p.fields {
				if !bytes.Equal(f.val, want[i]) || f.col != col || f.line != 7 || cap(f.val) != len(f.val) {
					t.Fatalf("%q: field %d is %q at col %d (cap %d), want %q at col %d", line, i, f.val, f.col, cap(f.val), want[i], col)
				}
				col += len(want[i]) + 1
			}
		}
	}
}
