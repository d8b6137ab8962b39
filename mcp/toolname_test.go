package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/toolnametest"
	"github.com/dsh-go/dsh/mcp"
)

// mappedNames is the name each row of toolnametest.Cases is served under
// by the server "t" (the empty name has none: it is refused). The hash
// suffixes are pinned: a name is the same on every run.
var mappedNames = map[string]string{
	"a\x1b[2Jb":                "t__a__2Jb",
	"a\nb":                     "t__a_b",
	"a\x00b":                   "t__a_b",
	strings.Repeat("a", 65):    "t__" + strings.Repeat("a", 52) + "_635361c4",
	strings.Repeat("x", 1<<20): "t__" + strings.Repeat("x", 52) + "_8f990ba0",
	"héllo":                    "t__h_llo",
	"a.b":                      "t__a_b",
	"a b":                      "t__a_b",
}

func TestToolNameMapsAndShortens(t *testing.T) {
	for _, c := range toolnametest.Cases() {
		if c.Name == "" {
			continue
		}
		t.Run(c.Label+" maps to a name inside the rule", func(t *testing.T) {
			want, ok := mappedNames[c.Name]
			if !ok {
				t.Fatalf("no mapped name for %q", c.Quoted)
			}
			got := mcp.ToolName("t", c.Name)
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			if err := engine.CheckToolName(got); err != nil {
				t.Error(err)
			}
		})
	}
	s53, s54 := strings.Repeat("s", 53), strings.Repeat("s", 54)
	for _, c := range []struct{ label, server, tool, want string }{
		{"a name inside the rule is kept as it is", "fs", "read_text_file", "fs__read_text_file"},
		{"a byte of invalid UTF-8 becomes one underscore", "t", "a\xffb", "t__a_b"},
		{"each non-ASCII letter becomes one underscore", "t", "日本", "t____"},
		{"a name of exactly 64 bytes once prefixed is kept", "t", strings.Repeat("c", 61), "t__" + strings.Repeat("c", 61)},
		{"a name that conforms alone but not once prefixed is shortened", "t", strings.Repeat("b", 62), "t__" + strings.Repeat("b", 52) + "_1ce87989"},
		{"a 53-byte server name fits a 9-byte tool unshortened", s53, "abcdefghi", s53 + "__abcdefghi"},
		{"a 53-byte server name keeps its prefix when shortening", s53, "abcdefghij", s53 + "___72399361"},
		{"a 54-byte server name leaves no room to shorten", s54, "abcdefghi", s54 + "__abcdefghi"},
	} {
		t.Run(c.label, func(t *testing.T) {
			if got := mcp.ToolName(c.server, c.tool); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	t.Run("the longest server name that can shorten is 53 bytes", func(t *testing.T) {
		if mcp.MaxShortenedServerName != 53 {
			t.Errorf("MaxShortenedServerName = %d", mcp.MaxShortenedServerName)
		}
	})
}

// connectTools imports a server "name" listing tools, each answering with
// the name it was called by, and returns the diagnostics by tool name.
func connectTools(t *testing.T, name string, tools ...string) (*engine.Service, map[string]string, []mcp.Diagnostic) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, nil)
	handler := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Params.Name}}}, nil
	}
	for _, tool := range tools {
		srv.AddTool(&sdk.Tool{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	}
	mem := newImpMemServer(srv)
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: name, Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	t.Cleanup(func() {
		client.Close()
		mem.closeAll()
	})
	errs := map[string]string{}
	for _, d := range diags {
		errs[d.Tool] = d.Error()
	}
	return svc, errs, diags
}

func TestImportedToolNamesAreMapped(t *testing.T) {
	long, huge := strings.Repeat("a", 65), strings.Repeat("x", 1<<20)
	svc, errs, diags := connectTools(t, "t", "ok", "héllo", "a.b", long, huge, "",
		"x_y", "x.y", "x y", "p.q", "p q")

	t.Run("the tools that map to a free name are served under it", func(t *testing.T) {
		want := []string{mappedNames[long], mappedNames[huge], "t__a_b", "t__h_llo", "t__ok", "t__x_y"}
		slices.Sort(want)
		if got := impToolNames(svc); !slices.Equal(got, want) {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
	for served, original := range map[string]string{
		"t__ok": "ok", "t__a_b": "a.b", "t__h_llo": "héllo", "t__x_y": "x_y", mappedNames[long]: long,
	} {
		t.Run("a call to "+served+" reaches the server's tool by its own name", func(t *testing.T) {
			if r := impCall(svc, context.Background(), served, nil); r.IsError || r.Value != original {
				t.Errorf("call: %.200s", impJSON(t, r))
			}
		})
	}
	t.Run("a call to a shortened megabyte name sends the whole name", func(t *testing.T) {
		if r := impCall(svc, context.Background(), mappedNames[huge], nil); r.IsError || r.Value != huge {
			t.Errorf("call: %.200s", impJSON(t, r))
		}
	})
	rows := []struct{ label, tool, want string }{
		{"the empty name is refused", "", `tool "": not imported: tool name "" is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'`},
		{"a mapped name colliding with a name served unchanged is not imported", "x.y", `tool "x.y": not imported: its name maps to "t__x_y", the name of the tool "x_y"`},
		{"every mapped name colliding with one served unchanged is not imported", "x y", `tool "x y": not imported: its name maps to "t__x_y", the name of the tool "x_y"`},
		{"of two mapped names that collide neither is imported: the first names the second", "p q", `tool "p q": not imported: its name maps to "t__p_q", as the tool "p.q"'s does`},
		{"of two mapped names that collide neither is imported: the second names the first", "p.q", `tool "p.q": not imported: its name maps to "t__p_q", as the tool "p q"'s does`},
	}
	for _, r := range rows {
		t.Run(r.label, func(t *testing.T) {
			if got := errs[r.tool]; got != r.want {
				t.Errorf("got  %q\nwant %q", got, r.want)
			}
		})
	}
	t.Run("there is one diagnostic per tool not imported", func(t *testing.T) {
		if len(diags) != len(rows) {
			t.Errorf("%d diagnostics: %q", len(diags), diags)
		}
	})
}

func TestImportedToolNamesTooLongForALongServerName(t *testing.T) {
	server := strings.Repeat("s", 54)
	svc, errs, diags := connectTools(t, server, "abcdefgh", "abcdefghi")
	t.Run("a tool that fits is served", func(t *testing.T) {
		if got := impToolNames(svc); !slices.Equal(got, []string{server + "__abcdefgh"}) {
			t.Errorf("tools %q", got)
		}
	})
	t.Run("a tool that would need shortening is not imported, with the reason", func(t *testing.T) {
		full := server + "__abcdefghi"
		want := `tool "abcdefghi": not imported: ` + toolnametest.Message(`"`+full[:64]+`…" (65 bytes)`) +
			` (a server name over 53 bytes leaves no room to shorten it)`
		if got := errs["abcdefghi"]; got != want || len(diags) != 1 {
			t.Errorf("got  %q\nwant %q\n%d diagnostics", got, want, len(diags))
		}
	})
}

func TestDiagnosticIsOneBoundedLine(t *testing.T) {
	d := mcp.Diagnostic{Server: "t", Tool: "a\nb", Reason: "cannot connect: \x1b[2J" + strings.Repeat("z", 1<<20)}
	want := `tool "a\nb": cannot connect: \x1b[2J` + strings.Repeat("z", 2048-len("cannot connect: \x1b[2J")) + "…"
	if got := d.Error(); got != want {
		t.Errorf("got %d bytes %.120q", len(got), got)
	}
}
