---@meta dsh
-- LuaLS declarations for dsh plugins written in Lua: the "dsh" module and
-- its capability modules dsh.fs, dsh.process, dsh.http and dsh.path.
-- `dsh types --out DIR` writes this file; add DIR to your editor's
-- Lua.workspace.library (LuaLS) so that `local dsh = require("dsh")`
-- completes and type-checks. Keep DIR out of the scripts directory, where
-- every .lua file is a plugin (a hidden directory such as .luals is fine).
--
-- Plugins run in gopher-lua (Lua 5.1) in a sandbox: base (without dofile,
-- loadfile or binary chunks), table, string (without string.dump), math,
-- coroutine and os.time/clock/date; no io, no debug, no package. require
-- loads "dsh", "dsh.<module>" and Lua files of the scripts directory
-- ("lib.util" is lib/util.lua). print writes to the host's log.
--
-- Values crossing the host boundary are lossless JSON (dsh.JsonValue):
-- dsh.null is null; a table with keys exactly 1..n is an array, one with
-- string keys an object (members in sorted key order); an empty table is an
-- object unless its schema says array or it was made with dsh.array{}. Nil
-- holes, mixed keys, NaN, math.huge, -0, functions, userdata and tables with
-- a metatable are not JSON. Every table the host hands a script is the
-- script's own copy.
--
-- Lua code is synchronous: a capability function blocks the calling code
-- until it returns (it returns early, with ECANCELED, when the call is
-- cancelled).

---@alias dsh.JsonValue nil|boolean|number|string|dsh.JsonValue[]|table<string, dsh.JsonValue>|dsh.Null

---@class dsh.Null
---JSON null (a unique userdata; tostring gives "dsh.null").

-- ---------------------------------------------------------------------------
-- Content blocks and messages

---@class dsh.TextBlock
---@field type "text"
---@field text string

---@class dsh.ReasoningBlock
---@field type "reasoning"
---@field text string

---@class dsh.ImageBlock
---@field type "image"
---@field attachment dsh.JsonValue

---@class dsh.ToolCallBlock
---@field type "tool-call"
---@field id string
---@field name string
---@field arguments string The raw JSON text the model emitted.

---@class dsh.ToolResultBlock
---@field type "tool-result"
---@field toolCallId string
---@field content dsh.ContentBlock[]
---@field isError? boolean

---@alias dsh.ContentBlock dsh.TextBlock|dsh.ReasoningBlock|dsh.ImageBlock|dsh.ToolCallBlock|dsh.ToolResultBlock

---@class dsh.MessageSource
---@field kind "user"|"plugin"|"model"|"tool"
---@field plugin? string
---@field form? dsh.JsonValue
---@field provider? string
---@field model? string
---@field callId? string

---@class dsh.UserMessage
---@field id string
---@field role "user"
---@field content dsh.ContentBlock[]
---@field source dsh.MessageSource

---What defer_context takes: a whole user message, or just its content (the
---host then gives it a fresh id and, without a source, the plugin as source).
---@class dsh.ContextMessage
---@field content dsh.ContentBlock[]
---@field source? dsh.MessageSource

-- ---------------------------------------------------------------------------
-- Schemas

---A node of the value schema DSL. Objects need additionalProperties = true
---or false; a property may carry required = true.
---@class dsh.ValueSchemaSpec
---@field type? "string"|"number"|"integer"|"boolean"|"null"|"array"|"object"|"json"
---@field oneOf? dsh.ValueSchemaSpec[] At least two branches; exactly one must match.
---@field enum? dsh.JsonValue[]
---@field const? dsh.JsonValue
---@field items? dsh.ValueSchemaSpec
---@field properties? table<string, dsh.PropertySchemaSpec>
---@field additionalProperties? boolean
---@field description? string
---@field title? string
---@field default? dsh.JsonValue
---@field examples? dsh.JsonValue

