// Package sandbox makes the gopher-lua states that plugins and programs run
// in: fresh, minimal and bounded (docs/plugins.md, docs/run-code.md).
//
// That is its one job. [New] opens only these libraries, trimmed and
// hardened:
//
//   - base, without dofile, loadfile, getfenv, setfenv, module, newproxy
//     and print (the host defines its own print). load and loadstring take
//     text only, capped in size and syntax depth (see [Load]); require only
//     loads host modules ("dsh", "dsh.*", from Options.Modules) and Lua
//     files inside the scripts directory, once per state: regular files
//     only, opened without blocking (a FIFO fails at once, "cannot load
//     module 'x': x.lua is not a regular file", instead of holding a thread
//     in open(2) until a writer comes). It is the only function that opens
//     a file a script names. setmetatable takes
//     tables only (gopher-lua's would replace the metatable shared by all
//     strings or numbers of the state); collectgarbage does nothing (it would
//     run a process-wide Go collection). pcall and xpcall cannot swallow an
//     interruption (see [Interruptible]), and give the errors they catch a
//     short traceback (xpcall calls its handler once the stack is unwound).
//   - table, with table.concat capped and table.insert refusing positions
//     beyond #t+1.
//   - string, without string.dump. string.find, match, gmatch and gsub run
//     on the sandbox's own matcher (a port of Lua 5.1's, bounded and
//     interruptible); string.rep, string.format and string.gsub cap their
//     results. string.format takes Lua 5.1's options only (c d i o x X e E
//     f g G q s; %u, which Go's fmt cannot print, is refused) and checks
//     its arguments as Lua does (a number or numeric string for a numeric
//     option, none missing), so that Go's own forms ("%!d(MISSING)", a
//     table's Go struct) never come out. getmetatable("") returns "protected", and the string
//     metatable belongs to this state alone (gopher-lua keeps one per
//     state), so no plugin can change another's strings.
//   - math, with math.huge infinite as in Lua and math.random on a
//     generator of the state's own.
//   - coroutine, whose resume and wrap carry the caller's context into the
//     coroutine, and whose create and wrap are capped per call.
//   - os with only time, clock and date.
//
// There is no io, no debug, no package (so no loadlib, path, cpath or
// searchers), no channel library, and os has no execute, exit, getenv,
// remove, rename, setenv or tmpname.
//
// # Caps
//
// Each of these ends as a Lua error (a load error for the first two), never
// as a crash of the process, and each is tested with a real state:
//
//   - Source: MaxChunkBytes (1 MiB) per chunk; nesting of brackets, blocks
//     and right-associative or unary operators over [MaxSyntaxDepth] (1000)
//     is refused by a scan of the text before gopher-lua's parser, whose
//     stack would take 300 to 600 MB on 1 MiB of "((((" or "a..a.."; a
//     syntax tree deeper than MaxSyntaxDepth is refused before the
//     compiler, which recurses and is quadratic in the depth.
//   - Strings: MaxStringBytes (16 MiB) for what .., string.rep,
//     string.format, string.gsub, table.concat and os.date make. Load
//     compiles .. as a call of a capped function (concat.go).
//   - Coroutines: MaxCoroutines (10,000) made per call; 200 resumed inside
//     one another.
//   - Calls: CallStackSize (200 frames; "lua callstack overflow"), which
//     also bounds the Go recursion of metamethods (__index, __newindex,
//     __call, __concat, __eq, __lt, __le, arithmetic, __len, __tostring),
//     table.sort comparators, gsub callbacks and nested pcall; the value
//     stack, RegistryMaxSize (1 Mi slots; "registry overflow"), which bounds
//     unpack, string.byte, string.char and varargs.
//   - Patterns: MaxPatternSteps and a matcher whose recursion follows the
//     pattern, not the subject.
//   - Tracebacks: 10 frames. gopher-lua writes one traceback line per tail
//     call, so the error ending "local function f() return f() end" after a
//     few seconds would take gigabytes (protect.go).
//
// Also audited, and bounded by gopher-lua itself: __index and __newindex
// chains of tables (100 steps, "too many recursions in gettable"),
// table.insert at a huge position (refused here), tostring of a table (no
// recursion into it). What no count bounds (a table grown without end, many
// strings each under the cap) is left to the host's memory limit, and what
// runs without end (a tail-call loop, varargs growing by tail calls) to the
// call's context.
//
// Scripts may still change their own globals (rawset(_G, ...),
// setmetatable(_G, ...)): that only affects their own state. Host code must
// therefore hold host functions and tables by Go reference and read globals
// with RawGetString on L.G.Global, never through L.GetGlobal, which would
// run a script's __index.
package sandbox
