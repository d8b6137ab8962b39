// Command dsh is the command line of the dsh tool-execution engine.
//
// Usage:
//
//	dsh version
//	dsh schema check FILE...
//	dsh schema validate [--args] SCHEMA VALUE
//
// "dsh version" prints "dsh <version>": the main module version recorded in
// the binary, or "(devel)" when it records none.
//
// "dsh schema check" reads each FILE as a raw JSON Schema and reports every
// way it leaves the subset the engine enforces, one "FILE: <violation>" line
// each on standard output. Files inside the subset print nothing.
//
// "dsh schema validate" validates the JSON value in VALUE against the schema
// in SCHEMA and prints each violation on its own line on standard output.
// With --args the value is a tool call's arguments, reported from the
// implicit "arguments" root (missing required property "path") instead of
// the "value" root. Either file may be "-" for standard input, not both.
//
// Exit status: 0 when everything checked is clean, 1 when violations were
// reported, 2 for trouble: a usage error, an unreadable or non-JSON file, or
// (for validate) a schema outside the supported subset.
//
// The commands live in package [github.com/dsh-go/dsh/cmd/dsh/cli], so that
// tests can run them in-process; this package only calls [cli.Main].
package main
