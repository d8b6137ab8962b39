package tsbuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Resolution is what an import specifier names: a host module, or a module
// file inside the scripts directory.
type Resolution struct {
	// Host is the host module's name ("dsh", "dsh/fs"); empty for a file.
	Host string
	// Rel is the module file relative to the scripts directory, with
	// forward slashes, after symbolic links: the module's identity (two
	// specifiers naming the same file give the same Rel) and the name to
	// transform and report it under.
	Rel string
	// Path is the module file's absolute path, after symbolic links.
	Path string
}

// Sentinel errors a *[ResolveError] unwraps to, for errors.Is.
var (
	// ErrBareSpecifier: neither "dsh", "dsh/…" nor a relative path.
	ErrBareSpecifier = errors.New("bare specifier")
	// ErrAbsolutePath: an absolute path.
	ErrAbsolutePath = errors.New("absolute path")
	// ErrOutsideRoot: a path leading outside the scripts directory, through
	// ".." or a symbolic link.
	ErrOutsideRoot = errors.New("outside the scripts directory")
	// ErrNoModule: no candidate file exists.
	ErrNoModule = errors.New("no such module")
	// ErrNotModuleFile: the file found is not a .ts, .js or .mjs file.
	ErrNotModuleFile = errors.New("not a module file")
)

// ResolveError is a refused import. Error() is the full message, such as
// `cannot resolve "lodash": only "dsh", "dsh/…" and relative paths inside
// the scripts directory can be imported`.
type ResolveError struct {
	Spec string // the specifier as written
	From string // the importing file, relative to the scripts directory
	Msg  string // the full message
	Err  error  // one of the sentinels above, or an I/O error
}

func (e *ResolveError) Error() string { return e.Msg }

// Unwrap returns the sentinel or the underlying error.
func (e *ResolveError) Unwrap() error { return e.Err }

// moduleExts are the extensions a module file may have, in the order they
// are tried.
var moduleExts = []string{".ts", ".js", ".mjs"}

