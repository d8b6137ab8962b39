package dsl

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Default limits on a value crossing the boundary between a script and Go.
// Both script hosts (JavaScript and Lua) apply them in both directions, and
// [Snapshot] applies the depth limit, so a value is refused at the same size
// and with the same message whichever way it crosses.
//
// They are generous for real tools, whose arguments and results are at most a
// few megabytes (a large file read, a long web page), and they keep one
// conversion well inside the default script memory limit of 1 GiB even when
// the copy briefly exists twice: 64 MiB of strings and a million values.
// Nesting is capped far beyond anything hand-written, at a depth where the
// explicit stacks of the converters are still a few megabytes.
const (
	DefaultMaxDepth = 100_000
	DefaultMaxNodes = 1_000_000
	DefaultMaxBytes = 64 << 20 // 64 MiB
)

// ValueBytes is what every value, containers included, counts towards
// MaxBytes besides the bytes of its strings and keys: about what it takes in
// its Go form (an interface value, or a member's share of an object).
const ValueBytes = 16

// Limits bound a value crossing the boundary between a script and Go. A zero
// or negative field takes its default.
type Limits struct {
	// MaxDepth bounds the nesting of containers: the root array or object is
	// at depth 1 (default DefaultMaxDepth).
	MaxDepth int
	// MaxNodes bounds the number of values, counting containers and the
	// root (default DefaultMaxNodes).
	MaxNodes int
	// MaxBytes bounds the size of the value: the UTF-8 bytes of its strings
	// and object keys, plus ValueBytes per value (default DefaultMaxBytes).
	// A string is measured before it is copied or converted, so one larger
	// than the limit is refused without being copied.
	MaxBytes int
}

// WithDefaults returns l with its zero or negative fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// ErrLimit is what a [SnapshotError] for a value beyond [Limits] wraps.
var ErrLimit = errors.New("the value exceeds a limit")

// DepthError is the error for a container nested deeper than max levels at path.
func DepthError(path string, max int) *SnapshotError {
	return &SnapshotError{Path: path, Reason: "nesting deeper than " + strconv.Itoa(max) + " levels", Err: ErrLimit}
}

// NodesError is the error for more than max values, the last at path.
func NodesError(path string, max int) *SnapshotError {
	return &SnapshotError{Path: path, Reason: "more than " + strconv.Itoa(max) + " values", Err: ErrLimit}
}

// BytesError is the error for a value larger than max bytes (see
// [Limits.MaxBytes]), the limit being passed at path.
func BytesError(path string, max int) *SnapshotError {
	return &SnapshotError{Path: path, Reason: "more than " + strconv.Itoa(max) + " bytes", Err: ErrLimit}
}

// Bounds on a rendered path (see [WritePath]), in bytes.
const (
	pathRoot = 64 // a longer root keeps its ends
	pathHead = 64 // the root and the first steps
	pathTail = 64 // the last steps
	pathKey  = 32 // a key's characters shown in one step
)

// WritePath appends a value path: root, then the n steps step writes (one
// each, as ".key" or "[i]", see [WritePathKey]). However deep the path and
// however long its keys, what it appends stays short (under 250 bytes): the
// middle steps of a long path are replaced by a count, as in
// value[0][0]…(99,990 more)…[0].b, and a long key or root is cut.
//
// step is called at most once for each step shown, and never for the others.
func WritePath(b *strings.Builder, root string, n int, step func(b *strings.Builder, i int)) {
	start := b.Len()
	if len(root) > pathRoot {
		b.WriteString(cutEnd(root, pathRoot/2-2))
		b.WriteString("…")
		b.WriteString(cutStart(root, pathRoot/2-2))
	} else {
		b.WriteString(root)
	}
	i := 0
	for ; i < n && b.Len()-start < pathHead; i++ {
		step(b, i)
	}
	if i == n {
		return
	}
	var tail []string
	size := 0
	var t strings.Builder
	for j := n - 1; j >= i && size < pathTail; j-- {
		t.Reset()
		step(&t, j)
		tail = append(tail, t.String())
		size += t.Len()
	}
	if omitted := n - i - len(tail); omitted > 0 {
		b.WriteString("…(")
		b.WriteString(groupThousands(omitted))
		b.WriteString(" more)…")
	}
	for k := len(tail) - 1; k >= 0; k-- {
		b.WriteString(tail[k])
	}
}

// cutEnd returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutEnd(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutStart returns the longest suffix of s of at most n bytes that starts on
// a rune boundary.
func cutStart(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// groupThousands formats n with commas: 99,990.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	first := len(s) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
