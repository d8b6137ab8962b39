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
// sent before the result. The tool list follows the engine's changes
// (notifications/tools/list_changed).
//
// Importing: [Connect] starts or dials MCP servers ([ServerSpec], parsed
// from "NAME=COMMAND ARGS..." or "NAME=URL" by [ParseSpec] and from a
// Claude-style mcpServers file by [LoadConfig]) and registers each server's
// tools as engine tools named "NAME.tool", in one swap per listing, so that
// policies gate them and run_code programs call them. A tool whose schema
// leaves dsh's enforced subset is a [Diagnostic], not a tool. A server that
// goes away is reconnected with backoff; its calls fail clearly meanwhile.
// A server's progress on a call is relayed to the call's own listener.
//
// The package is an addition to the architecture's table of folders: it
// depends on engine/ and dsl/, and only cmd/dsh imports it.
package mcp
