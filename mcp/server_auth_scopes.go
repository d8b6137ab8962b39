package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
)

// maxToolScopeRules caps the rules of a tool-scopes file.
const maxToolScopeRules = 10000

// ToolScopes maps served tool names to the OAuth scopes a token needs to
// see and call them (dsh serve --oauth-tool-scopes). Each rule is a line
// "GLOB SCOPE...": GLOB matches tool names as path.Match does ("*" any
// run of characters, "?" one, [a-z] a class), and the first rule whose
// GLOB matches a tool decides: a token covers the tool when it carries
// every SCOPE of that rule (a rule without scopes opens its tools to any
// valid token). A tool no rule matches is covered by no token. A word
// starting with # starts a comment, to the end of the line.
type ToolScopes struct {
	rules []toolScopeRule
}

type toolScopeRule struct {
	glob   string
	scopes []string
}

// ParseToolScopes reads a tool-scopes file (see [ToolScopes]).
func ParseToolScopes(r io.Reader) (*ToolScopes, error) {
	ts := &ToolScopes{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, "#") }); i >= 0 {
			fields = fields[:i] // a comment, to the end of the line
		}
		if len(fields) == 0 {
			continue
		}
		if _, err := path.Match(fields[0], ""); err != nil {
			return nil, fmt.Errorf("line %d: %q is not a valid glob", line, fields[0])
		}
		if len(ts.rules) == maxToolScopeRules {
			return nil, fmt.Errorf("line %d: more than %d rules", line, maxToolScopeRules)
		}
		ts.rules = append(ts.rules, toolScopeRule{glob: fields[0], scopes: fields[1:]})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errors.New("a line is longer than 64 KiB")
		}
		return nil, err
	}
	return ts, nil
}

// Covers reports whether a token with scopes may see and call tool. A nil
// ToolScopes covers every tool.
func (ts *ToolScopes) Covers(tool string, scopes []string) bool {
	if ts == nil {
		return true
	}
	for _, r := range ts.rules {
		if ok, _ := path.Match(r.glob, tool); ok {
			for _, s := range r.scopes {
				if !slices.Contains(scopes, s) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// Scopes are the scopes the rules name, sorted, for the protected-resource
// metadata's scopes_supported.
func (ts *ToolScopes) Scopes() []string {
	if ts == nil {
		return nil
	}
	var out []string
	for _, r := range ts.rules {
		out = append(out, r.scopes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scopeTools is the server's receiving middleware that hides the tools a
// request's token does not cover (ServerOptions.ToolScopes): tools/list
// leaves them out, and tools/call of one gets the error of an unknown
// tool, so that a token learns nothing of the tools it may not use. A
// request without a verified token (stdio, --token-file) sees every tool.
func (s *Server) scopeTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ts := s.opts.ToolScopes
		if ts == nil || (method != "tools/list" && method != "tools/call") {
			return next(ctx, method, req)
		}
		extra := req.GetExtra()
		if extra == nil || extra.TokenInfo == nil {
			return next(ctx, method, req)
		}
		scopes := extra.TokenInfo.Scopes
		if method == "tools/call" {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && !ts.Covers(p.Name, scopes) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
			}
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
			lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *sdk.Tool) bool { return !ts.Covers(t.Name, scopes) })
		}
		return res, err
	}
}

// forCaller is ctx for a request's calls: the verified token's caller
// (engine.WithCaller), and, under ToolScopes, only the tools its scopes
// cover (engine.WithToolFilter), for the call and for every call nested
// under it, so that a run_code program reaches no more than tools/list
// shows the token. A request without a verified token gets ctx unchanged.
func (s *Server) forCaller(ctx context.Context, extra *sdk.RequestExtra) context.Context {
	c := callerOf(extra)
	if c == nil {
		return ctx
	}
	ctx = engine.WithCaller(ctx, c)
	if ts := s.opts.ToolScopes; ts != nil {
		ctx = engine.WithToolFilter(ctx, func(name string) bool { return ts.Covers(name, c.Scopes) })
	}
	return ctx
}
