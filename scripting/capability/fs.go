package capability

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting"
)

// chunkSize is how much fs reads or writes between cancellation checks.
const chunkSize = 256 << 10

// maxRemoveDepth is how deep remove descends with its own cancellable walk;
// below that it lets os.Root.RemoveAll finish the subtree.
const maxRemoveDepth = 64

// fsModule is dsh/fs.
type fsModule struct {
	ws  *workspace
	cfg Config
}

func (m *fsModule) module() scripting.Module {
	return scripting.Module{Name: "fs", Funcs: map[string]scripting.ModuleFunc{
		"readFile":  m.readFile,
		"writeFile": m.writeFile,
		"stat":      m.stat,
		"readDir":   m.readDir,
		"glob":      m.glob,
		"mkdir":     m.mkdir,
		"remove":    m.remove,
	}}
}

// withRoot resolves the path argument and runs fn with the workspace root.
func (m *fsModule) withRoot(ctx context.Context, op, p string, fn func(root *os.Root, rel string) (any, error)) (any, error) {
	rel, err := m.ws.rel(op, "path", p)
	if err != nil {
		return nil, err
	}
	if err := cancelled(ctx, op, p); err != nil {
		return nil, err
	}
	root, err := m.ws.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	v, err := fn(root, rel)
	if err != nil {
		return nil, fsError(ctx, op, p, err)
	}
	return v, nil
}

func (m *fsModule) readFile(ctx context.Context, args []any) (any, error) {
	const op = "readFile"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	p, err := stringArg(op, "path", args, 0)
	if err != nil {
		return nil, err
	}
	o, err := optionsArg(op, args, 1, "encoding", "offset", "limit")
	if err != nil {
		return nil, err
	}
	enc, err := encodingOption(o)
	if err != nil {
		return nil, err
	}
	offset, hasOffset, err := o.count("offset")
	if err != nil {
		return nil, err
	}
	limit, hasLimit, err := o.count("limit")
	if err != nil {
		return nil, err
	}
	if enc == "base64" && (hasOffset || hasLimit) {
		return nil, invalid(op, `options.offset and options.limit are in lines: they need encoding "utf8"`)
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			return nil, syscall.EISDIR
		}
		if !fi.Mode().IsRegular() {
			return nil, invalid(op, "not a regular file: %s", p)
		}
		size := fi.Size()
		max := m.cfg.MaxReadBytes
		if size > max && !hasLimit {
			return nil, tooBigRead(p, enc, size, max)
		}
		res := dsl.NewObject(dsl.Member{Key: "path", Value: rel}, dsl.Member{Key: "encoding", Value: enc})
		if enc == "base64" {
			data, err := readAll(ctx, p, f, max)
			if err != nil {
				return nil, err
			}
			res.Set("content", base64.StdEncoding.EncodeToString(data))
			res.Set("size", float64(size))
			res.Set("truncated", false)
			return res, nil
		}
		sel, err := readLines(ctx, op, p, f, offset, limit, hasLimit, max)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(sel.content) {
			return nil, newError(EBINARY, `%s: not UTF-8 text (read it with encoding "base64"): %s`, op, p)
		}
		res.Set("content", string(sel.content))
		res.Set("size", float64(size))
		res.Set("truncated", sel.truncated)
		res.Set("offset", float64(offset))
		res.Set("lineCount", float64(sel.lineCount))
		res.Set("totalLines", float64(sel.totalLines))
		return res, nil
	})
}

func tooBigRead(p, enc string, size, max int64) *Error {
	hint := ""
	if enc == "utf8" {
		hint = " (read fewer lines with options.offset and options.limit)"
	}
	return newError(ETOOBIG, "readFile: file is %d bytes, over the %d-byte limit%s: %s", size, max, hint, p)
}

func encodingOption(o *options) (string, error) {
	enc, err := o.str("encoding", "utf8")
	if err != nil {
		return "", err
	}
	if enc != "utf8" && enc != "base64" {
		return "", invalid(o.op, `options.encoding must be "utf8" or "base64"`)
	}
	return enc, nil
}

