// Package eventloop runs one goja runtime as an event loop that one
// goroutine at a time drives: the loop's own, or the caller of a Run that
// found the runtime idle.
//
// # Who runs the runtime
//
// [New] starts the loop goroutine, which creates the runtime, installs
// setTimeout, clearTimeout and queueMicrotask, runs [Options.Setup] and then
// serves jobs until [Loop.Close] or until it breaks. The runtime is a token
// (a one-slot channel): only its holder reads or writes goja values, and the
// token's hand-over orders everything it did before the next holder; the
// only other call made on the runtime is goja's Interrupt, which goja
// documents as safe from any goroutine. A Run whose caller finds the token
// free takes it and runs its own job on its own goroutine, then goes on
// serving the loop (what the job posted, the work it left for its caller,
// see [Loop.GoInline]) until its job has settled or nothing is left; a
// caller that finds it taken waits for it, for its result or for the end of
// the loop, whichever comes first, in order with the other waiters. This is
// what makes a JavaScript policy cheap: a listener called on an idle
// instance runs, calls next(), runs the rest of its chain and settles with
// no hand-off between goroutines. The loop goroutine takes the token when
// host work, a timer or a cancellation posted a job (a mutex-guarded slice
// plus a one-slot wake channel, so posting never blocks), and results travel
// on buffered channels, so nobody blocks on a caller that has gone away.
//
// A caller drives only while its own job is unfinished, and never blocks
// while it holds the token except in script code, which deadlines interrupt,
// and in native code: synchronous host functions go through [Loop.Block],
// which runs them on a goroutine of their own while a caller drives, so that
// the caller still returns at its deadline (a native builtin that runs long,
// a regular expression up to its match timeout, delays its caller by that
// long, where before it delayed the loop goroutine). Each Run is cancelled
// by a watcher of its context ([Loop.Run]) or by a timer of its own deadline
// ([Loop.RunWithin]), never by its caller, which may be busy running script
// code.
//
// [Loop.Run] runs fn as a job. If fn returns a pending *goja.Promise (a
// native promise, subclass instances included; other thenables are plain
// values, since awaiting them would call script code), the loop attaches a
// reaction to it Go-side, through the intrinsic Promise.prototype.then and
// Reflect.apply captured before any script ran: one closure passed as both
// handlers (the promise, settled by the time it runs, says which outcome it
// was), in an argument list made once per loop, so an await costs one
// function object beside the promise then makes (a script that replaces
// Promise.prototype.then does not see or stop the attachment; then still
// reads the promise's constructor and its Symbol.species, as the language
// requires, so a script that redefines those has its own code called there,
// on the loop, and can at worst keep its Run pending until the deadline), and
// goes back to serving other jobs: other Runs, timers,
// settlements from [Loop.Go]. Nothing polls. When the promise settles, the
// reaction records the outcome and done runs on the loop, in an entry of its
// own, with the fulfilled value or a *JSError; only done's Go result travels
// to the caller. An already settled promise is not attached to: done runs at
// once. Any number of Runs may be pending at once and their awaits interleave
// on the loop, as calls into one Node process do.
//
// [Loop.Go] is the host-async mechanism: a Go-implemented JS function returns
// its promise, the work runs on its own goroutine with a context that also
// ends when the loop stops, and the outcome is posted back; settle converts
// it on the loop and returns (value, error) so that a conversion failure can
// reject, which a bare value could not express.
//
// # Entries and the microtask queue
//
// goja drains its promise job queue whenever the outermost call into the
// runtime returns, and an uncatchable error (stack overflow, interrupt) that
// escapes the outermost call discards whatever jobs are still queued. So every
// time the loop's Go code enters the runtime (a Run's fn, done, onCancel, a
// timer callback, a Go settlement, Setup) it does so through a trampoline: a
// tiny JS function, compiled once, that calls back into a Go function that
// runs the job. While the trampoline's frame is on the call stack, the calls
// the job makes into the runtime are nested, so they neither drain the queue
// nor lose it on a stack overflow; the queue drains once, after the job, in
// FIFO order. Two bottom frames appear in stack traces captured inside a job:
// "<eventloop> (native)" and "<eventloop>:1:…"; [JSError.Stack] omits them.
// Go code that runs directly inside a promise job (the Run reactions, the
// rejection tracker) only records what happened; it never calls into the
// runtime, because a call from there would start a nested drain out of order.
//
// Each entry's drain also ends with goja dropping its VM stack and job queue,
// which the next entry grows again (three allocations, 448 bytes, for a
// shallow entry). The loop does not keep one entry open to keep them warm:
// within an entry no promise job runs, and a driver living in the drain
// cannot tell when the queue is empty, so either await would stop or jobs
// would overtake microtasks (TestGojaEntries; the measurements are in
// BENCHMARKS.md, "Lever 2: a warm VM").
//
// An uncatchable error that escapes the drain means goja dropped the rest of
// the job queue: async functions of any caller may never resume. The loop then
// breaks (see below) with an error wrapping [ErrBroken], since no pending Run
// could be trusted to finish. A stack overflow in a Run's own synchronous code
// does not lose the queue and is only that Run's error.
//
// # Deadlines
//
// A Run whose ctx is done before its job starts returns ctx.Err() at once and
// fn never runs (if the job is already queued, it is skipped). Once fn has
// started, ctx being done makes Run post onCancel to the loop — the
// cooperative abort, where the glue aborts the script's AbortSignal — and
// start a timer of [Options.Grace]. If the script settles within the grace
// its outcome is returned as usual.
//
// Otherwise an interrupt is meant for that Run's script only, and goja can
// only interrupt the whole runtime, which every pending Run shares: it
// comes only when script code is running. When the grace is over:
//   - If the entry that was running when the grace began runs still, it ran
//     through the whole grace deaf to the cancellation: the loop is broken
//     with [ErrInterrupted]. The runtime is interrupted (goja's Interrupt is
//     uncatchable: neither catch nor finally blocks run), Run returns an
//     error matching both ErrInterrupted and ctx's error, every other
//     pending and later Run returns ErrInterrupted, [Loop.Broken] reports
//     true, the channel of [Loop.Interrupted] closes and the goroutine exits
//     as soon as the script is out of JavaScript code. goja only checks the
//     interrupt flag between JavaScript instructions, so a script stuck
//     inside a long-running native function stops when that function
//     returns. An interrupted runtime is never reused; the glue replaces the
//     instance.
//   - If the script is waiting (an await that has not settled) and ctx's
//     deadline passed, Run returns an error matching [ErrOverdue] (and
//     ErrInterrupted, and ctx's error) without breaking the loop: the call
//     failed at its deadline; done still runs on the loop, its result
//     dropped, and what the script does later is work left behind (see
//     below). Other Runs go on.
//   - If the script is waiting and ctx was cancelled before its deadline
//     (an abort, not a deadline), the Run is overdue: it is awaited until
//     its script settles, as a started tool body is awaited after its
//     abort, while someone waits for it; its ctx's deadline, if any, still
//     ends it as above, and so does, for [Loop.RunForCaller], the end of its
//     caller's own ctx (a tool body's signal may abort while its caller
//     still waits; a caller that gave up waits no more). While any Run is overdue, no entry may run longer than
//     the grace: one that does (the overdue script resumed and spins) breaks
//     the loop as above, and the overdue Runs get an error matching
//     ErrInterrupted and their ctx's error.
//   - An entry that started during the grace and runs still gets the grace
//     from then, as above.
//
// RunWithin's own deadline ends its Run the same way, as a passed deadline.
// Entries are timed in wall time, so the grace must be long beside an
// ordinary entry (the default is 100 ms).

