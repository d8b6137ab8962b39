package hostapi

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/dsh-go/dsh/engine"
)

// Raised is an error a script raised, as a host converts it: Err is what the
// pipeline reports (pipeline spec §1.9: the message, and a coded error's name
// and code), and the rest says where the script raised it.
type Raised struct {
	Err error
	// File is the script file the error was raised in, relative to the
	// scripts directory (the plugin's own file or a module it requires);
	// "" when unknown.
	File string
	// Line and Col are 1-based; Col is 0 where the language gives none (Lua).
	Line, Col int
	// Fault is set when the interpreter raised the error (a runtime error:
	// indexing nil, calling a non-function…), not the script on purpose
	// (throw, error()). Text is then the error as the language names it
	// ("TypeError: …" in JavaScript), without a position.
	Fault bool
	Text  string
}

// Error returns Err's text: a raised error reads as what the script gave.
func (r *Raised) Error() string { return r.Err.Error() }

// Unwrap returns Err.
func (r *Raised) Unwrap() error { return r.Err }

// Where returns "file:line" or "file:line:col", or "" when the file is unknown.
func (r *Raised) Where() string {
	if r.File == "" || r.Line <= 0 {
		return ""
	}
	s := r.File + ":" + strconv.Itoa(r.Line)
	if r.Col > 0 {
		s += ":" + strconv.Itoa(r.Col)
	}
	return s
}

// PolicyError is the failure of a policy (a tools/pre-execute or
// tools/post-execute listener, a tools/execute wrapper, a guard) whose script
// raised an error, as [PolicyFailure] makes it.
//
// What the model is shown follows the spec where it names the text: an error
// the script raised on purpose reads exactly as its message (and keeps a
// coded error's info), so "Error: gate interrupted" stays exactly that. An
// error the interpreter raised is the plugin's bug, which no spec text pins:
// it reads "file:line: message (plugin "p")", so that whoever reads the
// transcript knows which plugin to fix. Either way the log line says where.
type PolicyError struct {
	*Raised
	Plugin string // the plugin's file, relative to its scripts directory
}

// Error is the failure's message: Located for an interpreter's error,
// the script's own message otherwise.
func (e *PolicyError) Error() string {
	if e.Fault {
		return e.Located()
	}
	return e.Err.Error()
}

// Unwrap returns the raised error.
func (e *PolicyError) Unwrap() error { return e.Raised }

// Located is the error with where it was raised and in which plugin:
// `policy.lua:12: attempt to index a non-table object(nil) with key 'find'
// (plugin "policy.lua")`. Only the position and the plugin's name are added
// to the script's text, never a stack trace.
func (e *PolicyError) Located() string {
	text := e.Err.Error()
	if e.Fault && e.Text != "" {
		text = e.Text
	}
	if w := e.Where(); w != "" {
		text = w + ": " + text
	}
	return text + " (plugin " + strconv.Quote(e.Plugin) + ")"
}

// PolicyFailure is the error a policy of plugin (what names it: "a
// tools/pre-execute listener", "a guard"…) fails with when its script call
// for exec returned err: a *PolicyError, logged once as a warning, with
// where the script raised it when it did. An error that came through the
// script from another policy (the rest of a chain its next() ran) was
// reported there, and is returned as it is.
func PolicyFailure(ctx context.Context, log *slog.Logger, plugin, what string, exec *engine.Execution, err error) error {
	var pe *PolicyError
	if errors.As(err, &pe) {
		return err
	}
	var r *Raised
	if !errors.As(err, &r) {
		// Not raised by the script: a timeout, a decision of the wrong
		// shape, a disposed plugin.
		r = &Raised{Err: err}
	}
	pe = &PolicyError{Raised: r, Plugin: plugin}
	log.WarnContext(ctx, what+" failed: "+pe.Located(), "tool", exec.Name(), "callId", exec.CallID())
	return pe
}
