package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The protocol versions a client may speak: the one where the server asks
// inside results (multi round trip), and the last where it sends requests.
const (
	multiRoundTrip = "2026-07-28"
	legacy         = "2025-11-25"
)

// fixture is an engine with tools, served over MCP.
type fixture struct {
	srv     *mcp.Server
	started chan struct{} // closed when "wait" starts
	stopped chan error    // "wait"'s ctx error when it ends
	ran     chan string   // the names of "guarded" calls that ran
	guarded chan string   // the failure messages of "guarded" calls
}

type countArgs struct {
	Text string `json:"text"`
}

type count struct {
	Words int `json:"words"`
}

// newFixture registers word_count (object output), shout (string output),
// broken (fails), wait (blocks until cancelled) and guarded (a policy asks
// for approval), and serves them as agent "main".
func newFixture(t *testing.T) *fixture { return newFixtureWith(t, mcp.ServerOptions{}) }

// newFixtureWith is newFixture with opts (its Agent is set).
func newFixtureWith(t *testing.T, opts mcp.ServerOptions) *fixture {
	t.Helper()
	f := &fixture{started: make(chan struct{}), stopped: make(chan error, 1), ran: make(chan string, 4), guarded: make(chan string, 4)}
	svc := engine.New(engine.WithApproval(mcp.Approval(nil)))
	agent := engine.NewAgent("main", nil)
	g := svc.Global()
	mustRegister := func(def *engine.Definition, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Register(def); err != nil {
			t.Fatal(err)
		}
	}
	mustRegister(engine.DefineTool(engine.ToolOptions[countArgs, count]{
		Name:        "word_count",
		Description: "Count the words of a text.",
		Parameters:  dsl.Params(dsl.Prop("text", dsl.String().Describe("The text.").Required())),
		Output:      dsl.ObjectOf(false, dsl.Prop("words", dsl.Integer().Required())),
		Render: func(_ countArgs, out count) ([]engine.Block, error) {
			return []engine.Block{engine.Text(fmt.Sprintf("%d words", out.Words))}, nil
		},
		Execute: func(_ context.Context, args countArgs, _ *engine.Run) (count, error) {
			return count{Words: len(strings.Fields(args.Text))}, nil
		},
	}))
	mustRegister(engine.DefineTool(engine.ToolOptions[countArgs, string]{
		Name:       "shout",
		Parameters: dsl.Params(dsl.Prop("text", dsl.String().Required())),
		Output:     dsl.String(),
		Render: func(_ countArgs, out string) ([]engine.Block, error) {
			return []engine.Block{engine.Text(out)}, nil
		},
		Execute: func(_ context.Context, args countArgs, _ *engine.Run) (string, error) {
			return strings.ToUpper(args.Text), nil
		},
	}))
	mustRegister(engine.DefineTool(engine.ToolOptions[any, any]{
		Output: dsl.String(),
		Render: renderString,
		Name:   "broken",
		Execute: func(context.Context, any, *engine.Run) (any, error) {
			return nil, errors.New("the disk is on fire")
		},
	}))
	mustRegister(engine.DefineTool(engine.ToolOptions[any, any]{
		Output: dsl.String(),
		Render: renderString,
		Name:   "wait",
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			close(f.started)
			<-ctx.Done()
			f.stopped <- ctx.Err()
			return nil, ctx.Err()
		},
	}))
	mustRegister(engine.DefineTool(engine.ToolOptions[any, any]{
		Output: dsl.String(),
		Render: renderString,
		Name:   "guarded",
		Execute: func(context.Context, any, *engine.Run) (any, error) {
			f.ran <- "guarded"
			return "done", nil
		},
	}))
	g.OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		if exec.Name() == "guarded" {
			return engine.Ask("it writes a file"), nil
		}
		return next()
	})
	g.OnResult(func(exec *engine.Execution, r *engine.Result) error {
		if exec.Name() == "guarded" && r.IsError {
			f.guarded <- r.Error.Message
		}
		return nil
	})
	opts.Agent = agent
	srv, err := mcp.NewServer(context.Background(), svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	f.srv = srv
	return f
}

// renderString renders a string value as one text block.
func renderString(_, out any) ([]engine.Block, error) {
	s, _ := out.(string)
	return []engine.Block{engine.Text(s)}, nil
}

