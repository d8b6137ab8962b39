package scripting

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/engine"
)

// DefaultDisposeTimeout bounds how long a replaced or removed plugin version
// waits for the calls that began before the swap, before its interpreters
// are closed anyway (they close as those calls settle).
const DefaultDisposeTimeout = 30 * time.Second

// DefaultSettle is how long a plugin file must stay empty before the
// plugin it served is unloaded (see Reloader.Settle).
const DefaultSettle = time.Second

// renameWait bounds how long the loads of a batch of changes wait for its
// unloads, so that a renamed plugin is unloaded before it loads again under
// its new name (a load that still conflicts is retried after the unload).
const renameWait = time.Second

// Reloader keeps the plugins of scripts directories loaded while their files
// change: hot reload. It loads every plugin ([PluginFiles]) when started, then
// watches the directories (see [DefaultDebounce]) and, for each plugin file
// that changed, loads the new version in fresh interpreters and swaps it in
// for the old one in one [engine.Service.Swap]: a call sees the old version
// or the new, never neither and never both; the calls that began before
// finish on the old version, which is disposed once they drained. A version
// that fails to load (a syntax error, a top level that throws, a duplicate
// tool name) is reported and leaves the old one serving. A file that
// disappears is unloaded, a new one loaded, a renamed one both. A file that
// is emptied (nothing but white space) is unloaded only once it has stayed
// empty for the settle window (see [DefaultSettle]): an editor that saves by
// truncating the file and writing it a moment later does not drop the
// plugin's tools and policies in between. An empty file loads nothing. A
// module (under lib/ or any file a plugin imports) that changes reloads the
// plugins that import it, directly or through other modules.
//
// The importers of a module are found by scanning the sources of the
// plugins and of the modules they import for literal imports, resolved as
// the hosts resolve them (the hosts' [FileRules]); a plugin with an import
// that is not a literal (require(name)) is reloaded by any module change.
//
// Reloads of one plugin are serialized and coalesced: at most one runs and
// one waits, whatever the rate of writes. An unchanged file (same content
// hash) is not reloaded. Status reports each plugin's version and last error.
//
// Each event ([ReloadEvent]) is also recorded through the providers of the
// Loader's Service ([engine.Service.TracerProvider], MeterProvider), when it
// has them: a root span "dsh.reload" with one "dsh.plugin.reload" event (the
// plugin, the revision serving, the outcome, and for a failure its
// error.type and the diagnostic's first line, cut to 256 bytes), and one
// increment of the counter "dsh.reload.count" by plugin and outcome.
//
//	r := &scripting.Reloader{Loader: loader, Dirs: []string{"scripts"}}
//	if err := r.Start(ctx); err != nil {
//		return err
//	}
//	defer r.Close(ctx)
type Reloader struct {
	Loader *Loader
	Dirs   []string // the scripts directories
	// Debounce is how long changes wait for quiet before they are acted on
	// (DefaultDebounce when zero); a storm of writes is acted on at least
	// every two periods.
	Debounce time.Duration
	// Settle is how long an emptied plugin file must stay empty before
	// the version it served is unloaded (DefaultSettle when zero). Deleting
	// the file unloads it at once.
	Settle time.Duration
	// DisposeTimeout bounds the wait for an old version's calls
	// (DefaultDisposeTimeout when zero).
	DisposeTimeout time.Duration
	Logger         *slog.Logger // discards when nil
	// OnReload, when set, hears every load, reload, unload and failure, the
	// initial loads included, one event at a time and in order for each
	// plugin. It must not call the Reloader's Close.
	OnReload func(ReloadEvent)

	mu       sync.Mutex
	started  bool
	closed   bool
	entries  map[pluginKey]*entry
	closures map[pluginKey]imports // what each known plugin imports
	mods     map[pluginKey]string  // content hashes of the files acted on
	w        *watcher
	tel      *reloadTelemetry // nil: the Service has no providers

	ctx         context.Context // cancelled by Close: loads in progress stop
	cancel      context.CancelFunc
	drainCtx    context.Context // cancelled when Close gives up waiting
	drainCancel context.CancelFunc
	workers     sync.WaitGroup
	drains      sync.WaitGroup
	notifyMu    sync.Mutex
}

// ReloadKind says what happened to a plugin.
type ReloadKind string