---@class dsh.PropertySchemaSpec: dsh.ValueSchemaSpec
---@field required? true

---A tool's parameters: property name → node (the root is an open object).
---@alias dsh.ParameterSchemaSpec table<string, dsh.PropertySchemaSpec>

---The raw JSON Schema subset the engine enforces.
---@class dsh.JsonSchema
---@field type? "object"|"array"|"string"|"number"|"integer"|"boolean"|"null"
---@field oneOf? dsh.JsonSchema[]
---@field properties? table<string, dsh.JsonSchema>
---@field required? string[]
---@field additionalProperties? boolean
---@field items? dsh.JsonSchema
---@field enum? dsh.JsonValue[]
---@field const? dsh.JsonValue
---@field description? string
---@field title? string
---@field default? dsh.JsonValue
---@field examples? dsh.JsonValue

-- ---------------------------------------------------------------------------
-- Executions

---@class dsh.AgentRef
---@field id string
---@field parent? dsh.AgentRef

---An opaque token standing for a calling execution: compare with == only.
---@class dsh.ExecutionToken

---The verified identity a call runs for: who holds the access token a request
---to an OAuth-protected dsh serve carried. Read-only (writes raise); scopes is
---a fresh table at each read. Never the token itself.
---@class dsh.Caller
---@field subject string The token's subject ("sub").
---@field clientId string The OAuth client the token was issued to.
---@field scopes string[] The token's scopes (empty when it has none).

---The call's cancellation: aborted() turns true when the call is cancelled
---or its callback's deadline passes; reason() says why (nil before).
---@class dsh.Signal
---@field aborted fun(): boolean
---@field reason fun(): string|nil

