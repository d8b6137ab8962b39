package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
)

// Code mode over MCP. Under a code executor (--executor ptc or
// ptc-direct) a model writes run_code programs against the SDK the
// executor renders (the tools:sdk section). An agent gets it in its
// system prompt; an MCP client has none, and Claude Code cuts a tool
// description past 2,048 characters, so the SDK cannot ride in
// run_code's description. It goes to three places instead:
//
//   - run_code's description is the executor's short text plus
//     [codeModeNote], whatever the number of tools;
//   - the server's instructions (the initialize and server/discover
//     results) are a short header and the SDK, as it is when the session
//     begins: instructions cannot change during a
//     session, so a tool that arrives later (an import connecting after
//     the client did) is missing from them;
//   - the [DescribeToolName] tool returns the SDK as it is at the call,
//     optionally for some tools only, for a client that drops the
//     instructions or a model that wants the current list.
//
// The describe tool is no tool of the engine: it is served beside
// run_code, never reaches a run_code program (programs call the engine's
// tools), and does not go through the pipeline. It calls no tool and
// shows nothing the session's instructions do not: the declarations of
// the tools the served agent sees, resolved as tools/list resolves them.
// Policies gate calls, not what a client may read of the tool list, so
// it is answered as tools/list is, without the policies or the --log.

// DescribeToolName is the name of the tool that returns the run_code SDK
// under a code executor.
const DescribeToolName = "describe_tools"

// codeModeNote follows run_code's own description over MCP, where the
// executor's "the system prompt" is the server's instructions.
const codeModeNote = "Over this MCP server, the declarations are in the server's instructions, as they were " +
	"when the session began; the `" + DescribeToolName + "` tool returns them as they are now " +
	"(tools of an imported server that connects later are only there)."

// instructionsHeader opens the server's instructions under a code
// executor.
const instructionsHeader = "The tools of this server are called from `run_code` programs, written against the " +
	"SDK below. It declares the tools as they were when this session began; the `" + DescribeToolName +
	"` tool returns the declarations as they are now."

// describeTool is the describe tool's MCP definition.
func describeTool() *sdk.Tool {
	return &sdk.Tool{
		Name:  DescribeToolName,
		Title: "Describe the run_code SDK",
		Description: "Return the SDK a `run_code` program is written against: the declarations of the tools " +
			"a program calls, as they are now. Give `tools` (tool names) for those tools' declarations only.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"string"},` +
			`"description":"The tools to declare (default: every tool)."}},"additionalProperties":false}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}
}

// codeMode reads the code executor's part of a description: the server's
// instructions, [instructionsHeader] then the SDK, and whether there is an
// SDK at all (ok is false under the native executor). The executor's
// tools:code-only section stays out: over MCP, tools/list says what a
// client may call, and the describe tool is callable too.
func codeMode(desc engine.Description) (instructions string, ok bool) {
	for _, sec := range desc.Sections {
		if sec.ID == sdkSectionID {
			return instructionsHeader + "\n\n" + sec.Text, true
		}
	}
	return "", false
}

// setInstructions is a receiving middleware that puts the instructions of
// the last Sync into the initialize and server/discover results.
func (s *Server) setInstructions(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		text := s.instructions.Load()
		if text == nil || *text == "" {
			return res, nil
		}
		switch r := res.(type) {
		case *sdk.InitializeResult:
			r.Instructions = *text
		case *sdk.DiscoverResult:
			r.Instructions = *text
		}
		return res, nil
	}
}

// describeArgs are the describe tool's arguments.
type describeArgs struct {
	Tools *[]string `json:"tools"`
}

// handleDescribe is the describe tool's handler: the SDK over the tools
// the agent sees now, or over those named.
func (s *Server) handleDescribe(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var args describeArgs
	if raw := req.Params.Arguments; len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return errorResult(DescribeToolName + `: the arguments must be {tools?: string[]}`), nil
		}
	}
	text, err := s.sdkFor(s.forCaller(ctx, req.Extra), args.Tools)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
}

// sdkFor renders the SDK over the tools the agent sees now, or over those
// of names when names is not nil; a name that is not among them is an
// error.
func (s *Server) sdkFor(ctx context.Context, names *[]string) (string, error) {
	set, err := s.scope.Resolve(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("resolving the tool set: %w", err)
	}
	defs := slices.DeleteFunc(s.scope.Definitions(set), func(d *engine.Definition) bool { return !engine.Admits(ctx, d.Name) })
	if names != nil {
		var keep []*engine.Definition
		for _, def := range defs {
			if def.Name != engine.TransportName && slices.Contains(*names, def.Name) {
				keep = append(keep, def)
			}
		}
		for _, name := range *names {
			if !slices.ContainsFunc(keep, func(d *engine.Definition) bool { return d.Name == name }) {
				return "", fmt.Errorf("%s: no tool named %q is declared; call it without tools for every tool", DescribeToolName, name)
			}
		}
		defs = keep
	}
	desc, err := s.scope.Executor().Describe(defs)
	if err != nil {
		return "", fmt.Errorf("describing the tools: %w", err)
	}
	for _, sec := range desc.Sections {
		if sec.ID == sdkSectionID {
			return sec.Text, nil
		}
	}
	return "", fmt.Errorf("%s: the executor declares no SDK", DescribeToolName)
}

// withDescribe adds the describe tool to the served tools under a code
// executor (code), unless a tool of the engine has its name (possible
// under ptc-direct, where the engine's tools are served too): the
// engine's tool is served then, and the describe tool is not.
func (s *Server) withDescribe(tools []*sdk.Tool, code bool) []*sdk.Tool {
	s.describeTool = nil
	if !code {
		return tools
	}
	if slices.ContainsFunc(tools, func(t *sdk.Tool) bool { return t.Name == DescribeToolName }) {
		s.logger.Warn("the run_code SDK is in the instructions only: a tool has the describe tool's name", "tool", DescribeToolName)
		return tools
	}
	s.describeTool = describeTool()
	return append(tools, s.describeTool)
}

// handlerFor returns the handler of a tool of the last Sync: the describe
// tool's, or handle, which runs an engine tool through the pipeline.
func (s *Server) handlerFor(t *sdk.Tool) sdk.ToolHandler {
	if t == s.describeTool {
		return s.handleDescribe
	}
	return s.handle
}
