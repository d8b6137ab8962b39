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
// What is here so far (issue 14, first part): the seam's types, the failure
// kinds and their messages, budget and binding validation, the output
// ledger, the run_code definition with its renderer and pretty printer, and
// the TypeScript SDK renderer. The executor, the sub-call bridge and the
// goja runtime follow.
package ptc
