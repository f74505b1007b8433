package sweep

import (
	"strconv"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
)

// Usage is the default and the help text of the values of parameter
// name: the algorithms that take it and what it is, with a range for a
// count, and the presets that take it. The limit's default is
// spec.DefaultLimit and the window's spec.DefaultWindow.
func Usage(name string) (def, usage string) {
	if prm, ok := spec.Param(name); ok {
		def, usage = prm.Default, prm.Usage+": values, comma-separated"
		switch name {
		case "limit":
			def = strconv.Itoa(spec.DefaultLimit)
		case "window":
			def = spec.DefaultWindow
		}
		if prm.Kind == limiters.ParamCount {
			usage += ", or a range A..B or A..B:STEP"
		}
		usage = spec.Takers(name) + ": " + usage
	}
	if users := spec.PresetsTaking(name); users != "" {
		if usage != "" {
			usage += "; "
		}
		usage += "presets " + users + ": the library's " + name + ": values, comma-separated, or a range A..B or A..B:STEP"
	}
	return def, usage
}