// readAll reads r to the end in chunks, checking ctx, refusing more than max
// bytes (a file that grew since it was measured).
func readAll(ctx context.Context, p string, r io.Reader, max int64) ([]byte, error) {
	const op = "readFile"
	var buf bytes.Buffer
	chunk := make([]byte, chunkSize)
	for {
		if err := cancelled(ctx, op, p); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk)
		buf.Write(chunk[:n])
		if int64(buf.Len()) > max {
			return nil, tooBigRead(p, "base64", int64(buf.Len()), max)
		}
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lines is a selection of a text file's lines.
type lines struct {
	content    []byte
	lineCount  int64
	totalLines int64
	truncated  bool
}

// readLines reads r, keeping lines [offset, offset+limit) (all from offset
// when !hasLimit) and counting every line. Lines end at "\n", which is
// kept; a last line without one counts.
func readLines(ctx context.Context, op, p string, r io.Reader, offset, limit int64, hasLimit bool, max int64) (*lines, error) {
	end := int64(-1) // the first line not kept; -1 = none
	if hasLimit {
		end = offset + limit
	}
	var (
		content []byte
		line    int64 // the line the next byte belongs to
		partial bool  // bytes seen since the last "\n"
		chunk   = make([]byte, chunkSize)
	)
	for {
		if err := cancelled(ctx, op, p); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk)
		buf := chunk[:n]
		for len(buf) > 0 {
			if end >= 0 && line >= end {
				// Past the selection: only count.
				c := int64(bytes.Count(buf, []byte{'\n'}))
				line += c
				partial = buf[len(buf)-1] != '\n'
				break
			}
			seg := buf
			nl := bytes.IndexByte(buf, '\n')
			if nl >= 0 {
				seg = buf[:nl+1]
			}
			buf = buf[len(seg):]
			if line >= offset {
				content = append(content, seg...)
				if int64(len(content)) > max {
					return nil, newError(ETOOBIG, "%s: the selected lines are over the %d-byte limit (read fewer with options.limit): %s", op, max, p)
				}
			}
			if nl >= 0 {
				line++
				partial = false
			} else {
				partial = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	total := line
	if partial {
		total++
	}
	last := total
	if end >= 0 && end < last {
		last = end
	}
	count := max0(last - offset)
	return &lines{content: content, lineCount: count, totalLines: total, truncated: end >= 0 && end < total}, nil
}

func max0(n int64) int64 {
	if n < 0 {
		return 0
	}
	return n
}

func (m *fsModule) writeFile(ctx context.Context, args []any) (any, error) {
	const op = "writeFile"
	if err := arity(op, args, 3); err != nil {
		return nil, err
	}
	p, err := stringArg(op, "path", args, 0)
	if err != nil {
		return nil, err
	}
	text, err := stringArg(op, "data", args, 1)
	if err != nil {
		return nil, err
	}
	o, err := optionsArg(op, args, 2, "encoding", "createDirs", "append")
	if err != nil {
		return nil, err
	}
	enc, err := encodingOption(o)
	if err != nil {
		return nil, err
	}
	createDirs, err := o.boolean("createDirs")
	if err != nil {
		return nil, err
	}
	appending, err := o.boolean("append")
	if err != nil {
		return nil, err
	}
	max := m.cfg.MaxWriteBytes
	var data []byte
	if enc == "base64" {
		if int64(base64.StdEncoding.DecodedLen(len(text))) > max+3 {
			return nil, newError(ETOOBIG, "%s: data is %d bytes, over the %d-byte limit: %s", op, base64.StdEncoding.DecodedLen(len(text)), max, p)
		}
		data, err = base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, invalid(op, "data is not valid base64: %v", err)
		}
	} else {
		data = []byte(text)
	}
	if int64(len(data)) > max {
		return nil, newError(ETOOBIG, "%s: data is %d bytes, over the %d-byte limit: %s", op, len(data), max, p)
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		if rel == "." {
			return nil, syscall.EISDIR
		}
		if createDirs {
			if dir := path.Dir(rel); dir != "." {
				if err := mkdirAll(root, dir); err != nil {
					return nil, err
				}
			}
		}
		flag := os.O_WRONLY | syscall.O_NONBLOCK
		if appending {
			flag |= os.O_APPEND
		}
		created := true
		f, err := root.OpenFile(rel, flag|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			created = false
			f, err = root.OpenFile(rel, flag, 0)
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, invalid(op, "not a regular file: %s", p)
		}
		if !appending && fi.Size() > 0 {
			if err := f.Truncate(0); err != nil {
				return nil, err
			}
		}
		for rest := data; len(rest) > 0; {
			if err := cancelled(ctx, op, p); err != nil {
				return nil, err
			}
			n := min(len(rest), chunkSize)
			if _, err := f.Write(rest[:n]); err != nil {
				return nil, err
			}
			rest = rest[n:]
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		return dsl.NewObject(
			dsl.Member{Key: "path", Value: rel},
			dsl.Member{Key: "size", Value: float64(len(data))},
			dsl.Member{Key: "created", Value: created},
		), nil
	})
}

// mkdirAll is os.Root.MkdirAll, reporting a file in the way as ENOTDIR.
func mkdirAll(root *os.Root, rel string) error {
	err := root.MkdirAll(rel, 0o755)
	if errors.Is(err, syscall.EEXIST) {
		return syscall.ENOTDIR
	}
	return err
}

// fileType names a file mode's type.
func fileType(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "file"
	case mode.IsDir():
		return "dir"
	case mode&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

func (m *fsModule) stat(ctx context.Context, args []any) (any, error) {
	const op = "stat"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	p, err := stringArg(op, "path", args, 0)
	if err != nil {
		return nil, err
	}
	// stat takes no options; an options object may still carry a signal,
	// which the host has taken out.
	if _, err := optionsArg(op, args, 1); err != nil {
		return nil, err
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		fi, err := root.Lstat(rel)
		if err != nil {
			return nil, err
		}
		return dsl.NewObject(
			dsl.Member{Key: "path", Value: rel},
			dsl.Member{Key: "type", Value: fileType(fi.Mode())},
			dsl.Member{Key: "size", Value: float64(fi.Size())},
			dsl.Member{Key: "mode", Value: float64(fi.Mode().Perm())},
			dsl.Member{Key: "mtimeMs", Value: float64(fi.ModTime().UnixMilli())},
		), nil
	})
}

// limitOption returns options.limit clamped to the operator's MaxGlob.
func (m *fsModule) limitOption(o *options) (int, error) {
	limit, ok, err := o.count("limit")
	if err != nil {
		return 0, err
	}
	if !ok || limit > int64(m.cfg.MaxGlob) {
		return m.cfg.MaxGlob, nil
	}
	return int(limit), nil
}

// openDir opens a directory without blocking on a FIFO in its place.
func openDir(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
}

func (m *fsModule) readDir(ctx context.Context, args []any) (any, error) {
	const op = "readDir"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	p, err := stringArg(op, "path", args, 0)
	if err != nil {
		return nil, err
	}
	o, err := optionsArg(op, args, 1, "limit")
	if err != nil {
		return nil, err
	}
	limit, err := m.limitOption(o)
	if err != nil {
		return nil, err
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		d, err := openDir(root, rel)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		keep := newSmallest(limit, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for {
			if err := cancelled(ctx, op, p); err != nil {
				return nil, err
			}
			batch, err := d.ReadDir(256)
			for _, e := range batch {
				keep.add(e)
			}
			if err == io.EOF || (err == nil && len(batch) == 0) {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		kept := keep.result()
		entries := make([]any, 0, len(kept))
		for _, e := range kept {
			typ := fileType(e.Type())
			size := float64(0)
			if typ == "file" {
				if fi, err := e.Info(); err == nil {
					size = float64(fi.Size())
				}
			}
			entries = append(entries, dsl.NewObject(
				dsl.Member{Key: "name", Value: strings.ToValidUTF8(e.Name(), "\uFFFD")},
				dsl.Member{Key: "type", Value: typ},
				dsl.Member{Key: "size", Value: size},
			))
		}
		return dsl.NewObject(
			dsl.Member{Key: "path", Value: rel},
			dsl.Member{Key: "entries", Value: entries},
			dsl.Member{Key: "total", Value: float64(keep.total)},
			dsl.Member{Key: "truncated", Value: keep.total > len(kept)},
		), nil
	})
}

// pathRecursive reads the (path, {recursive?}) arguments of mkdir and remove.
func pathRecursive(op string, args []any) (string, bool, error) {
	if err := arity(op, args, 2); err != nil {
		return "", false, err
	}
	p, err := stringArg(op, "path", args, 0)
	if err != nil {
		return "", false, err
	}
	o, err := optionsArg(op, args, 1, "recursive")
	if err != nil {
		return "", false, err
	}
	recursive, err := o.boolean("recursive")
	return p, recursive, err
}

func (m *fsModule) mkdir(ctx context.Context, args []any) (any, error) {
	const op = "mkdir"
	p, recursive, err := pathRecursive(op, args)
	if err != nil {
		return nil, err
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		created := true
		if recursive {
			fi, err := root.Stat(rel)
			switch {
			case err == nil && fi.IsDir():
				created = false
			case err == nil:
				return nil, syscall.EEXIST
			default:
				if err := mkdirAll(root, rel); err != nil {
					return nil, err
				}
			}
		} else if err := root.Mkdir(rel, 0o755); err != nil {
			return nil, err
		}
		return dsl.NewObject(dsl.Member{Key: "path", Value: rel}, dsl.Member{Key: "created", Value: created}), nil
	})
}

func (m *fsModule) remove(ctx context.Context, args []any) (any, error) {
	const op = "remove"
	p, recursive, err := pathRecursive(op, args)
	if err != nil {
		return nil, err
	}
	return m.withRoot(ctx, op, p, func(root *os.Root, rel string) (any, error) {
		if rel == "." {
			return nil, invalid(op, "cannot remove the workspace root: %s", p)
		}
		result := func(removed bool) any {
			return dsl.NewObject(dsl.Member{Key: "path", Value: rel}, dsl.Member{Key: "removed", Value: removed})
		}
		fi, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return result(false), nil
		}
		if err != nil {
			return nil, err
		}
		if fi.IsDir() && recursive {
			err = removeTree(ctx, root, rel, fi, 0)
		} else {
			err = root.Remove(rel)
		}
		if errors.Is(err, syscall.EEXIST) {
			err = syscall.ENOTEMPTY // rmdir may say either
		}
		if err != nil {
			return nil, err
		}
		return result(true), nil
	})
}

// removeTree removes the directory name of parent (which fi, from Lstat,
// describes) and everything under it, checking ctx between entries. It
// works relative to each directory it opened, so a directory swapped for a
// symlink during the walk is noticed (a different file) and refused.
func removeTree(ctx context.Context, parent *os.Root, name string, fi fs.FileInfo, depth int) error {
	if depth >= maxRemoveDepth {
		return parent.RemoveAll(name)
	}
	sub, err := parent.OpenRoot(name)
	if err != nil {
		return err
	}
	defer sub.Close()
	if now, err := sub.Stat("."); err != nil {
		return err
	} else if !os.SameFile(fi, now) {
		return errors.New("the directory changed while it was being removed")
	}
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d, err := openDir(sub, ".")
		if err != nil {
			return err
		}
		batch, err := d.ReadDir(256)
		d.Close()
		if err != nil && err != io.EOF {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, e := range batch {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if e.IsDir() {
				cfi, err := sub.Lstat(e.Name())
				if err != nil {
					return err
				}
				if cfi.IsDir() {
					err = removeTree(ctx, sub, e.Name(), cfi, depth+1)
				} else {
					err = sub.Remove(e.Name())
				}
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				continue
			}
			if err := sub.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return parent.Remove(name)
}

// smallest keeps the n smallest of the values added, in order, and counts
// all of them, in memory proportional to n.
type smallest[T any] struct {
	n     int
	cmp   func(a, b T) int
	items []T
	total int
}

func newSmallest[T any](n int, cmp func(a, b T) int) *smallest[T] {
	return &smallest[T]{n: n, cmp: cmp}
}

func (s *smallest[T]) add(v T) {
	s.total++
	if s.n == 0 {
		return
	}
	s.items = append(s.items, v)
	if len(s.items) >= 2*s.n+64 {
		s.trim()
	}
}

func (s *smallest[T]) trim() {
	slices.SortFunc(s.items, s.cmp)
	if len(s.items) > s.n {
		clear(s.items[s.n:])
		s.items = s.items[:s.n]
	}
}

func (s *smallest[T]) result() []T {
	s.trim()
	return s.items
}
