package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/tracelog"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
)

// disposeTimeout bounds how long closing a session waits for plugins'
// in-flight calls.
const disposeTimeout = 5 * time.Second

// session is the engine as the global flags configure it, with the plugins
// of the scripts directories loaded.
type session struct {
	opts    *options
	svc     *engine.Service
	agents  *scripting.Agents
	agent   *engine.Agent // the --agent, nil with --no-agent
	logger  *slog.Logger
	langs   []language
	loader  *scripting.Loader
	answers *lineReader
	plugins []*scripting.Loaded
	diags   []diagnostic
	scopes  map[*engine.Agent]*engine.Scope
	runtime ptc.Runtime            // run_code's, under a PTC executor
	memory  *scripting.MemoryGuard // --memory-limit's, shared by plugins and programs
	mcp     *mcp.Client            // the imported MCP servers (--mcp, --mcp-config)
	prompt  *promptApproval        // --approve prompt's, which asks tools' questions too (elicit.go)
	// imported are the MCP servers reached, with the tools they registered.
	imported []importedServer
}

// diagnostic is a plugin that failed to load, named by its path as the
// user gave its scripts directory.
type diagnostic struct {
	path string
	d    *scripting.Diagnostic
}

// String renders "file:line:col: message".
func (d diagnostic) String() string {
	c := *d.d
	c.File = d.path
	return c.Error()
}

// newSession builds the engine for a command: the native executor with
// --max-parallel, the timeout policy, the --approve service, the agents of
// --agent and --agent-parent, and the script hosts with the capability
// modules for --workspace and --http-allow. It loads no plugins (see
// loadAll). Malformed flag values are usage errors; a workspace that is
// not a directory is a problem the user must fix.
func newSession(o *options) (*session, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	var handler slog.Handler = slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: level})
	if o.telemetry.tracerProvider() != nil {
		handler = tracelog.Handler(handler) // script log lines carry their call's trace_id and span_id
	}
	if o.logHandler != nil {
		handler = o.logHandler(handler)
	}
	logger := slog.New(handler)

	agents := scripting.NewAgents()
	for _, p := range o.agentParent {
		child, parent, _ := splitAgentParent(p) // checked above
		agents.SetParent(child, parent)
	}
	s := &session{opts: o, agents: agents, logger: logger, scopes: map[*engine.Agent]*engine.Scope{}}
	if !o.noAgent {
		s.agent = agents.Agent(o.agent)
	}

	engineOpts := []engine.Option{engine.WithLogger(logger)}
	if tp := o.telemetry.tracerProvider(); tp != nil {
		engineOpts = append(engineOpts, engine.WithTracerProvider(tp), engine.WithContentCapture(o.telemetry.capture))
	}
	if mp := o.telemetry.meterProvider(); mp != nil {
		engineOpts = append(engineOpts, engine.WithMeterProvider(mp))
	}
	s.answers = newLineReader(o.stdin)
	a := o.approval // serve's elicitation, when it replaces the prompt
	if a == nil {
		a = approvalService(o.approveMode(), s.answers, o.approvalTimeout, o.stderr)
	}
	if a != nil {
		engineOpts = append(engineOpts, engine.WithApproval(a))
	}
	s.prompt, _ = a.(*promptApproval)
	s.svc = engine.New(engineOpts...)
	s.memory = o.memoryGuard(logger)
	if err := s.setExecutor(); err != nil {
		return nil, err
	}
	// Named in its stage span (dsh.plugin), as no plugin file can be.
	s.svc.Global().OnExecute(engine.TimeoutPolicy(), engine.Source("dsh:timeout"))

	if err := o.checkWorkspace(); err != nil {
		return nil, err
	}
	modules, err := capability.Modules(capability.Config{Workspace: o.workspace, HTTPAllow: o.httpAllow})
	if err != nil {
		var ae *capability.AllowListError
		if errors.As(err, &ae) {
			return nil, fmt.Errorf("--http-allow: %v", err) // a malformed flag value: usage
		}
		return nil, userErrorf("%v", err)
	}
	s.langs = languages(logger, modules, s.memory)
	loaderLogger := slog.New(slog.DiscardHandler) // failures are reported as diagnostics
	if o.verbose {
		loaderLogger = logger
	}
	s.loader = &scripting.Loader{Service: s.svc, Hosts: hostsOf(s.langs), Logger: loaderLogger, Agents: agents.Agent}
	return s, nil
}

