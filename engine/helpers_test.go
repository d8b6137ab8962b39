package engine_test

// Shared helpers of the conformance suite (registry_test.go, pipeline_test.go,
// cancel_test.go, policy_test.go). They check the engine against the
// pipeline spec through the exported API only. Every helper
// here is prefixed "cf" so it cannot clash with the other test files of
// package engine_test.
//
// Not applicable in Go (skipped on purpose, §6 numbering):
//   - 34, 36, 102 (first clause), 132, 133: defineTool, written and tested
//     elsewhere (define_test.go).
//   - 90 (first clause "getter read once"), 95: an arguments *getter* has no Go
//     equivalent: Input.Arguments is a plain field, and dsl.Snapshot never runs
//     caller code, so a snapshot cannot "throw". The rest of 90 is covered.
//   - 102 (truthy 'yes'): IsConcurrencySafe returns a Go bool, so a truthy
//     non-boolean cannot be returned.
//   - 7 (timeoutMs 0 / Infinity / NaN): Definition.Timeout is a time.Duration
//     whose zero value means "absent" and which has no Infinity or NaN; the
//     negative value is the only invalid timeout expressible (tested).
//   - §1.9 "value snapshot failed: <msg>", "{message:'x'} object → x": getters
//     and plain JS objects thrown do not exist in Go. The Go thrown values
//     (error, string, Stringer, other values, a value whose printing panics)
//     are tested instead.
//   - "exec frozen", "result frozen" (58, 90, 93, 97): Go has no freezing. The Go
//     equivalents asserted instead: arguments are a detached snapshot
//     (mutating the caller's value after the call started changes nothing the
//     pipeline saw), and the final result is the very pointer observers got,
//     detached from the candidates listeners saw.
//   - "signal is the caller's" on the execution (90, 93): Execution carries no
//     context; where a ctx is handed out (approval, post-execute, body) its
//     identity is asserted instead (62, 76, 77, 88).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// cfObj builds an ordered JSON object from key, value pairs.
func cfObj(kv ...any) *dsl.Object {
	if len(kv)%2 != 0 {
		panic("cfObj: odd number of arguments")
	}
	o := dsl.NewObject()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// cfStringSchema is {type: "string"}.
func cfStringSchema() *dsl.Object { return cfObj("type", "string") }

// cfTextParams is {type: object, properties: {text: {type: string}}}.
func cfTextParams() *dsl.Object {
	return cfObj("type", "object", "properties", cfObj("text", cfObj("type", "string")))
}

// cfRenderString renders a string value as one text block.
func cfRenderString(_, value any) ([]engine.Block, error) {
	s, _ := value.(string)
	return []engine.Block{engine.Text(s)}, nil
}

// cfArg reads one argument of a snapshotted arguments object.
func cfArg(args any, key string) (any, bool) {
	o, ok := args.(*dsl.Object)
	if !ok {
		return nil, false
	}
	return o.Get(key)
}

// cfEchoDef is the design's echo tool: string parameter text, string output
// rendered as one text block, body returning text ("" when absent).
func cfEchoDef(name string) *engine.Definition {
	return &engine.Definition{
		Name:        name,
		Description: "echo arguments back",
		Parameters:  cfTextParams(),
		Output:      engine.Output{Schema: cfStringSchema(), Render: cfRenderString},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			if v, ok := cfArg(args, "text"); ok {
				return v, nil
			}
			return "", nil
		},
	}
}

// cfTool is an echo-shaped tool (string output) with its own body.
func cfTool(name string, body func(ctx context.Context, args any, run *engine.Run) (any, error)) *engine.Definition {
	d := cfEchoDef(name)
	d.Execute = body
	return d
}

// cfConst is a string tool whose body returns v.
func cfConst(name string, v any) *engine.Definition {
	return cfTool(name, func(context.Context, any, *engine.Run) (any, error) { return v, nil })
}

// cfMustRegister registers def through sc or fails the test.
func cfMustRegister(t *testing.T, sc *engine.Scope, def *engine.Definition, opts ...engine.RegisterOption) engine.Disposer {
	t.Helper()
	d, err := sc.Register(def, opts...)
	if err != nil {
		t.Fatalf("register %q: %v", def.Name, err)
	}
	return d
}

// cfMustRestrict restricts sc or fails the test.
func cfMustRestrict(t *testing.T, sc *engine.Scope, f engine.Filter) engine.Disposer {
	t.Helper()
	d, err := sc.Restrict(f)
	if err != nil {
		t.Fatalf("restrict %+v: %v", f, err)
	}
	return d
}

