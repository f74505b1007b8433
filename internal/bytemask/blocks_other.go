//go:build !amd64

package bytemask

// blocks writes the masks of s, whole blocks of 64 bytes, into out.
func blocks(cl *Classes, s []byte, out []uint64) { masksGo(cl, s, out) }
