package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagKind is a kind of global flag: what a command must do for the flag
// to mean anything. A command names the kinds it accepts (uses); a global
// flag of another kind is a usage error there, so that no flag is silently
// ignored, and the command's help lists only the global flags it accepts.
type flagKind string

// The kinds of global flags.
const (
	// kindOutput is --json: the command has a JSON form of its output.
	kindOutput flagKind = "output"
	// kindPlugins are the flags of the engine and the plugins it loads:
	// --scripts, --workspace, --http-allow, --memory-limit, --mcp,
	// --mcp-config and --verbose.
	kindPlugins flagKind = "plugins"
	// kindAgent are --agent, --no-agent and --agent-parent: the command
	// looks at the tools as an agent sees them.
	kindAgent flagKind = "agent"
	// kindCalls are --log, --approve and --max-parallel: the command runs
	// tool calls.
	kindCalls flagKind = "calls"
	// kindExecutor are --executor and the --ptc-* flags: what the command
	// does depends on the executor (what it shows the model, how run_code
	// runs and is presented).
	kindExecutor flagKind = "executor"
)

// unused says why a command that does not accept kind k has no use for
// its flags, as in `--log: "dsh check" runs no tool calls`.
func (k flagKind) unused() string {
	switch k {
	case kindOutput:
		return "has no JSON output"
	case kindPlugins:
		return "loads no plugins"
	case kindAgent:
		return "looks at no agent's tools"
	case kindCalls:
		return "runs no tool calls"
	case kindExecutor:
		return "uses no executor"
	}
	return "does not use it"
}

// Annotation keys: a flag's kind, and the kinds a command accepts.
const (
	flagKindKey = "dsh:kind"
	usesKey     = "dsh:uses"
)

// setKind marks the flags names of fs as of kind k.
func setKind(fs *pflag.FlagSet, k flagKind, names ...string) {
	for _, name := range names {
		if err := fs.SetAnnotation(name, flagKindKey, []string{string(k)}); err != nil {
			panic(err) // a flag name misspelt here: a programming error
		}
	}
}

// uses declares the kinds of global flags cmd accepts, and returns cmd.
func uses(cmd *cobra.Command, kinds ...flagKind) *cobra.Command {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[usesKey] = strings.Join(names, " ")
	return cmd
}

// accepts reports whether cmd accepts the global flag f. A flag without a
// kind (--help, a command's own flags) and a command that declares no kinds
// (the root, cobra's help) accept everything.
func accepts(cmd *cobra.Command, f *pflag.Flag) bool {
	declared, ok := cmd.Annotations[usesKey]
	return !ok || acceptedBy(strings.Fields(declared), f)
}

// acceptedBy reports whether a command that accepts kinds accepts f.
func acceptedBy(kinds []string, f *pflag.Flag) bool {
	kind, ok := f.Annotations[flagKindKey]
	return !ok || len(kind) == 0 || slices.Contains(kinds, kind[0])
}

// checkGlobalFlags refuses a global flag the command has no use for, and
// --agent with --no-agent. It runs before every command (the root's
// PersistentPreRunE); its errors are usage errors.
func checkGlobalFlags(cmd *cobra.Command, _ []string) error {
	if declared, ok := cmd.Annotations[usesKey]; ok {
		if err := refuseUnused(cmd, cmd.CommandPath(), strings.Fields(declared)); err != nil {
			return err
		}
	}
	fs := cmd.Flags()
	if fs.Changed("agent") && fs.Changed("no-agent") {
		return fmt.Errorf("--agent and --no-agent cannot be used together")
	}
	return nil
}

// refuseUnused returns the usage error of the first flag set on cmd's
// command line that what (a command, as "dsh check") has no use for: a
// global flag of a kind not in kinds.
func refuseUnused(cmd *cobra.Command, what string, kinds []string) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && !acceptedBy(kinds, f) {
			err = fmt.Errorf("--%s: %q %s", f.Name, what, flagKind(f.Annotations[flagKindKey][0]).unused())
		}
	})
	return err
}

// usageFunc wraps cobra's usage function so that a command's help lists
// only the global flags it accepts: the others are hidden while the usage
// is written. (A fresh command tree per Run keeps this from racing.)
func usageFunc(usage func(*cobra.Command) error) func(*cobra.Command) error {
	return func(cmd *cobra.Command) error {
		var hidden []*pflag.Flag
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !accepts(cmd, f) {
				f.Hidden = true
				hidden = append(hidden, f)
			}
		})
		defer func() {
			for _, f := range hidden {
				f.Hidden = false
			}
		}()
		return usage(cmd)
	}
}
