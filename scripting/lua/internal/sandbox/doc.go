// Package sandbox makes the gopher-lua states that plugins and programs run
// in: fresh, minimal and bounded (scripting.md "Lua").
//
// That is its one job. [New] opens only these libraries, trimmed and
// hardened:
//
//   - base, without dofile, loadfile, getfenv, setfenv, module, newproxy
//     and print (the host defines its own print). load and loadstring take
//     text only, capped in size and syntax depth (see [Load]); require only
//     loads host modules ("dsh", "dsh.*", from Options.Modules) and Lua
//     files inside the scripts directory, once per state. setmetatable takes
//     tables only (gopher-lua's would replace the metatable shared by all
//     strings or numbers of the state); collectgarbage does nothing (it would
//     run a process-wide Go collection). pcall and xpcall cannot swallow an
//     interruption (see [Interruptible]).
//   - table, with table.concat capped and table.insert refusing positions
//     beyond #t+1.
//   - string, without string.dump. string.find, match, gmatch and gsub run
//     on the sandbox's own matcher (a port of Lua 5.1's, bounded and
//     interruptible); string.rep, string.format and string.gsub cap their
//     results. getmetatable("") returns "protected", and the string
//     metatable belongs to this state alone (gopher-lua keeps one per
//     state), so no plugin can change another's strings.
//   - math, with math.huge infinite as in Lua and math.random on a
//     generator of the state's own.
//   - coroutine, whose resume and wrap carry the caller's context into the
//     coroutine.
//   - os with only time, clock and date.
//
// There is no io, no debug, no package (so no loadlib, path, cpath or
// searchers), no channel library, and os has no execute, exit, getenv,
// remove, rename, setenv or tmpname.
//
// Scripts may still change their own globals (rawset(_G, ...),
// setmetatable(_G, ...)): that only affects their own state. Host code must
// therefore hold host functions and tables by Go reference and read globals
// with RawGetString on L.G.Global, never through L.GetGlobal, which would
// run a script's __index.
package sandbox