// # Work left behind
//
// Every entry runs on behalf of a Run (its owner, see [Loop.CallContext]) or
// of none. Script code that runs while its owner is running is that Run's
// business, bounded by its deadline as above. The rest is orphan work: timer
// callbacks, host-work settlements and promise jobs of Runs that have
// finished (an unawaited async function, a timer chain, a microtask flood
// left by a call that returned), and entries made on behalf of no Run. An
// entry turns orphan when its owner finishes in it, or when the promise its
// owner returned settles in it (the drain after a body that returned is
// orphan; so is the rest of a drain in which an async body's promise
// settled, which would otherwise delay its result until its deadline).
// Ownership is tracked per entry, not per promise job: a promise job of a
// running Run that an orphan entry happens to resume counts as orphan. Its busy time, in wall time, is a debt paid back
// at [Options.OrphanBudget] per [Options.OrphanWindow] (by default 250 ms per
// 5 s: background work that keeps the loop less than 5% busy runs forever).
// When the debt reaches the budget, the loop breaks with a reason matching
// [ErrOrphanWork] and ErrInterrupted, so the glue replaces the instance. Many
// short entries are caught as they return. One long entry (a callback that
// spins, a drain that never ends) is caught by a watchdog: a timer armed when
// an entry turns orphan, for when the rest of the budget runs out, that
// interrupts the runtime from its own goroutine as a deadline does; it is
// re-armed at most once per budget, so an ordinary call costs two clock reads
// and no timer operation. Runs still pending get the stop reason; Runs whose
// fn never ran also match [ErrNotStarted], so the glue may retry them on a
// fresh instance.
//
// # Call depth
//
// goja runs JavaScript-to-JavaScript calls without Go recursion, but each
// re-entry from a native function (Array.prototype.map callbacks, getters,
// toString, Proxy traps, sort comparators, Function.prototype.call, class
// constructors…) recurses on the Go stack, and a Go stack overflow is a
// fatal error no recover catches. Exceeding [Options.MaxCallStackSize] makes
// goja throw a *goja.StackOverflowError, which goja makes uncatchable by
// script try/catch; the Run (or timer, or Setup) gets a *JSError{Name:
// "RangeError", Message: "Maximum call stack size exceeded"} and the loop
// stays usable.
//
// The default, [DefaultMaxCallStackSize] = 1,000 frames (Python's default
// recursion limit; the depth the contract suggested), was measured with goja
// at this version:
//   - Go stack: the worst re-entry pattern needs 1–2 MiB at 1,000 frames
//     (8–16 MiB at 10,000), against Go's 1 GiB default maximum; the tests run
//     every pattern under an 8 MiB limit.
//   - Time: unwinding an uncatchable error through native frames nests one Go
//     panic per frame inside the previous one's deferred recover, which makes
//     it quadratic: a runaway recursion through getters or callbacks stalls
//     the loop about 30 ms at 1,000 frames, 110 ms at 2,000, 250 ms at 3,000
//     and 2–3 s at 10,000 (V8's order of depth), and no interrupt can cut
//     that short because no JavaScript runs while it unwinds. Plain
//     JavaScript recursion unwinds in milliseconds at any depth.
//
// So 1,000 keeps the stall of a runaway getter (a classic bug) far below the
// default grace, at the price of refusing recursion deeper than 1,000 frames;
// plugins that need more can be given a larger MaxCallStackSize. (Deep
// recursion that goja does not count as calls, such as
// `function* g(){ yield* g() }`, is not bounded by this limit and overflows
// the Go stack at any setting; that is a goja limitation this package cannot
// fix.)
//
// # Timers
//
// setTimeout(fn, ms, ...args) returns a numeric id (1, 2, …); clearTimeout(id)
// cancels it (unknown ids and non-primitive arguments are ignored). A delay
// that is negative or NaN counts as 0; one above 2^31−1 ms counts as 1, as in
// Node. Timers fire in order of due time, then id, each as its own entry
// followed by its own microtask drain; a timer created by a callback never
// fires in the same pass, even with delay 0. The loop keeps one time.Timer for
// the earliest due time instead of a goroutine per timer. A callback that
// throws is reported through [Options.OnError] and the loop goes on.
// queueMicrotask(fn) enqueues fn on goja's promise job queue (through the
// intrinsic then of a resolved promise), so it runs in FIFO order with
// promise reactions; an exception it throws is reported through OnError.
// Close stops and drops all timers.
//
// # Errors
//
// The reason the loop broke reaches OnError as well: ErrInterrupted (a
// deadline), an error wrapping ErrOrphanWork (which matches ErrInterrupted),
// or one wrapping ErrBroken (a fault). The first two are interrupts the loop
// caused, not script errors.
//
// Script errors reach done and OnError as *JSError: Name, Message and Stack
// of a thrown Error read Go-side from data properties (accessors, proxies and
// script-defined toString are never called; the Stack is formatted from the
// frames goja captured), a thrown non-Error follows String(v) for primitives,
// "[object Object]" (or its class) for objects without a string message, and
// "<unprintable thrown value>" for a Proxy. Data properties are read through
// the intrinsic Object.getOwnPropertyDescriptor; goja fills the descriptor
// object with ordinary assignments, so a setter that a script put on
// Object.prototype under a descriptor field name ("value", "get", …) would
// run: when Object.prototype has such an own property, thrown objects are
// "<unprintable thrown value>" instead. An Error's own "stack" is never read
// (goja formats it lazily from name and message, getters included); the
// frames goja captured for the error are formatted instead.
// Each text a *JSError carries (its name, its message, a thrown object's own
// stack text) is cut to [Options.MaxErrorText] bytes ([DefaultMaxErrorText],
// 16 KiB, unless set), marked "… (truncated)": a string longer than the bound
// is measured first and only its prefix converted ([CutText]), so a thrown
// 100-million-character message costs the bound, not copies of itself.
// [Options.ThrownValue] lets the glue attach the thrown value in Go form
// (e.g. a coded {name, code, message} object). A goja error that done
// returns, even wrapped, is replaced by its conversion ([Loop.ScriptError]),
// so no goja value leaves the loop inside an error.
//
// A Go panic on the loop (in fn, done, a host function, a timer callback)
// unwinds through script frames without running their finally blocks, so it
// breaks the loop with a *PanicError wrapped in ErrBroken instead of
// crashing the process. A panic in a [Loop.Go] work function, which runs on
// its own goroutine outside the runtime, only rejects that promise.
//
// When Options.OnError is set, a promise that is rejected and still has no
// handler once the microtask queue has drained is reported through it, as
// Node's unhandledRejection; Setup may install its own tracker instead.
package eventloop