// The reload kinds.
const (
	PluginLoaded   ReloadKind = "loaded"   // a version serves where none did
	PluginReloaded ReloadKind = "reloaded" // a new version replaced the one serving
	PluginUnloaded ReloadKind = "unloaded" // its file went away: no version serves
	PluginFailed   ReloadKind = "failed"   // a version failed to load; the old one (if any) serves
	// PluginRestored: after a failed reload, the file is back to the
	// version serving, which serves it again (nothing is reloaded).
	PluginRestored ReloadKind = "restored"
)

// ReloadEvent is one thing that happened to a plugin.
type ReloadEvent struct {
	Kind ReloadKind
	Dir  string // the scripts directory
	File string // the plugin, relative to Dir, with forward slashes
	// Revision is the content hash of the version the event is about: the
	// one now serving, the one unloaded, or the one that failed.
	Revision string
	// Previous is, for a reload, the revision it replaced, for a failure,
	// the revision still serving ("" when none serves), and for a restore,
	// the revision that had failed.
	Previous string
	Err      *Diagnostic // a failure's diagnostic
	At       time.Time
}

// PluginStatus is one plugin's state: the version serving and the last error.
type PluginStatus struct {
	Dir  string // the scripts directory
	File string // relative to Dir, with forward slashes
	// Revision is the content hash of the version serving, "" when none
	// does (the file never loaded).
	Revision string
	LoadedAt time.Time // when that version began to serve
	// Err is the last load's failure: nil once a version of the file on disk
	// serves. FailedRevision is the content hash of the version that failed.
	Err            *Diagnostic
	FailedRevision string
	Plugin         *Loaded // the version serving, nil when none
}

type pluginKey struct{ dir, rel string }

// entry is one plugin file the reloader knows: loaded, or failed to load.
// Its fields are guarded by Reloader.mu; cur changes only on its worker.
type entry struct {
	key         pluginKey
	cur         *Loaded
	loadedAt    time.Time
	err         *Diagnostic
	errRevision string
	conflict    bool // err came from the commit: another plugin may be in the way
	running     bool // a worker serves the entry
	pending     *job // the one job waiting behind the running one
	// emptySince is when the file was first seen empty while a version
	// served (zero when it is not), and recheck the timer that looks at it
	// again once the settle window is over.
	emptySince time.Time
	recheck    *time.Timer
}

// job is one reconciliation of a plugin with its file.
type job struct {
	force   bool // reload even an unchanged file: a module it imports changed
	retry   bool // try a version that failed to commit again
	initial bool // part of Start's loads
	after   []<-chan struct{}
	done    chan struct{}

	start time.Time // when its reconciliation began: its reload span's start
}

func (j *job) merge(o job) {
	j.force = j.force || o.force
	j.retry = j.retry || o.retry
	j.initial = j.initial && o.initial
	j.after = append(j.after, o.after...)
}

func (r *Reloader) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (r *Reloader) debounce() time.Duration {
	if r.Debounce > 0 {
		return r.Debounce
	}
	return DefaultDebounce
}

func (r *Reloader) settle() time.Duration {
	if r.Settle > 0 {
		return r.Settle
	}
	return DefaultSettle
}

func (r *Reloader) disposeTimeout() time.Duration {
	if r.DisposeTimeout > 0 {
		return r.DisposeTimeout
	}
	return DefaultDisposeTimeout
}

func (r *Reloader) svc() *engine.Service { return r.Loader.Service }

