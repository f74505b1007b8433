package spec

import (
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// ParseIntent parses an --intent LIMIT/WINDOW into the limit and the
// window's text.
func ParseIntent(s string) (limit int64, window string, err error) {
	l, w, ok := strings.Cut(s, "/")
	n, perr := strconv.ParseInt(strings.TrimSpace(l), 10, 64)
	switch {
	case !ok || strings.TrimSpace(w) == "":
		return 0, "", errorf("--intent %q: want LIMIT/WINDOW, such as 100/1m", s)
	case perr != nil:
		return 0, "", errorf("--intent %q: the limit %q is not a whole number", s, l)
	case n <= 0:
		return 0, "", errorf("--intent %q: the limit must be positive", s)
	}
	return n, strings.TrimSpace(w), nil
}

// An Inherited is the intent of a replay, resolved, that a sweep which
// is part of it (a report's) takes unless its own flags say otherwise:
// the limit, window and clock, the burst interval given, where each came
// from, and the replay's --config.
type Inherited struct {
	Policy   limiters.Policy // Limit, Window and Clock
	Interval time.Duration   // the burst interval given, 0 for the window
	Config   string          // the replay's --config
	File     *File           // the config file as the replay read it, nil when none was
	text     map[string]string
	from     map[string]string // where each came from: "--limit", "policy.yaml:3", "default"
}

// Inherit returns the intent of a replay resolved as sp, for a sweep to
// take: window is sp's intent window as the replay writes it, set names
// the flags the replay was given, config is its --config and file the
// file read from it (nil when none).
func Inherit(sp *Spec, window string, set map[string]bool, config string, file *File) *Inherited {
	in := &Inherited{Policy: sp.Intent, Config: config, File: file,
		text: map[string]string{"limit": strconv.FormatInt(sp.Intent.Limit, 10), "window": window, "clock": ClockName(sp.Intent.Clock)},
		from: map[string]string{}}
	if sp.IntervalGiven {
		in.Interval = sp.Interval
	}
	for _, name := range []string{"limit", "window", "clock"} {
		in.from[name] = "default"
		switch {
		case name != "clock" && set["intent"]:
			in.from[name] = "--intent"
		case set[name]:
			in.from[name] = "--" + name
		case config != "" && file != nil:
			if name != "clock" && file.Intent.Value != "" {
				in.from[name] = string(file.Intent.At)
			} else if st, ok := file.Shared[name]; ok {
				in.from[name] = string(st.At)
			}
		}
	}
	return in
}

// A SweepPolicy is the policy flags of a sweep's replay, set to the
// intent its candidates are scored against.
type SweepPolicy struct {
	Limit  int64
	Window string
	// Set names the flags taken as given; At, where a flag's value came
	// from when not from its own flag.
	Set map[string]bool
	At  map[string]Source
	// Inherit, Config and File are what the replay the sweep is part of
	// resolved and read (Inherited), under the sweep's own flags.
	Inherit Params
	Config  string
	File    *File
	// From says where the intent came from: "--intent", "--limit and
	// --window", or per parameter for an inherited one.
	From string
}

// A SweepFlags is what a sweep was given that says its intent: --intent,
// the flags given (by name), the texts of --limit and --window and the
// values of each.
type SweepFlags struct {
	Intent          string
	Given           map[string]bool
	Limit, Window   string
	Limits, Windows []string
}

// SweepIntent resolves the intent a sweep scores against: that of the
// replay it is part of (in, nil when none) under its own flags, else its
// --intent, else its --limit and --window, which must give one value
// each.
func SweepIntent(in *Inherited, f SweepFlags) (*SweepPolicy, error) {
	sp := &SweepPolicy{Set: map[string]bool{"clock": true, "limit": true, "window": true}, From: "--intent"}
	var err error
	switch {
	case in != nil:
		if err := sp.inherit(in, f); err != nil {
			return nil, err
		}
	case f.Intent != "":
		if sp.Limit, sp.Window, err = ParseIntent(f.Intent); err != nil {
			return nil, err
		}
		sp.At = map[string]Source{"limit": "--intent", "window": "--intent"}
	default:
		sp.From = "--limit and --window"
		for _, p := range []struct {
			name string
			vals []string
		}{{"limit", f.Limits}, {"window", f.Windows}} {
			if len(p.vals) > 1 {
				return nil, errorf("--%s gives %d values: say which policy you mean with --intent LIMIT/WINDOW", p.name, len(p.vals))
			}
		}
		if sp.Limit, err = strconv.ParseInt(strings.TrimSpace(f.Limit), 10, 64); err != nil {
			return nil, errorf("--limit: invalid limit %q: want a whole number", f.Limit)
		}
		sp.Window = strings.TrimSpace(f.Window)
	}
	return sp, nil
}

// inherit sets sp to the intent of in under the sweep's own flags: its
// --intent, or per parameter its own --limit or --window when it gives
// one value, else the replay's, as resolved; the clock its own --clock
// or the replay's; and the replay's --config.
func (sp *SweepPolicy) inherit(in *Inherited, f SweepFlags) error {
	sp.Config, sp.File, sp.Set, sp.Inherit = in.Config, in.File, map[string]bool{}, Params{}
	var from []string
	inherit := func(name string, v any) {
		sp.Inherit[name] = Setting{Value: in.text[name], At: Source("the report's " + in.from[name]), Resolved: v}
		if in.from[name] == "default" {
			from = append(from, name+" the report's default")
		} else {
			from = append(from, name+" from the report's "+in.from[name])
		}
	}
	if f.Intent != "" {
		var err error
		if sp.Limit, sp.Window, err = ParseIntent(f.Intent); err != nil {
			return err
		}
		sp.Set["limit"], sp.Set["window"] = true, true
		sp.At = map[string]Source{"limit": "--intent", "window": "--intent"}
		from = append(from, "limit and window from --intent")
	} else {
		if f.Given["limit"] && len(f.Limits) == 1 {
			n, err := strconv.ParseInt(f.Limits[0], 10, 64)
			if err != nil {
				return errorf("--limit: invalid limit %q: want a whole number", f.Limits[0])
			}
			sp.Limit, sp.Set["limit"] = n, true
			from = append(from, "limit from --limit")
		} else {
			inherit("limit", in.Policy.Limit)
		}
		if f.Given["window"] && len(f.Windows) == 1 {
			sp.Window, sp.Set["window"] = f.Windows[0], true
			from = append(from, "window from --window")
		} else {
			inherit("window", in.Policy.Window)
		}
	}
	if f.Given["clock"] {
		sp.Set["clock"] = true
		from = append(from, "clock from --clock")
	} else {
		inherit("clock", in.Policy.Clock)
	}
	sp.From = strings.Join(from, ", ")
	return nil
}
