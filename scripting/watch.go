package scripting

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a batch of file changes waits for quiet
// before it is handled.
const DefaultDebounce = 100 * time.Millisecond

// maxWaitFactor caps a batch's wait at this many debounce periods after its
// first change, so that a storm of writes cannot postpone reloads forever.
const maxWaitFactor = 2

// rootPollInterval is how often a root that went away (deleted, or moved
// away) is looked for: nothing can watch a directory that is not there, and
// its parent is not watched.
const rootPollInterval = 200 * time.Millisecond

// watcher reports the changes below some directories in batches: it
// watches the directories themselves (every one below the roots, new ones as
// they appear), not the files, so that a save that renames a temporary over
// the file is seen like a write. A batch is handed over once no change came
// for the debounce period, or at most maxWaitFactor periods after its first
// change. Editor temporaries (ignoredName) are left out.
//
// A root that goes away is not given up: it is looked for every
// rootPollInterval, and once it is a directory again it is watched again
// (with those below it) and handed over as changed, so that what it now
// holds is loaded. Meanwhile its plugins are unloaded, as for any directory
// that went away.
type watcher struct {
	fsw      *fsnotify.Watcher
	roots    []string
	debounce time.Duration
	logger   *slog.Logger
	// handle receives each batch: the changed paths (files or directories,
	// existing or not, as fsnotify names them: below a root as given),
	// sorted and without duplicates. It runs on the watcher's goroutine.
	handle func(paths []string)

	// missing holds the roots that went away, cleaned, until they are
	// watched again. Only the run goroutine uses it.
	missing map[string]bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// newWatcher starts watching roots and every directory below them.
func newWatcher(roots []string, debounce time.Duration, logger *slog.Logger, handle func([]string)) (*watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{fsw: fsw, roots: roots, debounce: debounce, logger: logger, handle: handle,
		missing: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, root := range roots {
		if err := w.addTree(root); err != nil {
			fsw.Close()
			return nil, err
		}
	}
	go w.run()
	return w, nil
}

// close stops the watcher; no batch is handed over once it returns.
func (w *watcher) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.fsw.Close()
}

// watchedDir reports whether a directory below a root is watched: not one
// whose name starts with "." (.git and other tools' state) and not
// node_modules (modules cannot be imported from there).
func watchedDir(name string) bool {
	return !strings.HasPrefix(name, ".") && name != "node_modules"
}

// addTree watches dir and every watched directory below it. A directory
// that disappears meanwhile is skipped.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && !watchedDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := w.fsw.Add(path); err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		return nil
	})
}

// forget stops watching dir and the directories below it (a directory that
// was moved away: on Linux its watch would follow it and report its new
// contents under the old names).
func (w *watcher) forget(dir string) {
	prefix := dir + string(filepath.Separator)
	for _, p := range w.fsw.WatchList() {
		if p == dir || strings.HasPrefix(p, prefix) {
			_ = w.fsw.Remove(p)
		}
	}
}

// ignoredName reports whether a file name is an editor's or a tool's
// temporary, never a plugin or module: dot files (vim's .x.swp, emacs's
// .#x locks), backups ending in "~", vim's swap files and its write test
// "4913" (any all-digit name), emacs autosaves (#x#), and the temporaries
// of JetBrains IDEs and of atomic writers (x.tmp).
func ignoredName(name string) bool {
	switch {
	case name == "", strings.HasPrefix(name, "."), strings.HasSuffix(name, "~"):
		return true
	case len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return true
	case strings.HasSuffix(name, ".tmp"), strings.HasSuffix(name, "___jb_tmp___"), strings.HasSuffix(name, "___jb_old___"):
		return true
	}
	if ext := filepath.Ext(name); len(ext) == 4 && strings.HasPrefix(ext, ".sw") && ext[3] >= 'a' && ext[3] <= 'z' {
		return true // vim's .swp, .swo … .swa
	}
	return strings.Trim(name, "0123456789") == ""
}

func (w *watcher) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	poll := time.NewTicker(rootPollInterval)
	poll.Stop()
	defer poll.Stop()
	polling := false
	pending := map[string]struct{}{}
	var first, last time.Time
	arm := func() {
		now := time.Now()
		if len(pending) == 0 {
			first = now
		}
		last = now
		due := last.Add(w.debounce)
		if capped := first.Add(maxWaitFactor * w.debounce); capped.Before(due) {
			due = capped
		}
		timer.Reset(time.Until(due))
	}
	for {
		select {
		case <-w.stop:
			timer.Stop()
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			relevant := w.relevant(ev)
			if len(w.missing) > 0 && !polling {
				poll.Reset(rootPollInterval)
				polling = true
			}
			if !relevant {
				continue
			}
			arm()
			pending[ev.Name] = struct{}{}
		case <-poll.C:
			for _, root := range w.returned() {
				arm()
				pending[root] = struct{}{}
			}
			if len(w.missing) == 0 {
				poll.Stop()
				polling = false
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Changes were lost: look at everything again.
				w.logger.Warn("file change events overflowed; rescanning the scripts directories")
				arm()
				for _, r := range w.roots {
					pending[r] = struct{}{}
				}
				continue
			}
			w.logger.Warn("watching the scripts directories", "error", err)
		case <-timer.C:
			if len(pending) == 0 {
				continue
			}
			paths := make([]string, 0, len(pending))
			for p := range pending {
				paths = append(paths, p)
			}
			clear(pending)
			slices.Sort(paths)
			w.handle(paths)
		}
	}
}

// relevant reports whether an event may change what is loaded: not a
// change of attributes only, not an editor temporary. A new directory is
// watched at once (with those below it), so that files written into it
// right after are seen; a directory that went away is watched no more.
func (w *watcher) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	name := filepath.Base(ev.Name)
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if !watchedDir(name) {
				return false
			}
			if err := w.addTree(ev.Name); err != nil {
				w.logger.Warn("cannot watch a new directory", "dir", ev.Name, "error", err)
			}
			return true
		}
	}
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if gone && w.isRoot(ev.Name) {
		// Its watch is gone with it (or, for a move, would follow it):
		// look for it to come back.
		w.forget(ev.Name)
		w.missing[filepath.Clean(ev.Name)] = true
		w.logger.Warn("a scripts directory went away; watching for it to come back", "dir", ev.Name)
		return true
	}
	if gone && w.watching(ev.Name) {
		w.forget(ev.Name)
		return true
	}
	return !ignoredName(name)
}

// isRoot reports whether path names one of the roots.
func (w *watcher) isRoot(path string) bool {
	path = filepath.Clean(path)
	for _, r := range w.roots {
		if filepath.Clean(r) == path {
			return true
		}
	}
	return false
}

// returned watches again the missing roots that are directories again,
// with every directory below them, and returns them (as given to
// newWatcher). A root that cannot be watched yet stays missing.
func (w *watcher) returned() []string {
	var back []string
	for _, root := range w.roots {
		if !w.missing[filepath.Clean(root)] {
			continue
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		if err := w.addTree(root); err != nil {
			w.logger.Warn("cannot watch a scripts directory that came back", "dir", root, "error", err)
			continue
		}
		delete(w.missing, filepath.Clean(root))
		w.logger.Info("a scripts directory came back; watching it again", "dir", root)
		back = append(back, root)
	}
	return back
}

// watching reports whether dir is a watched directory.
func (w *watcher) watching(dir string) bool {
	return slices.Contains(w.fsw.WatchList(), dir)
}
