package bytemask

// blocks writes the masks of s, whole blocks of 64 bytes, into out.
func blocks(cl *Classes, s []byte, out []uint64) {
	blocksSSE2(&s[0], len(s)/64, &cl.pats, &out[0])
}

// blocksSSE2 writes the masks of the n blocks at p to out, Stride words
// a block. SSE2 is in every amd64 processor.
//
//go:noescape
func blocksSSE2(p *byte, n int, pats *[2][16]byte, out *uint64)
