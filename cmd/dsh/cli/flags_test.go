package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands returns every command of the tree under root that a user runs
// (not root itself, cobra's help, or hidden ones), by path.
func commands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			out = append(out, sub)
			walk(sub)
		}
	}
	walk(root)
	return out
}

// flagArgs sets f on a command line, to a value it parses.
func flagArgs(f *pflag.Flag) []string {
	switch f.Value.Type() {
	case "bool":
		return []string{"--" + f.Name}
	case "stringArray", "stringSlice":
		return []string{"--" + f.Name, "x=y"}
	}
	if f.DefValue == "" {
		return []string{"--" + f.Name, "x"}
	}
	return []string{"--" + f.Name, f.DefValue}
}

// TestEveryGlobalFlagIsUsedOrRefused runs every command with every global
// flag: a flag the command accepts is listed in its help; any other is a
// usage error that names the flag and the command, and nothing runs.
func TestEveryGlobalFlagIsUsedOrRefused(t *testing.T) {
	// Arguments each command accepts, so that a run reaches the check of
	// the global flags (cobra checks arguments first).
	positional := map[string][]string{
		"dsh call":            {"echo"},
		"dsh run":             {"calls.json"},
		"dsh ptc":             {"prog.ts"},
		"dsh replay":          {"log.jsonl"},
		"dsh schema check":    {"s.json"},
		"dsh schema validate": {"s.json", "v.json"},
		"dsh mcp login":       {"up"},
		"dsh mcp logout":      {"up"},
	}
	root := newRootCmd(&options{})
	globals := root.PersistentFlags()
	for _, cmd := range commands(root) {
		path := cmd.CommandPath()
		t.Run(path+" declares the kinds of global flags it uses", func(t *testing.T) {
			if _, ok := cmd.Annotations[usesKey]; !ok {
				t.Errorf("%s declares no kinds (uses)", path)
			}
		})
		_, help, _ := run(t, "", append(strings.Fields(path)[1:], "--help")...)
		globals.VisitAll(func(f *pflag.Flag) {
			listed := regexp.MustCompile(`(?m)^  (-., |    )--` + regexp.QuoteMeta(f.Name) + ` `).MatchString(help)
			if accepts(cmd, f) {
				t.Run(path+" lists --"+f.Name+" in its help", func(t *testing.T) {
					if !listed {
						t.Errorf("the help of %s does not list --%s:\n%s", path, f.Name, help)
					}
				})
				return
			}
			t.Run(path+" refuses --"+f.Name, func(t *testing.T) {
				args := append(append(strings.Fields(path)[1:], flagArgs(f)...), positional[path]...)
				code, stdout, stderr := run(t, "", args...)
				want := "dsh: --" + f.Name + `: "` + path + `" ` + flagKind(f.Annotations[flagKindKey][0]).unused() + "\n" +
					"Run '" + path + " --help' for usage.\n"
				if code != exitTrouble || stdout != "" || stderr != want {
					t.Errorf("%q: status %d, stdout %q, stderr %q; want 2, nothing, %q", args, code, stdout, stderr, want)
				}
				if listed {
					t.Errorf("the help of %s lists --%s, which it refuses", path, f.Name)
				}
			})
		})
	}
}

func TestGlobalFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"version loads no plugins", []string{"--scripts", "s", "version"}, `dsh: --scripts: "dsh version" loads no plugins`},
		{"version with --json still refuses another flag", []string{"--json", "-v", "version"}, `dsh: --verbose: "dsh version" loads no plugins`},
		{"--version takes --json only", []string{"--agent", "a", "--version"}, `dsh: --agent: "dsh --version" looks at no agent's tools`},
		{"schema check runs no calls", []string{"--approve", "allow", "schema", "check", "s.json"}, `dsh: --approve: "dsh schema check" runs no tool calls`},
		{"check runs no calls", []string{"--log", "l.jsonl", "check"}, `dsh: --log: "dsh check" runs no tool calls`},
		{"check looks at no agent", []string{"--agent-parent", "a=b", "check"}, `dsh: --agent-parent: "dsh check" looks at no agent's tools`},
		{"types uses no executor", []string{"--ptc-lang", "lua", "types", "--out", "x"}, `dsh: --ptc-lang: "dsh types" uses no executor`},
		{"serve has no JSON output", []string{"--json", "serve"}, `dsh: --json: "dsh serve" has no JSON output`},
		{"--agent with --no-agent is refused in dsh's words", []string{"--agent", "a", "--no-agent", "schemas"}, `dsh: --agent and --no-agent cannot be used together`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", tc.args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != exitTrouble || stdout != "" || first != tc.want {
				t.Errorf("status %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// TestFlagDefaultsReadAsNumbers checks every flag's default, as help
// prints it: sizes and budgets as plain numbers, never 6.7108864e+07.
func TestFlagDefaultsReadAsNumbers(t *testing.T) {
	root := newRootCmd(&options{})
	exponent := regexp.MustCompile(`[0-9]e[+-]?[0-9]`)
	// The global flags, then each command's own.
	for _, cmd := range append([]*cobra.Command{root}, commands(root)...) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			t.Run(cmd.CommandPath()+" --"+f.Name+" has a plain default", func(t *testing.T) {
				if exponent.MatchString(f.DefValue) {
					t.Errorf("default %q", f.DefValue)
				}
			})
		})
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(default 67108864)", "(default 60000)", "(default 600000)", "(default 512)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}
