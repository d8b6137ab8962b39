package mcp

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28, and issue 17 asks for it: clients on 2025-11-25 use it, and servers keep it through the deprecation window.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// sdkSectionID is the id of the PTC executor's system-prompt section that
// declares the SDK a run_code program is written against (ptc.SDKSectionID;
// this package does not import ptc). An MCP client has no system prompt to
// put it in: it goes to the server's instructions and the describe tool
// (server_code.go).
const sdkSectionID = "tools:sdk"

// DefaultApprovalTimeout is how long a question of a served call (an
// approval, or a tool's own elicitation) waits for the client's answer, on
// every protocol version, before it ends unanswered: the approval denies
// the call (engine.ApprovalTimeoutError), the elicitation answers "cancel".
const DefaultApprovalTimeout = 10 * time.Minute

// multiRoundTripVersion is the first protocol version where a server asks
// the client inside a tools/call result (inputRequests) instead of sending
// it a request of its own (SEP-2322).
const multiRoundTripVersion = "2026-07-28"

// ServerOptions configures a [Server].
type ServerOptions struct {
	// Agent is the agent the calls run as (nil: none; ask decisions are
	// then denied, as the engine denies them for calls without an agent).
	Agent *engine.Agent
	// Name and Version identify the server to clients (default "dsh" and
	// "dev").
	Name, Version string
	// Logger receives the server's own problems (default: discarded).
	Logger *slog.Logger
	// Log receives the calls' durable session events, when set.
	Log engine.EventLog
	// ApprovalTimeout bounds the wait for the client's answer to each
	// question of a call, an approval or a tool's elicitation, whether it
	// goes as an elicitation request or as an input request of a
	// multi-round-trip result (default [DefaultApprovalTimeout]).
	ApprovalTimeout time.Duration
	// ToolScopes, when set, hides from a request whose token was verified
	// (HTTPOptions.Resource) the tools its scopes do not cover: neither
	// listed nor callable (see [ToolScopes], server_auth_scopes.go).
	ToolScopes *ToolScopes
	// TracerProvider, when set, makes a SERVER span per request received
	// and a CLIENT span per request sent to the client, with the W3C trace
	// context in params._meta, as the MCP semantic conventions give them
	// (otel.go). nil: no spans, and _meta is left as it is.
	TracerProvider trace.TracerProvider
	// MeterProvider, when set, records mcp.server.operation.duration for
	// the requests received and mcp.client.operation.duration for those
	// sent (otel.go). nil records nothing.
	MeterProvider metric.MeterProvider
}

// Server serves an engine's tools over MCP: tools/list is what the agent's
// executor describes, tools/call runs a model-direct call of the agent
// through the whole pipeline. Mount [Approval] on the engine so that ask
// decisions reach the client as elicitation requests.
type Server struct {
	svc    *engine.Service
	scope  *engine.Scope
	opts   ServerOptions
	logger *slog.Logger
	server *sdk.Server

	seq       atomic.Int64 // call ids: mcp-1, mcp-2…
	pollAfter atomic.Int64 // HTTPOptions.PollAfter of the HTTP handler, in nanoseconds (see pollCalls)

	syncMu sync.Mutex        // one Sync at a time
	tools  map[string]string // the tools registered with the SDK server: name → JSON
	watch  *watcher          // re-syncs on the engine's tool changes

	instructions atomic.Pointer[string] // under a code executor, the SDK as of the last Sync (server_code.go)
	describeTool *sdk.Tool              // the describe tool of the last Sync, if served

	mu     sync.Mutex
	parked map[string]*callState // multi-round-trip calls awaiting an answer, by requestState
	closed bool                  // Close was called, or NewServer's ctx ended: no new calls
	calls  sync.WaitGroup        // the goroutines of multi-round-trip calls
	cancel map[*callState]func() // cancels each running call
	unhook func() bool           // stops cancelling the calls when NewServer's ctx ends
}