// Start watches the directories and loads their plugins, one after the
// other in PluginFiles order (the first of two plugins registering the same
// tool wins), reporting each as an event. It returns once they are loaded;
// broken ones are in Status. The error is for a directory that cannot be
// read or watched: then nothing is loaded. ctx bounds the initial loads;
// the reloader runs until Close.
func (r *Reloader) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("the reloader has already been started")
	}
	r.started = true
	r.entries = map[pluginKey]*entry{}
	r.closures = map[pluginKey]imports{}
	r.mods = map[pluginKey]string{}
	r.tel = newReloadTelemetry(r.svc())
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.drainCtx, r.drainCancel = context.WithCancel(context.WithoutCancel(ctx))
	r.mu.Unlock()

	files := make([][]string, len(r.Dirs))
	for i, dir := range r.Dirs {
		f, err := PluginFiles(dir, r.Loader.Hosts)
		if err != nil {
			r.abort()
			return err
		}
		files[i] = f
	}
	// Watch before reading the files, so that no change goes unseen, but
	// record what the plugins import first: a module changed meanwhile is
	// reloaded again.
	w, err := newWatcher(r.Dirs, r.debounce(), r.logger(), r.handle)
	if err != nil {
		r.abort()
		return err
	}
	r.mu.Lock()
	r.w = w
	for i, dir := range r.Dirs {
		for _, rel := range files[i] {
			k := pluginKey{dir, rel}
			imp := scanClosure(r.Loader.Hosts, dir, rel)
			r.closures[k] = imp
			for f := range imp.files {
				if h, ok := hashFile(dir, f); ok {
					r.mods[pluginKey{dir, f}] = h
				}
			}
		}
	}
	r.mu.Unlock()
	for i, dir := range r.Dirs {
		for _, rel := range files[i] {
			done := r.schedule(pluginKey{dir, rel}, job{initial: true})
			select {
			case <-done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// abort undoes a Start that failed before loading anything.
func (r *Reloader) abort() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.drainCancel()
}

// Close stops watching, waits for the reloads in progress (loads still
// evaluating are cancelled), and disposes every plugin, waiting for their
// calls and those of replaced versions until ctx is done; Status is empty
// after. It returns the first disposal error. Call it after Start, even
// when Start failed.
func (r *Reloader) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.started || r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	w := r.w
	r.mu.Unlock()
	if w != nil {
		w.close()
	}
	r.cancel()
	r.workers.Wait()

	r.mu.Lock()
	for _, e := range r.entries {
		if e.recheck != nil {
			e.recheck.Stop()
		}
	}
	var plugins []*Loaded
	for _, s := range r.statusLocked() {
		if s.Plugin != nil {
			plugins = append(plugins, s.Plugin)
		}
	}
	clear(r.entries)
	clear(r.closures)
	r.mu.Unlock()
	err := DisposeAll(ctx, plugins)

	done := make(chan struct{})
	go func() {
		r.drains.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		r.drainCancel()
		<-done
	}
	r.drainCancel()
	return err
}

// Status returns every plugin the reloader knows, loaded or failed, in the
// order of Dirs and then of their files.
func (r *Reloader) Status() []PluginStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked()
}

func (r *Reloader) statusLocked() []PluginStatus {
	var out []PluginStatus
	for _, e := range r.entries {
		if e.cur == nil && e.err == nil {
			continue
		}
		s := PluginStatus{Dir: e.key.dir, File: e.key.rel, LoadedAt: e.loadedAt, Err: e.err, FailedRevision: e.errRevision, Plugin: e.cur}
		if e.cur != nil {
			s.Revision = e.cur.Revision()
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b PluginStatus) int {
		if a.Dir != b.Dir {
			return slices.Index(r.Dirs, a.Dir) - slices.Index(r.Dirs, b.Dir)
		}
		return strings.Compare(a.File, b.File)
	})
	return out
}

// schedule queues a reconciliation of the plugin k with its file: it runs
// at once on a worker of its own, or, while one runs, as the one job waiting
// behind it (merged with any already waiting). The channel closes when a job
// that covers this one is done.
func (r *Reloader) schedule(k pluginKey, j job) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	e := r.entries[k]
	if e == nil {
		e = &entry{key: k}
		r.entries[k] = e
	}
	if e.running {
		if e.pending == nil {
			e.pending = &job{initial: j.initial, done: make(chan struct{})}
		}
		e.pending.merge(j)
		return e.pending.done
	}
	nj := j
	nj.done = make(chan struct{})
	e.running = true
	r.workers.Add(1)
	go r.work(e, &nj)
	return nj.done
}

