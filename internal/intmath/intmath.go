// Package intmath holds the integer arithmetic several packages share.
package intmath

// FloorDiv returns floor(a/b) for b > 0: the index of the aligned span
// [k*b, (k+1)*b) that holds a, for negative a too.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
