package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// stdioServerArg makes the test binary an MCP server on stdio.
const stdioServerArg = "mcp-test-server"

// init serves MCP on stdio when the test binary runs as a server (a
// TestMain of the package's other tests checks for leaks).
func init() {
	if len(os.Args) > 1 && os.Args[1] == stdioServerArg {
		srv := impServer(nil, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "crash", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "crashing on purpose")
				os.Exit(3)
				return nil, nil, nil
			})
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// impHooks observe the "wait" tool: it reports its start, then its ctx's
// cancellation.
type impHooks struct {
	started, cancelled chan struct{}
	// heard, when set, is closed once the caller heard the progress of
	// "steps", which returns only then (the SDK's client handles
	// notifications concurrently with responses).
	heard chan struct{}
}

func impSchema(s string) json.RawMessage { return json.RawMessage(s) }

// impServer is an MCP server with tools of every kind dsh maps.
func impServer(opts *sdk.ServerOptions, hooks *impHooks) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, opts)
	srv.AddTool(&sdk.Tool{
		Name: "echo", Description: "Echoes text.",
		InputSchema: impSchema(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
	})
	srv.AddTool(&sdk.Tool{
		Name:         "add",
		InputSchema:  impSchema(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		OutputSchema: impSchema(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ A, B float64 }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		sum := in.A + in.B
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(`{"sum":%v}`, sum)}},
			StructuredContent: map[string]any{"sum": sum},
		}, nil
	})
	srv.AddTool(&sdk.Tool{
		Name:        "union",
		InputSchema: impSchema(`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	srv.AddTool(&sdk.Tool{
		Name:         "badout",
		InputSchema:  impSchema(`{"type":"object"}`),
		OutputSchema: impSchema(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: impSchema(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			in := struct{ Text string }{Text: "disk is full"} // the text of the failure
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "image", InputSchema: impSchema(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a picture"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("PNG")},
			}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "steps", InputSchema: impSchema(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			if token == nil {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no token"}}}, nil
			}
			for i := 1; i <= 2; i++ {
				p := &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d", i)}
				if err := req.Session.NotifyProgress(ctx, p); err != nil {
					return nil, err
				}
			}
			if hooks != nil && hooks.heard != nil {
				select {
				case <-hooks.heard:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "stepped"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "wait", InputSchema: impSchema(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if hooks != nil {
				hooks.started <- struct{}{}
			}
			<-ctx.Done()
			if hooks != nil {
				hooks.cancelled <- struct{}{}
			}
			return nil, ctx.Err()
		})
	return srv
}

// impMemServer serves srv to dsh over in-memory transports, one pair per
// connection attempt. While held, an attempt waits to be released.
type impMemServer struct {
	srv      *sdk.Server
	dialed   chan struct{}
	held     atomic.Bool
	release  chan struct{}
	mu       sync.Mutex
	sessions []*sdk.ServerSession
}

func newImpMemServer(srv *sdk.Server) *impMemServer {
	return &impMemServer{srv: srv, dialed: make(chan struct{}, 16), release: make(chan struct{})}
}

func (m *impMemServer) dial(ctx context.Context, _ mcp.ServerSpec) (sdk.Transport, error) {
	// Decide before telling the test: it clears held once it hears of the
	// attempt, and the attempt must still wait for its release.
	held := m.held.Load()
	m.dialed <- struct{}{}
	if held {
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := m.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.mu.Unlock()
	return ct, nil
}

// closeAll ends the server's sessions.
func (m *impMemServer) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ss := range m.sessions {
		_ = ss.Close()
	}
	m.sessions = nil
}

// swaps reports each committed swap of svc.
func impSwaps(t *testing.T, svc *engine.Service) <-chan struct{} {
	ch := make(chan struct{}, 16)
	stop := svc.Global().OnChange(func(c engine.Change) error {
		if c.Kind == engine.ChangeSwap {
			ch <- struct{}{}
		}
		return nil
	})
	t.Cleanup(stop)
	return ch
}

func impToolNames(svc *engine.Service) []string {
	var names []string
	for _, d := range svc.Global().Definitions(nil) {
		names = append(names, d.Name)
	}
	return names
}

func impCall(svc *engine.Service, ctx context.Context, name string, args any) *engine.Result {
	if args == nil {
		args = dsl.NewObject()
	}
	return svc.Call(ctx, engine.Input{CallID: "c1", Name: name, Arguments: args})
}

func impJSON(t *testing.T, r *engine.Result) string {
	t.Helper()
	text, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func impObj(t *testing.T, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestImportInMemory(t *testing.T) {
	hooks := &impHooks{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1), heard: make(chan struct{})}
	srv := impServer(&sdk.ServerOptions{PageSize: 2}, hooks)
	mem := newImpMemServer(srv)
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "t", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	defer client.Close()
	defer mem.closeAll()

	t.Run("tools whose schemas leave dsh's subset import too, with no diagnostic", func(t *testing.T) {
		if len(diags) != 0 {
			t.Errorf("diagnostics = %#v, want none", diags)
		}
	})

	t.Run("the tools are registered as NAME__tool, over every page of the listing", func(t *testing.T) {
		got := impToolNames(svc)
		slices.Sort(got)
		want := []string{"t__add", "t__badout", "t__echo", "t__fail", "t__image", "t__steps", "t__union", "t__wait"}
		if !slices.Equal(got, want) {
			t.Errorf("tools = %v, want %v", got, want)
		}
	})

	t.Run("parameters are the input schema as the server sent it, $schema included", func(t *testing.T) {
		def := svc.Global().Get("t__add")
		text, _ := dsl.Marshal(def.Parameters)
		want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`
		if string(text) != want {
			t.Errorf("parameters = %s, want %s", text, want)
		}
		if def.IsConcurrencySafe != nil {
			t.Errorf("add is not read-only, yet concurrency safe")
		}
		if echo := svc.Global().Get("t__echo"); echo.IsConcurrencySafe == nil || !echo.IsConcurrencySafe(nil) || echo.Description != "Echoes text." {
			t.Errorf("echo: read-only hint or description lost")
		}
	})

	t.Run("a call returns the text content, the text as its value", func(t *testing.T) {
		r := impCall(svc, context.Background(), "t__echo", impObj(t, `{"text":"hi"}`))
		want := `{"isError":false,"value":"echo: hi","content":[{"type":"text","text":"echo: hi"}]}`
		if got := impJSON(t, r); got != want {
			t.Errorf("result = %s\nwant %s", got, want)
		}
	})

	t.Run("structured content is the value, checked against the output schema", func(t *testing.T) {
		r := impCall(svc, context.Background(), "t__add", impObj(t, `{"a":1,"b":2}`))
		want := `{"isError":false,"value":{"sum":3},"content":[{"type":"text","text":"{\"sum\":3}"}]}`
		if got := impJSON(t, r); got != want {
			t.Errorf("result = %s\nwant %s", got, want)
		}
	})

	t.Run("arguments outside the input schema fail before the server sees them", func(t *testing.T) {
		r := impCall(svc, context.Background(), "t__add", impObj(t, `{"a":1}`))
		if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeInvalidArgs {
			t.Errorf("result = %s, want INVALID_ARGS", impJSON(t, r))
		}
	})

	t.Run("isError is a tool failure whose message is the text content", func(t *testing.T) {
		for _, tc := range []struct{ name, args, want string }{
			{"a plain text is the message", `{}`,
				`{"isError":true,"error":{"message":"disk is full"},"content":[{"type":"text","text":"Error: disk is full"}]}`},
			{`a text that starts with "Error: " (as dsh serve writes a failure) reads "Error: " once`, `{"text":"Error: disk is full"}`,
				`{"isError":true,"error":{"message":"disk is full"},"content":[{"type":"text","text":"Error: disk is full"}]}`},
			{`"Error: " alone is a failure without a message`, `{"text":"Error: "}`,
				`{"isError":true,"error":{"message":"the tool reported an error without a message"},"content":[{"type":"text","text":"Error: the tool reported an error without a message"}]}`},
			{`"Error: " further in is the message's own`, `{"text":"disk: Error: full"}`,
				`{"isError":true,"error":{"message":"disk: Error: full"},"content":[{"type":"text","text":"Error: disk: Error: full"}]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := impCall(svc, context.Background(), "t__fail", impObj(t, tc.args))
				if got := impJSON(t, r); got != tc.want {
					t.Errorf("result = %s\nwant %s", got, tc.want)
				}
			})
		}
	})

	t.Run("an image becomes an image block, and mixed content the value", func(t *testing.T) {
		r := impCall(svc, context.Background(), "t__image", nil)
		content := `[{"type":"text","text":"a picture"},{"type":"image","attachment":{"mimeType":"image/png","data":"UE5H"}}]`
		want := `{"isError":false,"value":` + content + `,"content":` + content + `}`
		if got := impJSON(t, r); got != want {
			t.Errorf("result = %s\nwant %s", got, want)
		}
		if _, ok := r.Content[1].(engine.ImageBlock); !ok {
			t.Errorf("content[1] is %T, want engine.ImageBlock", r.Content[1])
		}
	})

	t.Run("the server's progress on a call reaches the call's listener", func(t *testing.T) {
		var got []string
		ctx := engine.WithProgress(context.Background(), func(p engine.Progress) {
			got = append(got, fmt.Sprintf("%v/%v %s", p.Progress, p.Total, p.Message))
			if len(got) == 2 {
				close(hooks.heard)
			}
		})
		if r := impCall(svc, ctx, "t__steps", nil); r.IsError || r.Value != "stepped" {
			t.Fatalf("result %s", impJSON(t, r))
		}
		if want := "1/2 step 1|2/2 step 2"; strings.Join(got, "|") != want {
			t.Errorf("progress %q, want %q", strings.Join(got, "|"), want)
		}
	})

	t.Run("a call nobody hears the progress of asks for none", func(t *testing.T) {
		if r := impCall(svc, context.Background(), "t__steps", nil); r.IsError || r.Value != "no token" {
			t.Errorf("result %s, want no token sent", impJSON(t, r))
		}
	})

	t.Run("cancelling a call cancels the request at the server", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *engine.Result, 1)
		go func() { done <- impCall(svc, ctx, "t__wait", nil) }()
		<-hooks.started
		cancel()
		<-hooks.cancelled
		r := <-done
		if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeAborted {
			t.Errorf("result = %s, want ABORTED", impJSON(t, r))
		}
	})

	t.Run("tools/list_changed swaps the server's tools", func(t *testing.T) {
		swapped := impSwaps(t, svc)
		srv.AddTool(&sdk.Tool{Name: "late", InputSchema: impSchema(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
			})
		srv.RemoveTools("fail")
		for !slices.Contains(impToolNames(svc), "t__late") || slices.Contains(impToolNames(svc), "t__fail") {
			<-swapped
		}
		if r := impCall(svc, context.Background(), "t__late", nil); r.IsError || r.Value != "late" {
			t.Errorf("t.late: %s", impJSON(t, r))
		}
		if r := impCall(svc, context.Background(), "t__fail", nil); !r.IsError || r.Error.Info.Code != engine.CodeUnknownTool {
			t.Errorf("t.fail after removal: %s", impJSON(t, r))
		}
	})

	t.Run("a lost server fails its calls clearly, then is reconnected", func(t *testing.T) {
		swapped := impSwaps(t, svc)
		for len(mem.dialed) > 0 {
			<-mem.dialed
		}
		mem.held.Store(true)
		mem.closeAll()
		<-mem.dialed // dsh noticed, and tries again
		r := impCall(svc, context.Background(), "t__echo", impObj(t, `{"text":"hi"}`))
		want := `MCP server "t" is not connected: the server closed the connection`
		if !r.IsError || r.Error.Message != want {
			t.Errorf("result = %s\nwant the failure %q", impJSON(t, r), want)
		}
		mem.held.Store(false)
		mem.release <- struct{}{}
		<-swapped
		if r := impCall(svc, context.Background(), "t__echo", impObj(t, `{"text":"again"}`)); r.IsError || r.Value != "echo: again" {
			t.Errorf("after reconnecting: %s", impJSON(t, r))
		}
	})

	t.Run("Close removes the tools", func(t *testing.T) {
		if err := client.Close(); err != nil {
			t.Fatal(err)
		}
		if names := impToolNames(svc); len(names) != 0 {
			t.Errorf("tools after Close: %v", names)
		}
	})
}

func TestImportUnreachable(t *testing.T) {
	svc := engine.New()
	dials := make(chan struct{}, 16)
	dial := func(ctx context.Context, _ mcp.ServerSpec) (sdk.Transport, error) {
		// Never block: with a backoff of nanoseconds the retries outrun the
		// test, and a dial stuck on a full channel would hold Connect and
		// Close forever.
		select {
		case dials <- struct{}{}:
		default:
		}
		return nil, errors.New("no route to server")
	}
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "gone", URL: "http://127.0.0.1:1"}},
		mcp.Options{Dial: dial, MinBackoff: 1, MaxBackoff: 2})
	defer client.Close()
	t.Run("a server not reached is a diagnostic", func(t *testing.T) {
		want := []mcp.Diagnostic{{Server: "gone", Reason: "cannot connect: no route to server"}}
		if !slices.Equal(diags, want) {
			t.Errorf("diagnostics = %#v, want %#v", diags, want)
		}
	})
	t.Run("and is retried", func(t *testing.T) {
		<-dials
		<-dials // the first attempt and a retry at least
	})
}

func TestImportStdio(t *testing.T) {
	svc := engine.New()
	spec := mcp.ServerSpec{Name: "std", Command: os.Args[0], Args: []string{stdioServerArg}, Env: map[string]string{"DSH_TEST": "1"}}
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec}, mcp.Options{MinBackoff: 1})
	defer client.Close()
	if len(diags) != 0 {
		t.Fatalf("diagnostics = %v, want none", diags)
	}

	t.Run("a policy-free call runs the child's tool", func(t *testing.T) {
		r := impCall(svc, context.Background(), "std__echo", impObj(t, `{"text":"over stdio"}`))
		want := []engine.Block{engine.Text("echo: over stdio")}
		if r.IsError || !slices.Equal(r.Content, want) {
			t.Errorf("result = %s", impJSON(t, r))
		}
	})

	t.Run("a server that exits fails the call, and is restarted", func(t *testing.T) {
		swapped := impSwaps(t, svc)
		r := impCall(svc, context.Background(), "std__crash", nil)
		if !r.IsError || !strings.HasPrefix(r.Error.Message, `MCP server "std" is not connected: `) {
			t.Errorf("result = %s, want a not-connected failure", impJSON(t, r))
		}
		<-swapped // the new process's tools
		if r := impCall(svc, context.Background(), "std__echo", impObj(t, `{"text":"back"}`)); r.IsError || r.Value != "echo: back" {
			t.Errorf("after the restart: %s", impJSON(t, r))
		}
	})
}