// connect connects a client speaking version, in memory, with opts (such
// as an ElicitationHandler, which declares the capability).
func (f *fixture) connect(t *testing.T, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := f.srv.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// call calls name with args (JSON text; "" sends none) and fails the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, name, args string) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// text is the result's content, each block as text or [image <mime>].
func text(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		default:
			parts = append(parts, fmt.Sprintf("%T", c))
		}
	}
	return strings.Join(parts, " | ")
}

func TestListShowsTheToolsWithTheirSchemas(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, multiRoundTrip, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	if len(tools) != 5 {
		t.Fatalf("listed %d tools, want 5: %v", len(tools), tools)
	}
	tests := []struct {
		name, tool, input, output, description string
	}{
		{"a tool with an object output declares both schemas", "word_count",
			`{"type":"object","properties":{"text":{"type":"string","description":"The text."}},"required":["text"]}`,
			`{"type":"object","additionalProperties":false,"properties":{"words":{"type":"integer"}},"required":["words"]}`,
			"Count the words of a text."},
		{"a tool with a string output declares no output schema", "shout",
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, "null", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := tools[tt.tool]
			if tl == nil {
				t.Fatalf("%s is not listed", tt.tool)
			}
			in, _ := json.Marshal(tl.InputSchema)
			out, _ := json.Marshal(tl.OutputSchema)
			if !jsonEqual(t, in, tt.input) {
				t.Errorf("input schema %s, want %s", in, tt.input)
			}
			if !jsonEqual(t, out, tt.output) {
				t.Errorf("output schema %s, want %s", out, tt.output)
			}
			if tl.Description != tt.description {
				t.Errorf("description %q, want %q", tl.Description, tt.description)
			}
		})
	}
}

// jsonEqual reports whether JSON texts a and b hold the same value.
func jsonEqual(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestCallsRunThroughThePipeline(t *testing.T) {
	tests := []struct {
		name, tool, args string
		isError          bool
		text, structured string
	}{
		{"a success has its content and its value as structured content", "word_count", `{"text":"a b c"}`,
			false, "3 words", `{"words":3}`},
		{"a tool without an object output has no structured content", "shout", `{"text":"hi"}`,
			false, "HI", ""},
		{"a tool failure is an error result", "broken", `{}`,
			true, "Error: the disk is on fire", ""},
		{"invalid arguments fail with the pipeline's message", "word_count", `{"text":3}`,
			true, `Error: invalid arguments: "text" must be a string`, ""},
		{"absent arguments are an empty object", "word_count", ``,
			true, `Error: invalid arguments: missing required property "text"`, ""},
	}
	for _, version := range []string{multiRoundTrip, legacy} {
		f := newFixture(t)
		cs := f.connect(t, version, nil)
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				r := call(t, cs, tt.tool, tt.args)
				if r.IsError != tt.isError {
					t.Errorf("isError %v, want %v", r.IsError, tt.isError)
				}
				if got := text(r); got != tt.text {
					t.Errorf("content %q, want %q", got, tt.text)
				}
				got := ""
				if r.StructuredContent != nil {
					b, _ := json.Marshal(r.StructuredContent)
					got = string(b)
				}
				if got != tt.structured {
					t.Errorf("structured content %s, want %q", got, tt.structured)
				}
			})
		}
	}
}

func TestAskBecomesAnElicitation(t *testing.T) {
	accept := func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}
	answer := func(action string, content map[string]any) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: action, Content: content}, nil
		}
	}
	tests := []struct {
		name    string
		elicit  func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)
		isError bool
		text    string
	}{
		{"a client that accepts runs the tool", accept, false, "done"},
		{"a client that accepts but unticks approve is a rejection", answer("accept", map[string]any{"approve": false}),
			true, `Error: the user rejected tool "guarded"`},
		{"a client that declines denies the call", answer("decline", nil),
			true, `Error: the user rejected tool "guarded"`},
		{"a client that cancels denies the call", answer("cancel", nil),
			true, `Error: approval for tool "guarded" was cancelled`},
		{"a client without elicitation denies the call", nil,
			true, `Error: tool "guarded" requires approval, but no approval channel is available`},
	}
	for _, version := range []string{multiRoundTrip, legacy} {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				f := newFixture(t)
				var asked []string
				var mu sync.Mutex
				elicit := tt.elicit
				if elicit != nil {
					elicit = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, req.Params.Message)
						mu.Unlock()
						return tt.elicit(ctx, req)
					}
				}
				cs := f.connect(t, version, &sdk.ClientOptions{ElicitationHandler: elicit})
				r := call(t, cs, "guarded", `{}`)
				if r.IsError != tt.isError || text(r) != tt.text {
					t.Errorf("result isError=%v %q, want isError=%v %q", r.IsError, text(r), tt.isError, tt.text)
				}
				ran := len(f.ran) == 1
				if ran == tt.isError {
					t.Errorf("the tool ran: %v, want %v", ran, !tt.isError)
				}
				mu.Lock()
				defer mu.Unlock()
				want := []string{"guarded asks for approval: it writes a file\nAllow it once?"}
				if tt.elicit == nil {
					want = nil
				}
				if fmt.Sprint(asked) != fmt.Sprint(want) {
					t.Errorf("asked %q, want %q", asked, want)
				}
			})
		}
	}
}