// cfIn is a model-direct call input.
func cfIn(id, name string, args any) engine.Input {
	return engine.Input{CallID: id, Name: name, Arguments: args}
}

// cfCall runs one agent-less call with a live context.
func cfCall(svc *engine.Service, name string, args any) *engine.Result {
	return svc.Call(context.Background(), cfIn("c1", name, args))
}

// cfCallAs runs one call as agent with a live context.
func cfCallAs(svc *engine.Service, agent *engine.Agent, name string, args any) *engine.Result {
	in := cfIn("c1", name, args)
	in.Agent = agent
	return svc.Call(context.Background(), in)
}

// cfJSON is the canonical JSON text of v.
func cfJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// cfResultJSON is the canonical JSON text of a result's design shape.
func cfResultJSON(t *testing.T, r *engine.Result) string {
	t.Helper()
	if r == nil {
		t.Fatal("nil result")
	}
	return cfJSON(t, r.JSON())
}

// cfExpect compares a result's JSON text with want, exactly.
func cfExpect(t *testing.T, r *engine.Result, want string) {
	t.Helper()
	if got := cfResultJSON(t, r); got != want {
		t.Errorf("result mismatch\n got: %s\nwant: %s", got, want)
	}
}

// cfFail is the JSON text of a registry-synthesized un-coded failure:
// {isError: true, error: {message}, content: [text "Error: "+message]}.
func cfFail(t *testing.T, message string) string {
	t.Helper()
	return cfJSON(t, cfObj("isError", true, "error", cfObj("message", message),
		"content", []any{cfObj("type", "text", "text", "Error: "+message)}))
}

// cfCoded is the JSON text of a registry-synthesized coded failure.
func cfCoded(t *testing.T, message, name, code string) string {
	t.Helper()
	return cfJSON(t, cfObj("isError", true,
		"error", cfObj("message", message, "info", cfObj("name", name, "code", code)),
		"content", []any{cfObj("type", "text", "text", "Error: "+message)}))
}

// The canonical cancellation results (§1.9).
func cfAbortedBefore(t *testing.T) string {
	return cfCoded(t, "tool call aborted before dispatch", "AbortError", "ABORTED_BEFORE_DISPATCH")
}

func cfAborted(t *testing.T) string {
	return cfCoded(t, "tool call aborted", "AbortError", "ABORTED")
}

// cfFirstText is the text of a result's first content block ("" if none).
func cfFirstText(r *engine.Result) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tb, ok := r.Content[0].(engine.TextBlock); ok {
		return tb.Text
	}
	return ""
}

// cfInfo returns a failure's name and code ("" when absent).
func cfInfo(r *engine.Result) (name, code string) {
	if r == nil || r.Error == nil || r.Error.Info == nil {
		return "", ""
	}
	return r.Error.Info.Name, r.Error.Info.Code
}

// cfExpectCode checks that r is a failure with the given info name and code.
func cfExpectCode(t *testing.T, r *engine.Result, name, code string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want a failure, got %s", cfResultJSON(t, r))
	}
	if n, c := cfInfo(r); n != name || c != code {
		t.Errorf("info = {%q, %q}, want {%q, %q}; result %s", n, c, name, code, cfResultJSON(t, r))
	}
}

// cfExpectNoValueKey checks that the JSON form has no value key.
func cfExpectNoValueKey(t *testing.T, r *engine.Result) {
	t.Helper()
	if r.JSON().Has("value") {
		t.Errorf("result has a value key: %s", cfResultJSON(t, r))
	}
}

// cfMsg is a user message from a plugin source.
func cfMsg(text, plugin string) engine.Message {
	return engine.NewUserMessage([]engine.Block{engine.Text(text)}, cfObj("kind", "plugin", "plugin", plugin))
}

// cfSources lists the plugin names of a result's contexts.
func cfSources(r *engine.Result) []string {
	var out []string
	for _, m := range r.AdditionalContexts {
		if o, ok := m.Source.(*dsl.Object); ok {
			if p, ok := o.Get("plugin"); ok {
				out = append(out, fmt.Sprint(p))
				continue
			}
		}
		out = append(out, fmt.Sprint(m.Source))
	}
	return out
}

