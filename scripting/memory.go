package scripting

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// MiB is a mebibyte, the unit of the memory limit's message and flag.
const MiB = 1 << 20

// Defaults of [MemoryGuardOptions].
const (
	DefaultMemoryInterval    = time.Millisecond
	DefaultMemoryMaxInterval = 20 * time.Millisecond
	DefaultMemoryGCEvery     = 10 * time.Millisecond
)

// maxAllocRate is the fastest a script is assumed to grow the heap, in
// bytes per second, for spacing samples out while the heap is far below the
// limit (goja and gopher-lua allocate well under 1 GiB/s on one core).
const maxAllocRate = 4 << 30

// ErrMemoryLimit is matched (errors.Is) by the error of a call that a
// [MemoryGuard] stopped: a *[MemoryLimitError].
var ErrMemoryLimit = errors.New("script exceeded the memory limit")

// MemoryLimitError is the error of a call whose script was stopped because
// the heap passed the guard's limit.
type MemoryLimitError struct {
	Limit int64 // bytes
}

// Error returns "script exceeded the memory limit (<n> MiB)", the limit in
// whole MiB rounded up.
func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("script exceeded the memory limit (%d MiB)", (e.Limit+MiB-1)/MiB)
}

// Is reports whether target is ErrMemoryLimit.
func (e *MemoryLimitError) Is(target error) bool { return target == ErrMemoryLimit }

// Victim is what a [MemoryGuard] stops: an interpreter instance whose script
// code runs. Interrupt must not block, may be called from any goroutine and
// more than once; the instance it stops is discarded, never reused.
type Victim interface {
	Interrupt(cause error)
}

// MemoryGuardOptions configures a [MemoryGuard]. The zero value is usable.
type MemoryGuardOptions struct {
	// Interval is how often the heap is sampled while script code runs and
	// the heap is near the limit; DefaultMemoryInterval when zero.
	Interval time.Duration
	// MaxInterval is how long the guard may wait between two samples while
	// the heap is far below the limit (the wait is the time a script would
	// need to reach the limit at 4 GiB/s, between Interval and MaxInterval);
	// DefaultMemoryMaxInterval when zero.
	MaxInterval time.Duration
	// GCEvery is the least time between two collections the guard forces to
	// tell live memory from garbage; DefaultMemoryGCEvery when zero.
	GCEvery time.Duration
	// Logger receives a warning for each time the limit stops scripts;
	// discarded when nil.
	Logger *slog.Logger
}

// MemoryGuard bounds the memory scripts may use. The Go heap is one for the
// whole process and no interpreter can say what it allocated, so the guard
// watches the process's heap while script code runs, and when it passes the
// limit it interrupts every instance whose script code is running then.
//
// Hosts call [MemoryGuard.Enter] when script code of a call starts running on
// an instance and the function it returns when it stops. While something is
// entered, a goroutine samples the heap (runtime/metrics, which does not stop
// the world) every Interval, or less often while the heap is far below the
// limit; nothing runs while nothing is entered. When the
// heap (live objects and garbage not yet swept) passes the limit, the guard
// forces a collection to tell live memory from garbage; if the live heap is
// still over the limit, each entered instance is interrupted with a
// *[MemoryLimitError], and once they have all left the guard collects again
// and returns the freed memory to the operating system.
//
// What the guard cannot do: the heap is shared, so an innocent call running
// at the moment another pushes the heap over the limit is stopped too (a
// plugin's top level loading beside a hostile one included), and
// memory held by instances that are not running (a plugin's globals between
// calls) counts towards the limit without being stopped. One allocation that
// jumps far past the limit (a huge string or array made in one step by Go
// code) happens before the guard can see it: such operations need caps of
// their own. The limit bounds the heap, not the process's resident size,
// which the Go runtime's soft limit (debug.SetMemoryLimit, process-wide:
// the CLI sets it to one and a half times the limit) keeps close to it.
//
// A MemoryGuard is safe for concurrent use. A nil *MemoryGuard is off: Enter
// returns a function that does nothing.
type MemoryGuard struct {
	limit   int64
	err     *MemoryLimitError
	every   time.Duration
	most    time.Duration
	gcEvery time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	head     *memEntry // entered, most recent first
	n        int       // entered
	killedIn int       // entered and interrupted, not yet left
	running  bool      // the sampler goroutine is alive
	active   bool      // something entered since the sampler's last tick
	free     bool      // interrupted instances left: return memory to the OS
	lastGC   time.Time // the sampler's last forced collection (sampler only)
	samples  [1]metrics.Sample
	live     [1]metrics.Sample
}

