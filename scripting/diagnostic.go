package scripting

import (
	"strconv"

	"github.com/dsh-go/dsh/internal/display"
)

// Diagnostic is a plugin that failed to load, located in its file: a syntax
// error, a top level that threw or timed out, a bad schema, a duplicate name.
type Diagnostic struct {
	File      string // the plugin's path, relative to its scripts directory
	Line, Col int    // 1-based; zero when unknown
	Message   string
	Err       error // the underlying error, if any
}

// Error renders "file:line:col: message" ("file: message" without a
// position) on one line: the file's name and the message (a script's
// thrown text, a name it registered) come from outside dsh, so each is
// shown with its control characters escaped (see internal/display), the
// file's name cut to display.MaxText bytes and the message to
// maxDiagnosticMessage, each cut marked with "…".
func (d *Diagnostic) Error() string {
	s := display.Line(d.File, display.MaxText)
	if d.Line > 0 {
		s += ":" + strconv.Itoa(d.Line)
		if d.Col > 0 {
			s += ":" + strconv.Itoa(d.Col)
		}
	}
	return s + ": " + display.Line(d.Message, maxDiagnosticMessage)
}

// maxDiagnosticMessage bounds a diagnostic's message: above the 16 KiB a
// script's error text is cut to where it crosses into Go (with its
// marker), so that this bound only ever cuts text from elsewhere.
const maxDiagnosticMessage = 32 << 10

// Unwrap returns the underlying error.
func (d *Diagnostic) Unwrap() error { return d.Err }
