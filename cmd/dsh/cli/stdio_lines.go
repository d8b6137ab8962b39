package cli

import (
	"errors"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine is the longest line "dsh serve" hands the MCP SDK on stdio:
// the SDK's own bound on a frame, past which it ends the session.
const maxStdioLine = sdk.DefaultMaxLineLength

// skippedLine stands in for a line over maxStdioLine: a notification that
// no server acts on, so the session goes on. (The request's id cannot be
// read without reading the line whole, so no error response can name it.)
const skippedLine = `{"jsonrpc":"2.0","method":"notifications/dsh/skipped-line"}` + "\n"

// stdioLines is the standard input of "dsh serve" on stdio, line by line:
// a line over maxStdioLine is read through without being held, reported
// with warn, and replaced by skippedLine. It closes the input it reads.
type stdioLines struct {
	src     io.Reader
	in      *boundedLines
	pending []byte
	warn    func(err *longLineError)
}

func newStdioLines(src io.Reader, warn func(*longLineError)) *stdioLines {
	return &stdioLines{src: src, in: newBoundedLines(src, maxStdioLine), warn: warn}
}

// Read implements io.Reader.
func (s *stdioLines) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		line, err := s.in.next()
		var long *longLineError
		switch {
		case err == nil:
			s.pending = append(append(s.pending[:0], line...), '\n')
		case errors.As(err, &long):
			s.warn(long)
			s.pending = append(s.pending[:0], skippedLine...)
		default:
			return 0, err
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// Close closes the input when it can be closed.
func (s *stdioLines) Close() error {
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
