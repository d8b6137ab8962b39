package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
)

func newSchemasCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "schemas",
		Short: "Print the tool schemas the model is sent",
		Long: `Schemas loads the plugins and prints what the model is sent for the agent
(--agent, or the global layer with --no-agent): the JSON array of
{"name", "description", "parameters"} its executor describes, after the
scope's restrictions and the step's activation conditions. Plugins that
fail to load are reported on standard error; the others serve.

Exit status: 0, 1 for problems the user must fix, 2 for a usage error.`,
		Example: `  dsh --scripts scripts/examples/plugins schemas
  dsh --agent worker --agent-parent worker=main schemas`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := newSession(o)
			if err != nil {
				return err
			}
			defer s.close()
			if _, err := s.loadAll(cmd.Context()); err != nil {
				return err
			}
			s.printDiagnostics(o.stderr)
			scope := s.scope(s.agent)
			set, err := scope.Resolve(cmd.Context(), nil)
			if err != nil {
				return userErrorf("resolving the tool set: %v", err)
			}
			desc, err := scope.Executor().Describe(scope.Definitions(set))
			if err != nil {
				return userErrorf("describing the tools: %v", err)
			}
			schemas := make([]any, len(desc.Schemas))
			for i, ts := range desc.Schemas {
				schemas[i] = ts.JSON()
			}
			return writeIndented(o, schemas)
		},
	}
}

// writeIndented writes v as canonical JSON, indented by two spaces.
func writeIndented(o *options, v any) error {
	var line bytes.Buffer
	if err := writeJSONLine(&line, v); err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, line.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	_, err := o.stdout.Write(out.Bytes())
	return err
}

func newCheckCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Load every plugin and report its problems",
		Long: `Check loads every plugin of the scripts directories and prints each one
that fails as "file:line:col: message" (a syntax error, a top level that
threw or ran past its deadline, a bad schema, a duplicate tool name), then
what each plugin that loaded registered:

  scripts/plugins/word_count.ts: tool word_count

With --mcp or --mcp-config it imports the servers too: a server not
reached, or a tool outside the schema subset, is a diagnostic named
"mcp:NAME", and each server reached is listed with its tools:

  mcp:fs: tools fs.read_file, fs.list_directory

With --json it prints {"diagnostics": [...], "plugins": [...], "servers":
[{"name", "tools": [{"name"}]}]}.

Exit status: 0 when every plugin loaded, 1 when a diagnostic was printed
(or a scripts directory cannot be read), 2 for a usage error.`,
		Example: `  dsh check
  dsh --scripts scripts/examples/plugins check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := newSession(o)
			if err != nil {
				return err
			}
			defer s.close()
			loaded, err := s.loadAll(cmd.Context())
			if err != nil {
				return err
			}
			if o.json {
				if err := writeJSONLine(o.stdout, checkJSON(s, loaded)); err != nil {
					return err
				}
				if len(s.diags) > 0 {
					return exitWith(exitViolations)
				}
				return nil
			}
			s.printDiagnostics(o.stdout)
			for _, p := range loaded {
				fmt.Fprintf(o.stdout, "%s: %s\n", p.path, registrations(p.plugin.Effects()))
			}
			for _, srv := range s.imported {
				fmt.Fprintf(o.stdout, "mcp:%s: %s\n", srv.name, importedTools(srv.tools))
			}
			imported := ""
			if len(s.imported) > 0 {
				imported = plural(len(s.imported), "MCP server", "MCP servers") + " imported, "
			}
			fmt.Fprintf(o.stdout, "%s loaded, %s%s\n", plural(len(loaded), "plugin", "plugins"), imported, plural(len(s.diags), "diagnostic", "diagnostics"))
			if len(s.diags) > 0 {
				return exitWith(exitViolations)
			}
			return nil
		},
	}
}

// importedTools describes the tools an MCP server's listing registered.
func importedTools(tools []string) string {
	switch len(tools) {
	case 0:
		return "no tools"
	case 1:
		return "tool " + tools[0]
	}
	return "tools " + strings.Join(tools, ", ")
}

// registrations describes what a plugin's top level made: its tools
// (agent/name for a tool of an agent's layer), the agents whose scope it
// restricted, its guards, and its listeners by event.
func registrations(effects []scripting.Effect) string {
	var tools, restricts, guards, listeners []string
	for _, e := range effects {
		at := ""
		if e.Agent != nil {
			at = e.Agent.ID()
		}
		switch e.Kind {
		case "tool":
			name := e.Name
			if at != "" {
				name = at + "/" + e.Name
			}
			tools = append(tools, name)
		case "restriction":
			restricts = append(restricts, at)
		case "guard":
			if at != "" {
				at = " for " + at
			}
			guards = append(guards, "guard"+at)
		default:
			if at != "" {
				at = " for " + at
			}
			listeners = append(listeners, e.Kind+at)
		}
	}
	var parts []string
	if len(tools) > 0 {
		word := "tools "
		if len(tools) == 1 {
			word = "tool "
		}
		parts = append(parts, word+strings.Join(tools, ", "))
	}
	if len(restricts) > 0 {
		parts = append(parts, "restricts "+strings.Join(restricts, ", "))
	}
	if len(guards) > 0 {
		parts = append(parts, strings.Join(guards, ", "))
	}
	if len(listeners) > 0 {
		word := "listeners "
		if len(listeners) == 1 {
			word = "listener "
		}
		parts = append(parts, word+strings.Join(listeners, ", "))
	}
	if len(parts) == 0 {
		return "nothing registered"
	}
	return strings.Join(parts, "; ")
}

// checkJSON is check's --json form: {"diagnostics": [{file, line, col,
// message, revision?}], "plugins": [{file, tools: [{name, agent?}],
// effects: [{kind, name?, agent?, line?}], revision, loadedAt}], "servers":
// [{name, tools: [{name}]}]}, the servers being the MCP servers reached. A
// revision is the file's content hash (SHA-256, hex), the one "dsh watch"
// reports; loadedAt is when the plugin loaded, as JavaScript's toISOString
// writes it.
func checkJSON(s *session, loaded []loadedPlugin) any {
	diags := make([]any, 0, len(s.diags))
	for _, d := range s.diags {
		o := dsl.NewObject(
			dsl.Member{Key: "file", Value: d.path},
			dsl.Member{Key: "line", Value: float64(d.d.Line)},
			dsl.Member{Key: "col", Value: float64(d.d.Col)},
			dsl.Member{Key: "message", Value: d.d.Message},
		)
		if code, err := os.ReadFile(d.path); err == nil {
			sum := sha256.Sum256(code)
			o.Set("revision", hex.EncodeToString(sum[:]))
		}
		diags = append(diags, o)
	}
	plugins := make([]any, 0, len(loaded))
	for _, p := range loaded {
		tools := []any{}
		for _, c := range p.changes {
			if c.Kind == engine.ChangeRegister {
				t := dsl.NewObject(dsl.Member{Key: "name", Value: c.Name})
				if c.Agent != nil {
					t.Set("agent", c.Agent.ID())
				}
				tools = append(tools, t)
			}
		}
		effects := []any{}
		for _, e := range p.plugin.Effects() {
			o := dsl.NewObject(dsl.Member{Key: "kind", Value: e.Kind})
			if e.Name != "" {
				o.Set("name", e.Name)
			}
			if e.Agent != nil {
				o.Set("agent", e.Agent.ID())
			}
			if e.Site.Line > 0 {
				o.Set("line", float64(e.Site.Line))
			}
			effects = append(effects, o)
		}
		plugins = append(plugins, dsl.NewObject(dsl.Member{Key: "file", Value: p.path}, dsl.Member{Key: "tools", Value: tools}, dsl.Member{Key: "effects", Value: effects},
			dsl.Member{Key: "revision", Value: p.plugin.Revision()},
			dsl.Member{Key: "loadedAt", Value: p.plugin.LoadedAt.UTC().Format("2006-01-02T15:04:05.000Z")}))
	}
	servers := make([]any, 0, len(s.imported))
	for _, srv := range s.imported {
		tools := make([]any, len(srv.tools))
		for i, name := range srv.tools {
			tools[i] = dsl.NewObject(dsl.Member{Key: "name", Value: name})
		}
		servers = append(servers, dsl.NewObject(dsl.Member{Key: "name", Value: srv.name}, dsl.Member{Key: "tools", Value: tools}))
	}
	return dsl.NewObject(dsl.Member{Key: "diagnostics", Value: diags}, dsl.Member{Key: "plugins", Value: plugins},
		dsl.Member{Key: "servers", Value: servers})
}

func newTypesCmd(o *options) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "types --out DIR",
		Short: "Write the editor declarations of the script API",
		Long: `Types writes, into DIR (created if needed), the declarations editors use
to complete and type-check plugins: dsh.d.ts for JavaScript and TypeScript
(the "dsh" module and the capability modules dsh/fs, dsh/process, dsh/http
and dsh/path), and the declarations of every other script language dsh
mounts. It then loads the plugins and writes tools.d.ts and tools.lua, the
declarations of the tools a run_code program of the agent can call in
TypeScript and in Lua (what the tools:sdk section shows the model), so
that an editor completes programs. It prints
the path of each file written.

Exit status: 0, 1 when a file cannot be written, 2 for a usage error.`,
		Example: `  dsh types --out scripts/types
  # then, in a TypeScript plugin's tsconfig.json: "typeRoots": ["scripts/types"]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("types needs --out DIR")
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return userErrorf("--out %s: %v", out, pathErr(err))
			}
			for _, l := range languages(nil, nil, nil) {
				if l.decls == nil {
					continue
				}
				path := filepath.Join(out, l.declFile)
				if err := os.WriteFile(path, l.decls(), 0o644); err != nil {
					return userErrorf("%s: %v", path, pathErr(err))
				}
				fmt.Fprintln(o.stdout, path)
			}
			return writeProgramTypes(cmd.Context(), o, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the `DIR` to write the declarations into")
	return cmd
}