// memEntry is one Enter: a running call's instance.
type memEntry struct {
	g          *MemoryGuard
	victim     Victim
	prev, next *memEntry
	killed     bool
	left       bool
}

// NewMemoryGuard returns a guard that stops scripts once the heap passes
// limit bytes. A limit <= 0 returns nil, the guard that is off.
func NewMemoryGuard(limit int64, opts MemoryGuardOptions) *MemoryGuard {
	if limit <= 0 {
		return nil
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultMemoryInterval
	}
	if opts.MaxInterval < opts.Interval {
		opts.MaxInterval = max(DefaultMemoryMaxInterval, opts.Interval)
	}
	if opts.GCEvery <= 0 {
		opts.GCEvery = DefaultMemoryGCEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := &MemoryGuard{limit: limit, err: &MemoryLimitError{Limit: limit}, every: opts.Interval, most: opts.MaxInterval, gcEvery: opts.GCEvery, log: opts.Logger}
	g.samples[0].Name = "/memory/classes/heap/objects:bytes"
	g.live[0].Name = "/gc/heap/live:bytes"
	return g
}

// Limit returns the limit in bytes (0 for a nil guard).
func (g *MemoryGuard) Limit() int64 {
	if g == nil {
		return 0
	}
	return g.limit
}

// Err returns the error the guard's victims are interrupted with (nil for a
// nil guard).
func (g *MemoryGuard) Err() error {
	if g == nil {
		return nil
	}
	return g.err
}

// Enter records that script code of a call runs on v from now on, until the
// returned function is called (it may be called more than once). The same
// victim may be entered several times at once (nested or concurrent calls on
// one instance).
func (g *MemoryGuard) Enter(v Victim) (leave func()) {
	if g == nil {
		return func() {}
	}
	e := &memEntry{g: g, victim: v}
	g.mu.Lock()
	e.next = g.head
	if g.head != nil {
		g.head.prev = e
	}
	g.head = e
	g.n++
	g.active = true
	if !g.running {
		g.running = true
		go g.sample()
	}
	g.mu.Unlock()
	return e.leave
}

func (e *memEntry) leave() {
	g := e.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.left {
		return
	}
	e.left = true
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		g.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
	g.n--
	if e.killed {
		g.killedIn--
	}
}

// sample is the sampler goroutine: it runs while something is entered (it
// exits at the first tick that finds nothing entered and no Enter since the
// previous one).
func (g *MemoryGuard) sample() {
	t := time.NewTimer(g.every)
	defer t.Stop()
	for range t.C {
		wait, ok := g.tick()
		if !ok {
			return
		}
		t.Reset(wait)
	}
}

// tick samples once and returns how long to wait for the next sample; it
// reports false when the sampler is to exit.
func (g *MemoryGuard) tick() (time.Duration, bool) {
	g.mu.Lock()
	free := g.free && g.killedIn == 0
	if free {
		g.free = false
	}
	idle := g.n == 0 && !g.active
	g.active = false
	fresh := g.n > g.killedIn // entered and not interrupted yet
	if idle && !free {
		g.running = false
		g.mu.Unlock()
		return 0, false
	}
	g.mu.Unlock()
	if free {
		// The interrupted instances' script code stopped: give back what
		// they held (as far as their hosts already let go of them).
		debug.FreeOSMemory()
	}
	if !fresh {
		return g.every, true
	}
	heap := g.read(g.samples[:])
	if heap <= g.limit {
		// Far below the limit, a script needs a while to reach it.
		wait := time.Duration(float64(g.limit-heap) / maxAllocRate * float64(time.Second))
		return min(max(wait, g.every), g.most), true
	}
	// Over the limit, maybe with garbage: collect to know. Not more often
	// than gcEvery, so that a heap hovering at the limit does not make the
	// guard collect all the time.
	if time.Since(g.lastGC) < g.gcEvery {
		return g.every, true
	}
	runtime.GC()
	g.lastGC = time.Now()
	live := g.read(g.live[:])
	if live <= g.limit {
		return g.every, true
	}
	g.mu.Lock()
	var victims []Victim
	for e := g.head; e != nil; e = e.next {
		if e.killed {
			continue
		}
		e.killed = true
		g.killedIn++
		victims = append(victims, e.victim)
	}
	if len(victims) > 0 {
		g.free = true
	}
	g.mu.Unlock()
	for _, v := range victims {
		v.Interrupt(g.err)
	}
	if len(victims) > 0 {
		g.log.Warn("scripts stopped: "+g.err.Error(), "live_heap_mib", live/MiB, "calls", len(victims))
	}
	return g.every, true
}

// read returns the value of the one metric of s (0 if unsupported).
func (g *MemoryGuard) read(s []metrics.Sample) int64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
