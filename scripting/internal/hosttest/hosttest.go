// Package hosttest is the test harness both script hosts share, in the
// spirit of k6's modulestest: it loads plugin sources written in JavaScript
// or Lua into a real engine.Service with a real host, runs calls, and gives
// tests host modules that misbehave on purpose. Test tables written once
// against [Lang] run for both languages: a case holds its plugin as a
// [Source] (the JavaScript and the Lua text) and one expected outcome.
//
// The package's own tests are those tables, for what both hosts must do the
// same: the outcome table of the pipeline spec's §3.8, class A of issue 12 (an
// interrupted instance), nesting and fan-out bounds, the memory limit,
// instances, and the load deadline. A row written in one language only (an
// alternative JavaScript spelling, say) runs in that language. A host's own
// package keeps the tests of its API and of its internals.
package hosttest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// Config is what the harness sets on a host, its loader and its engine.
//
// The defaults suit a test that is not about a deadline: the listener and
// load deadlines are generous, so that a loaded machine (or the race
// detector) never runs into them, and the grace is short, so that a script
// that ignores its signal is interrupted soon; it is scaled by the tests'
// time scale (internal/testtime). A test about a deadline sets it, scaled.
type Config struct {
	ListenerTimeout time.Duration // 10s when zero
	Grace           time.Duration // testtime.D(20ms) when zero
	Modules         []scripting.Module
	Logger          *slog.Logger
	Memory          *scripting.MemoryGuard // none when nil
	LoadTimeout     time.Duration          // the loader's, 30s when zero
	// Bare loads without the engine's timeout policy, so that a call has
	// no deadline unless a script gives it one.
	Bare bool
}

func (c Config) withDefaults() Config {
	if c.ListenerTimeout == 0 {
		c.ListenerTimeout = 10 * time.Second
	}
	if c.Grace == 0 {
		c.Grace = testtime.D(20 * time.Millisecond)
	}
	if c.LoadTimeout == 0 {
		c.LoadTimeout = 30 * time.Second
	}
	return c
}

// Lang is a script language under test.
type Lang struct {
	Name string // "js", "lua"
	Ext  string // the extension of its plugin files
	// NewHost makes its host.
	NewHost func(Config) scripting.Host
}

// JS is JavaScript on goja.
var JS = Lang{Name: "js", Ext: ".js", NewHost: func(c Config) scripting.Host {
	return &js.Host{ListenerTimeout: c.ListenerTimeout, Grace: c.Grace, Modules: c.Modules, Logger: c.Logger, Memory: c.Memory}
}}

// Lua is Lua on gopher-lua.
var Lua = Lang{Name: "lua", Ext: ".lua", NewHost: func(c Config) scripting.Host {
	return &lua.Host{ListenerTimeout: c.ListenerTimeout, Grace: c.Grace, Modules: c.Modules, Logger: c.Logger, Memory: c.Memory}
}}

// Langs returns every language.
func Langs() []Lang { return []Lang{JS, Lua} }

// File is base with the extension of lang's plugin files.
func (l Lang) File(base string) string { return base + l.Ext }

// Source is one plugin (or one script snippet) written in each language, so
// that a table case holds both and one expected outcome.
type Source struct{ JS, Lua string }

// In returns the source written in lang.
func (s Source) In(lang Lang) string {
	if lang.Name == Lua.Name {
		return s.Lua
	}
	return s.JS
}

// Env is an engine with a scripts directory loaded by one host.
type Env struct {
	Service *engine.Service
	Loaded  []*scripting.Loaded
	Diags   []*scripting.Diagnostic
	Agents  *scripting.Agents
	Root    string // the scripts directory
}

// WriteFiles writes files (relative path → text) into a fresh temporary
// directory and returns it.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// LoadPlugins loads files (name: source) as the plugins of a fresh
// directory into svc through host, under ctx; it fails the test on an error
// or a diagnostic, and disposes of the plugins when the test ends.
func LoadPlugins(t testing.TB, ctx context.Context, svc *engine.Service, host scripting.Host, files map[string]string) {
	t.Helper()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{host}, Agents: scripting.NewAgents().Agent}
	loaded, diags, err := l.LoadDir(ctx, WriteFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := scripting.DisposeAll(context.Background(), loaded); err != nil {
			t.Error(err)
		}
	})
	for _, d := range diags {
		t.Fatal(d)
	}
}

// Load loads files with lang's host into a fresh engine (with the engine's
// timeout policy unless cfg.Bare); the plugins are disposed when the test
// ends. A service option (setup) runs before loading.
func Load(t testing.TB, lang Lang, cfg Config, files map[string]string, setup ...func(*engine.Service)) *Env {
	t.Helper()
	cfg = cfg.withDefaults()
	return LoadDir(t, lang.NewHost(cfg), cfg, WriteFiles(t, files), setup...)
}