// work runs an entry's jobs until none waits.
func (r *Reloader) work(e *entry, j *job) {
	defer r.workers.Done()
	for {
		if len(j.after) > 0 {
			r.waitAfter(j.after)
		}
		if r.ctx.Err() == nil {
			r.reconcile(e, j)
		}
		close(j.done)
		r.mu.Lock()
		j = e.pending
		e.pending = nil
		if j == nil || r.closed {
			e.running = false
			if j != nil {
				close(j.done)
			}
			if e.cur == nil && e.err == nil && r.entries[e.key] == e {
				delete(r.entries, e.key)
				delete(r.closures, e.key)
			}
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}

// waitAfter waits, a bounded time, for the unloads a load comes after.
func (r *Reloader) waitAfter(after []<-chan struct{}) {
	t := time.NewTimer(renameWait)
	defer t.Stop()
	for _, ch := range after {
		select {
		case <-ch:
		case <-t.C:
			return
		case <-r.ctx.Done():
			return
		}
	}
}

// reconcile makes what serves for e match its file: unload it if gone,
// (re)load it if new or changed (or when forced).
func (r *Reloader) reconcile(e *entry, j *job) {
	dir, rel := e.key.dir, e.key.rel
	j.start = time.Now()
	file := filepath.Join(dir, filepath.FromSlash(rel))
	code, present := readPlugin(file)
	if present && !isPluginPath(r.Loader.Hosts, dir, rel) {
		present = false // it became a declaration file: unload what served
	}
	r.mu.Lock()
	cur, hadErr, errRev, conflict := e.cur, e.err != nil, e.errRevision, e.conflict
	r.mu.Unlock()

	if present && len(bytes.TrimSpace(code)) == 0 {
		// An empty file loads nothing; one that served is unloaded once
		// it has stayed empty for the settle window.
		if cur != nil && !r.settled(e, file) {
			return
		}
		present = false
	}
	r.mu.Lock()
	if present || !e.emptySince.IsZero() {
		e.emptySince = time.Time{}
		if e.recheck != nil {
			e.recheck.Stop()
			e.recheck = nil
		}
	}
	r.mu.Unlock()

	if !present {
		r.mu.Lock()
		e.err, e.errRevision, e.conflict = nil, "", false
		r.mu.Unlock()
		if cur == nil {
			return
		}
		epoch, err := r.svc().Swap(func() error { cur.Retire(); return nil })
		if err != nil {
			r.logger().Error("plugin unload failed", "plugin", rel, "error", err)
			return
		}
		r.mu.Lock()
		e.cur, e.loadedAt = nil, time.Time{}
		r.mu.Unlock()
		r.retire(epoch, cur)
		r.logger().Info("plugin unloaded", "plugin", rel, "revision", short(cur.Revision()))
		r.notify(ReloadEvent{Kind: PluginUnloaded, Dir: dir, File: rel, Revision: cur.Revision()}, j.start, false)
		r.retryConflicts(e.key)
		return
	}

	rev := revision(code)
	switch {
	case j.force:
	case cur != nil && rev == cur.Revision():
		// The version serving is the file's: nothing to do, and an
		// error about another version is over.
		r.mu.Lock()
		e.err, e.errRevision, e.conflict = nil, "", false
		r.mu.Unlock()
		if hadErr {
			r.logger().Info("plugin file restored", "plugin", rel, "revision", short(rev), "failed", short(errRev))
			r.notify(ReloadEvent{Kind: PluginRestored, Dir: dir, File: rel, Revision: rev, Previous: errRev}, j.start, false)
		}
		return
	case cur == nil && hadErr && rev == errRev && !(j.retry && conflict):
		return // the same broken version
	}

	next, err := r.Loader.Prepare(r.ctx, dir, rel)
	if err == nil {
		var epoch engine.Epoch
		epoch, err = r.svc().Swap(func() error {
			if cur != nil {
				cur.Retire()
			}
			return next.Commit()
		})
		if err != nil {
			_ = next.Dispose(context.Background())
			r.failed(e, j, rev, cur, asDiagnostic(rel, err), true)
			return
		}
		now := time.Now()
		r.mu.Lock()
		e.cur, e.loadedAt = next, now
		e.err, e.errRevision, e.conflict = nil, "", false
		r.mu.Unlock()
		r.rescan(e.key)
		ev := ReloadEvent{Kind: PluginLoaded, Dir: dir, File: rel, Revision: next.Revision(), At: now}
		if cur != nil {
			ev.Kind, ev.Previous = PluginReloaded, cur.Revision()
			r.retire(epoch, cur)
			r.logger().Info("plugin reloaded", "plugin", rel, "revision", short(next.Revision()), "previous", short(cur.Revision()))
		} else {
			r.logger().Info("plugin loaded", "plugin", rel, "revision", short(next.Revision()))
		}
		r.notify(ev, j.start, false)
		if !j.initial {
			r.retryConflicts(e.key)
		}
		return
	}
	if r.ctx.Err() != nil {
		return // closing: a cancelled load is no diagnostic
	}
	r.failed(e, j, rev, cur, asDiagnostic(rel, err), false)
}

// settled reports whether the file of e, found empty while a version
// serves, has stayed empty for the settle window: since the reloader first
// saw it empty, or since it was last modified if that is later. If not, it
// arranges for another look once the window is over.
func (r *Reloader) settled(e *entry, file string) bool {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.emptySince.IsZero() {
		e.emptySince = now
	}
	since := e.emptySince
	if fi, err := os.Lstat(file); err == nil && fi.ModTime().After(since) {
		since = fi.ModTime()
		if since.After(now) {
			since = now // a clock ahead of ours
		}
	}
	wait := r.settle() - now.Sub(since)
	if wait <= 0 {
		return true
	}
	if e.recheck != nil {
		e.recheck.Stop()
	}
	k := e.key
	e.recheck = time.AfterFunc(wait, func() { r.schedule(k, job{}) })
	return false
}

// failed records and reports a version that did not load.
func (r *Reloader) failed(e *entry, j *job, rev string, cur *Loaded, d *Diagnostic, conflict bool) {
	r.mu.Lock()
	e.err, e.errRevision, e.conflict = d, rev, conflict
	r.mu.Unlock()
	r.rescan(e.key)
	ev := ReloadEvent{Kind: PluginFailed, Dir: e.key.dir, File: e.key.rel, Revision: rev, Err: d, At: time.Now()}
	switch {
	case j.initial:
		r.logger().Warn("plugin failed to load", "plugin", e.key.rel, "revision", short(rev), "error", d.Error())
	case cur != nil:
		ev.Previous = cur.Revision()
		r.logger().Warn("plugin reload failed", "plugin", e.key.rel, "revision", short(rev), "serving", short(cur.Revision()), "error", d.Error())
	default:
		r.logger().Warn("plugin reload failed", "plugin", e.key.rel, "revision", short(rev), "error", d.Error())
	}
	r.notify(ev, j.start, conflict)
}

// retryConflicts schedules another try of the plugins that failed to commit
// (a duplicate tool name, say) and serve no version: what they conflicted
// with may just have gone.
func (r *Reloader) retryConflicts(except pluginKey) {
	r.mu.Lock()
	var keys []pluginKey
	for k, e := range r.entries {
		if k != except && e.cur == nil && e.err != nil && e.conflict {
			keys = append(keys, k)
		}
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.schedule(k, job{retry: true})
	}
}

// retire disposes a version that a swap replaced or removed, once the calls
// that began before the swap have drained, in the background.
func (r *Reloader) retire(epoch engine.Epoch, old *Loaded) {
	r.drains.Add(1)
	go func() {
		defer r.drains.Done()
		ctx, cancel := context.WithTimeout(r.drainCtx, r.disposeTimeout())
		defer cancel()
		if err := r.svc().Drain(ctx, epoch); err != nil {
			r.logger().Warn("calls of a replaced plugin version are still running", "plugin", old.Source.Rel, "revision", short(old.Revision()), "error", err)
		}
		if err := old.Dispose(ctx); err != nil {
			r.logger().Warn("disposing a replaced plugin version", "plugin", old.Source.Rel, "revision", short(old.Revision()), "error", err)
		}
	}()
}

// notify reports ev, of a reconciliation that began at start (conflict:
// a failure came from the commit), to the telemetry and to OnReload.
func (r *Reloader) notify(ev ReloadEvent, start time.Time, conflict bool) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	r.tel.record(ev, start, conflict)
	if r.OnReload == nil {
		return
	}
	r.notifyMu.Lock()
	defer r.notifyMu.Unlock()
	r.OnReload(ev)
}

// rescan records again what a plugin imports.
func (r *Reloader) rescan(k pluginKey) {
	imp := scanClosure(r.Loader.Hosts, k.dir, k.rel)
	r.mu.Lock()
	if _, ok := r.entries[k]; ok {
		r.closures[k] = imp
	}
	r.mu.Unlock()
}

// handle acts on one batch of changed paths from the watcher.
func (r *Reloader) handle(paths []string) {
	for _, dir := range r.Dirs {
		changed := map[string]bool{}
		for _, p := range paths {
			rel, ok := relInside(dir, p)
			if !ok {
				continue
			}
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				for _, f := range filesBelow(p) {
					if sub, ok := relInside(dir, f); ok {
						changed[sub] = true
					}
				}
			} else if rel != "." {
				changed[rel] = true
			}
			// What is known below a directory that went away (or is
			// looked at again).
			r.mu.Lock()
			for k := range r.entries {
				if k.dir == dir && below(k.rel, rel) {
					changed[k.rel] = true
				}
			}
			for k := range r.mods {
				if k.dir == dir && below(k.rel, rel) {
					changed[k.rel] = true
				}
			}
			r.mu.Unlock()
		}
		if len(changed) > 0 {
			r.apply(dir, changed)
		}
	}
}

