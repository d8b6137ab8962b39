// Package ptc is programmatic tool calling: the run_code tool, the executor
// that presents it, and the seam its program runtimes plug into
// (../shared/spec/ptc.md).
//
// It is shaped like database/sql: ptc owns what every runtime needs (the
// run_code definition and its rendering, the SDK the model reads, binding
// validation, budgets, the output ledger, the failure kinds), and a
// [Runtime] is a few methods that run one program against bound functions.
// Runtimes are passed in; ptc never imports a language package
// (scripting/js and scripting/lua implement Runtime, cmd/dsh wires them).
//
// What is here (issue 14, in progress): the seam's types, the failure kinds
// and their messages, budget and binding validation, the output ledger, the
// run_code definition with its renderer and pretty printer, the TypeScript
// SDK renderer, the ordered sub-call scheduler (§2.6, on engine.Staged), and
// the Executor: Describe with the tools:code-only and tools:sdk sections,
// Direct, run_code's body (§2.1) with its bindings, argument snapshots and
// result forwarding (§2.9). Model-direct calls of other tools under it are
// the engine's route-bearing UNKNOWN_TOOL. Package ptctest holds the seam's
// contract for any runtime; scripting/js.ProgramRuntime is the goja one. The
// Lua runtime and SDK and process isolation follow (issues 15 and 16).
package ptc
