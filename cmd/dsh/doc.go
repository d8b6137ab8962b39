// Command dsh is the command line of the dsh tool-execution engine: it runs
// an LLM agent's tool calls through the plugins (tools and policies in
// JavaScript, TypeScript or Lua) of its scripts directories.
//
// Usage:
//
//	dsh [global flags] run FILE|-          execute a batch of model tool calls
//	dsh [global flags] call NAME [ARGS]    execute one tool call
//	dsh [global flags] schemas             print the schemas the model is sent
//	dsh [global flags] check               load every plugin, report diagnostics
//	dsh types --out DIR                    write the editor declarations
//	dsh [global flags] replay LOG|-        re-draw the cards of a session log
//	dsh schema check FILE...
//	dsh schema validate [--args] SCHEMA VALUE
//	dsh version
//
// Global flags: --scripts DIR (repeatable; default ./scripts when it
// exists), --workspace DIR (the root of dsh/fs and dsh/process; default the
// current directory), --log FILE (append the session events as JSONL),
// --json (machine output), --approve prompt|allow|deny|none (how an ask
// decision is answered; default prompt when standard input is a terminal,
// none otherwise), --agent ID (default main), --no-agent, --agent-parent
// CHILD=PARENT (repeatable), --max-parallel N (default 10), --http-allow
// HOST,... (dsh/http's allow-list; default loopback only), -v (debug logs
// on standard error).
//
// "dsh run" reads a JSON array of {"id", "name", "arguments", "agent"?}
// calls, "arguments" being the raw JSON text the model emitted or an
// object. It prints one card per call, drawn by the tool's presenters, in
// model order, and a summary line; with --json, the batch result
// {"results": [{"callId", "result"}], "additionalContexts", "concluded"}.
//
// "dsh schema check" reads each FILE as a raw JSON Schema and reports every
// way it leaves the subset the engine enforces; "dsh schema validate"
// validates a JSON value against a schema (with --args, as a tool call's
// arguments). Either file may be "-" for standard input, not both.
//
// Exit status: 0 when the command ran (a tool failure is a result, not a
// command failure), 1 for problems the user must fix (a bad calls file or
// session log, plugin diagnostics in check, schema violations), 2 for usage
// errors (and, for the schema commands, unreadable input or an unusable
// schema), 130 when interrupted.
//
// The commands live in package [github.com/dsh-go/dsh/cmd/dsh/cli], so that
// tests can run them in-process; this package only calls [cli.Main].
package main
