// Package lua is dsh's Lua host: it runs plugins with gopher-lua, one
// sandboxed state per interpreter instance, and binds the dsh module
// (define_tool, tools, on, log, null, array, object and the capability
// modules) to the engine through the scripting package.
//
// Every script callback a plugin registers is called through its pool: the
// call goes to one of the plugin's instances as a job on that instance's
// queue, served by the one goroutine that owns its state; values cross by
// Go-side conversion (scripting/lua/internal/luavalue), and the result
// comes back on a channel. A plugin that calls dsh.instances(N) runs N
// instances, each replaying the top level; a call goes to the least busy.
//
// Deadlines. A call's signal (exec.signal.aborted()) turns true first: for a
// tool body when its caller's ctx is done (the timeout wrapper's deadline
// or a cancellation), for every other callback when the caller's ctx is
// done or its own deadline (Host.ListenerTimeout, from when it starts)
// passes. If the script's code still runs a grace period (Host.Grace) after
// that, it is stopped: the state's context is cancelled, the Lua code stops
// at its next instruction, pcall cannot catch it (the sandbox re-raises),
// and the instance is discarded; the next call is served by a fresh instance
// that replays the top level. A call served nested (a composite tool's
// nested call) is stopped alone, through a context of its own: the call
// below it runs on, and the instance is replaced once they have returned. A
// call that waits in tools.call, next() or exec.elicit when its grace is
// over is not stopped: past its deadline its wait ends and it fails with
// its deadline's error; after an abort it is awaited while its caller waits
// for it, then the same (see overdue.go). A stopped call fails as
// engine.ErrAborted ("tool call aborted") or as its listener deadline's
// timeout. The state checks its context at every instruction,
// which slows tight loops, so the context is set only while a deadline
// applies. Host functions (the capability modules) receive the call's ctx,
// so a blocked one returns when its call is cancelled.
//
// Blocking. Lua code is synchronous. A capability function (dsh.fs.read_file,
// dsh.process.run, …) blocks its instance until it returns: the instance
// serves no other call meanwhile, and with instances: N the others serve.
// tools.call, a listener's next() and registrations made after the top level
// (which emit tools/change) may call back into the same plugin: while Lua
// code waits in one of those, the instance serves the calls queued for it,
// nested on its stack (which is how a wrapper's next() reaches a body of the
// same plugin). The waiting call resumes only after a call served meanwhile
// returns; nesting is bounded (64 calls deep).
//
// Choices where the spec is silent:
//   - Errors raised in Lua by a string keep Lua's "file.lua:line: " prefix
//     inside the script (pcall sees it), and lose it in the call's failure
//     message (the position is logged at debug level with the traceback).
//     A raised table with a string message is that message, with its name
//     and code as the failure's info when both are strings. Other raised
//     values read as "(error object is a <type> value)".
//   - A policy (listener, wrapper, guard) that fails logs a warning naming
//     the plugin, the file and the line. A runtime error the interpreter
//     raised (indexing nil, calling a non-function) is the plugin's bug and
//     its failure reads `policy.lua:12: attempt to index … (plugin
//     "policy.lua")`; what the script raised itself (error, assert, an
//     error table) reads exactly as its message, as the spec's cases do.
//     The plugin's error and assert are gopher-lua's, wrapped to remember
//     the message they raise, which is how the two are told apart.
//   - The host raises its own errors as tables {name, message, code?} whose
//     tostring is the message and which concatenate like strings; a coded Go
//     error (a capability module's ENOENT, JsonSchemaError) keeps its name
//     and code. One that a script lets through is the Go error again.
//   - Diagnostics are "file:line: message" for runtime errors of the top
//     level (Lua reports no columns) and "file:line:col: message" for syntax
//     errors.
//   - Messages that are literals of the design keep its names:
//     "defineTool(x): timeoutMs must be a positive finite number", "tool "x"
//     must declare output { schema, render, presentationMeta? }".
//   - Lua tables have no key order: objects a script returns come out with
//     sorted keys, so define_tool's properties (and its "required" list and
//     argument violations) are in sorted order. define_tool keeps the
//     compiled schemas it made, so register uses them as compiled.
//   - exec.arguments and a body's args are the same table, the call's own
//     copy; every other table the host hands a script is a fresh copy too,
//     so a script changing one affects nothing else. Execution objects,
//     signals, tokens and callers are read-only userdata.
//   - exec.caller is engine.CallerFrom of the call's ctx (the verified
//     identity a served request's token carries, inherited by nested calls
//     and run_code sub-calls), read when the script reads the field: a
//     read-only userdata (metatable "dsh.caller"; writes raise "caller
//     objects are read-only") with subject, clientId and scopes, scopes a
//     fresh array table at each read; nil without one. tools/result
//     observers and finalize_content/project_content get no call ctx from
//     the engine, so they see it nil.
//   - A listener or wrapper returning nil (a forgotten `return next()`)
//     fails closed with a message saying so; a guard returning "" fails
//     closed (the engine's guards abstain with "").
//   - A tools/execute wrapper cannot replace its execution's signal (Lua has
//     no AbortController); next() passes the wrapper's own ctx on.
//   - A registration made from a call (inside a body or listener) lives in
//     the instance that made it; with instances: N, its calls go there, and
//     its callbacks are forgotten when it is disposed.
//   - A body's valid value is rendered (and its presentation_meta computed)
//     in the same trip into the instance, each under its own listener
//     deadline, as engine.Prerendered.
//   - A log line (dsh.log.*, print) is made under the ctx of the innermost
//     call running on the instance (a body, listener, wrapper or guard; a
//     render made in a body's trip counts as the body), so the logger's
//     handler sees that ctx's values; the top level logs under the
//     background.
//   - exec.progress(progress, total, message) in a body (with a dot or a
//     colon) reports to engine.ReportProgress under the body's ctx; after
//     the call returned it does nothing.
//   - exec.elicit(message, schema) in a body (with a dot or a colon) asks
//     engine.Elicit under the body's ctx and waits for the answer while the
//     instance serves other calls, as tools.call does; it returns
//     {action = ..., content = ...}, content nil unless action is "accept".
//     A schema's members reach the Go side in sorted key order, as every
//     table's do. It raises the Go error's text when asking fails or the
//     call is cancelled meanwhile, and "exec.elicit(message, schema): the
//     call is over" once the call returned.
//
// # run_code programs
//
// [ProgramRuntime] runs run_code programs (docs/run-code.md); its doc says how.
// The one conformance table (tests/testdata/ptc) holds every case in both
// languages; where a Lua program cannot behave as the TypeScript one, the
// case says so, and these are the divergences:
//   - print is the log channel: its arguments joined with a tab, tostring'd,
//     where console renders values inspect-style.
//   - A call blocks and returns its value; overlap is tools.gather(f1, ...),
//     which, like Promise.all, returns one array table of the functions'
//     results in order (null for a function that returned nothing) and
//     raises the first error that happens. A call made inside pcall,
//     xpcall or a metamethod within a gathered function cannot suspend its
//     coroutine (gopher-lua refuses to yield there) and is waited for in
//     place, without overlap.
//   - The interpreters' own texts differ: syntax errors
//     ("program.lua line:2(column:7) near '=': syntax error"), runtime
//     positions ("program.lua:3: kaboom"), the stack overflow ("lua callstack
//     overflow", which pcall can catch where goja's cannot), and a thrown
//     table without a message field ("program threw an unrenderable value",
//     JavaScript's is "[object Object]").
//   - Each language refuses its own lossy arguments: nil holes, functions,
//     coroutines, mixed tables, tables with a metatable, NaN, -0 and the
//     infinities here; Dates, BigInts, getters and decorated arrays there.
//   - Binding slots are ordinary keys of the tools table: a program may
//     assign one (they are read-only in JavaScript), which changes
//     only its own code, since the bridge holds Go references.
//   - JavaScript-only behaviours have no Lua case: null-prototype objects,
//     strict-mode early errors, tampered JavaScript builtins; and the Lua
//     sandbox's own (string caps, coroutine floods, binary chunks) none in
//     TypeScript.
package lua
