package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// The defaults of [Options].
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultMinBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
)

// Options configures [Connect].
type Options struct {
	// Logger hears what happens after Connect returned: lost connections,
	// reconnections, and the diagnostics of a later listing. nil discards.
	Logger *slog.Logger
	// Stderr receives the standard error of stdio servers; nil discards
	// it. Either way its last line is kept for the reason a server is not
	// connected.
	Stderr io.Writer
	// Dial makes the transport of one connection attempt to spec. nil
	// starts spec.Command in a process group of its own (ended with
	// everything it started when the connection closes), or connects to
	// spec.URL with a [sdk.StreamableClientTransport] (an
	// [sdk.SSEClientTransport] when spec.SSE, its stream held for the
	// connection's life).
	Dial func(ctx context.Context, spec ServerSpec) (sdk.Transport, error)
	// ConnectTimeout bounds one attempt: starting or reaching the server,
	// initializing, and listing its tools, resources and prompts
	// (DefaultConnectTimeout when 0).
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before reconnecting: it
	// starts at MinBackoff and doubles after each failed attempt up to
	// MaxBackoff (DefaultMinBackoff and DefaultMaxBackoff when 0).
	MinBackoff, MaxBackoff time.Duration
	// MaxPendingRequests caps the requests (roots, sampling, elicitation)
	// one server may have in flight to dsh; past it a request is answered
	// at once with a [CodeTooManyRequests] error
	// (DefaultMaxPendingRequests when 0).
	MaxPendingRequests int
	// Roots are the directories dsh offers every server as its roots
	// (roots/list, as file:// URIs): dsh serve's --workspace.
	Roots []string
	// OAuth configures the authorization flow of HTTP imports whose
	// servers ask for one (oauth.go).
	OAuth OAuthOptions
	// TracerProvider, when set, makes a CLIENT span per request sent to a
	// server, with its W3C trace context written to params._meta, and a
	// SERVER span per request a server sends, as the MCP semantic
	// conventions give them (otel.go). nil: no spans.
	TracerProvider trace.TracerProvider
	// MeterProvider, when set, records mcp.client.operation.duration for
	// the requests sent and mcp.server.operation.duration for those a
	// server sends (otel.go). nil records nothing.
	MeterProvider metric.MeterProvider
}

func (o *Options) connectTimeout() time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return DefaultConnectTimeout
}

func (o *Options) backoff() (lo, hi time.Duration) {
	lo, hi = o.MinBackoff, o.MaxBackoff
	if lo <= 0 {
		lo = DefaultMinBackoff
	}
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	return lo, max(lo, hi)
}

// Diagnostic is an imported tool that is not registered, or a server that
// could not be reached (Tool is empty), with the reason.
type Diagnostic struct {
	Server string
	Tool   string
	Reason string
	// Unnamed is set for a tool (or, with Kind, a prompt) the server
	// listed with an empty name (and Tool is empty): the diagnostic is
	// about a tool, not the server.
	Unnamed bool
	// Capped is set when the server listed more tools than its cap
	// (ServerSpec.MaxTools; Tool is empty): the server is reached, and the
	// tools past the cap are not imported.
	Capped bool
	// Kind is "resource", "resource template" or "prompt" when d is about
	// an entry of the server's catalogue (see [Catalog]; Tool is then
	// empty), and Item is that entry's URI, URI template or own name
	// (empty when d is about the entries past the cap).
	Kind, Item string
}

// IsTool reports whether d is about the server's tools (one of them, or
// those past its cap) or its catalogue rather than the server (which then
// could not be reached or listed).
func (d Diagnostic) IsTool() bool { return d.Tool != "" || d.Unnamed || d.Capped || d.Kind != "" }

// Error renders `tool "NAME": REASON`, or the reason alone for the server,
// on one line: the server chose the tool's name and much of the reason, so
// the name is quoted bounded (display.Quote) and the reason's control
// characters are escaped and its length bounded (display.Line).
func (d Diagnostic) Error() string {
	reason := display.Line(d.Reason, display.MaxText)
	if d.Kind != "" && (d.Item != "" || d.Unnamed) {
		return d.Kind + " " + display.Quote(d.Item) + ": " + reason
	}
	if d.Tool == "" && !d.Unnamed {
		return reason
	}
	return "tool " + display.Quote(d.Tool) + ": " + reason
}

