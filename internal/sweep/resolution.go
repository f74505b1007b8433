package sweep

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ratesim/ratesim/sim"
)

// FinerThan names, as "the 100ms of nginx", the emission interval (the
// time between two requests it lets through in the long run, at
// LongRunRate) of each lane whose interval is shorter than res, a log's
// resolution: the requests of one tick of the log's clock then come at
// once, and the lane refuses more of them than it would at their own
// times.
func FinerThan(lanes []sim.Lane, res time.Duration) []string {
	var finer []string
	for _, l := range lanes {
		rate := LongRunRate(l)
		if rate == nil || rate.Sign() <= 0 {
			continue
		}
		// The emission interval is 1/rate ns; res is coarser when
		// res*rate > 1.
		if new(big.Rat).Mul(rate, new(big.Rat).SetInt64(int64(res))).Cmp(big.NewRat(1, 1)) > 0 {
			interval := new(big.Int).Quo(rate.Denom(), rate.Num())
			finer = append(finer, fmt.Sprintf("the %v of %s", time.Duration(interval.Int64()), l.Name))
		}
	}
	return finer
}