// Resolve resolves the import specifier spec, written in fromFile (a path
// relative to root, or an absolute path inside it), by the module rules of
// the scripting spec:
//
//   - "dsh" and "dsh/<name>" are host modules: Resolution.Host is spec
//     (whether such a module exists is the host's business).
//   - A relative specifier ("./x", "../lib/y", ".", "..") names a file
//     inside root, tried as written (if it has a .ts, .js or .mjs
//     extension), then, for "x.js", as "x.ts" (TypeScript's convention for
//     imports written with the output extension), then with .ts, .js and
//     .mjs appended, then as a directory holding index.ts, index.js or
//     index.mjs. A specifier ending in "/" is only tried as a directory.
//   - Anything else is refused: bare names ("lodash", "node:fs"; there is
//     no node_modules lookup), absolute paths, and paths leading outside
//     root, whether through ".." or through a symbolic link (resolved with
//     filepath.EvalSymlinks).
//
// A relative specifier resolves against the directory of fromFile after
// its own symbolic links, as in Node. Errors are *[ResolveError].
func Resolve(root, fromFile, spec string) (Resolution, error) {
	if spec == "dsh" || strings.HasPrefix(spec, "dsh/") {
		if !validHostName(spec) {
			return Resolution{}, &ResolveError{Spec: spec, Err: ErrBareSpecifier,
				Msg: fmt.Sprintf("cannot resolve %q: not a valid host module name", spec)}
		}
		return Resolution{Host: spec}, nil
	}
	rootReal, err := realDir(root)
	if err != nil {
		return Resolution{}, &ResolveError{Spec: spec, Err: err,
			Msg: fmt.Sprintf("cannot resolve %q: scripts directory: %v", spec, err)}
	}
	from, fromDir, err := importer(root, rootReal, fromFile)
	if err != nil {
		return Resolution{}, &ResolveError{Spec: spec, From: fromFile, Err: ErrOutsideRoot,
			Msg: fmt.Sprintf("cannot import %q from %q: %v", spec, fromFile, err)}
	}
	refuse := func(sentinel error, format string, args ...any) (Resolution, error) {
		return Resolution{}, &ResolveError{Spec: spec, From: from, Err: sentinel,
			Msg: fmt.Sprintf("cannot import %q from %q: ", spec, from) + fmt.Sprintf(format, args...)}
	}
	switch {
	case filepath.IsAbs(spec) || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, `\`):
		return refuse(ErrAbsolutePath, "absolute paths cannot be imported, only relative paths inside the scripts directory")
	case !isRelative(spec):
		return Resolution{}, &ResolveError{Spec: spec, From: from, Err: ErrBareSpecifier,
			Msg: fmt.Sprintf(`cannot resolve %q: only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, spec)}
	}
	base := filepath.Join(fromDir, filepath.FromSlash(spec))
	if !inside(rootReal, base) {
		return refuse(ErrOutsideRoot, "it resolves outside the scripts directory")
	}

	type candidate struct{ path, shown string }
	var cands []candidate
	dirOnly := spec == "." || spec == ".." || strings.HasSuffix(spec, "/")
	if !dirOnly {
		cands = append(cands, candidate{base, spec})
		if strings.HasSuffix(spec, ".js") {
			cands = append(cands, candidate{strings.TrimSuffix(base, ".js") + ".ts", strings.TrimSuffix(spec, ".js") + ".ts"})
		}
		for _, ext := range moduleExts {
			cands = append(cands, candidate{base + ext, spec + ext})
		}
	}
	dirShown := strings.TrimSuffix(spec, "/") + "/"
	for _, ext := range moduleExts {
		cands = append(cands, candidate{filepath.Join(base, "index"+ext), dirShown + "index" + ext})
	}

	wrongExt := false // a candidate exists, but is not a module file
	for _, c := range cands {
		fi, err := os.Stat(c.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				continue
			}
			return refuse(err, "%v", unwrapPath(err))
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		real, err := filepath.EvalSymlinks(c.path)
		if err != nil {
			return refuse(err, "%v", unwrapPath(err))
		}
		if !inside(rootReal, real) {
			return refuse(ErrOutsideRoot, "it resolves outside the scripts directory through a symbolic link")
		}
		if !slices.Contains(moduleExts, filepath.Ext(real)) {
			wrongExt = true
			continue
		}
		rel, err := filepath.Rel(rootReal, real)
		if err != nil {
			return refuse(err, "%v", err)
		}
		return Resolution{Rel: filepath.ToSlash(rel), Path: real}, nil
	}
	if wrongExt {
		return refuse(ErrNotModuleFile, "only .ts, .js and .mjs files can be imported")
	}
	shown := make([]string, len(cands))
	for i, c := range cands {
		shown[i] = c.shown
	}
	return Resolution{}, &ResolveError{Spec: spec, From: from, Err: ErrNoModule,
		Msg: fmt.Sprintf("cannot resolve %q from %q: no such module (tried %s)", spec, from, strings.Join(shown, ", "))}
}

// validHostName reports whether spec is "dsh" or "dsh/" followed by
// non-empty segments other than "." and "..".
func validHostName(spec string) bool {
	if spec == "dsh" {
		return true
	}
	for _, seg := range strings.Split(strings.TrimPrefix(spec, "dsh/"), "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Contains(seg, `\`) {
			return false
		}
	}
	return true
}

func isRelative(spec string) bool {
	return spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

// realDir is the absolute path of dir after symbolic links.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// importer returns how to show fromFile (relative to root, forward slashes)
// and the directory its relative imports resolve against: that of its real
// path when it exists, of its lexical path otherwise.
func importer(root, rootReal, fromFile string) (shown, dir string, err error) {
	var rel string
	if filepath.IsAbs(fromFile) {
		rootAbs, err := filepath.Abs(root)
		if err != nil {
			return "", "", err
		}
		for _, r := range []string{rootAbs, rootReal} {
			if inside(r, fromFile) {
				rel, _ = filepath.Rel(r, fromFile)
				break
			}
		}
		if rel == "" {
			return "", "", errors.New("the importing file is outside the scripts directory")
		}
	} else {
		rel = filepath.Clean(filepath.FromSlash(fromFile))
	}
	p := filepath.Join(rootReal, rel)
	if !inside(rootReal, p) {
		return "", "", errors.New("the importing file is outside the scripts directory")
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if !inside(rootReal, real) {
			return "", "", errors.New("the importing file is outside the scripts directory")
		}
		p = real
	}
	return filepath.ToSlash(rel), filepath.Dir(p), nil
}

// inside reports whether p is root or below it, lexically.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isNotDir reports a path error caused by a non-directory used as one
// ("./a.ts/index.ts").
func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOTDIR)
}

