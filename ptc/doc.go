// Package ptc is programmatic tool calling: the run_code tool, the executor
// that presents it, and the seam its program runtimes plug into.
// docs/run-code.md is the reference for the programs' authors, and
// docs/architecture.md places the package among dsh's.
//
// It is shaped like database/sql: ptc owns what every runtime needs (the
// run_code definition and its rendering, the SDK the model reads, binding
// validation, budgets, the output ledger, the failure kinds), and a
// [Runtime] is a few methods that run one program against bound functions.
// Runtimes are passed in; ptc never imports a language package
// (scripting/js and scripting/lua implement Runtime, cmd/dsh wires them).
//
// What is here: the seam's types, the failure kinds and their messages,
// budget and binding validation, the output ledger, the run_code definition
// with its renderer and pretty printer, the TypeScript and Lua SDK
// renderers (with the node-by-node one for full JSON Schemas), the
// ordered sub-call scheduler (on engine.Staged), and the Executor:
// Describe with the tools:code-only and tools:sdk sections, Direct,
// run_code's body with its bindings, argument snapshots and result
// forwarding. Model-direct calls of other tools under it are the
// engine's route-bearing UNKNOWN_TOOL. Package ptctest holds the seam's
// contract for any runtime; scripting/js.ProgramRuntime is the goja one,
// scripting/lua.ProgramRuntime the gopher-lua one (with LuaSDK), and
// package ptc/process runs either in child processes.
//
// The Executor records each run through its engine Service's providers
// (Service.TracerProvider and MeterProvider): a dsh.run_code span between
// the run_code call's execute_tool span and its sub-calls' (language,
// isolation, compute and wall time used, sub-call count, outcome), and the
// dsh.run_code.runs counter and dsh.run_code.duration histogram by
// language, isolation and outcome (docs/tracing.md). A run's attributes
// are a fixed, bounded set: no message, no program text. With neither
// provider set a run records nothing and allocates nothing for it, and the
// runtime is not asked for its compute time (Request.OnCompute stays nil).
//
// NewExecutor takes the runtime it is given; there is no default. The
// recommended one, and the dsh command's default, is ptc/process's: a
// program that exhausts memory or crashes the interpreter in a native
// builtin or the parser, where no interrupt reaches, kills only its
// child. The in-process runtimes are the fast choice for programs you
// trust. This departs on purpose from the spec's §0.4, which names
// in-process the default: an outside round of hostile programs (issue 25)
// found native work (a sparse-array sort, a BigInt shift, a parser chain)
// that killed an in-process dsh and only a child process contained.
//
// # Choices where the spec is silent or departs from itself
//
//   - A run may make at most Options.MaxSubCalls tool calls (default
//     100,000); the next one rejects with "run_code sub-call limit reached:
//     a run may make at most <n> tool calls", undispatched and unlogged.
//     Sub-calls do not count against the engine's nested-call budget of
//     1,000 calls under one model call, which would cap every program at
//     1,000 calls: each sub-call is the root of its own budget
//     (engine.Input.OwnBudget), for the calls nested under it, and its
//     depth still counts.
//   - Three more caps of dsh's own bound a run, each refusing the call over
//     it with a ToolCallError naming the cap, undispatched and unlogged, as
//     MaxSubCalls does. Options.MaxArgumentBytes (default 16 MiB) bounds a
//     call's arguments by their compact JSON size, counted as
//     JSON.stringify writes them (JSONValueSize): "run_code argument size
//     limit reached: a tool call's arguments may be at most <n> bytes".
//     Options.MaxArgumentDepth (default 10,000, above the 3,000 to 5,000
//     levels that must cross intact; the root array or object is
//     level 1) bounds their nesting: "run_code argument depth limit
//     reached: a tool call's arguments may nest at most <n> levels".
//     Options.MaxQueuedCalls (default 10,000) bounds the calls waiting to
//     start: the call that finds the queue full rejects at once with
//     "run_code queue limit reached: at most <n> tool calls may wait to
//     start", the calls already queued go on, and once the queue drains
//     calls are accepted again. A binding call is checked in this order:
//     lossless JSON, depth, size, then in the scheduler the
//     sub-call count and the queue. The argument caps are measured
//     without recursion and before either snapshot is copied, reading a
//     value that fits once and stopping at the first cap passed; a value
//     over a cap is then read whole, uncopied, for the checks that come
//     first (lossless, then depth). A call refused by any cap takes no
//     sub-call number and does not count toward MaxSubCalls.
//   - A sub-call's body that ignores its cancellation holds the run's
//     result until it returns, past the wall-clock ceiling too: the drain
//     awaits every call in flight, as the engine awaits any body.
//     Script tools are interrupted by their hosts; a Go tool must watch
//     its ctx.
//   - The spec gives two messages for lossy arguments (its behaviours 51
//     and 112); the bridge uses 51's prefix with the detail: "tool
//     arguments must be lossless JSON: <detail>" (and "... (call the tool
//     with an arguments object, e.g. `{}`)" for none).
//   - Dispatches run on goroutines kept for the run (at most
//     MaxParallelSubCalls), not one per call.
//   - The output-limit message, "outer output exceeded <cap> bytes", is
//     whole at every cap of at least 4 bytes: it is not charged against the
//     cap, and the logs give way to it (they keep what cap − its JSON size
//     leaves, nothing when that is too little). Ledger does this in the
//     runtimes and again on this side of a process pipe, which gives a
//     child's output limit its own message.
//   - A program's call of a name its namespace does not bind
//     (tools.nope({}), tools.nope{}) fails as a failed binding call does,
//     with UnknownBindingMessage: `unknown tool "nope"; did you mean "nop2"
//     or "note"?` (close by edit distance or by prefix, from the
//     namespace's own names only, so a hidden tool is never named). Like
//     every ToolCallError it has no code (§2.4). Only a call fails: reading
//     the name still finds nothing.
//   - Lua's tools.gather returns one array table of the results (null for
//     a function that returned nothing), the twin of Promise.all, rather
//     than multiple results, which local r = tools.gather(f, g) would cut
//     to the first.
//
// # Schemas outside the subset
//
// The SDKs render a schema inside dsh's subset (dsl.AssertSupported) exactly
// as the spec's §1.8 says. A schema outside it, which only an imported MCP
// server's tool has (its full JSON Schema, 2020-12 or draft-07), is not
// declared unknown whole as §1.8 says: this departs from the spec on
// purpose (issue 26), so that a keyword dsh does not enforce costs one
// node its type, not the tool its signature. Node by node (sdk_full.go),
// in both SDKs (Lua in brackets):
//
//   - Annotations and validation-only keywords are ignored for the type:
//     $schema, $id, $comment, title, default, examples, deprecated,
//     readOnly, writeOnly, format, pattern, minimum, maximum, exclusive
//     bounds, multipleOf, min/max length, items and properties counts,
//     uniqueItems, propertyNames, not, if/then/else, dependencies. A
//     property's description is its comment as in §1.8.
//   - true and {} are JsonValue [any]; false is never [nil].
//   - type as a string or an array of them is the union of each type; an
//     object or array alternative reads properties or items as §1.8 does.
//     Without type, properties (or additionalProperties, patternProperties)
//     make an object and items (or prefixItems) an array.
//   - const, which wins over enum, and enum are literal unions of their
//     scalar values (whatever type says); an array or object value, or an
//     empty enum, is unknown [any].
//   - oneOf and anyOf are unions (one branch is that branch); a branch
//     with no constraint is JsonValue [any], and when no branch constrains
//     (anyOf of required lists) the keyword adds nothing. allOf members, the
//     type and the unions are intersected with " & ", a member holding "|"
//     or "&" in parentheses [LuaLS has no intersection: two or more
//     constraining parts are any]. nullable: true adds "| null".
//   - additionalProperties: false closes the object as in §1.8 (unless
//     patternProperties opens it); a schema value T is an index signature,
//     "{ [key: string]: T }" alone or "{ … } & { [key: string]: T }" after
//     the properties [a class extending table<string, T>, or
//     table<string, T>]. A draft-07 tuple (items as a list) is unknown[].
//   - A $ref to "#/$defs/X" or "#/definitions/X" of the schema's root is
//     a named type declared once per schema, "<Stem>_<X>" where Stem is
//     the tool's class stem (LuaSDK's: "fs__read" gives "FsRead") with
//     "Args" or "Result", and X its key with every byte outside
//     [A-Za-z0-9_] as "_" (at most 64 bytes); names are made unique across
//     the SDK in tool order with "_2", "_3"…. TypeScript declares
//     "type <Name> = T;" (with the entry's description as its comment)
//     between JsonValue and ToolArgsMap; Lua names the entry's class so, or
//     declares "---@alias <Name> T". References are never expanded, so a
//     $ref cycle is just a name; a cycle of entries that are only $refs is
//     unknown [any]. Siblings of $ref are ignored (draft-07's rule). Any
//     other $ref (the root "#", a nested pointer, another document) is
//     unknown [any] and nothing is fetched.
//   - Anything else (an unknown type name, properties that are not an
//     object, a non-schema) is unknown [any] for that node only. A Go
//     value that contains itself is unknown where it recurs.
//
// The walk uses an explicit stack, like §1.8's. A schema may visit at most
// 100,000 nodes (references and shared Go maps included) and its text,
// named types included, may be at most 64 KiB; past either the whole
// schema is unknown [any], as before.
package ptc