func TestCancellingTheRequestCancelsTheCall(t *testing.T) {
	for _, version := range []string{multiRoundTrip, legacy} {
		t.Run(version+"/the tool's ctx is cancelled", func(t *testing.T) {
			f := newFixture(t)
			cs := f.connect(t, version, nil)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "wait", Arguments: json.RawMessage(`{}`)})
				errc <- err
			}()
			<-f.started
			cancel()
			if err := <-f.stopped; !errors.Is(err, context.Canceled) {
				t.Errorf("the tool's ctx ended with %v, want context.Canceled", err)
			}
			if err := <-errc; err == nil {
				t.Error("the cancelled call returned no error")
			}
		})
	}
}

func TestServerAnswersOverHTTP(t *testing.T) {
	const token = "s3cret"
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{Token: token, MaxRequestBytes: 4096}))
	defer hs.Close()

	t.Run("a client with the token calls tools, and answers approvals", func(t *testing.T) {
		for _, version := range []string{multiRoundTrip, legacy} {
			client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
				ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
			})
			transport := &sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer(token)}}
			cs, err := client.Connect(context.Background(), transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("%s: %v", version, err)
			}
			r := call(t, cs, "word_count", `{"text":"one two"}`)
			if text(r) != "2 words" {
				t.Errorf("%s: content %q, want %q", version, text(r), "2 words")
			}
			if r := call(t, cs, "guarded", `{}`); r.IsError || text(r) != "done" {
				t.Errorf("%s: an approved call: isError=%v %q, want done", version, r.IsError, text(r))
			}
			if err := cs.Close(); err != nil {
				t.Error(err)
			}
		}
	})

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	tests := []struct {
		name   string
		edit   func(*http.Request)
		body   string
		status int
		header string // WWW-Authenticate
	}{
		{"a request with the token is served", func(*http.Request) {}, init, http.StatusOK, ""},
		{"a foreign Host is forbidden", func(r *http.Request) { r.Host = "evil.example:80" }, init, http.StatusForbidden, ""},
		{"a foreign Origin is forbidden", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, init, http.StatusForbidden, ""},
		{"a loopback Origin is allowed", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3000") }, init, http.StatusOK, ""},
		{"a request without the token is unauthorized", func(r *http.Request) { r.Header.Del("Authorization") }, init,
			http.StatusUnauthorized, `Bearer realm="dsh"`},
		{"a request with a wrong token is unauthorized", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, init,
			http.StatusUnauthorized, `Bearer realm="dsh", error="invalid_token"`},
		{"an oversized body is too large", func(*http.Request) {}, strings.Repeat(" ", 5000) + init,
			http.StatusRequestEntityTooLarge, ""},
		{"an oversized body without a length is too large", func(r *http.Request) { r.ContentLength = -1 },
			strings.Repeat(" ", 5000) + init, http.StatusRequestEntityTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			tt.edit(req)
			res, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d", res.StatusCode, tt.status)
			}
			if got := res.Header.Get("WWW-Authenticate"); got != tt.header {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.header)
			}
			if id := res.Header.Get("Mcp-Session-Id"); id != "" {
				del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				del.Header.Set("Mcp-Session-Id", id)
				del.Header.Set("Authorization", "Bearer "+token)
				if r, err := hs.Client().Do(del); err == nil {
					r.Body.Close()
				}
			}
		})
	}
}

// bearer is a transport that adds the token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// codeExecutor is a stand-in for the PTC executor: it collapses the
// surface to its run_code transport and contributes a tools:sdk section.
type codeExecutor struct {
	engine.Executor
	transport *engine.Definition
}

func (e codeExecutor) Transport() *engine.Definition { return e.transport }
func (e codeExecutor) Direct() bool                  { return false }

