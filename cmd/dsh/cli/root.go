package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/internal/reaper"
)

// Exit statuses of dsh.
const (
	exitOK          = 0   // the command ran; everything checked is clean
	exitViolations  = 1   // violations or diagnostics reported; a problem the user must fix
	exitTrouble     = 2   // usage error (and, for schema, unreadable input or an unusable schema)
	exitInterrupted = 130 // interrupted (SIGINT): the calls not started were skipped
	exitTerminated  = 143 // terminated (SIGTERM): as interrupted, 128 + 15 as shells report it
)

// exitError ends a command with a given exit status. Its message, when not
// empty, is printed on standard error as "dsh: <msg>"; a command that has
// already reported on its own returns one with an empty message.
//
// An error of exitInterrupted is a command a signal stopped: Run returns
// exitTerminated instead when the signal was SIGTERM. When stopped is set,
// msg says what was left undone and Run prints "dsh: interrupted: <msg>"
// ("terminated" after SIGTERM; the word alone for an empty msg).
type exitError struct {
	code    int
	msg     string
	stopped bool
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

// interrupted returns the error of a command a signal stopped, which says
// so on standard error; undone is what was left undone ("" for nothing).
func interrupted(undone string) error {
	return &exitError{code: exitInterrupted, msg: undone, stopped: true}
}

// stopSignal is the cause Main cancels the context with when a signal
// arrives.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.sig.String() + " signal received" }

// terminated reports whether ctx was cancelled by SIGTERM.
func terminated(ctx context.Context) bool {
	var s stopSignal
	return errors.As(context.Cause(ctx), &s) && s.sig == syscall.SIGTERM
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

// exitGrace bounds the final sweep that kills, as dsh exits, every process
// still below it.
const exitGrace = 2 * time.Second

// Main runs dsh with the process's arguments and standard streams, cancels
// the context on an interrupt (SIGINT) or a termination request (SIGTERM),
// kills every process still below dsh, and exits with Run's status.
func Main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			// After the first signal, a second one kills dsh as usual,
			// even while a tool body ignores its cancellation.
			signal.Stop(sigs)
			cancel(stopSignal{sig})
		case <-ctx.Done():
		}
	}()
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel(nil)
	// Nothing any call or server started outlives dsh, whatever ended it.
	reaper.KillDescendants(exitGrace)
	os.Exit(code)
}

// Run executes the dsh command line args (without the program name) and
// returns the exit status. It reads stdin only for a "-" file argument and
// writes results to stdout and diagnostics to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	tel, err := newTelemetry(ctx, os.Getenv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dsh: %v\n", err)
		return exitViolations
	}
	defer func() {
		// What is buffered is sent as dsh exits, even when interrupted.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryShutdown)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			fmt.Fprintf(stderr, "dsh: telemetry not all sent at exit (within %v): %v\n", telemetryShutdown, err)
		}
	}()
	root := newRootCmd(&options{stdin: stdin, stdout: stdout, stderr: stderr, telemetry: tel})
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
		code, word := exit.code, "interrupted"
		if code == exitInterrupted && terminated(ctx) {
			code, word = exitTerminated, "terminated"
		}
		switch {
		case exit.stopped && exit.msg == "":
			fmt.Fprintf(stderr, "dsh: %s\n", word)
		case exit.stopped:
			fmt.Fprintf(stderr, "dsh: %s: %s\n", word, exit.msg)
		case exit.msg != "":
			fmt.Fprintf(stderr, "dsh: %s\n", exit.msg)
		}
		return code
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
when interrupted (SIGINT), 143 when terminated (SIGTERM).`,
		Example: `  dsh --scripts scripts/examples/plugins check
  dsh --scripts scripts/examples/plugins call word_count '{"text": "a b c"}'
  dsh --scripts scripts/examples/plugins --approve allow --log session.jsonl run calls.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Arguments are runGroup's to refuse. With Args unset, cobra's own
		// check would run before the flags are parsed, and "dsh --bogus
		// call x" (where --bogus seems to take "call" as its value) would
		// report the unknown command "x" instead of the unknown flag.
		Args: cobra.ArbitraryArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			o.ptc.noRuns = !runsCalls(cmd)
			return checkGlobalFlags(cmd, args)
		},
		SuggestionsMinimumDistance: 2,
	}
	// --version is dsh's own rather than cobra's, so that it honours --json
	// as "dsh version" does.
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, `print the dsh version, as "dsh version" does`)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if !showVersion || len(args) > 0 {
			return runGroup(cmd, args)
		}
		if err := refuseUnused(cmd, "dsh --version", []string{string(kindOutput)}); err != nil {
			return err
		}
		return printVersion(o.stdout, o.json)
	}
	root.SetUsageFunc(usageFunc(root.UsageFunc()))
	root.CompletionOptions.DisableDefaultCmd = true
	o.addGlobalFlags(root)
	// Each command accepts the global flags of the things it does (see
	// flagKind).
	all := []flagKind{kindOutput, kindPlugins, kindAgent, kindCalls, kindExecutor}
	root.AddCommand(
		uses(newVersionCmd(o), kindOutput),
		uses(newSchemaCmd(o), kindOutput),
		uses(newRunCmd(o), all...),
		uses(newCallCmd(o), all...),
		uses(newPTCCmd(o), all...),
		// Watch's output is JSON lines, with or without --json.
		uses(newWatchCmd(o), all...),
		uses(newServeCmd(o), kindPlugins, kindAgent, kindCalls, kindExecutor),
		// Schemas prints JSON, with or without --json.
		uses(newSchemasCmd(o), kindOutput, kindPlugins, kindAgent, kindExecutor),
		uses(newDescribeCmd(o), kindOutput, kindPlugins, kindAgent, kindExecutor),
		uses(newCheckCmd(o), kindOutput, kindPlugins),
		uses(newTypesCmd(o), kindPlugins, kindAgent),
		// Replay looks calls up in their agents' scopes (--agent-parent),
		// and run_code's cards need the executor that presents it.
		uses(newReplayCmd(o), kindOutput, kindPlugins, kindAgent, kindExecutor),
		uses(newMCPCmd(o), kindPlugins), // mcp_login.go
		newPTCChildCmd(o),
	)
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