// apply schedules what a set of changed files of dir calls for: the plugins
// among them, and the plugins importing those whose content changed.
// Unloads go first: the loads wait for them.
func (r *Reloader) apply(dir string, changed map[string]bool) {
	hosts := r.Loader.Hosts
	targets := map[string]job{}
	r.mu.Lock()
	for rel := range changed {
		if _, known := r.entries[pluginKey{dir, rel}]; known || isPluginPath(hosts, dir, rel) {
			targets[rel] = job{}
		}
	}
	// Which files changed content, by their hash: the modules among them
	// reload their importers.
	var mods []string
	for rel := range changed {
		k := pluginKey{dir, rel}
		h, ok := hashFile(dir, rel)
		old, known := r.mods[k]
		switch {
		case ok && known && h == old:
			continue
		case ok:
			r.mods[k] = h
		case known:
			delete(r.mods, k)
		default:
			continue // neither there before nor now
		}
		mods = append(mods, rel)
	}
	for k, imp := range r.closures {
		if k.dir != dir {
			continue
		}
		for _, m := range mods {
			if m != k.rel && (imp.files[m] || imp.dynamic && moduleHostOf(hosts, m) != nil) {
				targets[k.rel] = job{force: true}
				break
			}
		}
	}
	r.mu.Unlock()

	var gone []<-chan struct{}
	rels := make([]string, 0, len(targets))
	for rel := range targets {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		if _, present := readPlugin(filepath.Join(dir, filepath.FromSlash(rel))); !present {
			gone = append(gone, r.schedule(pluginKey{dir, rel}, targets[rel]))
		}
	}
	for _, rel := range rels {
		if _, present := readPlugin(filepath.Join(dir, filepath.FromSlash(rel))); present {
			j := targets[rel]
			j.after = gone
			r.schedule(pluginKey{dir, rel}, j)
		}
	}
}

