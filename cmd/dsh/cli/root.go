package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses of dsh.
const (
	exitOK          = 0   // the command ran; everything checked is clean
	exitViolations  = 1   // violations or diagnostics reported; a problem the user must fix
	exitTrouble     = 2   // usage error (and, for schema, unreadable input or an unusable schema)
	exitInterrupted = 130 // interrupted (SIGINT): the calls not started were skipped
)

// exitError ends a command with a given exit status. Its message, when not
// empty, is printed on standard error as "dsh: <msg>"; a command that has
// already reported on its own returns one with an empty message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

// exitWith returns an error that makes Run return code without printing more.
func exitWith(code int) error { return &exitError{code: code} }

// troublef returns an error that makes Run print "dsh: <message>" and return 2.
func troublef(format string, args ...any) error {
	return &exitError{code: exitTrouble, msg: fmt.Sprintf(format, args...)}
}

// userErrorf returns an error that makes Run print "dsh: <message>" and
// return 1: a problem the user must fix, such as a calls file that is not
// JSON or a scripts directory that does not exist.
func userErrorf(format string, args ...any) error {
	return &exitError{code: exitViolations, msg: fmt.Sprintf(format, args...)}
}

// Main runs dsh with the process's arguments and standard streams, cancels
// the context on an interrupt, and exits with Run's status.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		// After the first interrupt, a second one kills dsh as usual,
		// even while a tool body ignores its cancellation.
		<-ctx.Done()
		stop()
	}()
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run executes the dsh command line args (without the program name) and
// returns the exit status. It reads stdin only for a "-" file argument and
// writes results to stdout and diagnostics to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(&options{stdin: stdin, stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.msg != "" {
			fmt.Fprintf(stderr, "dsh: %s\n", exit.msg)
		}
		return exit.code
	}
	// Any other error is a mistake in the command line, found by cobra
	// (unknown command or flag, bad flag value) or by a command's Args.
	fmt.Fprintf(stderr, "dsh: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
	return exitTrouble
}

// newRootCmd builds the command tree. A fresh tree per Run keeps flag
// values from leaking between in-process runs.
func newRootCmd(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "dsh",
		Short: "dsh executes an LLM agent's tool calls",
		Long: `dsh is a tool-execution engine for LLM agents: it runs a model's tool
calls through policies, approval and a scheduler, with tools and policies
written in JavaScript, TypeScript or Lua plugins loaded from the --scripts
directories.

Write a plugin, check it with "dsh check", see what the model is shown with
"dsh schemas", try a call with "dsh call", run a batch of model calls with
"dsh run", serve calls while editing plugins with "dsh watch" (each saved
file is reloaded at once), re-draw a session's cards from its --log
with "dsh replay", run a run_code program that calls the tools with
"dsh ptc", and see what --executor ptc shows the model with "dsh describe".

Exit status: 0 when the command ran (a tool failure is a result, not a
command failure), 1 for problems the user must fix (a bad calls file,
plugin diagnostics in check, schema violations), 2 for usage errors, 130
when interrupted.`,
		Example: `  dsh --scripts scripts/examples/plugins check
  dsh --scripts scripts/examples/plugins call word_count '{"text": "a b c"}'
  dsh --scripts scripts/examples/plugins --approve allow --log session.jsonl run calls.json`,
		Version:       mainVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Arguments are runGroup's to refuse. With Args unset, cobra's own
		// check would run before the flags are parsed, and "dsh --bogus
		// call x" (where --bogus seems to take "call" as its value) would
		// report the unknown command "x" instead of the unknown flag.
		Args:                       cobra.ArbitraryArgs,
		RunE:                       runGroup,
		SuggestionsMinimumDistance: 2,
	}
	root.SetVersionTemplate("dsh {{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true
	o.addGlobalFlags(root)
	root.AddCommand(newVersionCmd(), newSchemaCmd(),
		newRunCmd(o), newCallCmd(o), newSchemasCmd(o), newCheckCmd(o), newTypesCmd(o), newReplayCmd(o), newWatchCmd(o), newPTCCmd(o), newDescribeCmd(o), newPTCChildCmd(o), newServeCmd(o))
	return root
}

// runGroup runs a command that only groups subcommands: reached without a
// known subcommand, it is a usage error. (Cobra itself would print the help
// and succeed, or, below the root, ignore an unknown subcommand.)
func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return errors.New(msg)
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return fmt.Errorf("%q needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", "))
}