func (e codeExecutor) Describe([]*engine.Definition) (engine.Description, error) {
	return engine.Description{
		Schemas: []engine.ToolSchema{{Name: "run_code", Description: "Run a program.", Parameters: e.transport.Parameters}},
		Names:   []string{"run_code"},
		Sections: []engine.Section{
			{ID: "tools:code-only", Order: 1, Text: "Only run_code."},
			{ID: "tools:sdk", Order: 2, Text: "declare const tools: {...}"},
		},
	}, nil
}

// codeArgs are run_code's arguments in the stand-in.
type codeArgs struct {
	Code string `json:"code"`
}

func TestUnderACodeExecutorTheSDKIsServedInTheInstructions(t *testing.T) {
	svc := engine.New()
	runCode, err := engine.DefineTool(engine.ToolOptions[codeArgs, *dsl.Object]{
		Name:       "run_code",
		Parameters: dsl.Params(dsl.Prop("code", dsl.String().Required())),
		Output:     dsl.ObjectOf(true),
		Render: func(codeArgs, *dsl.Object) ([]engine.Block, error) {
			return []engine.Block{engine.Text("ran")}, nil
		},
		Execute: func(_ context.Context, args codeArgs, _ *engine.Run) (*dsl.Object, error) {
			return dsl.NewObject(dsl.Member{Key: "code", Value: args.Code}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	native, err := engine.NewNativeExecutor(svc, 2)
	if err != nil {
		t.Fatal(err)
	}
	svc.Global().SetExecutor(codeExecutor{Executor: native, transport: runCode})
	srv, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: engine.NewAgent("main", nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := &fixture{srv: srv}
	cs := f.connect(t, multiRoundTrip, nil)

	t.Run("the list is run_code and describe_tools, the SDK in the instructions", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 2 || res.Tools[0].Name != mcp.DescribeToolName || res.Tools[1].Name != "run_code" {
			t.Fatalf("tools %v, want describe_tools and run_code", res.Tools)
		}
		if d := res.Tools[1].Description; !strings.HasPrefix(d, "Run a program.\n\n") || strings.Contains(d, "declare const tools") {
			t.Errorf("description %q, want the executor's and a note, without the SDK", d)
		}
		if got := cs.InitializeResult().Instructions; !strings.HasSuffix(got, "\n\ndeclare const tools: {...}") || strings.Contains(got, "Only run_code.") {
			t.Errorf("instructions %q, want the SDK last, without the code-only section", got)
		}
	})
	t.Run("a run_code call runs the transport", func(t *testing.T) {
		r := call(t, cs, "run_code", `{"code":"return 1"}`)
		b, _ := json.Marshal(r.StructuredContent)
		if r.IsError || text(r) != "ran" || string(b) != `{"code":"return 1"}` {
			t.Errorf("result isError=%v %q %s, want a success \"ran\" {\"code\":\"return 1\"}", r.IsError, text(r), b)
		}
	})
}

// serveEngine serves svc as agent "main".
func serveEngine(t *testing.T, svc *engine.Service) *fixture {
	t.Helper()
	srv, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: engine.NewAgent("main", nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &fixture{srv: srv}
}

func TestContentBlocksBecomeMCPContent(t *testing.T) {
	svc := engine.New()
	def, err := engine.DefineTool(engine.ToolOptions[any, any]{
		Name:   "picture",
		Output: dsl.String(),
		Render: func(any, any) ([]engine.Block, error) {
			return []engine.Block{
				engine.Text("a picture:"),
				engine.ImageBlock{Attachment: dsl.NewObject(
					dsl.Member{Key: "data", Value: base64.StdEncoding.EncodeToString([]byte("PNG"))},
					dsl.Member{Key: "mimeType", Value: "image/png"})},
				engine.ImageBlock{Attachment: "att-7"},
				engine.RawBlock{Value: dsl.NewObject(dsl.Member{Key: "type", Value: "audio"}, dsl.Member{Key: "id", Value: 1.0})},
			}, nil
		},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "ok", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	cs := serveEngine(t, svc).connect(t, multiRoundTrip, nil)
	r := call(t, cs, "picture", `{}`)
	want := `a picture: | [image image/png] | {"type":"image","attachment":"att-7"} | {"type":"audio","id":1}`
	if got := text(r); got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	if img, ok := r.Content[1].(*sdk.ImageContent); !ok || string(img.Data) != "PNG" {
		t.Errorf("image block %#v, want the decoded bytes PNG", r.Content[1])
	}
}

func TestTheListFollowsTheEngine(t *testing.T) {
	for _, version := range []string{legacy, multiRoundTrip} {
		t.Run("for a client on "+version, func(t *testing.T) {
			svc := engine.New()
			f := serveEngine(t, svc)
			changed := make(chan struct{}, 16)
			cs := f.connect(t, version, &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
				changed <- struct{}{}
			}})
			names := func(t *testing.T) []string {
				t.Helper()
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, tool := range res.Tools {
					out = append(out, tool.Name)
				}
				return out
			}
			def, err := engine.DefineTool(engine.ToolOptions[any, any]{
				Name: "late", Output: dsl.String(), Render: renderString,
				Execute: func(context.Context, any, *engine.Run) (any, error) { return "here", nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			dispose, err := svc.Global().Register(def)
			if err != nil {
				t.Fatal(err)
			}
			t.Run("a registration is announced, and listed", func(t *testing.T) {
				<-changed
				if got := names(t); !slices.Equal(got, []string{"late"}) {
					t.Errorf("tools %v, want [late]", got)
				}
				if r := call(t, cs, "late", `{}`); r.IsError || text(r) != "here" {
					t.Errorf("late: %s", text(r))
				}
			})
			t.Run("a disposal is announced, and the tool is gone", func(t *testing.T) {
				dispose()
				<-changed
				if got := names(t); len(got) != 0 {
					t.Errorf("tools %v, want none", got)
				}
			})
		})
	}
}

func TestAMultiRoundTripClientAnswersByRetrying(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, multiRoundTrip, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, errors.New("unreachable: the test answers")
		},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	ask := func(t *testing.T) *sdk.CallToolResult {
		t.Helper()
		r := call(t, cs, "guarded", `{}`)
		q, ok := r.InputRequests["approval"].(*sdk.ElicitParams)
		if !r.NeedsInput() || !ok || r.RequestState == "" {
			t.Fatalf("result %+v, want an input-required result asking approval", r)
		}
		if want := "guarded asks for approval: it writes a file\nAllow it once?"; q.Message != want {
			t.Errorf("question %q, want %q", q.Message, want)
		}
		return r
	}
	t.Run("a retry with the answer resumes the call", func(t *testing.T) {
		r := ask(t)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{
			Name: "guarded", Arguments: json.RawMessage(`{}`), RequestState: r.RequestState,
			InputResponses: sdk.InputResponseMap{"approval": &sdk.ElicitResult{Action: "accept"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || text(res) != "done" {
			t.Errorf("result isError=%v %q, want done", res.IsError, text(res))
		}
	})
	t.Run("a retry with an unknown state is a protocol error", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{
			Name: "guarded", Arguments: json.RawMessage(`{}`), RequestState: "nope",
			InputResponses: sdk.InputResponseMap{"approval": &sdk.ElicitResult{Action: "accept"}},
		})
		if err == nil || !strings.Contains(err.Error(), "unknown or expired requestState") {
			t.Errorf("error %v, want unknown or expired requestState", err)
		}
	})
	t.Run("a question nobody answers ends with Close", func(t *testing.T) {
		ask(t)
		f.srv.Close() // returns once the parked call has ended
		if len(f.ran) != 1 {
			t.Errorf("the tool ran %d times, want once (the accepted call)", len(f.ran))
		}
	})
}

func TestAQuestionNobodyAnswersInTimeTimesOut(t *testing.T) {
	f := newFixtureWith(t, mcp.ServerOptions{ApprovalTimeout: time.Nanosecond})
	cs := f.connect(t, multiRoundTrip, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, errors.New("unreachable: the test answers")
		},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	r := call(t, cs, "guarded", `{}`)
	if !r.NeedsInput() {
		t.Fatalf("result %+v, want an input-required result", r)
	}
	if msg, want := <-f.guarded, `approval for tool "guarded" timed out after 1ns`; msg != want {
		t.Errorf("the call failed with %q, want %q", msg, want)
	}
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{
		Name: "guarded", Arguments: json.RawMessage(`{}`), RequestState: r.RequestState,
		InputResponses: sdk.InputResponseMap{"approval": &sdk.ElicitResult{Action: "accept"}},
	})
	if err == nil || !strings.Contains(err.Error(), "unknown or expired requestState") {
		t.Errorf("a late answer: error %v, want unknown or expired requestState", err)
	}
	if len(f.ran) != 0 {
		t.Error("the tool ran")
	}
}