// checkWorkspace reports a --workspace that is not a directory.
func (o *options) checkWorkspace() error {
	if o.workspace == "" {
		return nil
	}
	fi, err := os.Stat(o.workspace)
	if err != nil {
		return userErrorf("--workspace %s: %v", o.workspace, pathErr(err))
	}
	if !fi.IsDir() {
		return userErrorf("--workspace %s: not a directory", o.workspace)
	}
	return nil
}

// scriptDirs are the scripts directories to load: --scripts, or ./scripts
// when it exists.
func (o *options) scriptDirs() ([]string, error) {
	if len(o.scripts) > 0 {
		for _, dir := range o.scripts {
			fi, err := os.Stat(dir)
			if err != nil {
				return nil, userErrorf("--scripts %s: %v", dir, pathErr(err))
			}
			if !fi.IsDir() {
				return nil, userErrorf("--scripts %s: not a directory", dir)
			}
		}
		return o.scripts, nil
	}
	if fi, err := os.Stat(defaultScripts); err == nil && fi.IsDir() {
		return []string{defaultScripts}, nil
	}
	return nil, nil
}

// pathErr drops the path from a *fs.PathError, for messages that name the
// path themselves.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadedPlugin is one plugin that loaded, with the tools its commit
// registered.
type loadedPlugin struct {
	path    string
	plugin  *scripting.Loaded
	changes []engine.Change
}

// loadAll loads every plugin of the scripts directories. A plugin that
// fails is a diagnostic, kept in s.diags; the others load. It returns the
// plugins that loaded, each with the registrations it made (tools/change
// events heard while its commit ran).
// Then it imports the MCP servers of --mcp and --mcp-config (connectMCP).
func (s *session) loadAll(ctx context.Context) ([]loadedPlugin, error) {
	loaded, err := s.loadPlugins(ctx)
	if err != nil {
		return loaded, err
	}
	return loaded, s.connectMCP(ctx)
}

// loadPlugins is loadAll without the MCP servers.
func (s *session) loadPlugins(ctx context.Context) ([]loadedPlugin, error) {
	dirs, err := s.opts.scriptDirs()
	if err != nil {
		return nil, err
	}
	var pending []engine.Change
	stop := s.svc.Global().OnChange(func(c engine.Change) error {
		pending = append(pending, c)
		return nil
	})
	defer stop()
	var loaded []loadedPlugin
	for _, dir := range dirs {
		files, err := scripting.PluginFiles(dir, s.loader.Hosts)
		if err != nil {
			return loaded, userErrorf("--scripts %s: %v", dir, pathErr(err))
		}
		for _, rel := range files {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			pending = nil
			p, err := s.loader.Load(ctx, dir, rel)
			if err != nil {
				var d *scripting.Diagnostic
				if !errors.As(err, &d) {
					d = &scripting.Diagnostic{File: rel, Message: err.Error(), Err: err}
				}
				s.diags = append(s.diags, diagnostic{path: path, d: d})
				continue
			}
			s.plugins = append(s.plugins, p)
			loaded = append(loaded, loadedPlugin{path: path, plugin: p, changes: pending})
		}
	}
	return loaded, nil
}

// printDiagnostics writes every diagnostic, one "file:line:col: message"
// line each.
func (s *session) printDiagnostics(w io.Writer) {
	for _, d := range s.diags {
		fmt.Fprintln(w, d.String())
	}
}

// scope returns a scope of agent's layer for reading (nil: the global
// layer); the session keeps one per agent.
func (s *session) scope(agent *engine.Agent) *engine.Scope {
	sc := s.scopes[agent]
	if sc == nil {
		sc = s.svc.Scope(agent)
		s.scopes[agent] = sc
	}
	return sc
}

// close disposes the plugins, waiting a bounded time for their calls, and
// stops the prompt's reader.
func (s *session) close() {
	ctx, cancel := context.WithTimeout(context.Background(), disposeTimeout)
	defer cancel()
	s.closeMCP()
	if err := scripting.DisposeAll(ctx, s.plugins); err != nil {
		s.logger.Warn("disposing plugins", "error", err)
	}
	s.answers.close()
	if s.runtime != nil {
		_ = s.runtime.Close()
	}
}