---A call as listeners, guards and observers see it; read-only.
---@class dsh.Execution
---@field callId string
---@field rootCallId string The outermost call's id (callId for a top-level call).
---@field name string The tool called.
---@field arguments table|nil The call's own copy of the arguments (nil when they were not lossless JSON).
---@field agent dsh.AgentRef|nil
---@field parent dsh.ExecutionToken|nil The calling execution of a nested call (tools.call).
---@field caller dsh.Caller|nil The verified caller (a served request's token), the same for nested calls and run_code sub-calls; nil for a call no verified token started (dsh call, dsh run, stdio, a server without authorization) and in tools/result observers.
---@field signal dsh.Signal

---The execution a tool body gets.
---@class dsh.RunContext: dsh.Execution
---@field defer_context fun(message: dsh.UserMessage|dsh.ContextMessage) Attaches a context message to this call's result (exec.defer_context(m) or exec:defer_context(m)).
---@field conclude_turn fun() Marks a success of this call as concluding the agent's turn.
---@field progress fun(progress: number, total?: number, message?: string) Reports how far the call is (a finite number, increasing) out of total (a finite number >= 0; nil or 0: unknown), with an optional message, to whoever asked for progress (exec.progress(p, t, m) or exec:progress(p, t, m)); raises on other arguments, does nothing once the call has returned.
---@field elicit fun(message: string, schema?: table): dsh.ElicitationAnswer Asks the user behind the caller a question (MCP elicitation): message, and schema, the JSON Schema of the answer's form (an object whose properties are primitives; nil for a bare confirmation). Waits for the answer while the instance serves other calls (exec.elicit(m, s) or exec:elicit(m, s)); raises on bad arguments, with the Go error's text when nobody can be asked, asking fails or the call is cancelled meanwhile, and "exec.elicit(message, schema): the call is over" once the call has returned.

---The user's answer to exec.elicit: content holds the form's values when
---action is "accept", and is nil otherwise.
---@class dsh.ElicitationAnswer
---@field action "accept"|"decline"|"cancel"
---@field content table|nil

-- ---------------------------------------------------------------------------
-- Results

---@class dsh.ToolErrorInfo
---@field name string
---@field code string
---@field reason? string

---@class dsh.ToolFailure
---@field message string The message, without an "Error: " prefix.
---@field info? dsh.ToolErrorInfo

---A result: a success {isError = false, value, content, meta?,
---additionalContexts?, concludesTurn?} or a failure {isError = true, error,
---content, meta?, additionalContexts?}.
---@class dsh.ToolResult
---@field isError boolean
---@field value? dsh.JsonValue
---@field error? dsh.ToolFailure
---@field content dsh.ContentBlock[]
---@field meta? dsh.JsonValue
---@field additionalContexts? dsh.UserMessage[]
---@field concludesTurn? true

---@class dsh.ToolResultSummary
---@field isError boolean
---@field content dsh.ContentBlock[]
---@field meta? dsh.JsonValue

-- ---------------------------------------------------------------------------
-- Decisions. Anything else a listener returns (a
-- misspelled kind, a key its kind does not take, nil) fails closed.

---{kind = "allow"} | {kind = "deny", reason, info?} | {kind = "ask", reason?, displayReason?} | {kind = "cancel"}
---@class dsh.PreExecuteDecision
---@field kind "allow"|"deny"|"ask"|"cancel"
---@field reason? string
---@field info? dsh.ToolErrorInfo
---@field displayReason? string

---{kind = "accept", content?, additionalContexts?} | {kind = "accept", value, additionalContexts?} | {kind = "block", feedback, additionalContexts?}
---@class dsh.PostExecuteDecision
---@field kind "accept"|"block"
---@field content? dsh.ContentBlock[]
---@field value? dsh.JsonValue
---@field feedback? dsh.ContentBlock[]
---@field additionalContexts? dsh.UserMessage[]

-- ---------------------------------------------------------------------------
-- Presentation cards

---@alias dsh.ToolCallKind "read"|"edit"|"delete"|"move"|"search"|"execute"|"fetch"|"other"

---@class dsh.FileLocation
---@field path string
---@field line? integer

---@class dsh.FileDiff
---@field path string
---@field oldText string|dsh.Null
---@field newText string

---How a pending call is presented: card "generic" {title, kind?, rawInput?,
---content?, locations?}, "terminal" {title, description?, cwd?} or "diff"
---{title, diffs, locations?}.
---@class dsh.ToolCallView
---@field card "generic"|"terminal"|"diff"
---@field title string
---@field kind? dsh.ToolCallKind
---@field rawInput? dsh.JsonValue
---@field content? dsh.ContentBlock[]
---@field locations? dsh.FileLocation[]
---@field description? string
---@field cwd? string
---@field diffs? dsh.FileDiff[]

---How a completed call is presented: card "generic", "terminal", "diff",
---"search" (shape "matches" or "paths"), "read" or "web" (kind "search" or
---"fetch"), with the fields below.
---@class dsh.ToolResultView
---@field card "generic"|"terminal"|"diff"|"search"|"read"|"web"
---@field title? string
---@field [string] dsh.JsonValue

-- ---------------------------------------------------------------------------
-- Tool definitions

---@class dsh.ToolOutput
---@field schema dsh.JsonSchema|dsh.ValueSchemaSpec The value's schema (the DSL with define_tool, raw JSON Schema otherwise).
---@field render fun(args: table, value: any): dsh.ContentBlock[] The content the model sees for a value.
---@field presentation_meta? fun(args: table, value: any): dsh.JsonValue Presentation metadata (the result's meta).

---A registrable tool: what define_tool returns, or a raw definition with a
---raw JSON Schema as parameters (registered without argument validation).
---Functions and definition fields are snake_case; data keeps its JSON names.
---@class dsh.ToolDefinition
---@field name string
---@field description string
---@field parameters dsh.JsonSchema|dsh.ParameterSchemaSpec
---@field output dsh.ToolOutput
---@field execute fun(args: table, exec: dsh.RunContext): any Returns the canonical JSON value only.
---@field timeout_ms? number A positive number of milliseconds, enforced by the host's timeout wrapper.
---@field is_concurrency_safe? fun(args: table): boolean Only an exact true lets the call run in parallel.
---@field present_call? fun(args: table): dsh.ToolCallView|nil
---@field present_result? fun(args: table, result: dsh.ToolResultSummary): dsh.ToolResultView|nil
---@field finalize_content? fun(exec: dsh.Execution, result: dsh.ToolResult): dsh.ContentBlock[]|nil Rewrites the content of every outcome, exactly once.
---@field project_content? fun(exec: dsh.Execution, result: dsh.ToolResult): dsh.ContentBlock[]|nil Replaces the content of an outcome entering post-execute.

---An error the host raises: a table with name ("Error", "JsonSchemaError",
---…), message and, when coded, code (ENOENT, UNSUPPORTED_SCHEMA, …);
---tostring(err) is its message. Raise your own coded error with
---error({ name = "MyError", code = "MY_CODE", message = "…" }).
---@class dsh.Error
---@field name string
---@field message string
---@field code? string

-- ---------------------------------------------------------------------------
-- The module

---@alias dsh.Disposer fun()

---@class dsh.WhenContext
---@field agent? dsh.AgentRef
---@field modelSelection? dsh.JsonValue
---@field signal dsh.Signal

---@class dsh.RegisterOptions
---@field when? fun(context: dsh.WhenContext): boolean Activates the registration for each step's tool set.

---@class dsh.ToolFilter
---@field allow? string[]
---@field deny? string[]

---@class dsh.ToolSchema
---@field name string
---@field description string
---@field parameters dsh.JsonSchema

---@class dsh.ListenerOptions
---@field prepend? boolean Makes the listener outermost.

---@class dsh.ToolChange
---@field kind "register"|"dispose"|"restrict"|"lift"|"swap"
---@field agent? string
---@field name? string

---@class dsh.DispatchLogEntry
---@field exec? dsh.Execution
---@field agent? dsh.AgentRef
---@field subCallId string
---@field name string
---@field isError boolean
---@field content dsh.ContentBlock[]

---@class dsh.ToolsView
local ToolsView = {}

---Registers a tool; returns a disposer.
---@param definition dsh.ToolDefinition
---@param options? dsh.RegisterOptions
---@return dsh.Disposer
function ToolsView.register(definition, options) end

---A deny-only guard: a reason string denies, nil abstains.
---@param guard fun(exec: dsh.Execution): string|nil
---@return dsh.Disposer
function ToolsView.guard(guard) end

---Narrows the tools a scoped agent sees (scoped views only).
---@param filter dsh.ToolFilter
---@return dsh.Disposer
function ToolsView.restrict(filter) end

---The visible tool's schema, or nil.
---@param name string
---@return dsh.ToolSchema|nil
function ToolsView.get(name) end

---@return dsh.ToolSchema[]
function ToolsView.schemas() end

---A nested call for composite tools: a full pipeline call whose parent is
---parent_exec (its token, root call id, agent and signal). It blocks until
---the nested call settles.
---@param name string
---@param args table
---@param parent_exec dsh.Execution
---@return dsh.ToolResult
function ToolsView.call(name, args, parent_exec) end

---@class dsh.ScopedTools: dsh.ToolsView
local ScopedTools = {}

---Listens to a pipeline event for this agent's calls (and its descendants').
---@param event string
---@param listener function
---@param options? dsh.ListenerOptions
---@return dsh.Disposer
function ScopedTools.on(event, listener, options) end

---@class dsh.Tools: dsh.ToolsView
local Tools = {}

---The registry operations of one agent's scope.
---@param agent_id string
---@return dsh.ScopedTools
function Tools.scope(agent_id) end

---@class dsh.Logger
local Logger = {}
---@param message string
---@param fields? table<string, dsh.JsonValue>
function Logger.debug(message, fields) end
---@param message string
---@param fields? table<string, dsh.JsonValue>
function Logger.info(message, fields) end
---@param message string
---@param fields? table<string, dsh.JsonValue>
function Logger.warn(message, fields) end
---@param message string
---@param fields? table<string, dsh.JsonValue>
function Logger.error(message, fields) end

---@class dsh
local dsh = {}

---JSON null.
---@type dsh.Null
dsh.null = nil

---The registry, in the global scope.
---@type dsh.Tools
dsh.tools = nil

---Structured logs into the host's log, tagged with the plugin; a line
---logged for a call (its body, listeners) carries that call's context, so a
---client of the call may see it.
---@type dsh.Logger
dsh.log = nil

---The design's defineTool: compiles parameters and output.schema with the
---DSL and validates arguments before execute. A bad spec raises a
---JsonSchemaError (code UNSUPPORTED_SCHEMA) with the DSL's message.
---@param options dsh.ToolDefinition
---@return dsh.ToolDefinition
function dsh.define_tool(options) end

---Listens to a pipeline event; returns a disposer. The listeners:
---"tools/pre-execute" fun(exec, next): dsh.PreExecuteDecision;
---"tools/execute" fun(exec, next): dsh.ToolResult;
---"tools/post-execute" fun(exec, result, next): dsh.PostExecuteDecision;
---"tools/result" fun(exec, result);
---"tools/change" fun(change: dsh.ToolChange);
---"tools/ptc-dispatch-log" fun(entry: dsh.DispatchLogEntry, next): dsh.ContentBlock[].
---next() runs the rest of the chain and returns what it decided.
---@param event "tools/pre-execute"|"tools/execute"|"tools/post-execute"|"tools/result"|"tools/change"|"tools/ptc-dispatch-log"
---@param listener function
---@param options? dsh.ListenerOptions
---@return dsh.Disposer
function dsh.on(event, listener, options) end

---Runs n copies of the plugin (1 to 64) for CPU-parallel concurrency-safe
---tools; every copy must register the same tools.
---@param n integer
function dsh.instances(n) end

---Marks t (a new table when nil) as a JSON array, so that it stays one when
---empty; returns it.
---@generic T: table
---@param t? T
---@return T
function dsh.array(t) end

---Marks t (a new table when nil) as a JSON object, so that it stays one
---when empty or integer-keyed; returns it.
---@generic T: table
---@param t? T
---@return T
function dsh.object(t) end

-- ---------------------------------------------------------------------------
-- Capability modules: dsh.<name>, or require("dsh.<name>"). Paths are
-- workspace-relative POSIX strings; a path resolving outside the workspace
-- (through .. or a symlink) is refused with EOUTSIDE. Options keep their
-- JSON names (createDirs, timeoutMs). Failures raise a dsh.Error whose code
-- is one of ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EACCES, EOUTSIDE,
-- ETOOBIG, ETIMEDOUT, ECANCELED, EINVAL, EBINARY, EHOSTDENIED, EREDIRECT,
-- EHTTP, ENOEXEC.

---@class dsh.fs.ReadOptions
---@field encoding? "utf8"|"base64"
---@field offset? integer The first line to return, 0-based (utf8 only).
---@field limit? integer How many lines to return (utf8 only; default all).

---@class dsh.fs.File
---@field path string
---@field encoding "utf8"|"base64"
---@field content string
---@field size integer The file's size in bytes.
---@field truncated boolean
---@field offset? integer
---@field lineCount? integer
---@field totalLines? integer

---@class dsh.fs.WriteOptions
---@field encoding? "utf8"|"base64"
---@field createDirs? boolean
---@field append? boolean

---@class dsh.fs.Stat
---@field path string
---@field type "file"|"dir"|"symlink"|"other"
---@field size integer
---@field mode integer
---@field mtimeMs number

---@class dsh.fs.DirEntry
---@field name string
---@field type "file"|"dir"|"symlink"|"other"
---@field size integer

---@class dsh.fs.DirListing
---@field path string
---@field entries dsh.fs.DirEntry[] Sorted by name.
---@field total integer
---@field truncated boolean

---@class dsh.fs.GlobResult
---@field paths string[] Sorted, workspace-relative (or cwd-relative).
---@field total integer
---@field truncated boolean

---@class dsh.fs
local fs = {}

---Reads a file: utf8 (EBINARY for non-UTF-8 data) with a line window, or base64.
---@param path string
---@param options? dsh.fs.ReadOptions
---@return dsh.fs.File
function fs.read_file(path, options) end

---@param path string
---@param data string
---@param options? dsh.fs.WriteOptions
---@return { path: string, size: integer, created: boolean }
function fs.write_file(path, data, options) end

---lstat: a symlink reports "symlink".
---@param path string
---@return dsh.fs.Stat
function fs.stat(path) end

---@param path string
---@param options? { limit?: integer }
---@return dsh.fs.DirListing
function fs.read_dir(path, options) end

---Doublestar globbing: **, *, ?, [abc], {a,b}; never follows symlinks out.
---@param pattern string
---@param options? { cwd?: string, limit?: integer }
---@return dsh.fs.GlobResult
function fs.glob(pattern, options) end

---@param path string
---@param options? { recursive?: boolean }
---@return { path: string, created: boolean }
function fs.mkdir(path, options) end

---@param path string
---@param options? { recursive?: boolean }
---@return { path: string, removed: boolean }
function fs.remove(path, options) end

---@type dsh.fs
dsh.fs = fs

---@class dsh.process.RunOptions
---@field cwd? string A directory inside the workspace (default the workspace).
---@field env? table<string, string> Set on top of a minimal inherited environment.
---@field stdin? string
---@field timeoutMs? number On timeout the process group is killed and the result has timedOut = true.

---@class dsh.process.RunResult
---@field stdout string
---@field stderr string
---@field exitCode integer|dsh.Null dsh.null when the process was killed by a signal.
---@field signal string|dsh.Null The signal that ended it, e.g. "SIGKILL".
---@field truncated boolean Whether output past the cap was dropped.
---@field timedOut boolean
---@field stdoutBytes integer
---@field stderrBytes integer

---@class dsh.process
local process = {}

---Runs argv (no shell) in its own process group; output is capped. The call's
---cancellation kills the process group (ECANCELED).
---@param argv string[]
---@param options? dsh.process.RunOptions
---@return dsh.process.RunResult
function process.run(argv, options) end

---@type dsh.process
dsh.process = process

---@class dsh.http.FetchOptions
---@field method? string
---@field headers? table<string, string>
---@field body? string
---@field timeoutMs? number

---@class dsh.http.Response
---@field status integer
---@field statusText string
---@field url string The final URL, after redirects.
---@field headers table<string, string> Lower-case names, sorted; repeated values joined by ", ".
---@field body string UTF-8 text (invalid bytes replaced).
---@field truncated boolean

---@class dsh.http
local http = {}

---http and https only; the host must be on the allow-list (EHOSTDENIED).
---@param url string
---@param options? dsh.http.FetchOptions
---@return dsh.http.Response
function http.fetch(url, options) end

---@type dsh.http
dsh.http = http

---POSIX path functions (Node's path.posix).
---@class dsh.path
local path = {}

---@param ... string
---@return string
function path.join(...) end

---@param p string
---@return string
function path.dirname(p) end

---@param p string
---@param ext? string
---@return string
function path.basename(p, ext) end

---@param p string
---@return string
function path.ext(p) end

---@param from string
---@param to string
---@return string
function path.relative(from, to) end

---@param p string
---@return boolean
function path.is_absolute(p) end

---@type dsh.path
dsh.path = path

return dsh
