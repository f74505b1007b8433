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
	return helpText("limiters",
		"KEYS", render.WrapText("KEY is "+render.JoinList(spec.ParamNames(), "or")+", as the flags of the same names; what a limiter does not give comes from the flags and --config. "+
			"NAME names its column and summary row; without one, a limiter is named by its algorithm, or by its algorithm and parameters "+
			"(token-bucket(capacity=10)), and two limiters of one name must be given names. Repeat --limiter for more; up to "+
			strconv.Itoa(maxLanes)+" run in one pass:", "  ", 76),
		"ALGORITHMS", render.WrapText("ALGORITHM is one of "+spec.AlgorithmNames()+", or a preset, a real library's limiter with that library's own parameters "+
			"(see \"ratesim presets\": "+strings.Join(presets.Names(), ", ")+"):", "  ", 76))
}

// limiterSpec is one limiter given with --limiter or in the config
// file's limiters: list.
type limiterSpec = spec.Limiter

// stackSpec is one policy of a stack (the policies: list of a policy
// file).
type stackSpec = spec.StackPolicy