// LoadDir is Load for a host made by the caller (tests of one host tune
// fields the harness does not know, in setup) and an existing scripts
// directory. Of cfg only Bare and LoadTimeout apply.
func LoadDir(t testing.TB, host scripting.Host, cfg Config, root string, setup ...func(*engine.Service)) *Env {
	t.Helper()
	cfg = cfg.withDefaults()
	svc := engine.New()
	if !cfg.Bare {
		svc.Global().OnExecute(engine.TimeoutPolicy())
	}
	for _, f := range setup {
		f(svc)
	}
	agents := scripting.NewAgents()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{host}, Agents: agents.Agent, LoadTimeout: cfg.LoadTimeout}
	loaded, diags, err := l.LoadDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Service: svc, Loaded: loaded, Diags: diags, Agents: agents, Root: root}
	t.Cleanup(func() {
		if err := scripting.DisposeAll(context.Background(), e.Loaded); err != nil {
			t.Error(err)
		}
	})
	return e
}

// Diagnostics returns the load diagnostics as text.
func (e *Env) Diagnostics() []string {
	var out []string
	for _, d := range e.Diags {
		out = append(out, d.Error())
	}
	return out
}

// NoDiagnostics fails the test when a plugin did not load.
func (e *Env) NoDiagnostics(t testing.TB) {
	t.Helper()
	if len(e.Diags) > 0 {
		t.Fatalf("diagnostics: %q", e.Diagnostics())
	}
}

// Call runs one call of the tool name; args nil means {}.
func (e *Env) Call(ctx context.Context, name string, args any) *engine.Result {
	if args == nil {
		args = dsl.NewObject()
	}
	return e.Service.Call(ctx, engine.Input{CallID: "c1", Name: name, Arguments: args})
}

// CallJSON is Call returning the result's JSON text.
func (e *Env) CallJSON(t testing.TB, ctx context.Context, name string, args any) string {
	t.Helper()
	return JSON(t, e.Call(ctx, name, args).JSON())
}

// JSON marshals a JSON value.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Args parses JSON text into arguments.
func Args(t testing.TB, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Stall is a host module, "stall", whose function sleep(ms) sleeps ignoring
// its context, as a misbehaving Go host function would: a script that calls
// it is stuck in Go code until it returns. JavaScript awaits it (the work
// runs off the loop); with Sync, or in Lua, it blocks the interpreter's own
// goroutine. Wait waits until every sleep has returned, so that goroutine
// leak checks pass.
type Stall struct {
	Sync bool

	mu      sync.Mutex
	running int
	idle    *sync.Cond
}

// Module returns the module.
func (s *Stall) Module() scripting.Module {
	return scripting.Module{Name: "stall", Sync: s.Sync, Funcs: map[string]scripting.ModuleFunc{
		"sleep": func(_ context.Context, args []any) (any, error) {
			s.mu.Lock()
			s.running++
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				s.running--
				s.cond().Broadcast()
				s.mu.Unlock()
			}()
			ms := 0.0
			if len(args) > 0 {
				ms, _ = args[0].(float64)
			}
			time.Sleep(time.Duration(ms * float64(time.Millisecond)))
			return "slept", nil
		},
	}}
}

// cond is called with s.mu held.
func (s *Stall) cond() *sync.Cond {
	if s.idle == nil {
		s.idle = sync.NewCond(&s.mu)
	}
	return s.idle
}

// Running returns how many sleeps are under way.
func (s *Stall) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Wait waits until no sleep is under way.
func (s *Stall) Wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.running > 0 {
		s.cond().Wait()
	}
}

// CallWithin is CallJSON that fails the test at once if the call has not
// returned within d (its goroutine is left behind then).
func (e *Env) CallWithin(t testing.TB, d time.Duration, name string, args any) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b, err := dsl.Marshal(e.Call(context.Background(), name, args).JSON())
		if err != nil {
			b = []byte(err.Error())
		}
		got <- string(b)
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(d):
		t.Fatalf("the call has not returned after %v", d)
		return ""
	}
}

// Bench is a benchmark's loop: it fails when the plugins did not load or a
// first call of in fails, then runs in b.N times, reporting allocations.
func (e *Env) Bench(b *testing.B, in engine.Input) {
	b.Helper()
	e.NoDiagnostics(b)
	ctx := context.Background()
	if r := e.Service.Call(ctx, in); r.IsError {
		b.Fatal(r.Error.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.Service.Call(ctx, in); r.IsError {
			b.Fatal(r.Error.Message)
		}
	}
}

// Failure is the exact JSON of a failed call's result whose content is
// "Error: "+message; info is the error's info as JSON, or "" for none.
func Failure(message, info string) string {
	m, _ := dsl.Marshal(message)
	c, _ := dsl.Marshal("Error: " + message)
	e := `{"message":` + string(m)
	if info != "" {
		e += `,"info":` + info
	}
	return `{"isError":true,"error":` + e + `},"content":[{"type":"text","text":` + string(c) + `}]}`
}

// Info is the JSON of an error's info.
func Info(name, code string) string { return `{"name":"` + name + `","code":"` + code + `"}` }

// Want fails the test, going on, when got is not want.
func Want(t testing.TB, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