// NewServer returns a server for svc's tools as opts.Agent sees them, with
// the tool list taken once (see [Server.Sync]). When ctx ends (dsh serve
// is interrupted), the running calls are cancelled, so that closing the
// sessions does not wait on them; the server serves until [Server.Close].
func NewServer(ctx context.Context, svc *engine.Service, opts ServerOptions) (*Server, error) {
	if opts.Name == "" {
		opts.Name = "dsh"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	s := &Server{
		svc:    svc,
		scope:  svc.Scope(opts.Agent),
		opts:   opts,
		logger: opts.Logger,
		tools:  map[string]string{},
		parked: map[string]*callState{},
		cancel: map[*callState]func(){},
	}
	s.server = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{
		Logger: opts.Logger,
		// Tools, and the calls' log lines (see LogHandler).
		Capabilities: &sdk.ServerCapabilities{
			Tools:   &sdk.ToolCapabilities{ListChanged: true},
			Logging: &sdk.LoggingCapabilities{},

			// Imported servers' resources and prompts (Reexport): declared
			// from the start, as the imports connect after initialize.
			Resources: &sdk.ResourceCapabilities{ListChanged: true},
			Prompts:   &sdk.PromptCapabilities{ListChanged: true},
		},
	})
	s.server.AddReceivingMiddleware(checkSetLevel, s.setInstructions, s.pollCalls, s.scopeTools)
	if t := newMCPTracing(opts.TracerProvider, opts.MeterProvider, ""); t != nil {
		// Added last, it is outermost: the span covers every other middleware.
		s.server.AddReceivingMiddleware(t.receiving)
		s.server.AddSendingMiddleware(t.sending)
	}
	if err := s.Sync(ctx); err != nil {
		return nil, err
	}
	s.watch = s.startWatch(ctx)
	s.unhook = context.AfterFunc(ctx, s.stopCalls)
	return s, nil
}

// Server returns the SDK server, for [sdk.Server.Run] or
// [sdk.Server.Connect] on any transport.
func (s *Server) Server() *sdk.Server { return s.server }

// Run serves one client over t (such as &sdk.StdioTransport{}) until the
// client disconnects or ctx is cancelled.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.server.Run(ctx, t)
}

// Close cancels the calls parked on an approval question and waits for
// the goroutines of multi-round-trip calls to end. A call in a tool body
// ends when its body does.
func (s *Server) Close() {
	s.unhook()
	s.watch.stop()
	s.stopCalls()
	s.calls.Wait()
}

// stopCalls cancels every running call and refuses new ones.
func (s *Server) stopCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, cancel := range s.cancel {
		cancel()
	}
}

// Sync makes the tool list what the agent's executor describes now, with
// the activation conditions resolved for a step without a model selection.
// Changes reach connected clients as notifications/tools/list_changed. The
// server syncs by itself after every change to the engine's tools (a
// plugin's load, reload or unload, an imported server's listing), so a
// caller needs Sync only for what the engine does not announce.
func (s *Server) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	tools, err := s.describe(ctx)
	if err != nil {
		return err
	}
	keep := make(map[string]string, len(tools))
	for _, t := range tools {
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		keep[t.Name] = string(b)
	}
	var gone []string
	for name := range s.tools {
		if _, ok := keep[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveTools(gone...)
	}
	for _, t := range tools {
		if s.tools[t.Name] != keep[t.Name] {
			s.server.AddTool(t, s.handlerFor(t))
		}
	}
	s.tools = keep
	return nil
}

// describe returns the MCP tools the executor describes.
func (s *Server) describe(ctx context.Context) ([]*sdk.Tool, error) {
	set, err := s.scope.Resolve(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("resolving the tool set: %w", err)
	}
	exec := s.scope.Executor()
	desc, err := exec.Describe(s.scope.Definitions(set))
	if err != nil {
		return nil, fmt.Errorf("describing the tools: %w", err)
	}
	transport := ""
	if te, ok := exec.(engine.TransportExecutor); ok && te.Transport() != nil {
		transport = te.Transport().Name
	}
	instructions, code := codeMode(desc)
	s.instructions.Store(&instructions)
	tools := make([]*sdk.Tool, 0, len(desc.Schemas))
	for _, ts := range desc.Schemas {
		t, err := s.tool(ts, set)
		if err != nil {
			s.logger.Warn("tool not served over MCP", "tool", ts.Name, "error", err)
			continue
		}
		if ts.Name == transport && code {
			t.Description += "\n\n" + codeModeNote
		}
		tools = append(tools, t)
	}
	return s.withDescribe(tools, code), nil
}

// tool converts a tool schema: its parameters are the input schema, and its
// declared output schema is the output schema when its root is an object
// (MCP requires type "object" there).
func (s *Server) tool(ts engine.ToolSchema, set *engine.ToolSet) (*sdk.Tool, error) {
	params := ts.Parameters
	if params == nil {
		params = dsl.NewObject(dsl.Member{Key: "type", Value: "object"})
	}
	if !objectRooted(params) {
		return nil, errors.New(`its parameter schema is not of type "object", which MCP requires`)
	}
	in, err := dsl.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("parameter schema: %w", err)
	}
	t := &sdk.Tool{Name: ts.Name, Description: ts.Description, InputSchema: json.RawMessage(in)}
	def := s.scope.Executable(ts.Name, set)
	if def != nil {
		t.Title, t.Annotations = def.Title, servedAnnotations(def)
	}
	if def != nil && objectRooted(servedOutput(def)) {
		out, err := dsl.Marshal(servedOutput(def))
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		t.OutputSchema = json.RawMessage(out)
	}
	return t, nil
}

