package spec

import (
	"slices"
	"strings"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
)

// Param returns the limiters parameter named name.
func Param(name string) (limiters.Param, bool) {
	for _, prm := range limiters.Params() {
		if prm.Name == name {
			return prm, true
		}
	}
	return limiters.Param{}, false
}

// Takers names the algorithms that take parameter name, as help and
// warnings list them: "fixed-window, sliding-log".
func Takers(name string) string {
	var names []string
	for _, a := range limiters.AllAlgorithms() {
		if slices.Contains(a.Params(), name) {
			names = append(names, a.String())
		}
	}
	return strings.Join(names, ", ")
}

// PresetsTaking names the presets that take parameter name: "nginx,
// redis-rate".
func PresetsTaking(name string) string {
	var names []string
	for _, p := range presets.All() {
		if slices.Contains(p.ParamNames(), name) {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ", ")
}