// Client is a set of imported MCP servers: each server's tools are
// registered in the engine's global layer as "NAME__tool", and kept in step
// with the server while it runs.
//
// A server's tools are registered in one [engine.Service.Swap] per listing,
// as a plugin's hot reload is: at start, after a reconnection, and on the
// server's notifications/tools/list_changed, so a call sees the old tool
// set or the new one, never a mix. A server that exits or disconnects keeps
// its tools registered; their calls fail with `MCP server "NAME" is not
// connected: REASON` while dsh reconnects (restarting a stdio server) with
// exponential backoff.
//
// A call runs the tool with the call's ctx, so cancelling the call cancels
// the request at the server (notifications/cancelled). Its outcome:
//   - isError: a tool failure whose message is the result's text content
//     (other blocks count as "[type content]"), less a leading "Error: "
//     (the failure's content adds it back: "Error: <message>" reads once).
//   - otherwise the content becomes the call's content: text blocks as
//     text, image blocks as {type: "image", attachment: {mimeType, data}}
//     (data in base64), any other block (audio, resource, resource_link)
//     kept as the server sent it, and so is a text or image block with
//     annotations or _meta (see annotated; such a text block still counts
//     as text here). The value is the structuredContent when
//     there is one; else the text joined by newlines when every block is
//     text; else the content blocks themselves (a JSON array).
//
// The parameters are the tool's input schema, whole and unchanged ("$schema"
// included), which checks the arguments (see schema.go: any JSON Schema
// dialect the server writes, bounded, no $ref outside the schema); bad
// arguments are INVALID_ARGS with the validator's locations and reasons.
// The output schema the engine checks is the tool's outputSchema when it
// lies in dsh's enforced subset, else any value; the outputSchema itself is
// kept as Output.Declared and served unchanged. A schema that does not
// compile is not registered: [Connect] returns a [Diagnostic] with the
// reason. A tool annotated readOnlyHint runs in parallel with other calls;
// the others are exclusive.
type Client struct {
	svc     *engine.Service
	opts    Options
	logger  *slog.Logger
	servers []*server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
	catalog catalogHub // the subscribers to the servers' catalogue (catalog.go)
	oauthMu sync.Mutex
	oauth   map[string]*oauthImport // the HTTP imports' authorizations, by server (oauth.go)
}

// Connect imports servers into svc. It connects to every server at once and
// returns when each has registered its tools or failed its first attempt;
// ctx bounds that wait. The diagnostics are the tools not registered and
// the servers not reached, which are retried in the background. Close the
// client to disconnect and unregister the tools.
func Connect(ctx context.Context, svc *engine.Service, specs []ServerSpec, opts Options) (*Client, []Diagnostic) {
	first := make([]chan []Diagnostic, len(specs))
	for i := range first {
		first[i] = make(chan []Diagnostic, 1)
	}
	c := start(ctx, svc, specs, opts, func(i int, diags []Diagnostic) { first[i] <- diags })
	var diags []Diagnostic
	for _, ch := range first {
		diags = append(diags, <-ch...)
	}
	return c, diags
}

// Start imports servers into svc without waiting for them: it returns at
// once, and each server connects in the background, registers its tools
// when it is reached (one swap, as under Connect, so whoever follows the
// engine's tool changes hears of them) and reconnects as under Connect.
// Its first attempt is bounded by Options.ConnectTimeout and by Close.
//
// report, when not nil, is called once per server, from the server's own
// goroutine, as soon as its first attempt ends: with the diagnostics
// Connect would have returned for it (the tools not registered, or the
// server not reached, which is then retried). It is not called for an
// attempt that Close interrupted. Close the client to disconnect and
// unregister the tools.
func Start(svc *engine.Service, specs []ServerSpec, opts Options, report func(server string, diags []Diagnostic)) *Client {
	return start(context.Background(), svc, specs, opts, func(i int, diags []Diagnostic) {
		if report != nil {
			report(specs[i].Name, diags)
		}
	})
}

// start starts one goroutine per server; first hears each server's first
// attempt (by its index in specs), which ctx bounds too.
func start(ctx context.Context, svc *engine.Service, specs []ServerSpec, opts Options, first func(i int, diags []Diagnostic)) *Client {
	root, cancel := context.WithCancel(context.Background())
	c := &Client{svc: svc, opts: opts, logger: opts.Logger, cancel: cancel}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	// Every server is in c.servers before the first goroutine starts: a
	// server that connects reads the others' catalogues (Catalog).
	for _, spec := range specs {
		s := &server{c: c, spec: spec, relist: make(chan struct{}, 1), recatalog: make(chan struct{}, 1), stderr: &tail{}}
		s.state.Store(&connState{reason: "not connected yet"})
		c.servers = append(c.servers, s)
	}
	for i, s := range c.servers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			s.run(root, ctx, func(diags []Diagnostic) { first(i, diags) })
		}()
	}
	return c
}