// relInside returns p relative to dir, with forward slashes ("." for dir
// itself), if p is dir or below it.
func relInside(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// below reports whether rel is dir or a path below it (everything is below ".").
func below(rel, dir string) bool {
	return dir == "." || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// filesBelow lists the regular files below dir, in the directories the
// watcher watches.
func filesBelow(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir():
			if p != dir && !watchedDir(d.Name()) {
				return filepath.SkipDir
			}
		case d.Type().IsRegular() && !ignoredName(d.Name()):
			out = append(out, p)
		}
		return nil
	})
	return out
}

// readPlugin reads a plugin file; present is false when there is no
// regular file there (symbolic links are not followed, as by PluginFiles).
func readPlugin(p string) (code []byte, present bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	code, err = ReadSource(p, 0)
	var big *SourceTooBigError
	if errors.As(err, &big) {
		// Present, and refused when loaded; its first bytes stand for it.
		return []byte(big.Error()), true
	}
	if err != nil {
		return nil, false
	}
	return code, true
}

func revision(code []byte) string {
	sum := sha256.Sum256(code)
	return hex.EncodeToString(sum[:])
}

// hashFile returns the content hash of a regular file below dir.
func hashFile(dir, rel string) (string, bool) {
	code, ok := readPlugin(filepath.Join(dir, filepath.FromSlash(rel)))
	if !ok {
		return "", false
	}
	return revision(code), true
}

// short abbreviates a revision for logs.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// imports is what a plugin imports, directly or through other modules: every
// file an import of it or of its modules may resolve to (existing or not),
// and whether some import is not a literal (then any module may be one).
type imports struct {
	files   map[string]bool
	dynamic bool
}

// Limits of the import scan.
const (
	maxScanFiles = 1000
	maxScanBytes = 4 << 20
)

// scanClosure finds what the plugin rel of dir imports, following the
// imports of the modules it finds, by the rules of the hosts that load them.
func scanClosure(hosts []Host, dir, rel string) imports {
	imp := imports{files: map[string]bool{}}
	seen := map[string]bool{rel: true}
	queue := []string{rel}
	for len(queue) > 0 && len(seen) <= maxScanFiles {
		f := queue[0]
		queue = queue[1:]
		h := moduleHostOf(hosts, f)
		if h == nil {
			continue
		}
		code, ok := readPlugin(filepath.Join(dir, filepath.FromSlash(f)))
		if !ok || len(code) > maxScanBytes {
			continue
		}
		specs, dynamic := h.Imports(f, code)
		imp.dynamic = imp.dynamic || dynamic
		for _, spec := range specs {
			for _, c := range h.ImportCandidates(f, spec) {
				imp.files[c] = true
				if !seen[c] && moduleHostOf(hosts, c) != nil {
					seen[c] = true
					queue = append(queue, c)
				}
			}
		}
	}
	delete(imp.files, rel)
	return imp
}
