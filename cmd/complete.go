package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/traces"
)

// traceExtensions are the file extensions completed as traces.
var traceExtensions = []string{"csv", "yaml", "yml", "jsonl", "ndjson", "gz"}

// completeTraceFiles completes the TRACE argument with trace files.
func completeTraceFiles(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return traceExtensions, cobra.ShellCompDirectiveFilterFileExt
}

// registerCompletions adds completions, with descriptions, to the flags c has.
func registerCompletions(c *cobra.Command) {
	fixed := func(name string, choices ...cobra.Completion) {
		if c.Flags().Lookup(name) == nil {
			return
		}
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp))
	}
	if c.Flags().Lookup("algo") != nil {
		_ = c.RegisterFlagCompletionFunc("algo", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return algoCompletions(""), cobra.ShellCompDirectiveNoFileComp
		})
	}
	if c.Flags().Lookup("algos") != nil {
		_ = c.RegisterFlagCompletionFunc("algos", completeAlgoList)
	}
	if c.Flags().Lookup("limiter") != nil {
		_ = c.RegisterFlagCompletionFunc("limiter", completeLimiter)
	}
	if c.Name() == "gen" {
		fixed("output",
			cobra.CompletionWithDesc("csv", "comma-separated values with a header"),
			cobra.CompletionWithDesc("yaml", "a YAML sequence of requests"),
			cobra.CompletionWithDesc("jsonl", "JSON Lines, one request per line"))
		var pats []cobra.Completion
		desc := map[string]string{
			"steady":   "Poisson arrivals at a steady rate",
			"bursty":   "quiet spells and bursts",
			"boundary": "clusters straddling window edges",
			"ramp":     "load rising, then falling",
		}
		for _, p := range traces.Patterns() {
			pats = append(pats, cobra.CompletionWithDesc(p, desc[p]))
		}
		fixed("pattern", pats...)
		fixed("keys",
			cobra.CompletionWithDesc("short", "u1, u2, ..."),
			cobra.CompletionWithDesc("uuid", "36-character UUIDs"))
	} else {
		fixed("output",
			cobra.CompletionWithDesc("table", "an ASCII table (default)"),
			cobra.CompletionWithDesc("csv", "comma-separated values, every row"),
			cobra.CompletionWithDesc("json", "a JSON array of objects"),
			cobra.CompletionWithDesc("jsonl", "JSON Lines, one object per line"),
			cobra.CompletionWithDesc("markdown", "a Markdown table"))
	}
	fixed("unit",
		cobra.CompletionWithDesc("s", "seconds"),
		cobra.CompletionWithDesc("ms", "milliseconds"),
		cobra.CompletionWithDesc("us", "microseconds"),
		cobra.CompletionWithDesc("ns", "nanoseconds"))
	fixed("format",
		cobra.CompletionWithDesc("csv", "comma-separated values with a header"),
		cobra.CompletionWithDesc("yaml", "a YAML sequence of requests"),
		cobra.CompletionWithDesc("jsonl", "JSON Lines, one request per line"))
	fixed("clock",
		cobra.CompletionWithDesc("reject", "reject a request whose time goes backwards"),
		cobra.CompletionWithDesc("clamp", "treat it as the key's last time"))
	fixed("only",
		cobra.CompletionWithDesc("allowed", "only allowed requests"),
		cobra.CompletionWithDesc("rejected", "only rejected requests"))
	if c.Flags().Lookup("config") != nil {
		_ = c.RegisterFlagCompletionFunc("config", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
		})
	}
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

// algoCompletions lists the algorithms, each prefixed (for --algos lists),
// leaving out those the prefix already names.
func algoCompletions(prefix string) []cobra.Completion {
	named := strings.Split(prefix, ",")
	var out []cobra.Completion
	for _, a := range limiters.AllAlgorithms() {
		if slices.Contains(named, a.String()) {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(prefix+a.String(), a.Summary()))
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
// NAME=, then, after a ':', the parameter keys.
func completeLimiter(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if head, args, ok := strings.Cut(toComplete, ":"); ok {
		done := args[:strings.LastIndex(args, ",")+1]
		var out []cobra.Completion
		for _, k := range paramNames() {
			out = append(out, head+":"+done+k+"=")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	prefix := ""
	if name, _, ok := strings.Cut(toComplete, "="); ok {
		prefix = name + "="
	}
	return algoCompletions(prefix), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
