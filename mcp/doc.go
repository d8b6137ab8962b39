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
// Under a code executor (one whose description has the tools:sdk section)
// run_code's description stays the executor's short text and a sentence,
// whatever the number of tools (clients cut long descriptions); the SDK
// goes to the server's instructions, as of the session's initialize, and
// to the [DescribeToolName] tool, which renders it over the tools the
// agent sees at the call (optionally some of them). That tool is the
// server's, not the engine's: run_code programs cannot call it, and it
// does not go through the pipeline, as tools/list does not.
//
// Serving with OAuth: with HTTPOptions.Resource, a [ResourceServer]
// (server_auth.go) makes the HTTP endpoint an OAuth protected resource: it
// publishes RFC 9728 metadata (MetadataHandler), answers a request without
// a token 401 with a challenge naming it, and verifies each token, a JWT
// signed with RS256, PS256, ES256 or EdDSA (never none or HMAC) by a key of
// the issuer's JWKS, for "iss", "aud" (the audience), "exp" (required) and
// "nbf" within [TokenSkew]. The JWKS is located through the issuer's
// metadata (the SDK's auth.GetAuthServerMetadata), cached an hour and
// fetched again for an unknown key id at most every 30 s; each fetch is
// bounded at 10 s and 1 MiB, 100 keys are kept, a token is at most 16 KiB
// (jwks.go). A verified call runs for its engine.Caller (sub, client_id or
// azp, scope or scp), and ServerOptions.ToolScopes ([ToolScopes], at most
// 10,000 rules) hides from a token the tools its scopes do not cover.
// With ResourceOptions.Introspection every token is checked at the
// issuer's introspection endpoint instead (RFC 7662; 10 s, 1 MiB). Tokens
// never reach logs or answers.
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
// the server under the tool's own name. A tool keeps its full JSON Schema
// (2020-12 unless its "$schema" names draft-07 or another dialect): its
// arguments are checked with santhosh-tekuri/jsonschema, compiled once per
// listing, and its schemas are served unchanged. That is bounded: a schema
// over MaxSchemaBytes (1 MiB) of JSON or nesting deeper than
// MaxSchemaDepth (64), or unfolding through its $refs into more than
// MaxSchemaApplications (50,000) subschemas, is not compiled, nothing is
// loaded for a "$ref" (network, file or relative: the tool is a
// Diagnostic), patterns run on Go's linear regexp, those over 1,000
// instructions, or that Go's syntax lacks (lookaround), being left to the
// server, as is a string whose match would cost more than 2^26
// instruction-bytes (about 0.7 s), and a call reports at most 8
// violations of 512 bytes each (schema.go). A tool whose schema does not
// compile, whose name is empty, or whose mapped name collides with
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
// outlives its connection. Its messages are read as the SDK's IOTransport
// reads them (newline delimited, 16 MiB a frame, batches taken apart) but
// decoded once each (stdio_conn.go: the SDK's reader tries every message
// as a batch first, a second decode).
// A server's progress on a call is relayed to the call's own listener.
// A server's questions pass through (client_questions.go): the import
// client declares elicitation (form and URL modes) and sampling, and puts a
// server's elicitation/create and sampling/createMessage to the caller of
// dsh's call to it (engine.Elicit, engine.Sample: through [Server], its
// client, within ServerOptions.ApprovalTimeout), returning the answer as
// given; the call is the one whose result carries the request on a
// multi-round-trip protocol version, else dsh's one call to that server in
// flight; with none, several, or a caller that cannot be asked, the server
// gets a [CodeNobodyToAsk] error saying why. An accepted form whose answer
// has no content answers the server with the form's defaults (SEP-1034,
// client_defaults.go), as the SDK fills in those an answer with content
// leaves out. roots/list answers
// Options.Roots as file:// URIs.
// A server's requests to dsh (roots, sampling, elicitation) are bounded:
// at most Options.MaxPendingRequests (64) in flight, counted on a stream
// transport from their reading to their answer's writing, and over
// streamable HTTP and legacy SSE (httpwatch.go, which reads the messages
// in the SDK transport's http.Client, as its connections cannot be
// wrapped) from their event's reading to the answer of the POST carrying
// their answer, so that a server that does not read its answers stops
// being read; past the cap a request gets the JSON-RPC error -32000 at
// once. Served HTTP sessions are
// capped too (HTTPOptions.MaxSessions, 1000): the session idle for longest
// makes room, or a new one gets 503 when all are busy. A served HTTP
// stream can be resumed (Last-Event-ID, from a replay store of
// HTTPOptions.ReplayBytes, 10 MiB over all sessions), and with
// HTTPOptions.PollAfter a request still running after it has its stream
// closed with a retry delay of [PollRetry] (SSE polling, SEP-1699), so that
// no response stream is held open longer than that; a request's protocol
// version is its session's when its header names an older one
// (server_http_polling.go).
// A server's listing is bounded: the connect timeout covers initialize and
// every tools/list page, and at most ServerSpec.MaxTools tools (10,000 by
// default) are imported, the rest being a Diagnostic. A tool that requires
// MCP tasks (execution.taskSupport "required", read from the responses
// beside the SDK, whose Tool lacks the field: on the stdio and in-process
// connections, and over HTTP in the transport's http.Client) is a
// Diagnostic, not a tool.
// Nothing is lost on the way through (annotations.go, upstream_log.go): a
// tool's title and annotations (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint) become engine.Definition's Title and
// Annotations, which [Server] lists again; a text or image block with
// annotations (audience, priority, lastModified) or _meta stays a raw block
// in its MCP shape, still text for the call's value and its failure
// message, and is served back as the same MCP block. A server declaring
// logging is asked for "info" and above ([UpstreamLogLevel]; on protocol
// 2026-07-28 in each call's _meta), and its notifications/message are
// logged with Options.Logger under dsh's one call to the server in flight
// (so that [LogHandler] sends them to that call's client), else under no
// call, with server=NAME; a call's result waits up to 500 ms for the log
// lines read before it to be relayed. Bounded: a message is cut at
// 16 KiB, data over 64 KiB as JSON is left out, and the relay adds
// nothing to what a served call's notifications already bound (1,024
// pending per call).
// A stdio server's environment is [DefaultEnv] (the variables a Node or
// Python server needs: the reference SDKs' set, locale, time zone,
// temporary and XDG directories, certificate authorities, proxies) from
// dsh's, its spec's Env, and the DSH_CALL_TOKEN dsh sets.
//
// Resources and prompts: [Connect] and [Start] also list what a server's
// capabilities declare beside its tools (resources, resource templates,
// prompts), at each connection and on its resources or prompts
// list_changed, into the client's [Catalog]; [Server.Reexport] serves it.
// A resource keeps its URI and a template its URI template (clients read
// by URI); their names, and prompts' names, are mapped as tools' are
// ([ToolName], with the same collision diagnostics for prompts). A URI or
// template two servers list belongs to the first in spec order, the
// other's being a [Diagnostic] (Kind and Item say which entry), and so is
// a URI the SDK's server would refuse (no scheme, unparsable) and an entry
// listed twice. resources/read goes to the URI's server, else to the first
// whose template matches it, else gets the SDK's resource-not-found error;
// prompts/get goes to the prompt's server under its own name; both on the
// caller's context, their results and JSON-RPC errors unchanged. The
// served server declares resources and prompts (listChanged, no
// subscribe) from the start, and each change to the catalogue becomes
// Add/Remove calls on the SDK server, whose list_changed notifications
// are debounced into one. Bounded: the connect timeout covers these
// listings, at most ServerSpec.MaxCatalog (10,000) of each kind are kept
// per server, and at most MaxCatalogBytes (32 MiB) of their JSON, the rest
// being a Diagnostic; a result's size is
// bounded by the transport (16 MiB a stdio frame or SSE event; the SDK
// reads a streamable HTTP JSON response whole).
//
// An HTTP import without an Authorization header is an OAuth 2.1 client
// (oauth.go), with the SDK's auth and oauthex packages doing the flow: a
// 401 with a Bearer challenge (or a 403 insufficient_scope, a step-up)
// runs protected resource metadata discovery (RFC 9728), authorization
// server metadata (RFC 8414, OpenID discovery), a client ID metadata
// document, a configured client ([OAuthConfig]) or dynamic registration
// (RFC 7591), PKCE, the resource parameter (RFC 8707) and the challenge's
// scopes, then retries the request once. The code comes back on a loopback
// redirect (127.0.0.1, one listener for the flow, at most
// OAuthOptions.LoginTimeout, 5 min). Tokens are kept by a [TokenStore] (a
// [FileTokenStore] in os.UserConfigDir()/dsh/oauth: directory 0700, one
// file per server name and URL, 0600, written atomically) and refreshed
// by themselves, before their expiry or once when the server refuses one;
// a refresh that fails forgets them. Only an interactive process
// (OAuthOptions.Interactive) starts a flow; otherwise a server asking for
// one, and publishing OAuth metadata, is not connected, with the one
// reason "needs a login: run dsh mcp login NAME" ([ErrNeedsLogin]), not
// logged again at each retry. Tokens and secrets never reach a log, an
// error, a Diagnostic or a tool: the transport alone adds the header.
//
// Telemetry (otel.go): with ServerOptions.TracerProvider or
// Options.TracerProvider set, each request received is a SERVER span and
// each request sent a CLIENT span, as the MCP semantic conventions give
// them, the W3C trace context read from and written to params._meta; with
// a MeterProvider, their durations are recorded. Notifications get none.
// A span holds the method, the session id and the tool or prompt name or
// resource URI the request names, never its arguments. Both nil: no
// middleware is installed. The package uses the OpenTelemetry API only.
//
// The package is an addition to the architecture's table of folders: it
// depends on engine/ and dsl/, and only cmd/dsh imports it.
package mcp
