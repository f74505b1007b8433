// Package cmd implements the ratesim command line: cobra commands that turn
// flags into options, replay a trace through the sim engine and render the
// results.
package cmd

import (
	"github.com/ratesim/ratesim/internal/render"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var rootLong = helpText("ratesim")

// exitStatusKey is the annotation that holds a command's EXIT STATUS
// section, with which helpTemplate ends its help.
const exitStatusKey = "exit-status"

// helpTemplate is cobra's help template followed by the command's EXIT
// STATUS section.
const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{with index .Annotations "exit-status"}}
EXIT STATUS
{{.}}
{{end}}`

// replayExitStatus is the EXIT STATUS of ratesim and of the commands that
// replay a trace.
const replayExitStatus = `  0  success
  1  error: the trace could not be read or is malformed, or output failed
  2  usage error: a bad flag or argument, an unknown algorithm, a bad parameter
  3  partial: --lenient skipped bad rows (each is reported on standard error)
` + interruptedStatus

// interruptedStatus is the line of every EXIT STATUS section for an
// interrupt.
const interruptedStatus = `  130  interrupted (SIGINT or SIGTERM): stopped, its temporary files removed`

// exitStatus is the EXIT STATUS of a command that reads no trace; usage
// says what its usage errors are.
func exitStatus(usage string) map[string]string {
	return map[string]string{exitStatusKey: `  0  success
  1  error: output failed
  2  usage error: ` + usage + "\n" + interruptedStatus}
}

// Main runs ratesim with args (without the program name) and returns the exit
// status. Errors are printed once, as "ratesim: message", on stderr.
//
// An interrupt (SIGINT or SIGTERM) cancels the command's context: the
// command stops what it is doing, returns through its cleanup (temporary
// files removed, files closed) and Main returns 130, the status of a
// program interrupted. A second interrupt, during that cleanup, ends the
// process at once.
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next interrupt is the system's: it ends the process
	}()
	return MainContext(ctx, version, args, stdin, stdout, stderr)
}

// MainContext is Main with ctx in place of the context an interrupt
// cancels: once ctx is done, the command stops and cleans up, and
// MainContext returns 130.
func MainContext(ctx context.Context, version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return execute(ctx, NewRootCmd(version), args, stdin, stdout, stderr)
}

// execute runs the command tree root with args and returns the exit
// status. A panic is a bug in ratesim, not a mistake of the user's: it is
// reported with its stack and exits with status 1, never with the
// runtime's status 2, which would read as a usage error.
func execute(ctx context.Context, root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "ratesim: internal error: %v\n%s", p, debug.Stack())
			status = exitError
		}
	}()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil {
		// Whatever the command met on its way out, the interrupt is why.
		err = interrupted{ctx.Err()}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ratesim: %s\n", render.TerminalSafe(ErrorText(err)))
	}
	return ExitCode(err)
}

// NewRootCmd builds the ratesim command tree. Each call returns a fresh tree
// with no state shared with another.
func NewRootCmd(version string) *cobra.Command {
	root := &cobra.Command{
		Use:           "ratesim",
		Short:         "Replay request traces through rate-limiting algorithms",
		Long:          rootLong,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{exitStatusKey: replayExitStatus},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return c.Help()
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("ratesim version {{.Version}}\n")
	root.SetHelpTemplate(helpTemplate)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			return &usageError{flagValueError(bad)}
		}
		return &usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(
		newRunCmd(),
		newCompareCmd(),
		newBurstCmd(),
		newSweepCmd(),
		newPlotCmd(),
		newReportCmd(),
		newReplayCmd(),
		newDemoCmd(),
		newAlgosCmd(),
		newPresetsCmd(),
		newFormatsCmd(),
		newCheckCmd(),
		newGenCmd(),
		newMergeCmd(),
		newLintCmd(),
		newExportCmd(),
	)
	root.SetHelpCommand(newHelpCmd())
	addCompletionCmd(root)
	return root
}

// newHelpCmd is "ratesim help [command]". Unlike cobra's, it refuses a
// topic it does not know with a usage error instead of showing the
// root's help and exiting with status 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  `Show the help of a command, as "ratesim COMMAND --help" does: "ratesim help run", "ratesim help completion bash".`,
		Annotations: map[string]string{exitStatusKey: `  0  success
  1  error: output failed
  2  usage error: an unknown command`},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			parent, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var topics []cobra.Completion
			for _, sub := range parent.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					topics = append(topics, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return topics, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usageErrorf("unknown help topic %q (valid: %s)", strings.Join(args, " "), strings.Join(commandNames(c.Root()), ", "))
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
}

// unknownCommand reports a subcommand name that does not exist, listing the
// ones that do.
func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q (valid: %s)", name, strings.Join(commandNames(root), ", "))
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageErrorf("%s", msg)
}

// commandNames lists the subcommands of c a user may call.
func commandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// flagValueError says why a flag's value was refused in the user's terms,
// naming the flag: "--limit: 99999999999999999999 is out of range (at most
// 9223372036854775807)", not strconv's text.
func flagValueError(e *pflag.InvalidValueError) error {
	f, value := e.GetFlag(), e.GetValue()
	name := "--" + f.Name
	var ne *strconv.NumError
	if !errors.As(e, &ne) {
		return fmt.Errorf("%s: invalid value %q: %v", name, value, e.Unwrap())
	}
	typ := f.Value.Type()
	if errors.Is(ne.Err, strconv.ErrRange) {
		bits := 64
		if typ == "int" {
			bits = strconv.IntSize
		}
		switch {
		case typ != "int" && typ != "int64":
			return fmt.Errorf("%s: %s is out of range", name, value)
		case strings.HasPrefix(value, "-"):
			return fmt.Errorf("%s: %s is out of range (at least %d)", name, value, int64(-1)<<(bits-1))
		default:
			return fmt.Errorf("%s: %s is out of range (at most %d)", name, value, uint64(1)<<(bits-1)-1)
		}
	}
	want := "a number"
	switch typ {
	case "int", "int64":
		want = "a whole number"
	case "bool":
		want = "true or false"
	}
	return fmt.Errorf("%s: invalid value %q: want %s", name, value, want)
}

// commandName is c's path without the program's name ("run", "completion
// bash"): messages are printed after "ratesim: " already.
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// exactTrace is the Args check of the commands that read traces: one or
// more, merged by time. With none named, they read standard input unless
// it is a terminal, as sort and jq do: a user typing "ratesim run" gets
// told what is missing, while "gen ... | ratesim run" works without "-".
// Standard input may be one of several, once.
func exactTrace(c *cobra.Command, args []string) error {
	if len(args) == 0 && isTerminal(c.InOrStdin()) {
		return usageErrorf("%s needs a trace file (or - for standard input)", commandName(c))
	}
	if n := slicesCount(args, "-"); n > 1 {
		return usageErrorf("%s reads standard input once, got - %d times", commandName(c), n)
	}
	return nil
}

// slicesCount counts the elements of s equal to v.
func slicesCount(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// traceArg is the trace a command reads: the first named, else "-",
// standard input (exactTrace has checked it is not a terminal).
func traceArg(args []string) string {
	if len(args) == 0 {
		return "-"
	}
	return args[0]
}

// noArgs is the Args check of the commands that read no trace.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", commandName(c), args[0])
	}
	return nil
}