// Close disconnects every server (a stdio server is asked to exit, then
// stopped), waits for dsh's goroutines of the client to end, and removes
// the servers' tools in one swap. Close is idempotent.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.cancel()
		c.wg.Wait()
		_, _ = c.svc.Swap(func() error {
			for _, s := range c.servers {
				if s.scope != nil {
					s.scope.Dispose()
					s.scope = nil
				}
			}
			return nil
		})
		c.clearCatalog()
	})
	return nil
}

// server is one imported server.
type server struct {
	c      *Client
	spec   ServerSpec
	state  atomic.Pointer[connState]
	relist chan struct{} // a tools/list_changed to act on
	stderr *tail
	scope  *engine.Scope            // its registrations; only run (then Close) touches it
	tasks  *taskWatch               // the current connection's tools requiring tasks; only run touches it
	served atomic.Pointer[[]string] // the names its last listing registered

	// recatalog is a resources or prompts list_changed to act on, and
	// catalog the latest listing of those (catalog.go).
	recatalog chan struct{}
	catalog   atomic.Pointer[serverCatalog]

	seq      atomic.Int64 // progress tokens: dsh-1, dsh-2…
	progress sync.Map     // a progress token → the context of the call that sent it
	calls    inflight     // dsh's calls to the server awaiting their results
	logs     logSeq       // the log lines of the current connection read and relayed
}

// connState is a server's connection: a session, or why there is none.
type connState struct {
	sess   *sdk.ClientSession
	reason string
}

// run connects, serves and reconnects until root is done. The first
// attempt's diagnostics go to first (unless root ended that attempt: the
// client is closing); start bounds that attempt too.
func (s *server) run(root, start context.Context, first func([]Diagnostic)) {
	lo, hi := s.c.opts.backoff()
	delay := lo
	for {
		actx, cancel := context.WithCancel(root)
		stop := func() bool { return false }
		if first != nil {
			stop = context.AfterFunc(start, cancel)
		}
		sess, diags, err := s.connect(actx)
		stop()
		cancel()
		if err != nil {
			reason := s.reason(err)
			login := errors.Is(err, ErrNeedsLogin)
			if login {
				reason = needsLogin(s.spec.Name) // see oauth.go
			}
			s.state.Store(&connState{reason: reason})
			if first != nil {
				if root.Err() == nil {
					if !login {
						reason = "cannot connect: " + reason
					}
					first(append(diags, Diagnostic{Server: s.spec.Name, Reason: reason}))
				}
				first = nil
			} else if root.Err() == nil && !login { // a login is asked for once
				s.c.logger.Warn("MCP server not connected, retrying", "server", s.spec.Name, "reason", reason, "retry-in", delay)
			}
		} else {
			if first != nil {
				first(diags)
				first = nil
			} else {
				s.c.logger.Info("MCP server reconnected", "server", s.spec.Name)
				s.logDiagnostics(diags)
			}
			began := time.Now()
			s.serve(root, sess)
			if time.Since(began) >= hi {
				delay = lo // it ran a while: a new failure starts the backoff afresh
			}
		}
		if root.Err() != nil {
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-root.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(delay*2, hi)
	}
}

// connect makes one attempt: connect, initialize, list and register.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, []Diagnostic, error) {
	ctx, cancel := context.WithTimeout(ctx, s.c.opts.connectTimeout())
	defer cancel()
	s.stderr.reset()
	var t sdk.Transport
	var err error
	if s.c.opts.Dial != nil {
		t, err = s.c.opts.Dial(ctx, s.spec)
	} else {
		t, err = s.dial()
	}
	if err != nil {
		return nil, nil, err
	}
	s.tasks = newTaskWatch()
	s.tasks.logs = s.logs.reset() // see upstream_log.go
	t = watchTasks(t, s.tasks)
	client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: version()}, &sdk.ClientOptions{
		Logger: s.c.opts.Logger,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case s.relist <- struct{}{}:
			default: // one is pending already
			}
		},
		ProgressNotificationHandler: s.relayProgress,
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { s.catalogChanged() },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { s.catalogChanged() },
		ElicitationHandler:          formDefaults(s.elicit), // see client_questions.go, client_defaults.go
		Capabilities:                questionCapabilities(),
		//lint:ignore SA1019 sampling is deprecated in 2026-07-28, but servers on older versions send it
		CreateMessageHandler: s.sample,
		//lint:ignore SA1019 servers on 2025-11-25 and older log through it (upstream_log.go)
		LoggingMessageHandler: s.relayLog,
	})
	//lint:ignore SA1019 roots are deprecated in 2026-07-28, but servers on older versions ask for them
	client.AddRoots(s.c.opts.roots()...)
	if tr := newMCPTracing(s.c.opts.TracerProvider, s.c.opts.MeterProvider, s.spec.Name); tr != nil {
		client.AddSendingMiddleware(tr.sending)
		client.AddReceivingMiddleware(tr.receiving)
	}
	t = s.boundRequests(client, t)
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, nil, err
	}
	s.state.Store(&connState{sess: sess})
	s.setLogLevel(ctx, sess)
	diags, err := s.sync(ctx, sess)
	if err == nil {
		var more []Diagnostic
		more, err = s.syncCatalog(ctx, sess)
		diags = append(diags, more...)
	}
	if err != nil {
		s.state.Store(&connState{reason: s.reason(err)})
		_ = sess.Close()
		return nil, nil, err
	}
	return sess, diags, nil
}

