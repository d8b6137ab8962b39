//lint:file-ignore SA1019 the tests exercise the deprecated roots and sampling features dsh passes through.

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// askingServer is an upstream MCP server whose tools ask its client
// during the call: "ask" elicits a name, "sample" asks for a message,
// "url" asks in URL mode, "roots" lists the client's roots. Each returns what it got as JSON
// text, or fails with the error the client answered. A legacy server
// speaks 2025-11-25 and sends its own requests while the call runs;
// otherwise it speaks the multi-round-trip version and asks inside the
// call's result (inputRequests), the answers coming with the retry.
func askingServer(legacy bool) *sdk.Server {
	var opts *sdk.ServerOptions
	if legacy {
		opts = &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "v1"}, opts)
	obj := json.RawMessage(`{"type":"object"}`)
	answer := func(v any, err error) (*sdk.CallToolResult, error) {
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
		}
		text, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}, nil
	}
	// tool adds name, asking q: a legacy server with send, another in
	// its result.
	tool := func(name string, q sdk.InputRequest, send func(context.Context, *sdk.ServerSession) (any, error)) {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if legacy {
				return answer(send(ctx, req.Session))
			}
			if a, ok := req.Params.InputResponses["q"]; ok {
				return answer(a, nil)
			}
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"q": q}, RequestState: "asked"}, nil
		})
	}
	form := &sdk.ElicitParams{
		Mode:            "form",
		Message:         "Your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	tool("ask", form, func(ctx context.Context, ss *sdk.ServerSession) (any, error) { return ss.Elicit(ctx, form) })
	link := &sdk.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/sign-in", ElicitationID: "e1"}
	tool("url", link, func(ctx context.Context, ss *sdk.ServerSession) (any, error) { return ss.Elicit(ctx, link) })
	msg := &sdk.CreateMessageParams{
		MaxTokens: 10,
		Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi"}}},
	}
	tool("sample", msg, func(ctx context.Context, ss *sdk.ServerSession) (any, error) { return ss.CreateMessage(ctx, msg) })
	tool("roots", &sdk.ListRootsParams{}, func(ctx context.Context, ss *sdk.ServerSession) (any, error) { return ss.ListRoots(ctx, nil) })
	return srv
}

// upstreams are the two ways an imported server asks, by name.
var upstreams = []struct {
	name   string
	legacy bool
}{{"a server sending requests", true}, {"a multi-round-trip server", false}}

// throughDsh imports askingServer as "up" with opts and serves the
// result with serve: the client connects to the returned fixture.
func throughDsh(t *testing.T, legacy bool, opts mcp.Options, serve mcp.ServerOptions) *fixture {
	t.Helper()
	mem := newImpMemServer(askingServer(legacy))
	svc := engine.New()
	opts.Dial = mem.dial
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}}, opts)
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	t.Cleanup(func() {
		_ = client.Close()
		mem.closeAll()
	})
	serve.Agent = engine.NewAgent("main", nil)
	srv, err := mcp.NewServer(context.Background(), svc, serve)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &fixture{srv: srv}
}

func TestAnImportedServersQuestionsReachTheServingClient(t *testing.T) {
	answers := []struct {
		name   string
		answer *sdk.ElicitResult
		want   string
	}{
		{"an accepted form goes back with its content", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}},
			`{"action":"accept","content":{"name":"Grace"}}`},
		{"a decline goes back as a decline", &sdk.ElicitResult{Action: "decline"}, `{"action":"decline"}`},
		{"a cancel goes back as a cancel", &sdk.ElicitResult{Action: "cancel"}, `{"action":"cancel"}`},
	}
	for _, up := range upstreams {
		f := throughDsh(t, up.legacy, mcp.Options{}, mcp.ServerOptions{})
		for _, a := range answers {
			for _, version := range []string{legacy, multiRoundTrip} {
				t.Run("from "+up.name+" to a client on "+version+", "+a.name, func(t *testing.T) {
					var asked *sdk.ElicitParams
					cs := f.connect(t, version, &sdk.ClientOptions{
						ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
							asked = req.Params
							return a.answer, nil
						},
					})
					r := call(t, cs, "up__ask", `{}`)
					if got := text(r); r.IsError || got != a.want {
						t.Errorf("result %q (isError %v), want %q", got, r.IsError, a.want)
					}
					if asked == nil {
						t.Fatal("the client was not asked")
					}
					schema, _ := json.Marshal(asked.RequestedSchema)
					if asked.Message != "Your name?" || string(schema) != `{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}` {
						t.Errorf("asked %q with %s", asked.Message, schema)
					}
				})
			}
		}
	}
}

