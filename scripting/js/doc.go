// Package js is dsh's JavaScript and TypeScript host: it runs plugins with
// goja, one event loop per interpreter instance, and binds the dsh module
// (defineTool, tools, on, log) to the engine through the scripting package.
//
// Every script callback a plugin registers is called through its pool: the
// call goes to the plugin's live instance as a job on that instance's loop,
// values cross by Go-side conversion (scripting/js/internal/jsvalue), and the
// result comes back on a channel. A call whose context is cancelled first
// aborts the script's AbortSignal; a script still running after the grace
// period is interrupted, and the instance is replaced by a fresh one that
// replays the plugin's top level before it serves another call.
//
// TypeScript and ES modules are transformed to CommonJS (es2017) by esbuild
// (scripting/js/internal/tsbuild); errors point at the original line.
package js
