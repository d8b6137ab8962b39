// Package dsl is dsh's data layer: lossless JSON values and the tool schema language.
//
// # Values
//
// A JSON value in Go is one of nil, bool, float64, string, []any or *Object.
// [Object] keeps its members in the order they were written, the order a script
// or a document gave them. Every trust boundary of the engine takes a [Snapshot]:
// a detached deep copy that accepts only lossless JSON (docs/behaviour.md says
// what that admits) and names the path of the first value it refuses.
// [Marshal] writes the canonical text, byte for byte what JavaScript's
// JSON.stringify gives, and [Unmarshal] reads JSON text back keeping key
// order.
//
// # Schemas
//
// Tool authors write schemas in the author DSL: [CompileValueSpec] and
// [CompileParameterSpec] turn a spec, given as a JSON-like value or built with the
// Go helpers ([String], [Integer], [ObjectOf], [Params] …), into raw JSON Schema.
// Raw schemas must stay inside the enforced subset: [AssertSupported]
// collects every violation. [Compile] asserts a schema once and returns a
// [Schema] that validates values with exact messages (docs/plugins.md gives
// the subset, docs/behaviour.md the messages).
//
// Choices where the spec is silent:
//   - Go has no undefined; [Undefined] stands for it where a script host needs to
//     hand one to the validator. [Snapshot] rejects it like any non-lossless value.
//     The validator reads an object member holding it as absent (but the object
//     as not lossless), and an array element holding it as a hole: items skip
//     it and the array is reported as not dense.
//   - Paths in Snapshot errors write keys that are not identifiers as
//     ["a b"]; validation messages keep the spec's <p>.<key> form. A path
//     longer than a few dozen steps keeps its ends and counts the middle
//     ([WritePath]), and a key longer than 32 bytes is cut, so an error
//     message stays short however deep or wide the value.
//   - [Limits] are the bounds of the script boundary, shared by both script
//     hosts so that JavaScript and Lua refuse a value at the same size with
//     the same message. Snapshot applies the depth limit; [SnapshotWithin]
//     applies them all.
//   - A string that is not valid UTF-8 fails its string node as
//     "must be a lossless JSON value".
//   - Unmarshal rejects numbers a float64 does not hold as written: overflow
//     to ±Infinity, a non-zero literal that underflows to zero, -0, and an
//     integer literal that no float64 equals (9007199254740993; whereas
//     100000000000000000000, which is what Marshal writes for 1e20, reads back).
//     Decimal fractions such as 0.1 are read as their nearest float64, as
//     JSON.parse does. Go integers beyond ±2^53 are refused by Snapshot.
//   - [Equal] compares objects as sets of members: key order does not matter.
package dsl