func TestAnImportedServersSamplingReachesTheServingClient(t *testing.T) {
	for _, up := range upstreams {
		t.Run("from "+up.name+", the client's message goes back", func(t *testing.T) {
			f := throughDsh(t, up.legacy, mcp.Options{}, mcp.ServerOptions{})
			var asked *sdk.CreateMessageParams
			cs := f.connect(t, legacy, &sdk.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
					asked = req.Params
					return &sdk.CreateMessageResult{Model: "m1", Role: "assistant", Content: &sdk.TextContent{Text: "hi"}}, nil
				},
			})
			r := call(t, cs, "up__sample", `{}`)
			want := `{"content":{"type":"text","text":"hi"},"model":"m1","role":"assistant"}`
			if got := text(r); r.IsError || got != want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
			}
			if asked == nil || asked.MaxTokens != 10 || len(asked.Messages) != 1 {
				t.Fatalf("asked %+v", asked)
			}
			if c, ok := asked.Messages[0].Content.(*sdk.TextContent); !ok || c.Text != "Say hi" {
				t.Errorf("asked %+v", asked.Messages[0].Content)
			}
		})
	}
}

func TestAMultiRoundTripClientIsNotAskedForSampling(t *testing.T) {
	f := throughDsh(t, true, mcp.Options{}, mcp.ServerOptions{})
	cs := f.connect(t, multiRoundTrip, &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return nil, errors.New("unreachable: dsh does not ask")
		},
	})
	r := call(t, cs, "up__sample", `{}`)
	want := `Error: calling "sampling/createMessage": dsh cannot forward this sampling request: no model can be asked: the caller does not take sampling requests (sampling is not forwarded on a multi-round-trip protocol version)`
	if got := text(r); !r.IsError || got != want {
		t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
	}
}

func TestAClientThatTakesNoQuestionsLeavesTheServerAClearError(t *testing.T) {
	cases := []struct {
		legacy     bool
		tool, want string
	}{
		{true, "up__ask", `Error: calling "elicitation/create": dsh cannot forward this elicitation request: no user can be asked: the caller does not take questions (elicitation)`},
		{true, "up__sample", `Error: calling "sampling/createMessage": dsh cannot forward this sampling request: no model can be asked: the caller does not take sampling requests`},
		{false, "up__ask", `Error: MCP server "up" failed the call: multi round-trip: fulfilling input request "q": dsh cannot forward this elicitation request: no user can be asked: the caller does not take questions (elicitation)`},
		{false, "up__sample", `Error: MCP server "up" failed the call: multi round-trip: fulfilling input request "q": dsh cannot forward this sampling request: no model can be asked: the caller does not take sampling requests`},
	}
	for _, c := range cases {
		name := "a multi-round-trip server"
		if c.legacy {
			name = "a server sending requests"
		}
		t.Run(c.tool+" of "+name+" fails with the reason", func(t *testing.T) {
			f := throughDsh(t, c.legacy, mcp.Options{}, mcp.ServerOptions{})
			cs := f.connect(t, legacy, nil)
			r := call(t, cs, c.tool, `{}`)
			if got := text(r); !r.IsError || got != c.want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, c.want)
			}
		})
	}
}

