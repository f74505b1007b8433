package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/gateway"
	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/internal/storereplay"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/internal/tables"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// completeTraceFiles completes the TRACE argument with trace files.
func completeTraceFiles(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return traces.FileExtensions(), cobra.ShellCompDirectiveFilterFileExt
}

// completePick completes the column of the constraint being typed in
// --pick, after the constraints before the last comma.
func completePick(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []cobra.Completion
	for _, name := range tables.Pickable() {
		out = append(out, cobra.CompletionWithDesc(done+name, "then <, <=, > or >= and a number"))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// registerCompletions adds completions, with descriptions, to the flags c has.
func registerCompletions(c *cobra.Command) {
	complete := func(name string, f cobra.CompletionFunc) {
		if c.Flags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, f)
		}
	}
	complete("algo", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return algoCompletions(""), cobra.ShellCompDirectiveNoFileComp
	})
	complete("algos", completeAlgoList)
	complete("limiter", completeLimiter)
	complete("pick", completePick)
	for _, name := range sweep.ParamNames() {
		// A sweep's values, or a parameter's: never a file.
		if flag := sweep.FlagName(name, takenName); c.Flags().Lookup(flag) != nil {
			if _, ok := c.GetFlagCompletionFunc(flag); !ok {
				_ = c.RegisterFlagCompletionFunc(flag, cobra.NoFileCompletions)
			}
		}
	}
	for name, l := range flagChoices(c.Name()) {
		complete(name, cobra.FixedCompletions(completions(l), cobra.ShellCompDirectiveNoFileComp))
	}
	complete("tz", completeZones)
	for _, name := range []string{"user-field", "time-field", "cost-field", "key"} {
		complete(name, completeFields)
	}
	complete("config", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	})
	// A gateway's config, whatever its name: nginx.conf, haproxy.cfg, kong.yml.
	complete("policy-from", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveDefault
	})
	// Every other flag that takes a value takes a number, a duration, a
	// rate or a name: a shell offering file names would only mislead.
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			return
		}
		if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
		}
	})
}

// flagChoices are the choices of the flags of command cmd that take one
// of a list, as the packages that own them list them: completion and
// parsing (choose) both draw on them.
func flagChoices(cmd string) map[string]choice.List {
	m := map[string]choice.List{
		"output":      render.FormatChoices(),
		"unit":        traces.Units,
		"format":      traces.ReadFormats,
		"time-is":     traces.TimeIsChoices,
		"time-format": append(slices.Clone(traces.TimeFormats), choice.Choice{Name: "2006-01-02 15:04:05", Description: "a Go layout: write the reference time as your trace does"}),
		"clients":     sim.ClientModels,
		"headers":     headers.Styles,
		"clock":       spec.Clocks,
		"stack":       sim.StackModes,
		"only":        onlyChoices,
		"route":       storereplay.Routes,
		"on-failure":  storereplay.Failures,
		// A gateway's config to read, and a config to write.
		"policy-format": gateway.Formats,
		"to":            gateway.Targets,
	}
	if cmd == "gen" {
		m["output"], m["pattern"], m["keys"] = traces.WriteFormats, traces.PatternChoices, traces.KeyStyles
	}
	return m
}

// choose returns the place in l of value, given at flag, or a usage error
// that lists the choices.
func choose(flag, value string, l choice.List) (int, error) {
	if i := l.Index(value); i >= 0 {
		return i, nil
	}
	return -1, usageErrorf("invalid %s %q (valid: %s)", flag, value, l)
}

// algoCompletions lists the algorithms, each prefixed (for --algos lists),
// leaving out those the prefix already names.
func algoCompletions(prefix string) []cobra.Completion {
	return completions(spec.AlgorithmCompletions(prefix))
}

// completions are l as a shell completes them: each name, with its
// description when it has one.
func completions(l choice.List) []cobra.Completion {
	var out []cobra.Completion
	for _, c := range l {
		if c.Description == "" {
			out = append(out, c.Name)
		} else {
			out = append(out, cobra.CompletionWithDesc(c.Name, c.Description))
		}
	}
	return out
}

// completeAlgoList completes the last name of a comma-separated --algos.
func completeAlgoList(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		prefix = toComplete[:i+1]
	}
	out := algoCompletions(prefix)
	if prefix == "" {
		out = append(out, cobra.CompletionWithDesc("all", "all "+countWord(len(limiters.AllAlgorithms()))+" algorithms"))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// addCompletionCmd adds cobra's "completion SHELL" command, with
// ratesim's usage errors: an unknown shell, no shell or an extra argument
// exits with status 2, where cobra's would show help (status 0) or fail
// with status 1.
func addCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root {
		return
	}
	var shells []string
	for _, sh := range comp.Commands() {
		shells = append(shells, sh.Name())
		sh.Args = noArgs
		sh.Annotations = exitStatus("a bad flag or an argument")
	}
	comp.Annotations = exitStatus("no shell or an unknown one, a bad flag")
	valid := strings.Join(shells, ", ")
	comp.Use = "completion SHELL"
	comp.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown shell %q for completion (valid: %s)", args[0], valid)
		}
		return nil
	}
	comp.RunE = func(c *cobra.Command, args []string) error {
		return usageErrorf("completion needs a shell (valid: %s)", valid)
	}
}

// completeLimiter completes a --limiter: the algorithm after an optional
// NAME=, then, after a ':', the parameter keys (spec.LimiterCompletions).
func completeLimiter(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return completions(spec.LimiterCompletions(toComplete)), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeZones completes --tz with the zone names traces.Zones finds.
func completeZones(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return traces.Zones(toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeFields completes the field flags and --key with the fields of
// the first record of the trace named on the command line, when there is
// one.
func completeFields(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 || args[0] == "-" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := traces.FieldNames(args[0])
	// --key takes a list: complete its last element.
	prefix := ""
	if c.Flags().Lookup("key") != nil && strings.Contains(toComplete, ",") {
		i := strings.LastIndex(toComplete, ",")
		prefix, toComplete = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, prefix+n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeUsers completes --user with the users of the first MiB of the
// trace named on the command line.
func completeUsers(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 || args[0] == "-" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return traces.Users(args[0], toComplete, 1000), cobra.ShellCompDirectiveNoFileComp
}
