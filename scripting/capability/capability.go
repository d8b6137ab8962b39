package capability

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dsh-go/dsh/scripting"
)

// Defaults of [Config]'s limits.
const (
	DefaultMaxReadBytes   = 10 << 20
	DefaultMaxWriteBytes  = 10 << 20
	DefaultMaxOutputBytes = 1 << 20
	DefaultMaxBodyBytes   = 5 << 20
	DefaultMaxRedirects   = 5
	DefaultKillGrace      = 2 * time.Second
	DefaultMaxGlob        = 1000
)

// Config is the operator's settings for the capability modules. Zero fields
// take their defaults.
type Config struct {
	// Workspace is the root of dsh/fs and of process working directories;
	// "" is the current directory. It is made absolute and its symlinks
	// are resolved once, by Modules.
	Workspace string
	// HTTPAllow lists the hosts fetch may reach: "example.com",
	// "example.com:8080", "*.example.com" (subdomains), IP addresses. Empty
	// allows loopback only (127.0.0.0/8, ::1, "localhost").
	HTTPAllow []string
	// MaxReadBytes caps what readFile returns (default 10 MiB).
	MaxReadBytes int64
	// MaxWriteBytes caps what writeFile writes (default 10 MiB).
	MaxWriteBytes int64
	// MaxOutputBytes caps each output stream process.run keeps (default
	// 1 MiB); the rest is counted, not kept.
	MaxOutputBytes int64
	// MaxBodyBytes caps the response body fetch reads (default 5 MiB).
	MaxBodyBytes int64
	// MaxRedirects is how many redirects fetch follows (default 5).
	MaxRedirects int
	// KillGrace is how long process.run waits after TERM before KILL
	// (default 2 s).
	KillGrace time.Duration
	// MaxGlob caps glob's results and readDir's entries (default 1000).
	MaxGlob int
}

func (c Config) withDefaults() Config {
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = DefaultMaxReadBytes
	}
	if c.MaxWriteBytes <= 0 {
		c.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.MaxGlob <= 0 {
		c.MaxGlob = DefaultMaxGlob
	}
	return c
}

// Modules returns the capability modules fs, process, http and path for
// cfg. It fails when the workspace is not a directory or an allow-list
// entry is malformed.
func Modules(cfg Config) ([]scripting.Module, error) {
	cfg = cfg.withDefaults()
	ws, err := newWorkspace(cfg.Workspace)
	if err != nil {
		return nil, err
	}
	allow, err := parseAllowList(cfg.HTTPAllow)
	if err != nil {
		return nil, err
	}
	f := &fsModule{ws: ws, cfg: cfg}
	p := &processModule{ws: ws, cfg: cfg}
	h := &httpModule{allow: allow, cfg: cfg}
	pm := &pathModule{ws: ws}
	return []scripting.Module{f.module(), p.module(), h.module(), pm.module()}, nil
}

// workspace is the resolved root every path is relative to.
type workspace struct {
	real string // absolute, symlinks resolved
	abs  string // absolute as configured (may differ from real through symlinks)
}

func newWorkspace(dir string) (*workspace, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("capability: workspace: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("capability: workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("capability: workspace: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("capability: workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("capability: workspace: %s is not a directory", dir)
	}
	return &workspace{real: real, abs: abs}, nil
}

// open opens the workspace root for one operation.
func (w *workspace) open() (*os.Root, error) {
	r, err := os.OpenRoot(w.real)
	if err != nil {
		return nil, newError(EIO, "cannot open the workspace: %v", err)
	}
	return r, nil
}

// Error is a capability module's failure: a coded error whose message
// starts with its code, e.g. "ENOENT: no such file or directory: a.txt".
// It satisfies engine.CodedError, so scripts see .name "Error", .code and
// .message.
type Error struct {
	Errno   string // the code, e.g. "ENOENT"
	Message string
	Err     error // the underlying error, if any
}

func (e *Error) Error() string { return e.Message }

// Name returns "Error".
func (e *Error) Name() string { return "Error" }

// Code returns the error's code, e.g. "ENOENT".
func (e *Error) Code() string { return e.Errno }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// The codes of capability errors.
const (
	ENOENT      = "ENOENT"      // no such file or directory
	EEXIST      = "EEXIST"      // the file already exists
	ENOTDIR     = "ENOTDIR"     // a path component is not a directory
	EISDIR      = "EISDIR"      // the path is a directory
	ENOTEMPTY   = "ENOTEMPTY"   // the directory is not empty
	EACCES      = "EACCES"      // permission denied
	ELOOP       = "ELOOP"       // too many symbolic links
	EIO         = "EIO"         // another I/O failure
	EOUTSIDE    = "EOUTSIDE"    // the path resolves outside the workspace
	ETOOBIG     = "ETOOBIG"     // over a size cap
	ETIMEDOUT   = "ETIMEDOUT"   // the operation's timeout passed
	ECANCELED   = "ECANCELED"   // the call was cancelled
	EINVAL      = "EINVAL"      // a bad argument
	EBINARY     = "EBINARY"     // utf8 read of data that is not UTF-8
	EHOSTDENIED = "EHOSTDENIED" // the host is not on the allow-list
	EREDIRECT   = "EREDIRECT"   // too many redirects
	EHTTP       = "EHTTP"       // an HTTP transport failure
	ENOEXEC     = "ENOEXEC"     // the program is not found or not executable
)

// newError returns an error whose message is "code: " and the formatted text.
func newError(code, format string, args ...any) *Error {
	return &Error{Errno: code, Message: code + ": " + fmt.Sprintf(format, args...)}
}

// wrapError is newError keeping err as the cause.
func wrapError(err error, code, format string, args ...any) *Error {
	e := newError(code, format, args...)
	e.Err = err
	return e
}

// invalid returns an EINVAL error for operation op.
func invalid(op, format string, args ...any) *Error {
	return newError(EINVAL, "%s: %s", op, fmt.Sprintf(format, args...))
}

// asError returns err's *Error, if it holds one.
func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
