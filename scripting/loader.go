package scripting

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/dsh-go/dsh/engine"
)

// DefaultLoadTimeout bounds a plugin's top level.
const DefaultLoadTimeout = 5 * time.Second

// LoadDeadlineError is the cause of a load's ctx whose deadline passed (see
// [WithLoadDeadline]): a host reports a top level it interrupted then with
// its text, which gives the deadline.
type LoadDeadlineError struct{ Timeout time.Duration }

// Error returns "the top level did not finish within the load deadline (5s)".
func (e *LoadDeadlineError) Error() string {
	return "the top level did not finish within the load deadline (" + e.Timeout.String() + ")"
}

// Unwrap returns context.DeadlineExceeded: the load's deadline passed.
func (e *LoadDeadlineError) Unwrap() error { return context.DeadlineExceeded }

// WithLoadDeadline returns ctx bounded by a top level's load deadline,
// timeout, whose cause is a *LoadDeadlineError when it passes.
func WithLoadDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, &LoadDeadlineError{Timeout: timeout})
}

// LoadInterrupted is the message of a top level a host interrupted under
// ctx, its load's: the load deadline's, which gives its value, when that
// passed; the cause otherwise (the load was cancelled).
func LoadInterrupted(ctx context.Context) string {
	cause := context.Cause(ctx)
	var le *LoadDeadlineError
	switch {
	case errors.As(cause, &le):
		return le.Error()
	case cause != nil:
		return "the top level was interrupted: " + cause.Error()
	}
	return "the top level did not finish within the load deadline"
}

// Host loads the plugins of one language (JavaScript and TypeScript, Lua).
type Host interface {
	// Extensions are the file extensions of the plugins the host loads,
	// such as ".ts".
	Extensions() []string
	// Load evaluates src's top level in fresh interpreter instances and makes
	// its effects through p (they are recorded, and committed by the loader
	// when Load returns nil). ctx carries the load deadline. An error is the
	// plugin's diagnostic: a *Diagnostic keeps its position.
	Load(ctx context.Context, p *Plugin, src Source) error
	// FileRules are the host's rules for its language's files.
	FileRules
}

// Source is one plugin file.
type Source struct {
	Root     string // the scripts directory
	Rel      string // the file, relative to Root, with forward slashes
	Code     []byte
	Revision string // the content hash
}

// Path returns the file's path on disk.
func (s Source) Path() string { return filepath.Join(s.Root, filepath.FromSlash(s.Rel)) }

// Loader loads scripts directories into an engine.
type Loader struct {
	Service     *engine.Service
	Hosts       []Host
	LoadTimeout time.Duration // DefaultLoadTimeout when zero
	Logger      *slog.Logger  // discards when nil
	// Agents maps the agent ids scripts name (tools.scope("worker")) to the
	// engine's agents, the same ones calls run as. Nil: each plugin gets a
	// directory of its own.
	Agents func(id string) *engine.Agent
}

// Loaded is a plugin that loaded: live in the engine until disposed.
type Loaded struct {
	*Plugin
	Source   Source
	LoadedAt time.Time
}

// Revision returns the content hash of the version that loaded.
func (l *Loaded) Revision() string { return l.Source.Revision }

func (l *Loader) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (l *Loader) host(rel string) Host { return hostOf(l.Hosts, rel) }

// LoadDir loads every plugin of the scripts directory root (the file rules of
// [PluginFiles]). Each file that fails gives one diagnostic and leaves nothing
// behind, while the others load. The error is for a root that cannot be read.
func (l *Loader) LoadDir(ctx context.Context, root string) ([]*Loaded, []*Diagnostic, error) {
	files, err := PluginFiles(root, l.Hosts)
	if err != nil {
		return nil, nil, err
	}
	var loaded []*Loaded
	var diags []*Diagnostic
	for _, rel := range files {
		p, err := l.Load(ctx, root, rel)
		if err != nil {
			var d *Diagnostic
			if !errors.As(err, &d) {
				d = &Diagnostic{File: rel, Message: err.Error(), Err: err}
			}
			diags = append(diags, d)
			l.logger().Warn("plugin failed to load", "plugin", rel, "error", d.Error())
			continue
		}
		loaded = append(loaded, p)
	}
	return loaded, diags, nil
}

// Load loads one plugin, rel relative to root: its host evaluates the top
// level under the load deadline, then its effects are committed all
// together. On failure nothing of it stays registered and the error is a
// *Diagnostic.
func (l *Loader) Load(ctx context.Context, root, rel string) (*Loaded, error) {
	p, err := l.Prepare(ctx, root, rel)
	if err != nil {
		return nil, err
	}
	if err := p.Commit(); err != nil {
		_ = p.Dispose(context.Background())
		return nil, asDiagnostic(rel, err)
	}
	l.logger().Info("plugin loaded", "plugin", rel, "revision", p.Source.Revision[:12])
	return p, nil
}

// Prepare reads and evaluates one plugin, rel relative to root (its host's
// top level under the load deadline, in fresh interpreter instances), and
// returns it with its effects recorded but not applied: its Commit applies
// them (inside engine.Service.Swap, for a reload). On error nothing of it
// was registered, its interpreters are closed, and the error is a
// *Diagnostic.
func (l *Loader) Prepare(ctx context.Context, root, rel string) (*Loaded, error) {
	h := l.host(rel)
	if h == nil {
		return nil, &Diagnostic{File: rel, Message: "no script host loads " + filepath.Ext(rel) + " files"}
	}
	code, err := ReadSource(filepath.Join(root, filepath.FromSlash(rel)), 0)
	if err != nil {
		return nil, &Diagnostic{File: rel, Message: err.Error(), Err: err}
	}
	sum := sha256.Sum256(code)
	src := Source{Root: root, Rel: rel, Code: code, Revision: hex.EncodeToString(sum[:])}
	p := NewPlugin(l.Service, rel, l.Agents)
	timeout := l.LoadTimeout
	if timeout <= 0 {
		timeout = DefaultLoadTimeout
	}
	lctx, cancel := WithLoadDeadline(ctx, timeout)
	err = h.Load(lctx, p, src)
	cancel()
	if err != nil {
		_ = p.Dispose(context.Background())
		return nil, asDiagnostic(rel, err)
	}
	return &Loaded{Plugin: p, Source: src, LoadedAt: time.Now()}, nil
}

// asDiagnostic locates err in the file rel.
func asDiagnostic(rel string, err error) *Diagnostic {
	var d *Diagnostic
	if errors.As(err, &d) {
		if d.File == "" {
			d.File = rel
		}
		return d
	}
	return &Diagnostic{File: rel, Message: err.Error(), Err: err}
}

// DisposeAll disposes plugins, each waiting for its in-flight calls until
// ctx is done; it returns the first error.
func DisposeAll(ctx context.Context, plugins []*Loaded) error {
	var first error
	for _, p := range plugins {
		if err := p.Dispose(ctx); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", p.Source.Rel, err)
		}
	}
	return first
}
