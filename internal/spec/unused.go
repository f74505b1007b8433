package spec

import (
	"slices"
	"strings"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/limiters"
)

// UnusedFlags says, a warning each, which of the policy flags given (by
// name) have no effect on a replay of sp: bucket flags when only window
// algorithms run; with decisionsOnly (a replay without oracle or burst
// figures), window flags that no algorithm uses, not even as a bucket's
// default; and the flag of any other parameter no limiter that runs
// takes.
func (sp *Spec) UnusedFlags(given map[string]bool, decisionsOnly bool) []string {
	var warnings []string
	flags := func(names ...string) []string {
		var fl []string
		for _, n := range names {
			if given[n] {
				fl = append(fl, "--"+n)
			}
		}
		return fl
	}
	var windowed, buckets []string
	for _, a := range sp.Algos() {
		list := &buckets
		if a.Windowed() {
			list = &windowed
		}
		if !slices.Contains(*list, a.String()) {
			*list = append(*list, a.String())
		}
	}
	if len(buckets) == 0 {
		if fl := flags("capacity", "rate"); fl != nil {
			warnings = append(warnings, noEffect(fl)+": only window algorithms run ("+strings.Join(windowed, ", ")+"), and they use --limit and --window")
		}
	}
	if decisionsOnly && len(windowed) == 0 {
		var fl []string
		if !sp.LimitUsed {
			fl = append(fl, flags("limit")...)
		}
		if !sp.WindowUsed {
			fl = append(fl, flags("window")...)
		}
		what := "rate"
		if !sp.LimitUsed {
			what = "capacity and rate"
		}
		its := "has its"
		if len(buckets) > 1 {
			its = "have their"
		}
		if fl != nil {
			warnings = append(warnings, noEffect(fl)+": "+strings.Join(buckets, ", ")+" "+its+" "+what+" given")
		}
	}
	for _, prm := range limiters.Params() {
		if slices.Contains(CoreParams, prm.Name) || !given[prm.Name] {
			continue
		}
		if !slices.ContainsFunc(sp.Algos(), func(a limiters.Algorithm) bool { return slices.Contains(a.Params(), prm.Name) }) {
			warnings = append(warnings, "--"+prm.Name+" has no effect: no limiter that runs takes it ("+Takers(prm.Name)+" do)")
		}
	}
	return warnings
}

// noEffect says that flags have no effect: "--limit and --window have no
// effect".
func noEffect(flags []string) string {
	if len(flags) == 1 {
		return flags[0] + " has no effect"
	}
	return choice.Join(flags, "and") + " have no effect"
}
