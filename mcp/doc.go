// Package mcp puts dsh on both ends of the Model Context Protocol, with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk) speaking the
// protocol.
//
// Serving: [NewServer] exposes what an agent's executor describes (its
// tools, or run_code under the PTC executor) to MCP clients over stdio or
// streamable HTTP ([Server.HTTPHandler]). Every tools/call is a model-direct
// call through the engine's whole pipeline, and [Approval] turns ask
// decisions into elicitation requests to the client. While a call runs,
// its tool's questions (engine.Elicit) become elicitation requests, its
// progress reports (engine.ReportProgress) progress notifications, and the
// log lines made under its context ([LogHandler]) log notifications, all
// sent before the result. Each question (an approval, a tool's
// elicitation) waits for its answer at most ServerOptions.ApprovalTimeout,
// on every protocol version, then is withdrawn: the approval denies the
// call (engine.ApprovalTimeoutError), the elicitation answers "cancel". A
// call also ends, cancelled, when its request is cancelled, its session
// closes (on stdio the client's end of the stream; over HTTP a DELETE,
// which cancels the session's calls before the SDK closes it, as that
// waits on them), the server's context ends, or [Server.Close]. The tool
// list follows the engine's changes (notifications/tools/list_changed).
//
// Importing: [Connect] starts or dials MCP servers ([ServerSpec], parsed
// from "NAME=COMMAND ARGS..." or "NAME=URL" by [ParseSpec] and from a
// Claude-style mcpServers file by [LoadConfig] and [ReadConfig], which
// expand ${VAR} and ${VAR:-default} in one pass over each value, never
// re-expanding what they inserted, warn about the keys dsh does not use,
// skip "disabled" servers, and read "cwd" and the "sse" type) and
// registers each server's
// tools as engine tools named "NAME__tool" ([ToolName]), in one swap per
// listing, so that policies gate them and run_code programs call them.
// Every served name keeps the tool-name rule (^[a-zA-Z0-9_-]{1,64}$):
// [ToolName] maps each other character of the tool's name to '_' and
// shortens a name over 64 bytes with a stable hash suffix; a call reaches
// the server under the tool's own name. A tool whose schema leaves dsh's
// enforced subset, whose name is empty, or whose mapped name collides with
// another tool's (see [ToolName]; the outcome does not depend on the
// listing's order) is a [Diagnostic], not a tool: the diagnostic shows its
// name quoted and cut to 64 bytes, and the reason on one line with control
// characters escaped. Mapping costs one pass over at most 65 bytes of the
// name and one SHA-256 of it. A server that
// goes away is reconnected with backoff; its calls fail clearly meanwhile.
// [Connect] returns once every server's first attempt ended (each bounded
// by Options.ConnectTimeout, 60 s by default); [Start] returns at once and
// reports each first attempt as it ends, so a server in front of the
// imports (dsh serve) answers its clients without waiting for them, and a
// server's tools reach its clients with list_changed when it connects.
// A stdio server is dsh's own child (started through internal/reaper's
// record), in a process group of its own, and dies with dsh on Linux (a
// parent-death signal); when its connection closes (a reconnect, the
// client's Close, the server's own exit) its group is killed and so is
// every orphan dsh adopted as a subreaper, so nothing the server started
// outlives its connection.
// A server's progress on a call is relayed to the call's own listener.
// A server's requests to dsh (roots, sampling, elicitation) are bounded:
// at most Options.MaxPendingRequests (64) in flight, counted on a stream
// transport from their reading to their answer's writing, so that a
// server that does not read its answers stops being read; past the cap a
// request gets the JSON-RPC error -32000 at once. Served HTTP sessions are
// capped too (HTTPOptions.MaxSessions, 1000): the session idle for longest
// makes room, or a new one gets 503 when all are busy.
// A server's listing is bounded: the connect timeout covers initialize and
// every tools/list page, and at most ServerSpec.MaxTools tools (10,000 by
// default) are imported, the rest being a Diagnostic. A tool that requires
// MCP tasks (execution.taskSupport "required", read from the stdio and
// in-process connections' responses beside the SDK, whose Tool lacks the
// field) is a Diagnostic, not a tool.
//
// The package is an addition to the architecture's table of folders: it
// depends on engine/ and dsl/, and only cmd/dsh imports it.
package mcp