func TestAnUnansweredForwardedQuestionEndsAtTheApprovalTimeout(t *testing.T) {
	for _, up := range upstreams {
		t.Run("from "+up.name+", the answer is cancel", func(t *testing.T) {
			f := throughDsh(t, up.legacy, mcp.Options{}, mcp.ServerOptions{ApprovalTimeout: 50 * time.Millisecond})
			asked := make(chan struct{}, 1)
			cs := f.connect(t, legacy, &sdk.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked <- struct{}{}
					<-ctx.Done() // nobody answers; dsh withdraws the question
					return nil, ctx.Err()
				},
			})
			r := call(t, cs, "up__ask", `{}`)
			if got, want := text(r), `{"action":"cancel"}`; r.IsError || got != want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
			}
			select {
			case <-asked:
			default:
				t.Error("the client was not asked")
			}
		})
	}
}

func TestAnImportedServerListsTheWorkspaceAsItsRoot(t *testing.T) {
	dir := t.TempDir()
	for _, up := range upstreams {
		t.Run("from "+up.name, func(t *testing.T) {
			f := throughDsh(t, up.legacy, mcp.Options{Roots: []string{dir}}, mcp.ServerOptions{})
			cs := f.connect(t, legacy, nil)
			r := call(t, cs, "up__roots", `{}`)
			want := `{"roots":[{"name":"` + filepath.Base(dir) + `","uri":"file://` + filepath.ToSlash(dir) + `"}]}`
			if got := text(r); r.IsError || got != want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
			}
		})
	}
}

// upstreamSession imports srv as "up" into a new engine and returns the
// server's session with dsh's client.
func upstreamSession(t *testing.T, srv *sdk.Server, opts mcp.Options) (*engine.Service, *sdk.ServerSession) {
	t.Helper()
	mem := newImpMemServer(srv)
	svc := engine.New()
	opts.Dial = mem.dial
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}}, opts)
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	t.Cleanup(func() {
		_ = client.Close()
		mem.closeAll()
	})
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return svc, mem.sessions[len(mem.sessions)-1]
}

func TestAQuestionWithNoCallInFlightIsRefused(t *testing.T) {
	_, ss := upstreamSession(t, askingServer(true), mcp.Options{})
	_, err := ss.Elicit(context.Background(), &sdk.ElicitParams{Message: "Anyone?"})
	if want := `calling "elicitation/create": dsh cannot forward this elicitation request: no call of dsh's to server "up" is in flight`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestAQuestionWithSeveralCallsInFlightIsRefused(t *testing.T) {
	srv := askingServer(true)
	held, release := make(chan struct{}), make(chan struct{})
	srv.AddTool(&sdk.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			close(held)
			<-release
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil
		})
	svc, _ := upstreamSession(t, srv, mcp.Options{})
	asked := false
	ctx := engine.WithElicit(context.Background(), func(context.Context, engine.Elicitation) (engine.ElicitResult, error) {
		asked = true
		return engine.ElicitResult{Action: "decline"}, nil
	})
	done := make(chan *engine.Result, 1)
	go func() { done <- impCall(svc, ctx, "up__hold", nil) }()
	<-held
	r := impCall(svc, ctx, "up__ask", nil)
	close(release)
	want := `calling "elicitation/create": dsh cannot forward this elicitation request: 2 calls of dsh's to server "up" are in flight, and MCP does not say which one asks`
	if !r.IsError || r.Error.Message != want {
		t.Errorf("result %s, want the error %q", impJSON(t, r), want)
	}
	if asked {
		t.Error("someone was asked")
	}
	if r := <-done; r.IsError {
		t.Errorf("the held call: %s", impJSON(t, r))
	}
}

func TestAnUnansweredForwardedSamplingEndsAtTheApprovalTimeout(t *testing.T) {
	f := throughDsh(t, true, mcp.Options{}, mcp.ServerOptions{ApprovalTimeout: 50 * time.Millisecond})
	cs := f.connect(t, legacy, &sdk.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, _ *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			<-ctx.Done() // nobody answers; dsh withdraws the request
			return nil, ctx.Err()
		},
	})
	r := call(t, cs, "up__sample", `{}`)
	want := `Error: calling "sampling/createMessage": dsh could not forward this sampling request: the client did not answer the sampling request within 50ms`
	if got := text(r); !r.IsError || got != want {
		t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
	}
}