// writeProgramTypes loads the plugins and writes the declarations of the
// tools a run_code program of the agent can call: tools.d.ts (the
// TypeScript SDK's declarations) and tools.lua (the Lua SDK's LuaLS meta
// file).
func writeProgramTypes(ctx context.Context, o *options, out string) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.loadAll(ctx); err != nil {
		return err
	}
	s.printDiagnostics(o.stderr)
	scope := s.scope(s.agent)
	set, err := scope.Resolve(ctx, nil)
	if err != nil {
		return userErrorf("resolving the tool set: %v", err)
	}
	tools := ptc.SDKToolsOf(scope.Definitions(set))
	for _, f := range []struct{ name, text string }{
		{"tools.d.ts", "// The tools a run_code program can call, written by dsh types.\n\n" + ptc.TypeScriptDeclarations(tools) + "\n"},
		{"tools.lua", ptc.LuaDeclarations(tools) + "\n"},
	} {
		path := filepath.Join(out, f.name)
		if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
			return userErrorf("%s: %v", path, pathErr(err))
		}
		fmt.Fprintln(o.stdout, path)
	}
	return nil
}

func newReplayCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "replay LOG|-",
		Short: "Re-draw the cards of a session log",
		Long: `Replay reads a session log written by --log (JSONL events; "-" for
standard input) and draws the card of each call again, with the
presenters of the plugins loaded now: presentation is pure, so the same
plugins draw the same cards as the live run did, each batch followed by
the same summary line. Calls run as agents are looked up in that agent's
scope: give the same --agent-parent flags as the run.

A log that several runs appended to holds several batches. The log does
not mark them: a batch ends where a call id repeats, or where the calls
change agent. A last line that was cut off (the writer stopped in the
middle of it) is left out with a warning, and the events before it are
drawn. An event too large for one line of the log (64 MiB) was written
cut, its long strings shortened and marked "… (truncated)": it is drawn
as written, with a warning naming its line.

With --json, it prints {"cards": [{"callId", "name", "call"?, "result"?}]},
the presenters' views as JSON.

Exit status: 0, 1 for a log that cannot be read or is not a session log,
2 for a usage error.`,
		Example: `  dsh --log session.jsonl --approve allow run calls.json
  dsh replay session.jsonl`,
		Args: exactArgs(1, "replay needs one session LOG (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			var log logReading
			if name == stdinName {
				l, err := readRecords(o.stdin, displayName(name))
				if err != nil {
					return userErrorf("%v", err)
				}
				log = l
			} else {
				f, err := os.Open(name)
				if err != nil {
					return userErrorf("%s: %v", name, pathErr(err))
				}
				l, err := readRecords(f, name)
				f.Close()
				if err != nil {
					return userErrorf("%v", pathErr(err))
				}
				log = l
			}
			for _, l := range log.skipped {
				fmt.Fprintf(o.stderr, "dsh: warning: %s:%d: %v\n", displayName(name), l.Line, &l)
			}
			for _, c := range log.shortened {
				what := c.rec.typ
				if id := c.rec.str("callId"); id != "" {
					what += " of call " + strconv.Quote(id)
				} else if id := c.rec.str("subCallId"); id != "" {
					what += " of sub-call " + strconv.Quote(id)
				}
				fmt.Fprintf(o.stderr, "dsh: warning: %s:%d: the %s was logged cut (its line would have had %d bytes, over %d); its card shows what was kept\n",
					displayName(name), c.line, what, c.bytes, maxLogLine)
			}
			if log.cutOff > 0 {
				fmt.Fprintf(o.stderr, "dsh: warning: %s:%d: the last line is cut off; replaying the %s before it\n",
					displayName(name), log.cutOff, plural(len(log.recs), "event", "events"))
			}
			s, err := newSession(o)
			if err != nil {
				return err
			}
			defer s.close()
			if _, err := s.loadAll(cmd.Context()); err != nil {
				return err
			}
			s.printDiagnostics(o.stderr)
			if o.json {
				return writeJSONLine(o.stdout, cardsJSON(presenter{s}.cards(log.recs)))
			}
			writeBatches(o.stdout, style{on: colour(o.stdout)}, presenter{s}, splitBatches(log.recs))
			return nil
		},
	}
}

// cardsJSON is replay's --json form.
func cardsJSON(cards []card) any {
	out := make([]any, 0, len(cards))
	for _, c := range cards {
		m := dsl.NewObject(dsl.Member{Key: "callId", Value: c.callID}, dsl.Member{Key: "name", Value: c.name})
		if c.call != nil {
			m.Set("call", c.call.JSON())
		}
		if c.result != nil {
			m.Set("result", c.result.JSON())
		}
		out = append(out, m)
	}
	return dsl.NewObject(dsl.Member{Key: "cards", Value: out})
}
