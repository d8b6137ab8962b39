package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// claudeCodeDescriptionLimit is the length past which Claude Code cuts a
// tool's description.
const claudeCodeDescriptionLimit = 2048

// codeEngine is an engine with n tools, tool_000…, each with a long
// description and a parameter, under the PTC executor for lang (direct:
// ptc-direct), served as agent "main".
type codeEngine struct {
	svc   *engine.Service
	agent *engine.Agent
	srv   *mcp.Server
}

func newCodeEngine(t *testing.T, n int, lang ptc.Language, direct bool) *codeEngine {
	t.Helper()
	return serveCode(t, codeService(t, n, lang, direct))
}

// codeService is newCodeEngine's engine, not served yet.
func codeService(t *testing.T, n int, lang ptc.Language, direct bool) *engine.Service {
	t.Helper()
	svc := engine.New()
	for i := range n {
		registerEcho(t, svc, fmt.Sprintf("tool_%03d", i))
	}
	var rt ptc.Runtime
	var err error
	if lang == ptc.Lua {
		rt, err = lua.NewProgramRuntime(lua.ProgramOptions{})
	} else {
		rt, err = js.NewProgramRuntime(js.ProgramOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	exec, err := ptc.NewExecutor(svc, rt, ptc.Options{Direct: direct})
	if err != nil {
		t.Fatal(err)
	}
	svc.Global().SetExecutor(exec)
	return svc
}

// serveCode serves svc as agent "main".
func serveCode(t *testing.T, svc *engine.Service) *codeEngine {
	t.Helper()
	agent := engine.NewAgent("main", nil)
	srv, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &codeEngine{svc: svc, agent: agent, srv: srv}
}

// registerEcho registers name, a tool that returns its text argument.
func registerEcho(t *testing.T, svc *engine.Service, name string) {
	t.Helper()
	def, err := engine.DefineTool(engine.ToolOptions[countArgs, string]{
		Name:        name,
		Description: "Return the text it is given. " + strings.Repeat("A description as long as real servers write. ", 6),
		Parameters:  dsl.Params(dsl.Prop("text", dsl.String().Describe("The text to return.").Required())),
		Output:      dsl.String(),
		Render: func(_ countArgs, out string) ([]engine.Block, error) {
			return []engine.Block{engine.Text(out)}, nil
		},
		Execute: func(_ context.Context, args countArgs, _ *engine.Run) (string, error) {
			return args.Text, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
}

// sdkOf is the executor's tools:sdk section over the agent's tools named
// names (nil: every tool but run_code).
func (e *codeEngine) sdkOf(t *testing.T, names ...string) string {
	t.Helper()
	sc := e.svc.Scope(e.agent)
	set, err := sc.Resolve(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var defs []*engine.Definition
	for _, def := range sc.Definitions(set) {
		if names == nil || strings.Contains(" "+strings.Join(names, " ")+" ", " "+def.Name+" ") {
			defs = append(defs, def)
		}
	}
	desc, err := sc.Executor().Describe(defs)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range desc.Sections {
		if sec.ID == ptc.SDKSectionID {
			return sec.Text
		}
	}
	t.Fatal("the executor declares no SDK")
	return ""
}

// connect connects a client on the latest protocol, in memory.
func (e *codeEngine) connect(t *testing.T) *sdk.ClientSession {
	t.Helper()
	return (&fixture{srv: e.srv}).connect(t, "", nil)
}

// listNames lists the served tools by name, with run_code's description.
func listNames(t *testing.T, cs *sdk.ClientSession) (names []string, runCode string) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Name == ptc.ToolName {
			runCode = tool.Description
		}
	}
	return names, runCode
}

func TestUnderPTCTheSDKGoesToTheInstructionsAndTheDescribeTool(t *testing.T) {
	e := newCodeEngine(t, 200, ptc.TypeScript, false)
	cs := e.connect(t)
	all := e.sdkOf(t)
	if len(all) < 20*claudeCodeDescriptionLimit {
		t.Fatalf("the SDK of 200 tools is %d characters: too short to test the bound", len(all))
	}

	t.Run("run_code and describe_tools are served, run_code's description short with 200 tools", func(t *testing.T) {
		names, desc := listNames(t, cs)
		if strings.Join(names, " ") != "describe_tools run_code" {
			t.Errorf("tools %v, want describe_tools and run_code", names)
		}
		if len(desc) > claudeCodeDescriptionLimit {
			t.Errorf("run_code's description is %d characters, want at most %d", len(desc), claudeCodeDescriptionLimit)
		}
		if !strings.HasPrefix(desc, ptc.Description(ptc.TypeScript)+"\n\n") || !strings.Contains(desc, "`describe_tools`") {
			t.Errorf("run_code's description %q, want the executor's followed by a note naming describe_tools", desc)
		}
		if strings.Contains(desc, "tool_000") {
			t.Errorf("run_code's description declares tools: %q", desc)
		}
	})
	t.Run("the instructions are a paragraph naming describe_tools, then the SDK", func(t *testing.T) {
		got := cs.InitializeResult().Instructions
		if !strings.HasSuffix(got, "\n\n"+all) || strings.Count(got, "\n\n") != strings.Count(all, "\n\n")+1 {
			t.Errorf("instructions (%d characters) are not a paragraph then the SDK (%d characters):\n%.400s", len(got), len(all), got)
		}
		if !strings.Contains(got, "`describe_tools`") {
			t.Errorf("instructions do not name describe_tools:\n%.400s", got)
		}
	})
	t.Run("describe_tools returns the SDK", func(t *testing.T) {
		r := call(t, cs, mcp.DescribeToolName, `{}`)
		if r.IsError || text(r) != all {
			t.Errorf("result isError=%v %.200q, want the SDK", r.IsError, text(r))
		}
		if r := call(t, cs, mcp.DescribeToolName, ""); r.IsError || text(r) != all {
			t.Errorf("without arguments: isError=%v %.200q, want the SDK", r.IsError, text(r))
		}
	})
	t.Run("describe_tools with tools returns their declarations only", func(t *testing.T) {
		r := call(t, cs, mcp.DescribeToolName, `{"tools":["tool_007","tool_150"]}`)
		want := e.sdkOf(t, "tool_007", "tool_150")
		if r.IsError || text(r) != want {
			t.Errorf("result isError=%v %q, want %q", r.IsError, text(r), want)
		}
		if strings.Contains(text(r), "tool_008") {
			t.Errorf("the declarations of tool_007 and tool_150 name tool_008: %q", text(r))
		}
	})
	for _, c := range []struct{ name, args, want string }{
		{"a tool nobody declares is an error", `{"tools":["tool_007","nope"]}`,
			`Error: describe_tools: no tool named "nope" is declared; call it without tools for every tool`},
		{"run_code is not declared", `{"tools":["run_code"]}`,
			`Error: describe_tools: no tool named "run_code" is declared; call it without tools for every tool`},
		{"tools that is not an array of strings is an error", `{"tools":"tool_007"}`,
			`Error: describe_tools: the arguments must be {tools?: string[]}`},
		{"an unknown argument is an error", `{"tool":"tool_007"}`,
			`Error: describe_tools: the arguments must be {tools?: string[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, cs, mcp.DescribeToolName, c.args)
			if !r.IsError || text(r) != c.want {
				t.Errorf("result isError=%v %q, want an error %q", r.IsError, text(r), c.want)
			}
		})
	}
	t.Run("a run_code program cannot call describe_tools", func(t *testing.T) {
		r := call(t, cs, ptc.ToolName, `{"description":"Call the describe tool","code":"try { await (tools as any).describe_tools({}); return 'called' } catch (e) { return 'failed: ' + String(e) }"}`)
		b, _ := json.Marshal(r.StructuredContent)
		if want := `{"logs":[],"result":"failed: ToolCallError: unknown tool \"describe_tools\""}`; r.IsError || string(b) != want {
			t.Errorf("result isError=%v %s, want %s", r.IsError, b, want)
		}
	})
	t.Run("a tool registered later is in describe_tools at once, in the instructions of later sessions only", func(t *testing.T) {
		registerEcho(t, e.svc, "late_tool")
		if err := e.srv.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := call(t, cs, mcp.DescribeToolName, `{"tools":["late_tool"]}`); r.IsError || !strings.Contains(text(r), "late_tool") {
			t.Errorf("describe_tools: isError=%v %q, want late_tool declared", r.IsError, text(r))
		}
		if strings.Contains(cs.InitializeResult().Instructions, "late_tool") {
			t.Error("the first session's instructions changed")
		}
		if got := e.connect(t).InitializeResult().Instructions; !strings.HasSuffix(got, e.sdkOf(t)) || !strings.Contains(got, "late_tool") {
			t.Errorf("a later session's instructions do not declare late_tool:\n%.400s", got)
		}
	})
}

func TestUnderPTCRunCodeStaysShortWith200ImportedTools(t *testing.T) {
	upstream := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	for i := range 200 {
		upstream.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("tool-%03d", i),
			Description: "Return the text it is given. " + strings.Repeat("A description as long as real servers write. ", 6),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to return."}},"required":["text"]}`),
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	}
	mem := newImpMemServer(upstream)
	svc := codeService(t, 0, ptc.TypeScript, false)
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}}, mcp.Options{Dial: mem.dial})
	t.Cleanup(func() {
		_ = client.Close()
		mem.closeAll()
	})
	if len(diags) > 0 {
		t.Fatalf("importing: %v", diags)
	}
	e := serveCode(t, svc)
	cs := e.connect(t)
	all := e.sdkOf(t)
	if !strings.Contains(all, "up__tool-000") || !strings.Contains(all, "up__tool-199") {
		t.Fatalf("the SDK does not declare the imported tools:\n%.400s", all)
	}
	names, desc := listNames(t, cs)
	if strings.Join(names, " ") != "describe_tools run_code" {
		t.Errorf("tools %v, want describe_tools and run_code", names)
	}
	if len(desc) > claudeCodeDescriptionLimit || strings.Contains(desc, "up__tool") {
		t.Errorf("run_code's description is %d characters (at most %d) and names no tool: %q", len(desc), claudeCodeDescriptionLimit, desc)
	}
	if got := cs.InitializeResult().Instructions; !strings.HasSuffix(got, "\n\n"+all) {
		t.Errorf("instructions (%d characters) do not end with the SDK of the 200 imported tools (%d characters)", len(got), len(all))
	}
	if r := call(t, cs, mcp.DescribeToolName, `{"tools":["up__tool-123"]}`); r.IsError || text(r) != e.sdkOf(t, "up__tool-123") {
		t.Errorf("describe_tools: isError=%v %q, want up__tool-123's declaration", r.IsError, text(r))
	}
	t.Logf("with 200 imported tools: run_code's description %d characters, instructions %d, the SDK %d",
		len(desc), len(cs.InitializeResult().Instructions), len(all))
}

func TestUnderPTCInLuaTheInstructionsCarryTheLuaSDK(t *testing.T) {
	e := newCodeEngine(t, 3, ptc.Lua, false)
	cs := e.connect(t)
	all := e.sdkOf(t)
	if got := cs.InitializeResult().Instructions; !strings.HasSuffix(got, "\n\n"+all) {
		t.Errorf("instructions do not end with the Lua SDK:\n%s", got)
	}
	if r := call(t, cs, mcp.DescribeToolName, `{}`); r.IsError || text(r) != all {
		t.Errorf("describe_tools: isError=%v %q, want the Lua SDK %q", r.IsError, text(r), all)
	}
	if _, desc := listNames(t, cs); !strings.HasPrefix(desc, ptc.Description(ptc.Lua)+"\n\n") {
		t.Errorf("run_code's description %q, want the Lua flavor's", desc)
	}
}

func TestUnderPTCDirectAToolNamedDescribeToolsWins(t *testing.T) {
	e := newCodeEngine(t, 2, ptc.TypeScript, true)
	registerEcho(t, e.svc, mcp.DescribeToolName)
	if err := e.srv.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := e.connect(t)
	names, _ := listNames(t, cs)
	if strings.Join(names, " ") != "describe_tools run_code tool_000 tool_001" {
		t.Errorf("tools %v, want describe_tools (the engine's), run_code and the two tools", names)
	}
	if r := call(t, cs, mcp.DescribeToolName, `{"text":"the engine's"}`); r.IsError || text(r) != "the engine's" {
		t.Errorf("describe_tools: isError=%v %q, want the engine's tool to answer", r.IsError, text(r))
	}
	if got := cs.InitializeResult().Instructions; !strings.HasSuffix(got, e.sdkOf(t)) {
		t.Errorf("instructions do not end with the SDK:\n%s", got)
	}
}

func TestUnderTheNativeExecutorThereIsNoSDK(t *testing.T) {
	cs := newFixture(t).connect(t, "", nil)
	if got := cs.InitializeResult().Instructions; got != "" {
		t.Errorf("instructions %q, want none", got)
	}
	names, _ := listNames(t, cs)
	if strings.Join(names, " ") != "broken guarded shout wait word_count" {
		t.Errorf("tools %v, want the engine's alone", names)
	}
}
