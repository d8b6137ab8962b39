// Package scripting is the language-neutral plugin machinery: a plugin is one
// script file, whose effects on the engine (tools, restrictions, guards,
// listeners) are committed all together after its top level succeeded, or
// not at all, and disposed as a unit.
//
// A [Host] (scripting/js for JavaScript and TypeScript, scripting/lua for Lua)
// evaluates a file's top level and makes its effects through a [Plugin]; the
// [Loader] finds the plugins of a scripts directory ([PluginFiles]), loads
// each under a deadline and commits it, reporting each broken file as a
// [Diagnostic] ("file:line:col: message") while the good ones load. A
// diagnostic is one line whatever the script threw or named: its file name
// and message have their control characters escaped (\n, \x1b, …) and are
// cut, marked with "…" (the message at 32 KiB, above the 16 KiB a script's
// error text is cut to where it crosses). A plugin registering a tool name
// outside ^[a-zA-Z0-9_-]{1,64}$ fails at that line (engine.CheckToolName),
// and none of its registrations is committed.
//
// Hot reload builds on the same steps: load the new version into a new
// Plugin, commit it, dispose the old one, which waits (with a deadline) for
// its in-flight calls before its interpreters close. With the Service's
// tracer or meter provider set, each load, reload, failure and unload of a
// [Reloader] is a root span ("dsh.reload", one "dsh.plugin.reload" event)
// and a "dsh.reload.count" increment; what they record is bounded: the
// plugin's name and the diagnostic's first line are cut to 256 bytes, the
// metric's attributes are the plugin file and one of five outcomes.
//
// # Memory
//
// Interpreters share the process's heap, and neither goja nor gopher-lua can
// cap what a script allocates. A [MemoryGuard] bounds it: hand the same guard
// to every host (the Memory field of js.Host and lua.Host; nil, the
// default, is off) and the calls whose scripts run while the heap passes its
// limit fail with a [*MemoryLimitError] ("script exceeded the memory limit
// (<n> MiB)", errors.Is [ErrMemoryLimit]); their instances are discarded and
// replaced, and the process lives on. The guard watches the heap, not the
// resident size: the Go runtime's soft limit (debug.SetMemoryLimit) keeps the
// two close, and being process-wide it is the embedder's choice. [TuneGC]
// makes it, from main, as the dsh command does: the collector's percent
// (GOGC; the command's is 400, because interpreters allocate a small value
// per step while their live heap stays small) and a soft limit of one and a
// half times the guard's (--memory-limit, 1024 MiB by default). Nothing in
// the module sets either on import.
package scripting