// objectRooted reports whether schema says its instances are objects.
func objectRooted(schema any) bool {
	o, ok := schema.(*dsl.Object)
	if !ok {
		return false
	}
	typ, _ := o.Get("type")
	return typ == "object"
}

// handle is every tool's handler: a model-direct call through the whole
// pipeline. A client on a multi-round-trip protocol version gets its
// approval questions as inputRequests, and a retry with requestState
// resumes the call that asked; any other client is asked with an
// elicitation request while the call waits.
func (s *Server) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	if state := req.Params.RequestState; state != "" {
		return s.resume(ctx, state, req.Params.InputResponses)
	}
	st := &callState{session: req.Session, timeout: s.opts.ApprovalTimeout}
	if !multiRoundTrip(req.Session) {
		// The call runs on the request, and ends with it; it is cancelled
		// too when its session is deleted, or by Close.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return errorResult("the server is shutting down"), nil
		}
		s.cancel[st] = cancel
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.cancel, st)
			s.mu.Unlock()
		}()
		return s.run(context.WithValue(ctx, stateKey{}, st), req), nil
	}
	st.events = make(chan question)
	st.answers = make(chan *sdk.ElicitResult, 1)
	st.done = make(chan *sdk.CallToolResult, 1)
	st.server = s
	// The call outlives this request when it parks on a question: it runs
	// on a context of its own, cancelled with the request while one waits
	// on it, and by Close.
	callCtx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), stateKey{}, st))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return errorResult("the server is shutting down"), nil
	}
	s.cancel[st] = cancel
	s.calls.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.calls.Done()
		r := s.run(callCtx, req)
		s.mu.Lock()
		delete(s.cancel, st)
		s.mu.Unlock()
		cancel()
		st.done <- r
	}()
	return s.await(ctx, st), nil
}

// run executes the call as a batch of one, as the CLI runs a model's call.
func (s *Server) run(ctx context.Context, req *sdk.CallToolRequest) *sdk.CallToolResult {
	ctx, notes := withNotes(ctx, req.Session, req.Params)
	defer notes.finish() // the notifications go before the result
	ctx = engine.WithElicit(ctx, elicit)
	ctx = engine.WithSample(ctx, sample)
	ctx = s.forCaller(ctx, req.Extra) // the verified token's identity and its tools, if any (server_auth_scopes.go)
	set, err := s.scope.Resolve(ctx, nil)
	if err != nil {
		return errorResult(fmt.Sprintf("resolving the tool set: %v", err))
	}
	args := string(req.Params.Arguments)
	id := "mcp-" + strconv.FormatInt(s.seq.Add(1), 10)
	res, err := s.scope.Execute(ctx, engine.Batch{
		Calls:   []engine.ToolCallBlock{{ID: id, Name: req.Params.Name, Arguments: args}},
		Agent:   s.opts.Agent,
		ToolSet: set,
		Log:     s.opts.Log,
	})
	var be *engine.BatchError
	if errors.As(err, &be) && be.Committed != nil && len(be.Committed.Results) == 1 {
		res, err = be.Committed, nil
	}
	if err != nil {
		return errorResult(err.Error())
	}
	if len(res.Results) != 1 || res.Results[0].Result == nil {
		return errorResult("the call has no result")
	}
	r := res.Results[0].Result
	return callResult(r, !r.IsError && s.structuredFor(req.Params.Name, set))
}

// structuredFor reports whether name's definition in set declares an
// object-rooted output schema.
func (s *Server) structuredFor(name string, set *engine.ToolSet) bool {
	def := s.scope.Executable(name, set)
	return def != nil && objectRooted(servedOutput(def))
}

// await waits for st's call to end or ask, and returns its result or the
// question as an input-required result. A cancelled request cancels the
// call and returns the result it ends with.
func (s *Server) await(ctx context.Context, st *callState) *sdk.CallToolResult {
	select {
	case r := <-st.done:
		return r
	case q := <-st.events:
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{q.key: q.params}, RequestState: q.token}
	case <-ctx.Done():
		s.mu.Lock()
		if cancel := s.cancel[st]; cancel != nil {
			cancel()
		}
		s.mu.Unlock()
		return <-st.done
	}
}

// park registers st's next question and returns its requestState.
func (s *Server) park(st *callState) string {
	token := newToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parked[token] = st
	return token
}