// dial makes the default transport of spec.
func (s *server) dial() (sdk.Transport, error) {
	if s.spec.URL != "" {
		var hc *http.Client
		var rt http.RoundTripper = http.DefaultTransport
		if len(s.spec.Headers) > 0 {
			rt = headerTransport{base: rt, headers: s.spec.Headers}
		}
		if imp := s.c.oauthFor(s.spec); imp != nil {
			rt = &oauthTransport{base: rt, imp: imp} // see oauth.go
		}
		if rt != http.DefaultTransport {
			hc = &http.Client{Transport: rt}
		}
		if s.spec.SSE {
			return &sseTransport{t: &sdk.SSEClientTransport{Endpoint: s.spec.URL, HTTPClient: hc}}, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: hc}, nil
	}
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Env = childEnv(s.spec.Env)
	cmd.Dir = s.spec.Dir
	if w := s.c.opts.Stderr; w != nil {
		cmd.Stderr = io.MultiWriter(s.stderr, w)
	} else {
		cmd.Stderr = s.stderr
	}
	// A grandchild that keeps standard error open must not hold Close.
	cmd.WaitDelay = 2 * time.Second
	return &stdioTransport{cmd: cmd, terminate: 2 * time.Second}, nil
}

// childEnv is a stdio server's environment: DefaultEnv from dsh's, then env.
func childEnv(env map[string]string) []string {
	vars := map[string]string{}
	for _, k := range DefaultEnv {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range env {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// serve keeps sess until it ends or root is done, re-listing the tools on
// tools/list_changed.
func (s *server) serve(root context.Context, sess *sdk.ClientSession) {
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	for {
		select {
		case err := <-done:
			_ = sess.Close()
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
				err = errors.New("the server closed the connection")
			}
			reason := s.reason(err)
			s.state.Store(&connState{reason: reason})
			s.c.logger.Warn("MCP server disconnected", "server", s.spec.Name, "reason", reason)
			return
		case <-s.relist:
			ctx, cancel := context.WithTimeout(root, s.c.opts.connectTimeout())
			diags, err := s.sync(ctx, sess)
			cancel()
			if err != nil {
				s.c.logger.Warn("MCP server tools not re-listed", "server", s.spec.Name, "error", err)
			}
			s.logDiagnostics(diags)
		case <-s.recatalog:
			ctx, cancel := context.WithTimeout(root, s.c.opts.connectTimeout())
			diags, err := s.syncCatalog(ctx, sess)
			cancel()
			if err != nil {
				s.c.logger.Warn("MCP server resources and prompts not re-listed", "server", s.spec.Name, "error", err)
			}
			s.logDiagnostics(diags)
		case <-root.Done():
			s.state.Store(&connState{reason: "the MCP client is closed"})
			_ = sess.Close()
			<-done
			return
		}
	}
}

func (s *server) logDiagnostics(diags []Diagnostic) {
	for _, d := range diags {
		what := "MCP tool not registered: "
		if d.Kind != "" {
			what = "MCP resources and prompts: "
		}
		s.c.logger.Warn(what+d.Error(), "server", d.Server)
	}
}

// reason words err for a not-connected message, with the last line the
// server wrote to standard error.
func (s *server) reason(err error) string {
	msg := err.Error()
	if line := s.stderr.lastLine(); line != "" {
		msg += " (stderr: " + line + ")"
	}
	return msg
}

// sync lists the server's tools and registers them in one swap, replacing
// what the previous listing registered.
func (s *server) sync(ctx context.Context, sess *sdk.ClientSession) ([]Diagnostic, error) {
	tools, listed, err := s.listTools(ctx, sess)
	if err != nil {
		return nil, err
	}
	type named struct {
		tool string
		def  *engine.Definition
	}
	var defs []named
	// Each tool gets its served name (ToolName); the empty name and the
	// names that collide once mapped are diagnostics, not tools.
	names, diags := servedNames(s.spec.Name, s.spec.prefix(), tools)
	diags = append(listed, diags...)
	for i, t := range tools {
		if names[i] == "" {
			continue
		}
		def, err := s.definition(t, names[i])
		if err != nil {
			diags = append(diags, Diagnostic{Server: s.spec.Name, Tool: t.Name, Reason: err.Error()})
			continue
		}
		defs = append(defs, named{t.Name, def})
	}
	var next *engine.Scope
	_, err = s.c.svc.Swap(func() error {
		if s.scope != nil {
			s.scope.Dispose()
		}
		next = s.c.svc.Global()
		var served []string
		for _, d := range defs {
			if _, err := next.Register(d.def); err != nil {
				diags = append(diags, Diagnostic{Server: s.spec.Name, Tool: d.tool, Reason: err.Error()})
				continue
			}
			served = append(served, d.def.Name)
		}
		s.served.Store(&served)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.scope = next
	return diags, nil
}

// definition is the engine tool of an MCP tool, registered as name and
// calling the server's tool by its own name, or why there is none.
func (s *server) definition(t *sdk.Tool, name string) (*engine.Definition, error) {
	// The input schema is kept whole and checked by schema.go's validator;
	// the output schema is checked as far as the enforced subset goes.
	params, in, err := importSchema(t.InputSchema, true)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	out, declared, err := outputSchemas(t.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	tool := t.Name
	def := &engine.Definition{
		Name:        name,
		Description: t.Description,
		Parameters:  params,
		Output:      engine.Output{Schema: out, Render: render, Declared: declared},
		Timeout:     s.spec.callTimeout(),
		Title:       t.Title,
		Annotations: toolAnnotations(t.Annotations),
		Execute: func(ctx context.Context, args any, _ *engine.Run) (any, error) {
			if vs := in.validate(args); vs != nil {
				return nil, &engine.ArgsError{Violations: vs}
			}
			return s.call(ctx, tool, args)
		},
	}
	def.ValidateArgs = in.validate
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		def.IsConcurrencySafe = func(any) bool { return true }
	}
	return def, nil
}

// schemaValue reads a schema the SDK decoded as a JSON value of dsh's,
// without a root "$schema" (the dialect is not the subset's concern).
func schemaValue(schema any) (any, error) {
	text, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	v, err := dsl.Unmarshal(text)
	if err != nil {
		return nil, err
	}
	if o, ok := v.(*dsl.Object); ok {
		o.Delete("$schema")
	}
	return v, nil
}

// render shows a value a tools/execute wrapper made up: a string as text,
// anything else as its JSON text. The server's own results come rendered.
func render(_, value any) ([]engine.Block, error) {
	if s, ok := value.(string); ok {
		return []engine.Block{engine.Text(s)}, nil
	}
	text, err := dsl.Marshal(value)
	if err != nil {
		return nil, err
	}
	return []engine.Block{engine.Text(string(text))}, nil
}

// relayProgress hands the server's progress on a call to the call's own
// listener (see engine.WithProgress): a client of dsh serve, say, sees the
// progress of the imported tool it called. The SDK client handles
// notifications beside responses, so progress arriving after the call's
// result is dropped.
func (s *server) relayProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if ctx, ok := s.progress.Load(token); ok {
		engine.ReportProgress(ctx.(context.Context), engine.Progress{
			Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message,
		})
	}
}

// call runs the server's tool.
func (s *server) call(ctx context.Context, tool string, args any) (any, error) {
	st := s.state.Load()
	if st.sess == nil {
		return nil, s.notConnected(st.reason)
	}
	raw, err := dsl.Marshal(args)
	if err != nil {
		return nil, err
	}
	params := &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(raw)}
	if engine.HasProgress(ctx) {
		token := "dsh-" + strconv.FormatInt(s.seq.Add(1), 10)
		s.progress.Store(token, ctx)
		defer s.progress.Delete(token)
		params.SetProgressToken(token)
	}
	ctx, done := s.track(ctx) // see client_questions.go
	defer done()
	askLogs(st.sess, params) // see upstream_log.go
	res, err := st.sess.CallTool(ctx, params)
	s.logs.await(ctx) // the log lines sent before the result are the call's
	if err != nil {
		if ctx.Err() != nil {
			return nil, engine.NewError("AbortError", engine.CodeAborted, "tool call aborted")
		}
		if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			reason := s.reason(errors.New("the connection closed during the call"))
			if now := s.state.Load(); now.sess == nil {
				reason = now.reason
			}
			return nil, s.notConnected(reason)
		}
		// The error holds the server's own text: one line, bounded.
		return nil, fmt.Errorf("MCP server %q failed the call: %s", s.spec.Name, display.Line(err.Error(), display.MaxText))
	}
	blocks, err := contentBlocks(res.Content)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, errors.New(failureText(blocks))
	}
	var value any
	switch {
	case res.StructuredContent != nil:
		text, err := json.Marshal(res.StructuredContent)
		if err == nil {
			value, err = dsl.Unmarshal(text)
		}
		if err != nil {
			return nil, fmt.Errorf("MCP server %q returned structured content that is not JSON: %v", s.spec.Name, err)
		}
	case allText(blocks):
		texts := make([]string, len(blocks))
		for i, b := range blocks {
			texts[i], _ = engine.BlockText(b)
		}
		value = strings.Join(texts, "\n")
	default:
		value = engine.ContentJSON(blocks)
	}
	return &engine.Prerendered{Value: value, Content: blocks}, nil
}

