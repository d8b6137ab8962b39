package scripting

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxSourceBytes bounds a plugin file or a module the loader reads (4 MiB):
// a larger one is refused before it is read. It is well above any plugin
// written by hand, or bundled with its dependencies, and keeps what esbuild
// and the parsers are given, and the memory they take, bounded (a 300 MB
// file took 950 MB). Lua files have a tighter limit of their own (1 MiB,
// the sandbox's chunk limit).
const MaxSourceBytes = 4 << 20

// SourceTooBigError is a source file over [MaxSourceBytes].
type SourceTooBigError struct {
	Size, Limit int64
}

func (e *SourceTooBigError) Error() string {
	return fmt.Sprintf("the file is %d bytes, over the limit of %d bytes (%d MiB)", e.Size, e.Limit, e.Limit/MiB)
}

// ReadSource reads the source file path, refusing, before reading it, one
// that is not a regular file (a FIFO would block the read) or is larger than
// limit bytes (limit <= 0 means MaxSourceBytes), with a *SourceTooBigError.
// A file that grows while it is read is refused too: at most limit+1 bytes
// are read.
func ReadSource(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxSourceBytes
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, &SourceTooBigError{Size: fi.Size(), Limit: limit}
	}
	code, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(code)) > limit {
		return nil, &SourceTooBigError{Size: int64(len(code)), Limit: limit}
	}
	return code, nil
}