// PluginFiles lists the plugins of the scripts directory root, by the file
// rules of the scripting spec: every file in root and below whose extension
// is one of exts (such as ".js", ".mjs", ".ts", ".lua"; the loader dispatches
// by extension), except declaration files (*.d.ts), names (of files or
// directories below root) starting with "_" or ".", and anything under a
// directory named lib. Names are relative to root, with forward slashes,
// sorted.
//
// Symbolic links are followed only inside root. A link to a file counts when
// the file is inside root and is not listed under its own name already; a
// link to a directory is walked when the directory is inside root and not
// walked already (each directory is walked once, so links add no duplicates
// and cannot loop). A link that leads outside root, a broken link and an
// unreadable directory are refused each with a *[Diagnostic] ("name:
// message"); PluginFiles then returns the files it did list together with
// the errors joined (errors.Join), so a caller can load the good ones and
// report the rest. Only a root that cannot be read gives no files.
func PluginFiles(root string, exts []string) ([]string, error) {
	rootReal, err := realDir(root)
	if err != nil {
		return nil, err
	}
	type dir struct{ name, real string }
	var (
		errs     []error
		visited  = map[string]bool{rootReal: true}
		queue    = []dir{{"", rootReal}}
		deferred []dir   // directory links, walked after the real tree
		files    []dir   // plain files reached without a link, in order
		linked   []dir   // files reached through a link
		viaLink  = false // whether the real tree is done and queue holds linked trees
	)
	refuse := func(name, msg string) {
		errs = append(errs, &Diagnostic{File: name, Message: msg})
	}
	wanted := func(name string) bool {
		return !strings.HasSuffix(name, ".d.ts") && slices.Contains(exts, filepath.Ext(name))
	}
	for len(queue) > 0 || len(deferred) > 0 {
		if len(queue) == 0 {
			d := deferred[0]
			deferred = deferred[1:]
			if visited[d.real] {
				continue
			}
			visited[d.real] = true
			queue, viaLink = append(queue, d), true
		}
		d := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(d.real)
		if err != nil {
			if d.name == "" {
				return nil, err
			}
			refuse(d.name, "cannot read directory: "+unwrapPath(err).Error())
			continue
		}
		for _, e := range entries {
			base := e.Name()
			if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				continue
			}
			name := base
			if d.name != "" {
				name = d.name + "/" + base
			}
			p := filepath.Join(d.real, base)
			switch {
			case e.IsDir():
				if base == "lib" {
					continue
				}
				if visited[p] {
					continue
				}
				visited[p] = true
				queue = append(queue, dir{name, p})
			case e.Type()&fs.ModeSymlink != 0:
				fi, err := os.Stat(p)
				if err != nil {
					if wanted(base) {
						refuse(name, "broken symbolic link")
					}
					continue
				}
				if fi.IsDir() && base == "lib" || !fi.IsDir() && !(fi.Mode().IsRegular() && wanted(base)) {
					continue
				}
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					refuse(name, "cannot follow symbolic link: "+unwrapPath(err).Error())
					continue
				}
				if !inside(rootReal, real) {
					refuse(name, "symbolic link leads outside the scripts directory")
					continue
				}
				if fi.IsDir() {
					deferred = append(deferred, dir{name, real})
				} else {
					linked = append(linked, dir{name, real})
				}
			case e.Type().IsRegular() && wanted(base):
				if viaLink {
					linked = append(linked, dir{name, p})
				} else {
					files = append(files, dir{name, p})
				}
			}
		}
	}
	seen := make(map[string]bool, len(files))
	var out []string
	for _, f := range files {
		seen[f.real] = true
		out = append(out, f.name)
	}
	slices.SortFunc(linked, func(a, b dir) int { return strings.Compare(a.name, b.name) })
	for _, f := range linked {
		if !seen[f.real] {
			seen[f.real] = true
			out = append(out, f.name)
		}
	}
	slices.Sort(out)
	return out, errors.Join(errs...)
}

// unwrapPath drops the path from a *fs.PathError: the Diagnostic names the
// file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