func (s *server) notConnected(reason string) error {
	return fmt.Errorf("MCP server %q is not connected: %s", s.spec.Name, reason)
}

// contentBlocks turns MCP content into engine blocks.
func contentBlocks(content []sdk.Content) ([]engine.Block, error) {
	blocks := make([]engine.Block, 0, len(content))
	for _, c := range content {
		if annotated(c) { // kept in its MCP shape (see annotated)
			b, err := rawBlock(c)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
			continue
		}
		switch x := c.(type) {
		case *sdk.TextContent:
			blocks = append(blocks, engine.Text(x.Text))
		case *sdk.ImageContent:
			blocks = append(blocks, ImageBlock(x))
		default:
			text, err := json.Marshal(c)
			var v any
			if err == nil {
				v, err = dsl.Unmarshal(text)
			}
			if err != nil {
				return nil, fmt.Errorf("a content block is not JSON: %v", err)
			}
			blocks = append(blocks, engine.RawBlock{Value: v})
		}
	}
	return blocks, nil
}

// ImageBlock is the engine block of MCP image content: its attachment is
// {mimeType, data}, data in base64 as MCP sends it.
func ImageBlock(c *sdk.ImageContent) engine.ImageBlock {
	text, _ := json.Marshal(c.Data) // a []byte encodes as a base64 string
	var data string
	_ = json.Unmarshal(text, &data)
	return engine.ImageBlock{Attachment: dsl.NewObject(
		dsl.Member{Key: "mimeType", Value: c.MIMEType},
		dsl.Member{Key: "data", Value: data},
	)}
}

func allText(blocks []engine.Block) bool {
	for _, b := range blocks {
		if _, ok := engine.BlockText(b); !ok {
			return false
		}
	}
	return true
}

// failureText is an isError result's message: its blocks as text, less a
// leading "Error: ". The engine writes a failure's content as
// "Error: <message>", and so do dsh serve and many other servers: the
// prefix is theirs, not the message's, and kept it would read twice.
func failureText(blocks []engine.Block) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		if t, ok := engine.BlockText(b); ok {
			parts[i] = t
		} else {
			parts[i] = "[" + b.BlockType() + " content]"
		}
	}
	if msg := strings.TrimPrefix(strings.Join(parts, "\n"), "Error: "); msg != "" {
		return msg
	}
	return "the tool reported an error without a message"
}

// version is dsh's module version, for the MCP handshake.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// tail keeps the end of what a server writes to standard error.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// lastLine is the last non-empty line written, at most 200 bytes of it.
func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}

// headerTransport adds headers to every request it sends through base.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}
