package capability

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// rel returns p as a clean workspace-relative path ("." for the root). p is
// POSIX: relative to the workspace, or absolute inside it. A path that
// climbs out lexically is EOUTSIDE; symlinks are checked when the path is
// opened relative to the root.
func (w *workspace) rel(op, name, p string) (string, error) {
	if p == "" {
		return "", invalid(op, "%s must not be empty", name)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalid(op, "%s must not contain a NUL byte", name)
	}
	clean := path.Clean(p)
	if path.IsAbs(clean) {
		for _, base := range []string{w.real, w.abs} {
			if clean == base {
				return ".", nil
			}
			if strings.HasPrefix(clean, base+"/") {
				return clean[len(base)+1:], nil
			}
			if base == "/" {
				return clean[1:], nil
			}
		}
		return "", outside(p)
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", outside(p)
	}
	return clean, nil
}

// outside is the EOUTSIDE error for p.
func outside(p string) *Error {
	return newError(EOUTSIDE, "path resolves outside the workspace: %s", p)
}

// fsError maps an error of an operation on path p (as the script wrote it)
// to a coded error.
func fsError(ctx context.Context, op, p string, err error) error {
	if e, ok := asError(err); ok {
		return e
	}
	if ctx.Err() != nil || isContextErr(err) {
		return canceledError(ctx, op, p)
	}
	if escapes(err) {
		e := outside(p)
		e.Err = err
		return e
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT:
			return wrapError(err, ENOENT, "no such file or directory: %s", p)
		case syscall.EEXIST:
			return wrapError(err, EEXIST, "file already exists: %s", p)
		case syscall.ENOTDIR:
			return wrapError(err, ENOTDIR, "not a directory: %s", p)
		case syscall.EISDIR:
			return wrapError(err, EISDIR, "is a directory: %s", p)
		case syscall.ENOTEMPTY:
			return wrapError(err, ENOTEMPTY, "directory not empty: %s", p)
		case syscall.EACCES, syscall.EPERM:
			return wrapError(err, EACCES, "permission denied: %s", p)
		case syscall.ELOOP:
			return wrapError(err, ELOOP, "too many levels of symbolic links: %s", p)
		case syscall.ENAMETOOLONG:
			return wrapError(err, EINVAL, "%s: file name too long: %s", op, p)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return wrapError(err, ENOENT, "no such file or directory: %s", p)
	case errors.Is(err, fs.ErrExist):
		return wrapError(err, EEXIST, "file already exists: %s", p)
	case errors.Is(err, fs.ErrPermission):
		return wrapError(err, EACCES, "permission denied: %s", p)
	}
	return wrapError(err, EIO, "%s: %v: %s", op, cause(err), p)
}

// cause strips the operation and path an *os.PathError adds.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// escapes reports whether err is os.Root's refusal of a path leaving it.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}