// cfBoom is the design's HarnessError used by tests.
func cfBoom() error { return engine.NewError("HarnessError", "BOOM", "kaboom") }

// cfModes are the two Go forms of "throwing": returning an error and panicking.
// Both must behave the same.
var cfModes = []string{"returns an error", "panics"}

// cfRaise returns err or panics with it, by mode.
func cfRaise(mode string, err error) error {
	if mode == "panics" {
		panic(err)
	}
	return err
}

// cfCounter counts calls, race-free.
type cfCounter struct{ n atomic.Int64 }

func (c *cfCounter) inc()       { c.n.Add(1) }
func (c *cfCounter) get() int64 { return c.n.Load() }

// cfTrace records labels in order, race-free.
type cfTrace struct {
	mu    sync.Mutex
	items []string
}

func (tr *cfTrace) add(s string) {
	tr.mu.Lock()
	tr.items = append(tr.items, s)
	tr.mu.Unlock()
}

func (tr *cfTrace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.items...)
}

func (tr *cfTrace) String() string { return strings.Join(tr.get(), ",") }

// cfGate lets a test hold code at a point: the code calls wait, which signals
// entered and blocks until the test calls open.
type cfGate struct {
	entered  chan struct{}
	released chan struct{}
	once     sync.Once
}

func cfNewGate() *cfGate {
	return &cfGate{entered: make(chan struct{}), released: make(chan struct{})}
}

func (g *cfGate) wait() {
	g.once.Do(func() { close(g.entered) })
	<-g.released
}

func (g *cfGate) open() { close(g.released) }

// awaitEntered blocks until the held code reached the gate (bounded so a bug
// fails the test instead of hanging it).
func (g *cfGate) awaitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the gated code was never reached")
	}
}

// cfAsync runs f in a goroutine and returns its result on a channel.
func cfAsync(f func() *engine.Result) <-chan *engine.Result {
	ch := make(chan *engine.Result, 1)
	go func() { ch <- f() }()
	return ch
}

// cfAwait receives a result (bounded).
func cfAwait(t *testing.T, ch <-chan *engine.Result) *engine.Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the call never returned")
		return nil
	}
}

// cfLog captures what the engine logs.
type cfLog struct {
	mu   sync.Mutex
	recs []cfLogRecord
}

type cfLogRecord struct {
	Level slog.Level
	Msg   string
}

func (h *cfLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *cfLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, cfLogRecord{r.Level, r.Message})
	h.mu.Unlock()
	return nil
}

func (h *cfLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *cfLog) WithGroup(string) slog.Handler      { return h }

func (h *cfLog) records() []cfLogRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]cfLogRecord(nil), h.recs...)
}

// cfNewLogged returns an engine whose log is captured.
func cfNewLogged(opts ...engine.Option) (*engine.Service, *cfLog) {
	h := &cfLog{}
	return engine.New(append([]engine.Option{engine.WithLogger(slog.New(h))}, opts...)...), h
}

// cfPTC is a stand-in for the PTC executor: it provides the run_code transport
// and, not being Direct, collapses its scopes' surface to it (§2.8).
type cfPTC struct{ transport *engine.Definition }

func cfNewPTC() *cfPTC { return &cfPTC{transport: cfConst(engine.TransportName, "ran")} }

func (p *cfPTC) Describe([]*engine.Definition) (engine.Description, error) {
	return engine.Description{Names: []string{engine.TransportName}}, nil
}

func (p *cfPTC) Execute(context.Context, engine.Batch) (*engine.BatchResult, error) {
	return nil, errors.New("cfPTC: Execute is not used by these tests")
}

func (p *cfPTC) Transport() *engine.Definition { return p.transport }
func (p *cfPTC) Direct() bool                  { return false }

// cfNames lists the names of schemas.
func cfNames(t *testing.T, sc *engine.Scope) []string {
	t.Helper()
	ss, err := sc.Schemas()
	if err != nil {
		t.Fatalf("schemas: %v", err)
	}
	out := []string{}
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// cfExpectNames compares a scope's schema names with want, in order.
func cfExpectNames(t *testing.T, sc *engine.Scope, want ...string) {
	t.Helper()
	got := cfNames(t, sc)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("schemas names = %q, want %q", got, want)
	}
}

// cfExpectErr checks that err is non-nil with exactly message want.
func cfExpectErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %q, got nil", want)
	}
	if err.Error() != want {
		t.Errorf("error\n got: %s\nwant: %s", err.Error(), want)
	}
}
