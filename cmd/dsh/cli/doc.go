// Package cli implements the dsh command line: the cobra commands, the
// wiring of the engine, the script hosts and the capability modules that
// the global flags configure, the text rendering of presentation cards, and
// the mapping to exit statuses. Command dsh calls [Main]; tests call [Run]
// in-process or register [Main] as a testscript command.
//
// It is thin: calls, results, policies and events come from package engine
// and plugins from package scripting; this package reads calls files,
// draws cards and prints.
//
// Exit statuses: 0 when the command ran (a tool failure is a result),
// 1 for problems the user must fix (a bad calls file or session log,
// plugin diagnostics in check, schema violations), 2 for usage errors (and,
// for the schema commands, unreadable input or an unusable schema, as they
// always did), 130 when interrupted (SIGINT), 143 when terminated
// (SIGTERM): both cancel the command's context, and a second signal kills
// dsh at once.
//
// Choices where the issue is silent:
//   - Cards are drawn from the session's durable events (tool/call and
//     tool/result), live and in replay alike, so a replay draws the same
//     cards. Calls without an agent are not logged by the engine; their
//     cards come from events built from a tools/result observer. With
//     --json no card is drawn: "dsh run" keeps no records (the --log file
//     still gets every event) and sets no observer. The cards of a run are
//     written through one buffer, flushed once they are all drawn, not one
//     write (a system call on a pipe) per card.
//   - The summary's "ran a | b+c" reads the schedule from the events: calls
//     joined by + were started while an earlier one of them had not
//     committed. Calls aborted before dispatch never ran: they are listed
//     apart ("aborted before dispatch: c2, c3").
//   - A global flag belongs to a kind (flagKind): output, plugins, agent,
//     calls, executor. Each command accepts the kinds of what it does; a
//     flag of another kind is a usage error that says why ("--log: "dsh
//     check" runs no tool calls"), and the command's help lists only the
//     global flags it accepts.
//   - The diff of a call that failed is not drawn: its card would read as
//     if the change was made.
//   - "dsh call" refuses ARGS_JSON that is not JSON (a usage error); a
//     model's malformed arguments can still be replayed through "dsh run".
//   - A calls file's calls with different "agent"s run as consecutive
//     batches, one per run of calls of the same agent.
//   - --approve prompt asks on standard error and reads standard input;
//     with the calls file on standard input, the default mode is none and
//     prompt is a usage error. Every question waits at most
//     --approval-timeout (10m): the prompt's, and dsh serve's questions to
//     its MCP clients; an approval not answered in time denies the call.
//     Under dsh call and dsh run the prompt also asks tools' questions
//     (engine.Elicit: a plugin's exec.elicit, an imported MCP server's
//     elicitation; elicit.go): "Answer? [y/N]", then a line per property
//     of the form; one not answered in time, or at the end of the input,
//     answers cancel.
//   - Line-oriented input is read a line at a time, each line bounded
//     (boundedLines): a longer line is read through without being held,
//     reported and skipped, and the next line is read. dsh watch's calls
//     (64 MiB a line: reported on standard error, exit status 1), dsh
//     replay's log (64 MiB, engine.MaxLogLine, the longest line --log
//     writes: a warning), dsh serve's stdio (the MCP SDK's 16 MiB frame
//     bound, which would end the session: a warning, and the line is
//     replaced by a notification no server acts on). A log line written
//     cut (engine.LogCutKey) is replayed as written, with a warning.
//
// dsh serve on stdio decodes each line of its input once (stdio_conn.go):
// the check that answers a line the SDK cannot take hands the SDK the
// message it decoded, rather than the line for the SDK to decode again.
//
// Telemetry (otel.go): Run builds the OpenTelemetry SDK from the standard
// OTEL_* variables (OTEL_TRACES_EXPORTER otlp or console,
// OTEL_METRICS_EXPORTER otlp or console, the OTLP endpoint and protocol, the
// resource, the sampler, OTEL_SDK_DISABLED) and hands its providers to the
// engine and the MCP server and client; nothing is built unless an
// exporter is named. The console exporters write to standard error. What
// is buffered is flushed as Run returns, within telemetryShutdown (5 s).
package cli
