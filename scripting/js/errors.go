package js

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
)

// asDiagnostic locates a transform error in the plugin's file.
func asDiagnostic(rel string, err error) error {
	var sd *scripting.Diagnostic
	if errors.As(err, &sd) {
		return sd
	}
	return &scripting.Diagnostic{File: rel, Message: err.Error(), Err: err}
}

// diagnostic locates an error of the top level, run under ctx: a thrown
// exception at its original line, a top level interrupted (or never
// started) as the load deadline's, with its value.
func (i *instance) diagnostic(ctx context.Context, rel string, err error) error {
	if mle, ok := memoryLimit(err); ok {
		return &scripting.Diagnostic{File: rel, Message: mle.Error(), Err: mle}
	}
	if errors.Is(err, eventloop.ErrInterrupted) || ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return &scripting.Diagnostic{File: rel, Message: scripting.LoadInterrupted(ctx), Err: err}
	}
	var sd *scripting.Diagnostic
	if errors.As(err, &sd) {
		return sd
	}
	msg := err.Error()
	line, col := 0, 0
	var je *eventloop.JSError
	if errors.As(err, &je) {
		msg = je.Message
		// The engine's own errors (JsonSchemaError, …) read as their message;
		// the language's own error types keep their name.
		switch je.Name {
		case "TypeError", "ReferenceError", "SyntaxError", "RangeError", "EvalError", "URIError":
			msg = je.Name + ": " + msg
		}
		file, l, c := stackPosition(je.Stack)
		if file == rel && l > 0 {
			if l == 1 {
				c -= len(moduleHead)
			}
			if _, ol, oc, ok := i.pool.main.Original(l, c); ok {
				line, col = ol, oc
			} else {
				line, col = l, c
			}
		}
	}
	return &scripting.Diagnostic{File: rel, Line: line, Col: col, Message: msg, Err: err}
}

// readModule reads a module the plugin requires, rel to the scripts
// directory, refusing one over scripting.MaxSourceBytes before reading it:
// "lib/big.js: the file is … bytes, over the limit of 4194304 bytes (4 MiB)".
func readModule(root, rel string) ([]byte, error) {
	code, err := scripting.ReadSource(filepath.Join(root, filepath.FromSlash(rel)), 0)
	var big *scripting.SourceTooBigError
	if errors.As(err, &big) {
		return nil, &scripting.Diagnostic{File: rel, Message: err.Error(), Err: err}
	}
	return code, err
}

// stackPosition reads the first frame's "file:line:col" of a JSError stack.
func stackPosition(stack string) (file string, line, col int) {
	for _, ln := range strings.Split(stack, "\n") {
		ln = strings.TrimSpace(ln)
		if !strings.HasPrefix(ln, "at ") {
			continue
		}
		ln = strings.TrimPrefix(ln, "at ")
		// "at fn (file:line:col(pc))" or "at file:line:col(pc)"
		if k := strings.Index(ln, " ("); k >= 0 && strings.HasSuffix(ln, ")") {
			ln = ln[k+2 : len(ln)-1]
		}
		parts := strings.Split(ln, ":")
		if len(parts) < 3 {
			continue
		}
		l, err1 := strconv.Atoi(parts[len(parts)-2])
		last := parts[len(parts)-1]
		if k := strings.IndexAny(last, "( "); k >= 0 {
			last = last[:k]
		}
		c, err2 := strconv.Atoi(last)
		if err1 != nil || err2 != nil {
			continue
		}
		return strings.Join(parts[:len(parts)-2], ":"), l, c
	}
	return "", 0, 0
}
