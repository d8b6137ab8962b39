// Package jsguard bounds the goja builtins that recurse in Go, run long in
// native code, or allocate by a size a script asks for. [Install] runs on a
// fresh runtime before any script (the event loop does it by default); after
// it, a hostile structure or a builtin cycle ends as a RangeError naming the
// builtin and the limit ("JSON.parse: nesting deeper than 10000 levels"),
// never as a Go stack overflow, which is fatal to the process.
//
// # Why goja needs it
//
// goja runs JavaScript-to-JavaScript calls without Go recursion and counts
// them against SetMaxCallStackSize; a call from JavaScript into a native
// function pushes a frame too (nativeFuncObject.vmCall). But a native
// function that calls another native function (ToString calling a toString
// that is a builtin, a bound function calling its target, a proxy without a
// trap forwarding to its target, JSON.parse descending into an array)
// does so by plain Go recursion, with no frame and no check. The probes
// behind this package (each one a fatal "goroutine stack exceeds" without
// it) include one-liners: `o.toString = String.prototype.trim; String(o)`,
// `e.name = e; String(e)`, `Array.prototype.join = Array.prototype.toString;
// String([1])`, `var t = {}; Object.setPrototypeOf(t, new Proxy(t, {get:
// String})); String(t)`.
//
// # What Install does
//
//   - Every native method, getter and setter reachable from the global
//     object (and the intrinsics only reachable from instances: %TypedArray%,
//     the iterator prototypes, %GeneratorPrototype%, GeneratorFunction,
//     AsyncFunction) is replaced by a wrapper with the same name, length and
//     property attributes that counts one level of native re-entry, per
//     runtime, and throws RangeError past MaxDepth (default 10,000). A cycle
//     of builtins always passes through one of them, so it is bounded.
//     Left alone: Function.prototype, methods that convert nothing and that goja
//     compares by identity for its fast paths (Array.prototype.values,
//     Map.prototype.set, Set.prototype.add/has/values, WeakMap.prototype.set,
//     WeakSet.prototype.add) and non-writable non-configurable properties
//     (Function.prototype[Symbol.hasInstance]). The event loop installs
//     jsguard after it and the host's setup captured the intrinsics they call
//     from Go (jsvalue's Object functions among them), so those keep goja's
//     own code while scripts see the counted wrappers.
//   - The constructors that convert their arguments when called (String,
//     Number, BigInt, Symbol, RegExp, Function, GeneratorFunction,
//     AsyncFunction, the Error family) or allocate by a requested size
//     (ArrayBuffer, SharedArrayBuffer, the typed arrays), and Proxy, are
//     replaced by a Proxy whose apply and construct traps count the same way
//     and check the caps. prototype.constructor points at the proxy, a
//     subclass's parent is the parent's proxy, instanceof works (goja's
//     instanceof rejects proxies; the proxies supply Symbol.hasInstance), and
//     RegExp(re) still returns re. Visible differences: String(String)
//     reads "function String() { [native code] }" as before, but
//     Error[Symbol.hasInstance] !== Function.prototype[Symbol.hasInstance].
//   - Chains that goja forwards through without any call (bound functions
//     bound to bound functions, proxies of proxies or with proxy handlers)
//     are counted when they are made: bind, new Proxy and Proxy.revocable
//     refuse a link that would make a chain deeper than MaxDepth ("Proxy:
//     chain deeper than 10000 levels"), with a weak-keyed table so that
//     nothing is kept alive.
//   - JSON.parse is jsguard's own iterative parser (about 3 times faster than
//     goja's, which goes through encoding/json's token stream; see
//     BenchmarkJSONParse), with the depth limit, a reviver walk with the same
//     limit (a reviver may graft a deeper value onto a part not yet walked),
//     members as own data properties ("__proto__" is an ordinary key, last
//     duplicate wins, in first position), numbers out of range as ±Infinity
//     (goja's refuses them), lone surrogate escapes kept, and
//     encoding/json's messages (which goja's reports) except "Unexpected end
//     of JSON input" without goja's "(EOF)" suffix.
//   - JSON.stringify is jsguard's own, written after goja's (same output for
//     replacer functions and lists, space, toJSON, boxed primitives, RawJSON,
//     cycles as TypeError "Converting circular structure to JSON"), with the
//     depth limit and the allocation cap on its result. Spec, not goja, for a
//     space of Infinity (10 spaces) and a string space longer than 10 code
//     units (cut at 10 units, not bytes).
//   - Array.prototype.join is jsguard's own (goja's cycle rule: an array
//     already being joined joins as ""), capped. Array.prototype.flat runs
//     goja's with the depth clamped to MaxDepth and throws when the clamp
//     changed the result.
//
// # Already bounded, and why
//
// JavaScript recursion, getters, setters, toString/valueOf, callbacks of
// sort/map/replace and proxy traps written in JavaScript all push goja frames
// and end at MaxCallStackSize (see the eventloop package). Generators that
// delegate with yield* without bound are not counted by goja and are not
// bounded here either (a goja limitation, noted in the eventloop package).
//
// # Bounded by the memory limit, not here
//
// Prototype chains: goja looks properties up the chain by Go recursion, and
// object literals with __proto__, class extends and new all build chains
// without a function jsguard could wrap. Each level costs a heap object (more
// than the 100–160 bytes of Go stack a level takes), so with Go's 1 GiB
// stack maximum a chain deep enough to overflow needs well over a GiB of heap
// and the memory limit ends it first; with the limit off it is not bounded.
// The same holds for chains of bound functions or proxies that alternate
// with counted builtins.
//
// # Source nesting
//
// goja's parser and compiler recurse per nesting level, and per link of
// flat chains: a source of 1,000,000 nested brackets, parentheses or
// a=a=... chains, or of 2,000,000 chained calls f()()..., 300,000 else-if
// branches or 100,000 comma operators, overflows the Go stack when compiled
// (esbuild's parser, visitor and printer, which transform plugin sources
// first, too). Every source is scanned first by tsbuild.CheckNesting, which
// refuses, from the text alone, nesting deeper than the limit (Options.
// MaxDepth) and every chain longer than the limits it derives from it
// (10,000 else-if branches, calls and member accesses, or binary operators;
// 1,000 comma operators, statements without braces or negations; functions,
// classes and blocks 250 deep; see CheckNesting): plugin sources and the
// modules they require in tsbuild.Transform, and here the bodies given to
// Function, GeneratorFunction and AsyncFunction (a SyntaxError naming the
// construct, "1:20002: the source chains more than 10000 calls, member
// accesses or tagged templates") and the source given to eval. For that,
// the global eval is replaced by a wrapper that scans and then calls
// goja's: goja recognises a direct eval by the identity of its own
// function, so every eval is an indirect eval, run in the global scope
// rather than the caller's (a deliberate departure from the language;
// scripts that need local variables in eval are not worth a fatal crash
// path).
//
// # Regular expressions
//
// goja runs patterns RE2 cannot (backreferences, lookaround) on
// github.com/dlclark/regexp2, whose backtracking can take exponential time
// inside one native call that Interrupt cannot stop. regexp2 reads its
// package-level DefaultMatchTimeout when a pattern is compiled; Install sets
// it once per process, before its runtime compiles anything, to
// [RegexpMatchTimeout] (1 s). This is the one global jsguard touches, and it
// affects every goja runtime of the process made after the first Install.
// regexp2 runs that clock on a goroutine that exits about a second after the
// last timed match (tests using goleak ignore regexp2.runClock).
//
// goja also runs patterns RE2 accepts on regexp2 for some calls: an exec or
// test from a lastIndex past 0 (the g and y flags), and a search for every
// match (split, and match and replace with the g flag) of a string that is
// not ASCII, unless the u flag is set and the string is well-formed UTF-16.
// A pattern RE2 runs in linear time can take quadratic or exponential time
// there.
//
// goja reports a match that ran out of time as no match, and so would a
// policy scanning for secrets: it would fail open. Under jsguard a match
// never ends that way: it throws RangeError("regular expression /…/
// exceeded its match time limit (1s)"), the pattern cut to 100 bytes. goja
// drops regexp2's timeout error, so jsguard finds out itself: when a call
// goja ran on regexp2 finds nothing, jsguard looks again with its own
// regexp2 (package jsregexp: the same pattern, rewritten and compiled as goja
// does, on the same text, with the same timeout; anchored at lastIndex for
// the y flag; a pattern RE2 also runs is looked for on RE2 first, from 0),
// which does report a timeout. Nothing is nothing; a timeout is the
// RangeError; a match means goja's run ended early, and the call runs again
// (exec and test as they are, the other methods with the watched exec below,
// match by match), returning what it finds or throwing. goja's run can end
// early without a catastrophic pattern: after regexp2's clock has been idle
// for a second its first tick jumps, and a match that has run 100 ms
// times out (plain goja then answers no match, which is wrong). A search
// (not sticky) that took the whole timeout and found nothing counts as
// timed out without looking again. Looking again costs one more search per
// call that finds nothing on regexp2; calls RE2 runs cost nothing more.
//
// Where jsguard sees the calls:
//
//   - RegExp.prototype.test is wrapped: goja runs it without exec.
//   - [Symbol.match], [Symbol.replace], [Symbol.search] and [Symbol.split]
//     are wrapped; String.prototype.match, replace, replaceAll, search and
//     split call them for a regular expression (goja has no fast path
//     around them). goja's fast paths run all the matches of such a call
//     at once, and a timeout anywhere makes the whole call find nothing
//     (match null, search -1, replace the string itself, split the string
//     alone), which is what jsguard checks. A replacement function is
//     wrapped to tell a replace that found nothing from one that changed
//     nothing.
//   - [Symbol.matchAll] is wrapped: the matcher goja makes for its iterator
//     gets the watched exec.
//   - RegExp.prototype.exec itself is left unwrapped: redefining it would
//     send every regular expression of the runtime down goja's generic
//     algorithms for good (see stdRegExp). Instead, the regular expressions
//     whose exec may run regexp2 (a pattern RE2 refuses, or the g or y flag,
//     whose exec from a lastIndex past 0 runs there) get the watched exec
//     as an own, non-enumerable property when RegExp makes them or compile
//     changes them (not one whose exec is a subclass's or a script's own).
//     goja's split, replace and match then call it for every match; a call
//     that could use a fast path goes through an unmarked clone instead
//     (TestRegularExpressionsKeepGojasFastPaths). goja's split takes its
//     fast path only when the species constructor is its own RegExp, which
//     jsguard's proxy is not: a split by a plain regular expression whose
//     constructor, species and flags are still RegExp's runs on a clone
//     whose species is goja's RegExp (TestSplitTakesGojasFastPathAndKeepsItsMeaning).
//     bind, call, apply,
//     Reflect.apply and new Proxy given RegExp.prototype.exec use the
//     watched exec.
//   - Literals: goja makes a regular expression literal without calling
//     anything jsguard can wrap. tsbuild (plugins, their modules and
//     run_code programs) and jsguard's eval and Function wrappers rewrite a
//     literal that needs the watched exec (a pattern RE2 refuses; with the g
//     or y flag, in a source that calls an exec: .exec or "exec") as
//     RegExp(/…/), the same object made through RegExp
//     (tsbuild.GuardRegExpLiterals).
//
// What is not seen: RegExp.prototype.exec called as a method of an object
// it was copied to; a literal with the g or y flag whose exec is called
// from another source than its own (say, exported to a module that calls
// it) or under a computed name; an exec of a script's own that calls goja's (a subclass's, or
// a replacement of RegExp.prototype.exec, which also deoptimises the
// runtime as it would without jsguard); and regular expressions made before
// Install.
//
// Syntax goja accepts but runs wrong is refused with a SyntaxError naming
// it ("named capture groups are not supported: /(?<year>\d{4})/"): named
// capture groups and \k<name> (goja has no .groups), Unicode property
// escapes, the escapes \a, \e, \A, \G, \Z and \z (which regexp2 reads
// as a bell, an escape and anchors where JavaScript reads letters), and the
// flags d and v (which goja refuses itself: "Invalid flags supplied to
// RegExp constructor 'd'"). RegExp, compile and the wrappers refuse a
// pattern at run time; tsbuild refuses a literal at load, at its original
// line and column, and the eval and Function wrappers when they are called
// (see jsregexp.Check).
//
// A deadline that passes during a match wins: goja checks its interrupt
// only between instructions, so the match runs on, but when it ends jsguard
// rethrows the pending interrupt instead of rerunning or throwing a
// RangeError that a catch block could take.
//
// The time limit is per match, and goja runs every match of a global
// match or replace in one native call: 400 matches of half a second each
// ran a minute past a 2 s budget. So a global match or replace that goja
// runs on regexp2 goes match by match through the watched exec (goja's
// generic algorithm: about 1.3 to 2 times the cost of its fast path on
// regexp2, measured on 2,000 matches in a 12 KB string), which after each
// match looks for a pending interrupt (at most every 5 ms): the call ends
// within one match of its deadline. Those calls, and a call goja runs on
// RE2 over a string long enough for it, are also held to a match budget,
// MaxAllocBytes / 256 matches (1,048,576 by default; counted first on RE2
// in linear time for the latter), past which they throw
// RangeError("RegExp.prototype[Symbol.replace]: more than 1048576
// matches") before goja keeps an index or a result per match
// ("x".repeat(1e8).replace(/x/g, "yy") took 3 GiB, then ran out). A split
// on regexp2 is not made match by match (its sticky splitter tries every
// position, each a confirmed no-match: far too slow): its matches are
// bounded by the time limit each, not the call (see regexp_budget.go).
//
// # Allocation caps
//
// A single string, buffer or array made by one builtin call is capped at
// MaxAllocBytes (default 256 MiB; a quarter of the default --memory-limit, so
// a refused call leaves room for the copies made when a value crosses to
// Go). Strings count 2 bytes a code unit (goja's UTF-16 form), arrays and
// argument lists 16 bytes an element (a goja Value). Checked before
// allocating: String.prototype.repeat, padStart, padEnd, concat,
// Array.prototype.join (and a huge sparse array joined with ""),
// Array.prototype.fill on arrays, %TypedArray%.prototype.join, the
// ArrayBuffer, SharedArrayBuffer and typed array constructors (given a
// length, an array or a typed array), the argument lists of
// Function.prototype.apply, Reflect.apply and Reflect.construct (so
// String.fromCharCode.apply(null, {length: 1e9}) is refused), and
// JSON.stringify's result. Also charged before the call (see the next
// section): String.prototype.split by a string (32 bytes a piece),
// replace and replaceAll by a string with a replacement string (the exact
// result, $&, $` and $' included, counted on the UTF-8 form: exact for
// ASCII, an upper bound otherwise), Array.from of a string (32 bytes a
// code unit), an array or an array-like, Array.prototype.concat, map,
// slice, splice, sort, toSorted, toReversed, toSpliced and with (16 bytes
// an element of the length they allocate by), fill of an array-like (128
// bytes a property), and Object.keys, values, entries,
// getOwnPropertyNames, getOwnPropertyDescriptors, Reflect.ownKeys and
// Object.assign of a typed array or String object (48, 32, 256, 48, 512,
// 48 and 128 bytes a key: Object.keys(new Uint8Array(2**27)) made 5.6
// GiB). A regular expression's match, replace and split are bounded by
// their number of matches (see Regular expressions). The checks convert
// the arguments once, as the builtin would, and pass the converted
// primitives on (an array-like's length is read by the check and again by
// the builtin: an accessor length runs twice). Not capped here (the memory
// limit's part): the + operator, a replace with a replacement function
// (each call is the script's, interruptible), spreads and Array.from of an
// iterator (their steps look for interrupts, see Native loops), typed
// arrays built from iterables, toUpperCase and normalize (at most three
// times a string that exists), and growth by many small steps.
//
// # Native loops
//
// goja's Array.prototype methods walk indices in Go: indexOf, includes and
// lastIndexOf from their fromIndex, reverse, copyWithin, every, some,
// forEach, filter, reduce, reduceRight, find, findIndex, findLast,
// findLastIndex, flat, flatMap, join, toLocaleString, shift, unshift, map,
// sort, toSorted, toReversed, with, toSpliced, slice, splice and concat
// visit every index of their range, present or not, at about 90
// ns an index on goja's generic path, with no interrupt check (the methods
// that call a function per element skip the holes without calling it).
// On a sparse array of length 2^32-1 that is hours; sort also makes a
// slice with the length as capacity (64 GiB). So each is checked first: a
// walk over more indices than the array holds elements (its values, or the
// items of a sparse array, read from goja's layout; none for an array-like,
// a proxy or a typed array) by more than MaxHoleWalk (1,048,576, about a
// tenth of a second) is refused, RangeError("Array.prototype.indexOf:
// length 4294967295 has more than 1048576 holes"), and so is an allocation
// by the length over the cap. The walk over elements an array holds is as
// long as memory the script already has; the walk of fill and Array.from,
// which make an element or property per index, is bounded by the
// allocation cap (16,777,216 indices, about 1.5 s). at, push and pop do
// not walk. Walking only the present keys instead would change goja's
// order of reads through the prototype chain and getters; refusing keeps
// each method goja's own. The same rule holds for the other builtins that
// read an array index by index: a typed array made from an array or an
// array-like (its constructors, %TypedArray%.from) or set from one
// (%TypedArray%.prototype.set: new Uint8Array(a) of a sparse array of
// length 2^24 took 78 s) and JSON.stringify of an array (9 s).
//
// Iterators stepped from Go (a spread, Array.from of an iterator, new
// Set(iterable)): [...a] of a sparse array of length 2^25 ran 2 min 39 s
// past an interrupt. The next methods of the builtin iterators look at the
// clock every 1,024 steps and for a pending interrupt at most every 5 ms
// (see iterate.go), so such a loop ends at its deadline or the memory
// limit's interrupt.
//
// Not bounded here: %TypedArray%.prototype.sort of a large typed array
// (n log n in Go: 5 s for 2^26 bytes), and a regular expression split that
// goja runs on regexp2 (see Regular expressions). Programs are contained by
// process isolation; a plugin call by its budget once the native call
// returns.
//
// # BigInt
//
// goja computes BigInt operators in Go, in one instruction no interrupt
// reaches and of any size: 1n << (1n << 40n) is one big.Int.Lsh of 128
// GiB (a fatal out-of-memory), 3n ** BigInt(1e8) one Exp of 25 s, and
// x *= x in a loop doubles the size each step until one step takes
// minutes. Every loader (plugin modules, run_code programs) and the eval and
// Function wrappers rewrite a ** b, a << b, a >> b and a * b, and their
// compound assignments, in goja's syntax tree before it compiles
// (jsrewrite.Operators) into calls of helpers Install defines on the
// global object under names no script text can spell ("%dsh**"...),
// non-writable and non-configurable. The helpers convert their operands as
// the operators do (ToNumeric, left then right, after both are evaluated),
// compute numbers exactly as goja does, and refuse a BigInt result over
// MaxBigIntBits (1,048,576 bits) before computing it:
// RangeError("BigInt: result larger than 1048576 bits"). An operator with
// a literal operand (x << 5, 2 ** k, i * 4) cannot make a BigInt and is
// left to goja, at no cost. Since the operators are calls, goja's compiler
// no longer folds 3n ** 100000000n at load (28 s before); esbuild does
// not fold it either. A shift by 2^64 bits or more is refused or gives 0
// or -1 (goja cut the count to its low 64 bits).
//
// The builtins get the same cap: BigInt.asIntN and asUintN with more bits
// than the cap return a value that fits as it is and refuse the rest (goja
// made 2^bits first); BigInt of a string whose digits cannot fit the cap
// is refused before math/big parses it (in time quadratic in its digits:
// minutes for 10 million); BigInt.prototype.toString and toLocaleString
// refuse a value over the cap (one can only come from a literal).
// BigInt64Array and DataView hold 64-bit values.
//
// Not bounded here: + and - grow a value by one bit a step; comparisons and
// == of a BigInt with a huge string parse the string (1n ==
// "9".repeat(1e7)), as do the implicit conversions of strings in typed
// array stores; a huge BigInt literal costs its parse when the source
// loads. Programs are contained by process isolation; plugins by the
// memory limit and the plugin size cap.
//
// # Cost
//
// Install replays a plan computed once per process (a walk of the intrinsics
// on a scratch runtime, about 100 ms): about 5 ms and 0.8 MB per runtime (see
// BenchmarkInstall), most of it goja building the builtins it otherwise
// builds lazily. A wrapped builtin call costs one more Go call and a
// deferred counter decrement.
//
// # Contained runtimes
//
// Options.Contained is for a runtime whose process is its own guard (the
// run_code child of process isolation: memory-capped, killed whole, its Go
// stack capped at 128 MiB), where a Go stack overflow ends that process
// alone. Install then leaves to goja the 287 of the 390 replaced builtins
// whose wrapper would only count native re-entry, and keeps the rest: the
// constructor proxies and every builtin jsguard implements or checks (JSON,
// join, flat, bind, apply, the regular-expression methods and their time
// limit, the allocation caps, the sparse-array, iterator and BigInt
// checks), eval's wrapper and the operator helpers. A program sees the same
// values and the same errors as under the full guard, except that a cycle
// through the builtins left alone (o.toString = String.prototype.trim;
// String(o)) overflows the Go stack and kills the process instead of
// throwing RangeError. It costs about 4,000 allocations and 1.5 ms per
// runtime against 10,200 and 2.5 ms (BenchmarkInstallContained, measured
// at a load of 4.8 on 2 cores; see contained.go).
package jsguard
