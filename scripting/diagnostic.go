package scripting

import (
	"strconv"
)

// Diagnostic is a plugin that failed to load, located in its file: a syntax
// error, a top level that threw or timed out, a bad schema, a duplicate name.
type Diagnostic struct {
	File      string // the plugin's path, relative to its scripts directory
	Line, Col int    // 1-based; zero when unknown
	Message   string
	Err       error // the underlying error, if any
}

// Error renders "file:line:col: message" ("file: message" without a position).
func (d *Diagnostic) Error() string {
	s := d.File
	if d.Line > 0 {
		s += ":" + strconv.Itoa(d.Line)
		if d.Col > 0 {
			s += ":" + strconv.Itoa(d.Col)
		}
	}
	return s + ": " + d.Message
}

// Unwrap returns the underlying error.
func (d *Diagnostic) Unwrap() error { return d.Err }