func TestAnImportedServersURLQuestionReachesTheServingClient(t *testing.T) {
	for _, up := range upstreams {
		t.Run("from "+up.name+", a client taking URL mode is sent to the URL", func(t *testing.T) {
			f := throughDsh(t, up.legacy, mcp.Options{}, mcp.ServerOptions{})
			var asked *sdk.ElicitParams
			cs := f.connect(t, legacy, &sdk.ClientOptions{
				Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked = req.Params
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
			})
			r := call(t, cs, "up__url", `{}`)
			if got, want := text(r), `{"action":"accept"}`; r.IsError || got != want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
			}
			if asked == nil || asked.Mode != "url" || asked.Message != "Sign in" || asked.URL != "https://example.com/sign-in" || asked.ElicitationID != "e1" {
				t.Errorf("asked %+v", asked)
			}
		})
		t.Run("from "+up.name+", a client taking forms only is not asked", func(t *testing.T) {
			f := throughDsh(t, up.legacy, mcp.Options{}, mcp.ServerOptions{})
			cs := f.connect(t, legacy, &sdk.ClientOptions{
				ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					return nil, errors.New("unreachable: dsh does not ask")
				},
			})
			r := call(t, cs, "up__url", `{}`)
			want := `Error: calling "elicitation/create": dsh cannot forward this elicitation request: no user can be asked: the caller does not take URL-mode questions (elicitation)`
			if !up.legacy {
				want = `Error: MCP server "up" failed the call: multi round-trip: fulfilling input request "q": dsh cannot forward this elicitation request: no user can be asked: the caller does not take URL-mode questions (elicitation)`
			}
			if got := text(r); !r.IsError || got != want {
				t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
			}
		})
	}
}

func TestForwardedQuestionsStayWithinTheServersPendingCap(t *testing.T) {
	// A server asking three questions at once, with the cap at two: the
	// two first wait for the serving client, the third is refused at once.
	srv := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "v1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	refused := make(chan string, 3)
	srv.AddTool(&sdk.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			answers := make(chan string, 3)
			for range 3 {
				go func() {
					res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Again?"})
					if err != nil {
						refused <- err.Error()
						answers <- "refused"
						return
					}
					answers <- res.Action
				}()
			}
			var got []string
			for range 3 {
				got = append(got, <-answers)
			}
			slices.Sort(got)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(got, " ")}}}, nil
		})
	mem := newImpMemServer(srv)
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MaxPendingRequests: 2})
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	t.Cleanup(func() {
		_ = client.Close()
		mem.closeAll()
	})
	release := make(chan struct{})
	var why string
	go func() {
		why = <-refused // the third question is refused while two wait
		close(release)
	}()
	f := serveEngine(t, svc)
	cs := f.connect(t, legacy, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			select {
			case <-release:
				return &sdk.ElicitResult{Action: "decline"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	r := call(t, cs, "up__flood", `{}`)
	if got, want := text(r), "decline decline refused"; r.IsError || got != want {
		t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
	}
	if want := `calling "elicitation/create": too many requests in flight from this server: at most 2 at once`; why != want {
		t.Errorf("the third question was refused with %q, want %q", why, want)
	}
}

func TestTheServingClientsSamplingErrorGoesBackToTheServer(t *testing.T) {
	f := throughDsh(t, true, mcp.Options{}, mcp.ServerOptions{})
	cs := f.connect(t, legacy, &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return nil, &jsonrpc.Error{Code: -1, Message: "the user refused to sample"}
		},
	})
	r := call(t, cs, "up__sample", `{}`)
	want := `Error: calling "sampling/createMessage": the user refused to sample`
	if got := text(r); !r.IsError || got != want {
		t.Errorf("result %q (isError %v), want %q", got, r.IsError, want)
	}
}
