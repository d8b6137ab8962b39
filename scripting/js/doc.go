// Package js is dsh's JavaScript and TypeScript host: it runs plugins with
// goja, one event loop per interpreter instance, and binds the dsh module
// (defineTool, tools, on, log) to the engine through the scripting package.
//
// Every script callback a plugin registers is called through its pool: the
// call goes to the plugin's live instance as a job on that instance's loop
// (run on the caller's own goroutine when the instance is idle, see
// scripting/js/internal/eventloop), and values cross by Go-side conversion
// (scripting/js/internal/jsvalue). A pre- or post-execute listener's next()
// runs the rest of its chain on the same goroutine once the listener's job
// is over, so a chain of JavaScript listeners costs no goroutine hand-off.
// One difference shows: a listener that settles while the rest of its chain
// runs (racing next() against a timer) has its answer returned once that
// rest has finished. A tools/execute wrapper's next() runs the tool on a
// goroutine of its own, as before. A call whose context is cancelled first
// aborts the script's AbortSignal; a script still running after the grace
// period is interrupted, and the instance is replaced by a fresh one that
// replays the plugin's top level before it serves another call. An
// interrupt stops the whole runtime, so it comes only for a script that
// runs: one that waits (an await) past its grace is not interrupted. Its
// call fails at its deadline, or, after an abort, is awaited while its
// caller still waits for it (a nested call its wrapper aborted) and fails
// once the caller gave up (see eventloop's Deadlines). A call stopped by an
// interrupt, its own or another call's on the same runtime, fails as
// engine.ErrAborted ("tool call aborted"), or as its listener deadline's
// timeout: the loop's own messages never reach the model.
//
// TypeScript and ES modules are transformed to CommonJS (es2017) by esbuild
// (scripting/js/internal/tsbuild); errors point at the original line.
//
// Choices where the spec is silent:
//   - Only tool bodies are stopped when their caller cancels (after the
//     grace period); listeners, guards and renderers see their signal abort
//     but run on, bounded by Host.ListenerTimeout from when they start, since
//     the pipeline awaits a slow listener.
//   - A guard that returns "" fails closed (the engine's guards abstain with
//     ""), as does a decision with a key its kind does not take.
//   - A body's args and exec.arguments are the same frozen object. An
//     execution object's own properties are callId, rootCallId, name,
//     arguments and, for a call with an agent, a parent or a verified
//     caller, agent, parent and caller; without one, each is the undefined,
//     non-writable one of the prototype (see exec.caller below); signal (an accessor, writable in
//     tools/execute wrappers) and a body's deferContext, concludeTurn,
//     progress and elicit are inherited from a frozen prototype shared by the
//     instance's execution objects, as a class's methods would be. A listener's exec.arguments is
//     converted when first read, and stays readable after its call settled.
//     An execution object is registered as live in its call's state
//     (callState.lives), not by a closure, and the call's first liveExec
//     and a body's prerender are allocated with that state, and the
//     prerender's deadline timer is the instance's, reused while each
//     prerender stops it in time (one that fired is left to its own call,
//     and the next prerender makes another): a JS tool call
//     allocates what goja needs and little more (TestToolCallAllocations
//     bounds the whole call). Text-block content a renderer returns is
//     typed without engine.ContentFromJSON's copy (toGo's value is fresh).
//   - Host functions take trailing undefined arguments, and options members
//     set to undefined, as absent (as JSON does); dsh/path is synchronous.
//   - A registration a call makes (inside a body or listener) lives in the
//     instance that made it; with instances: N, its calls go there.
//   - A log line (log.*, console.*) is made under the ctx of the call the
//     loop runs the current entry for (see eventloop.Loop.OwnerContext), so
//     the logger's handler sees that ctx's values: a body, listener,
//     wrapper or guard's job, the promise jobs that entry drains (code
//     after an await resumed there), the settlement of host work it
//     started (tools.call, a listener's next(), a capability function) and
//     the callback of a timer it set, even once the call is over. The top
//     level and entries of no call log under the background. Attribution
//     is per entry, not per promise: code resumed by a promise another
//     call's entry settled (a promise shared between calls) logs under
//     that call's ctx.
//   - exec.caller is engine.CallerFrom of the call's ctx (the verified
//     identity a served request's token carries, inherited by nested calls
//     and run_code sub-calls): a frozen {subject, clientId, scopes} with a
//     frozen scopes array, the same object while the same engine.Caller
//     comes again, an own property. Without one it is the undefined caller
//     of the frozen prototype (non-writable, so nothing further up the
//     chain, such as an Object.prototype.caller a script set, can stand in
//     for it): a call without a caller pays one context lookup and no
//     allocation.
//     tools/result observers and finalizeContent/projectContent get no
//     call ctx from the engine, so they see it undefined.
//   - exec.progress(progress, total?, message?) in a body reports to
//     engine.ReportProgress under the body's ctx; after the call settled it
//     does nothing.
//   - exec.elicit(message, schema?) in a body asks engine.Elicit under the
//     body's ctx off the loop (other calls on the instance run meanwhile)
//     and resolves to a plain {action, content}, content undefined unless
//     action is "accept". It rejects with an Error of the Go error's text
//     when asking fails, with the body's signal's reason (an AbortError)
//     when the call is cancelled, and with "exec.elicit(message, schema?):
//     the call is over" when the body settled first; bad arguments throw.
//   - Errors the dsh module raises have name "Error" (coded ones their own
//     name and a code); a thrown object's own name, code and message are read
//     to keep a coded error's info.
//   - A policy (listener, wrapper, guard) that fails logs a warning naming
//     the plugin, and the file, line and column of the first frame in the
//     plugin's code (TypeScript at its original position). An uncoded error
//     of one of the language's own types (TypeError, ReferenceError,
//     SyntaxError, RangeError, EvalError, URIError), which the interpreter
//     raises for a bug in the plugin, reads `policy.js:12:5: TypeError: …
//     (plugin "policy.js")`, as the top level's diagnostics name them; any
//     other thrown value reads exactly as its message, as the spec's cases
//     do. A failure that comes back through another listener's next() is
//     rethrown as itself, so it is logged once and keeps its info.
package js
