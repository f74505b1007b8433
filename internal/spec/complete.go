package spec

import (
	"slices"
	"strings"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// AlgorithmCompletions are the algorithms as completion offers them,
// each after prefix (an --algos list so far) and with its summary,
// leaving out those prefix names already.
func AlgorithmCompletions(prefix string) choice.List {
	named := strings.Split(prefix, ",")
	var out choice.List
	for _, a := range limiters.AllAlgorithms() {
		if slices.Contains(named, a.String()) {
			continue
		}
		out = append(out, choice.Choice{Name: prefix + a.String(), Description: a.Summary()})
	}
	return out
}

// LimiterCompletions are what a --limiter being typed, toComplete, may
// go on with: after a ':', the parameter keys its algorithm or preset
// takes (without descriptions); before it, the algorithms and the
// presets after an optional NAME=.
func LimiterCompletions(toComplete string) choice.List {
	var out choice.List
	if head, args, ok := strings.Cut(toComplete, ":"); ok {
		done := args[:strings.LastIndex(args, ",")+1]
		algo := head
		if _, a, named := strings.Cut(head, "="); named {
			algo = a
		}
		for _, k := range LimiterKeys(algo) {
			out = append(out, choice.Choice{Name: head + ":" + done + k})
		}
		return out
	}
	prefix := ""
	if name, _, ok := strings.Cut(toComplete, "="); ok {
		prefix = name + "="
	}
	out = AlgorithmCompletions(prefix)
	for _, p := range presets.All() {
		out = append(out, choice.Choice{Name: prefix + p.Name, Description: "preset: " + p.Library})
	}
	return out
}
