package intmath

import (
	"math"
	"testing"
)

func TestFloorDiv(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 1}, {-1, 10, -1}, {-10, 10, -1}, {-11, 10, -2},
		{math.MinInt64, 1, math.MinInt64}, {math.MinInt64, 10, math.MinInt64/10 - 1}, {math.MaxInt64, 10, math.MaxInt64 / 10},
	} {
		if got := FloorDiv(c.a, c.b); got != c.want {
			t.Errorf("FloorDiv(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
