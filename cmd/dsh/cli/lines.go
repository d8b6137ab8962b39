package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// boundedLines reads the lines of an input, each of at most max bytes: a
// longer line is read through and dropped as it is read, never held whole,
// and reported as a *longLineError, so that the lines after it are read
// as usual. (A bufio.Scanner stops at the first line over its buffer: one
// line over 64 MiB ended dsh watch's session and made dsh replay refuse a
// whole log.)
type boundedLines struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	head []byte // the first bytes of a line over max, kept as it is dropped
	n    int    // the number of the line last read, from 1
}

// longLineHead is how many bytes of a line over the bound are kept, for a
// reader that wants to name the line (by the id of the JSON-RPC request it
// begins, say).
const longLineHead = 4 << 10

// newBoundedLines returns a boundedLines reading r's lines of at most max bytes.
func newBoundedLines(r io.Reader, max int) *boundedLines {
	return &boundedLines{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// longLineError is a line of more than the reader's max bytes, which was
// dropped.
type longLineError struct {
	Line  int // its number, from 1
	Bytes int // its length, its newline excluded
	Max   int
	Head  []byte // its first bytes, at most longLineHead: valid until the next line is read
}

func (e *longLineError) Error() string {
	return fmt.Sprintf("the line has %d bytes, over the %d a line may have: skipped", e.Bytes, e.Max)
}

// next returns the next line, without its newline, valid until the next
// call; a *longLineError for a line over max bytes; io.EOF at the end of
// the input, or the input's error.
func (l *boundedLines) next() ([]byte, error) {
	l.buf = l.buf[:0]
	l.head = l.head[:0]
	size := 0 // the line's bytes read so far, newline included
	for {
		frag, err := l.r.ReadSlice('\n')
		size += len(frag)
		if size <= l.max+1 {
			l.buf = l.grow(len(frag))
			l.buf = append(l.buf, frag...)
		} else if len(l.buf) > 0 || size == len(frag) {
			// The line just went over the bound: keep its head only.
			l.head = append(l.head, l.buf[:min(len(l.buf), longLineHead)]...)
			l.head = append(l.head, frag[:min(len(frag), longLineHead-len(l.head))]...)
			l.buf = l.buf[:0]
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
		case io.EOF:
			if size == 0 {
				return nil, io.EOF
			}
		default:
			return nil, err
		}
		l.n++
		n := size
		if n > 0 && (err == nil) {
			n-- // the newline
		}
		if n > l.max {
			return nil, &longLineError{Line: l.n, Bytes: n, Max: l.max, Head: l.head}
		}
		return bytes.TrimSuffix(l.buf, []byte("\n")), nil
	}
}

// grow returns buf with room for n more bytes, its capacity never past
// max+1 (a line and its newline): a line near the bound costs the bound,
// not the bound and a doubling.
func (l *boundedLines) grow(n int) []byte {
	if len(l.buf)+n <= cap(l.buf) {
		return l.buf
	}
	c := min(max(2*cap(l.buf), len(l.buf)+n), l.max+1)
	buf := make([]byte, len(l.buf), c)
	copy(buf, l.buf)
	return buf
}
