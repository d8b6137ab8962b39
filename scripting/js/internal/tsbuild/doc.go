// Package tsbuild prepares plugin scripts for goja: it transforms
// TypeScript and ES modules to CommonJS for ES2017 with esbuild, maps
// positions in the result back to the original file, and applies the
// scripting spec's file and module rules.
//
//   - [Transform] turns a .ts, .js or .mjs file into CommonJS code plus a
//     [SourceMap], cached by content. Syntax errors are *[Diagnostic]s at
//     their original "file:line:col".
//   - [Output.Original] and [MapStack] map positions in the generated code
//     (a goja stack trace, a runtime error) back to the original file.
//   - [Resolve] resolves an import or require specifier: "dsh" and "dsh/…"
//     are host modules; relative paths resolve inside the scripts directory
//     only, never through ".." or a symbolic link leading out of it.
//   - [PluginFiles] lists the plugins of a scripts directory.
//   - What esbuild and goja are given is bounded first: [CheckNesting]
//     refuses, from the text alone, nesting and flat chains a parser or
//     visitor recurses on once per link (else-if chains, call and member
//     chains, binary and comma chains, statements without braces, …) and
//     constructs esbuild takes quadratic time or worse on (functions,
//     classes and blocks nested more than 250 deep, names that nested
//     scopes share, runs of negations, folds of long runs of string
//     literals), as a syntax error at its original position; the caller
//     caps the file's size (4 MiB for plugin files and modules, see
//     scripting.MaxSourceBytes). Within those bounds the costliest source
//     of each construct transforms in about half a second at most, but
//     esbuild's cost in the size stays: a 4 MiB file of 800,000 small
//     functions takes it about 9 s of CPU. esbuild cannot be interrupted,
//     so the JavaScript host runs a plugin's Transform on a goroutine its
//     load deadline abandons (and the modules a top level requires on its
//     loop, which the deadline abandons the same way); the transform
//     finishes on its own. Concurrent Transforms of one input compile it
//     once, so a retried load does not start a second esbuild run beside
//     an abandoned one.
//   - Regular expression literals: Transform refuses one that uses syntax
//     goja accepts but runs wrong (named capture groups, Unicode property
//     escapes, the flags d and v...; see jsregexp.Check) as a syntax error
//     at its original position, and wraps one whose exec may run on goja's
//     backtracking engine in RegExp(…), so that jsguard watches its match
//     time (see jsguard's "Regular expressions"); the source map moves with
//     the inserted text. [GuardRegExpLiterals] does the same for the source
//     given to eval and the Function constructors.
//
// Positions are 1-based lines and 1-based columns counted in bytes, which is
// what goja reports and what esbuild's diagnostics count; the source map's
// own UTF-16 columns stay inside this package.
//
// Running the code is the caller's business: compile Output.Code under the
// name Output.Path inside a CommonJS function wrapper, for instance
// "(function (exports, require, module, __filename, __dirname) {" + Code +
// "\n})"; Code's first line is a comment, so the wrapper's header does not
// move any mapped column.
package tsbuild
