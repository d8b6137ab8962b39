package lua

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// errCallInterrupted is a call whose instance was interrupted: for its own
// deadline or cancellation (what was interrupted, for cause), or for
// another call's. The call fails as aborted (engine.ErrAborted: the
// instance's internals are the host's business, the cause is logged with
// the interrupt), which the timeout policy reports as its timeout when its
// deadline caused it.
type errCallInterrupted struct {
	what  string
	cause error
}

func (e *errCallInterrupted) Error() string { return engine.ErrAborted().Error() }
func (e *errCallInterrupted) Unwrap() error { return e.cause }

// Name and Code make it engine.ErrAborted's coded error.
func (e *errCallInterrupted) Name() string { return engine.ErrAborted().Name() }
func (e *errCallInterrupted) Code() string { return engine.ErrAborted().Code() }

// syntaxDiagnostic locates an error of compiling the plugin's file: a parse
// or compile error, or a chunk the sandbox refuses ("file.lua:line: why").
func syntaxDiagnostic(rel string, code []byte, err error) error {
	var ae *glua.ApiError
	if errors.As(err, &ae) && ae.Cause != nil {
		err = ae.Cause
	}
	if m := position(err.Error()); m != nil && m[1] == rel {
		line, _ := strconv.Atoi(m[2])
		return &scripting.Diagnostic{File: rel, Line: line, Message: stripPosition(err.Error()), Err: err}
	}
	var pe *parse.Error
	if errors.As(err, &pe) {
		if pe.Pos.Line == parse.EOF {
			return &scripting.Diagnostic{File: rel, Line: bytes.Count(code, []byte("\n")) + 1, Message: pe.Message + " at the end of the file", Err: err}
		}
		msg := pe.Message
		if pe.Token != "" {
			msg += " near '" + pe.Token + "'"
		}
		return &scripting.Diagnostic{File: rel, Line: pe.Pos.Line, Col: max(pe.Pos.Column, 0), Message: msg, Err: err}
	}
	var ce *glua.CompileError
	if errors.As(err, &ce) {
		return &scripting.Diagnostic{File: rel, Line: ce.Line, Message: ce.Message, Err: err}
	}
	return &scripting.Diagnostic{File: rel, Message: strings.TrimPrefix(err.Error(), rel+": "), Err: err}
}

// topLevelDiagnostic locates an error the top level raised: at the position
// Lua put in front of a message raised in the plugin's own file, or else at
// the innermost frame of that file in the traceback.
func (i *instance) topLevelDiagnostic(err error) error {
	rel := i.pool.src.Rel
	var ae *glua.ApiError
	if !errors.As(err, &ae) {
		return &scripting.Diagnostic{File: rel, Message: err.Error(), Err: err}
	}
	msg := i.thrown(err).Error()
	line := 0
	if s, ok := ae.Object.(glua.LString); ok {
		if m := position(string(s)); m != nil {
			if m[1] == rel {
				line, _ = strconv.Atoi(m[2])
			} else {
				msg = hostapi.ErrorText(string(s)) // an error in a module: keep its position
			}
		}
	}
	if line == 0 {
		line = tracebackLine(ae.StackTrace, rel)
	}
	return &scripting.Diagnostic{File: rel, Line: line, Message: msg, Err: err}
}

var tracebackFrame = regexp.MustCompile(`^\t([^\s:]+\.lua):(\d+):`)

// tracebackLine returns the line of the innermost frame of file rel in a
// gopher-lua traceback, or 0.
func tracebackLine(trace, rel string) int {
	for _, ln := range strings.Split(trace, "\n") {
		if m := tracebackFrame.FindStringSubmatch(ln); m != nil && m[1] == rel {
			n, _ := strconv.Atoi(m[2])
			return n
		}
	}
	return 0
}

// diagnostic turns the error of a top level, run under ctx, into the
// plugin's diagnostic.
func (i *instance) diagnostic(ctx context.Context, err error) error {
	var d *scripting.Diagnostic
	if errors.As(err, &d) {
		return d
	}
	rel := i.pool.src.Rel
	var mle *scripting.MemoryLimitError
	if errors.As(err, &mle) {
		return &scripting.Diagnostic{File: rel, Message: mle.Error(), Err: mle}
	}
	var ie *errCallInterrupted
	if errors.As(err, &ie) {
		return &scripting.Diagnostic{File: rel, Message: scripting.LoadInterrupted(ctx), Err: err}
	}
	return &scripting.Diagnostic{File: rel, Message: fmt.Sprint(err), Err: err}
}