// resume hands a retried call's answer to the parked call and waits again.
func (s *Server) resume(ctx context.Context, token string, answers sdk.InputResponseMap) (*sdk.CallToolResult, error) {
	s.mu.Lock()
	st := s.parked[token]
	delete(s.parked, token)
	s.mu.Unlock()
	if st == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown or expired requestState"}
	}
	key := approvalKey
	if k := st.key.Load(); k != nil {
		key = *k
	}
	answer, _ := answers[key].(*sdk.ElicitResult)
	if answer == nil {
		answer = &sdk.ElicitResult{Action: "cancel"}
	}
	st.answers <- answer
	return s.await(ctx, st), nil
}

// callResult converts an engine result: content blocks become MCP
// content, and a success of a tool with an object-rooted output schema
// carries its canonical value as structuredContent.
func callResult(r *engine.Result, structured bool) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError, Content: content(r.Content)}
	if structured {
		if text, err := dsl.Marshal(r.Value); err == nil {
			out.StructuredContent = json.RawMessage(text)
		}
	}
	return out
}

// errorResult is a failure that is not the pipeline's (the tool set could
// not be resolved, the batch itself failed).
func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "Error: " + msg}}}
}

// content converts blocks: text to text, an image whose attachment (or
// block) carries base64 "data" and a "mimeType" to an image, an audio
// block of the same shape to audio, {type: "resource", resource: {uri,
// mimeType?, text | blob}} to an embedded resource and {type:
// "resource_link", uri, name, ...} to a resource link, and a raw {type:
// "text", text, ...} (an imported annotated block) to text; each keeps the
// block's MCP "annotations" and "_meta". Anything else becomes text: its
// canonical JSON.
func content(blocks []engine.Block) []sdk.Content {
	out := make([]sdk.Content, 0, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case engine.TextBlock:
			out = append(out, &sdk.TextContent{Text: b.Text})
			continue
		case engine.ImageBlock:
			if img := image(b.Attachment); img != nil {
				out = append(out, img)
				continue
			}
		case engine.RawBlock:
			if c := rawContent(b); c != nil {
				out = append(out, annotate(c, b.Value))
				continue
			}
		case nil:
			continue
		}
		text, err := dsl.Marshal(b.JSON())
		if err != nil {
			continue
		}
		out = append(out, &sdk.TextContent{Text: string(text)})
	}
	return out
}

// rawContent converts a raw block of a type MCP content has, in its MCP
// shape, or returns nil.
func rawContent(b engine.RawBlock) sdk.Content {
	switch b.BlockType() {
	case "text":
		if t := rawText(b.Value); t != nil {
			return t
		}
	case "image":
		if img := image(b.Value); img != nil {
			return img
		}
	case "audio":
		if data, mime, ok := media(b.Value); ok {
			return &sdk.AudioContent{Data: data, MIMEType: mime}
		}
	case "resource":
		o := b.Value.(*dsl.Object)
		r, _ := o.Get("resource")
		if rc := resourceContents(r); rc != nil {
			return &sdk.EmbeddedResource{Resource: rc}
		}
	case "resource_link":
		var link sdk.ResourceLink
		if decodeInto(b.Value, &link) && link.URI != "" && link.Name != "" {
			return &link
		}
	}
	return nil
}

// resourceContents reads {uri, mimeType?, text | blob (base64)}, or
// returns nil.
func resourceContents(v any) *sdk.ResourceContents {
	var rc sdk.ResourceContents
	if !decodeInto(v, &rc) || rc.URI == "" || (rc.Text == "") == (rc.Blob == nil) {
		return nil
	}
	return &rc
}

// decodeInto decodes the JSON value v into dst, reporting success.
func decodeInto(v any, dst any) bool {
	if _, ok := v.(*dsl.Object); !ok {
		return false
	}
	text, err := dsl.Marshal(v)
	return err == nil && json.Unmarshal(text, dst) == nil
}

// image reads {data: base64, mimeType} (or mediaType) into an image, or
// returns nil.
func image(v any) *sdk.ImageContent {
	data, mime, ok := media(v)
	if !ok {
		return nil
	}
	return &sdk.ImageContent{Data: data, MIMEType: mime}
}

// media reads {data: base64, mimeType} (or mediaType).
func media(v any) (data []byte, mime string, ok bool) {
	o, isObj := v.(*dsl.Object)
	if !isObj {
		return nil, "", false
	}
	d, _ := o.Get("data")
	s, isStr := d.(string)
	if !isStr {
		return nil, "", false
	}
	m, _ := o.Get("mimeType")
	if m == nil {
		m, _ = o.Get("mediaType")
	}
	mime, _ = m.(string)
	if mime == "" {
		return nil, "", false
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, "", false
	}
	return raw, mime, true
}

// multiRoundTrip reports whether ss's client asks inside results, as the
// SDK decides it.
func multiRoundTrip(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= multiRoundTripVersion
}

// newToken returns an unguessable requestState.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
