package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
)

// badNamesServerArg makes the test binary an MCP server on stdio whose
// tools' names break the tool-name rule, beside one that keeps it.
const badNamesServerArg = "mcp-test-server-bad-names"

func init() {
	if len(os.Args) < 2 || os.Args[1] != badNamesServerArg {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-test-bad-names", Version: "v1"}, nil)
	// Each tool answers with the name it was called by.
	handler := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Params.Name}}}, nil
	}
	for _, name := range []string{"ok", "a.b", "a b", "x.y", "\x1b]0;pwned\x07\x1b[2J", "\n" + strings.Repeat("x", 1<<20)} {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestImportedToolNamesOutsideTheRule(t *testing.T) {
	scripts := t.TempDir()
	server := "t='" + os.Args[0] + "' " + badNamesServerArg
	rule := `is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'`
	// The server lists its tools sorted: "\n…", "\x1b…", "a b", "a.b", "ok", "x.y".
	diags := []string{
		`mcp:t: tool "a b": not imported: its name maps to "t__a_b", as the tool "a.b"'s does`,
		`mcp:t: tool "a.b": not imported: its name maps to "t__a_b", as the tool "a b"'s does`,
	}
	long := "t___" + strings.Repeat("x", 51) + "_8341ac28"
	t.Run("check serves each tool under its mapped name and reports the collision", func(t *testing.T) {
		code, stdout, stderr := run(t, "", "--scripts", scripts, "--mcp", server, "check")
		want := strings.Join(diags, "\n") + "\nmcp:t: tools " + long + ", t____0_pwned___2J, t__ok, t__x_y" +
			"\n0 plugins loaded, 1 MCP server imported, 2 diagnostics\n"
		if code != exitViolations || stdout != want || stderr != "" {
			t.Errorf("status %d\nstdout %q\nwant   %q\nstderr %q", code, stdout, want, stderr)
		}
	})
	for served, original := range map[string]string{"t__ok": "ok", "t__x_y": "x.y", "t____0_pwned___2J": `\u001b]0;pwned\u0007\u001b[2J`} {
		t.Run("a call to "+served+" reaches the server's tool by its own name", func(t *testing.T) {
			code, stdout, stderr := run(t, "", "--scripts", scripts, "--json", "--mcp", server, "call", served)
			if code != 0 || !strings.Contains(stdout, `"value":"`+original+`"`) || stderr != strings.Join(diags, "\n")+"\n" {
				t.Errorf("status %d\nstdout %.300s\nstderr %q", code, stdout, stderr)
			}
		})
	}
	t.Run("a call to the shortened name sends the whole name", func(t *testing.T) {
		code, stdout, _ := run(t, "", "--scripts", scripts, "--json", "--mcp", server, "call", long)
		if code != 0 || !strings.Contains(stdout, `"value":"\n`+strings.Repeat("x", 1<<20)+`"`) {
			t.Errorf("status %d\nstdout %.300s", code, stdout)
		}
	})
	t.Run("a name two tools map to is an unknown tool", func(t *testing.T) {
		code, stdout, stderr := run(t, "", "--scripts", scripts, "--mcp", server, "call", "t__a_b")
		want := "✗ t__a_b c1 [UNKNOWN_TOOL]\n  Error: unknown tool \"t__a_b\"\n\n1 call: 0 ok, 1 failed · ran c1\n"
		if code != 0 || stdout != want || stderr != strings.Join(diags, "\n")+"\n" {
			t.Errorf("status %d\nstdout %q\nstderr %q", code, stdout, stderr)
		}
	})
	t.Run("a call naming a tool outside the rule is a usage error that shows it escaped", func(t *testing.T) {
		code, stdout, stderr := run(t, "", "--scripts", scripts, "call", "a\x1b[2J.b")
		want := "dsh: tool name \"a\\x1b[2J.b\" " + rule + "\nRun 'dsh call --help' for usage.\n"
		if code != exitTrouble || stdout != "" || stderr != want {
			t.Errorf("status %d\nstdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
		}
	})
	t.Run("an --mcp value is shown escaped in its error", func(t *testing.T) {
		code, _, stderr := run(t, "", "--scripts", scripts, "--mcp", "a\x1bb=x", "check")
		want := `dsh: --mcp a\x1bb=x: the server name "a\x1bb" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)` + "\n"
		if code != exitTrouble || !strings.HasPrefix(stderr, want) {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
	})
}

func TestPromptAndCardLinesShowOutsideTextEscaped(t *testing.T) {
	t.Run("an approval's reason and call id cannot rewrite the terminal", func(t *testing.T) {
		got := askLine(engine.ApprovalRequest{ToolName: "write", CallID: "c\x1b[2J" + strings.Repeat("i", 1000),
			Reason: "ok\r\x1b[1A\x1b[2Kdsh: read (r1) asks for approval: harmless\n"})
		want := `dsh: write (c\x1b[2J` + strings.Repeat("i", 59) + `…) asks for approval: ok\r\x1b[1A\x1b[2Kdsh: read (r1) asks for approval: harmless\n`
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
	t.Run("a card's header cuts a model's huge name and call id", func(t *testing.T) {
		var b strings.Builder
		writeCards(&b, style{}, []card{{callID: strings.Repeat("c", 1000), name: "\x1b[2J" + strings.Repeat("n", 1<<20), hasResult: true, isError: true}})
		header, _, _ := strings.Cut(b.String(), "\n")
		want := "✗ ^[[2J" + strings.Repeat("n", 60) + "… " + strings.Repeat("c", 64) + "…"
		if header != want {
			t.Errorf("got  %q\nwant %q", header, want)
		}
	})
}
