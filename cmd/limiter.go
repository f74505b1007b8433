package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"strconv"
	"strings"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters/presets"
)

// limiterGrammar documents --limiter in help texts.
func limiterGrammar() string {
	return `LIMITERS
  --limiter adds a limiter with parameters of its own: in run, the one
  limiter replayed, instead of --algo; elsewhere beside or instead of
  --algos:

    --limiter [NAME=]ALGORITHM[:KEY=VALUE,...]

` + render.WrapText("KEY is "+render.JoinList(spec.ParamNames(), "or")+", as the flags of the same names; what a limiter does not give comes from the flags and --config. "+
		"NAME names its column and summary row; without one, a limiter is named by its algorithm, or by its algorithm and parameters "+
		"(token-bucket(capacity=10)), and two limiters of one name must be given names. Repeat --limiter for more; up to "+
		strconv.Itoa(maxLanes)+" run in one pass:", "  ", 76) + `

    ratesim compare --limiter tb3=token-bucket:capacity=3,rate=0.3 \
                    --limiter tb10=token-bucket:capacity=10,rate=0.3 trace.csv

` + render.WrapText("ALGORITHM is one of "+spec.AlgorithmNames()+", or a preset, a real library's limiter with that library's own parameters "+
		"(see \"ratesim presets\": "+strings.Join(presets.Names(), ", ")+"):", "  ", 76) + `

    --limiter redis-rate:rate=10,burst=10,period=1s
    --limiter nginx:rate=1r/s,burst=5,nodelay
    --limiter x-time-rate:r=1,b=3
    --limiter envoy:requests_per_unit=10,unit=hour

  In --config, a list under limiters: does the same:

    limiters:
      - {name: tb10, algorithm: token-bucket, capacity: 10, rate: 5/1s}
      - {name: edge, algorithm: nginx, rate: 10r/s, burst: 20, nodelay: true}`
}

// limiterSpec is one limiter given with --limiter or in the config
// file's limiters: list.
type limiterSpec = spec.Limiter

// stackSpec is one policy of a stack (the policies: list of a policy
// file).
type stackSpec = spec.StackPolicy
