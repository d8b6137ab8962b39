---@meta

---JSON null: tool results hold null where the JSON holds null (nil is absence), and arguments may pass it.
---@class JsonNull

---JSON null.
---@type JsonNull
null = nil

---Marks t (a new table when nil) as a JSON array, so that it stays one when empty; returns it.
---@generic T: table
---@param t? T
---@return T
function array(t) end

---Marks t (a new table when nil) as a JSON object, so that it stays one when empty; returns it.
---@generic T: table
---@param t? T
---@return T
function object(t) end

---What a failed tool call raises: pcall returns it as its error value.
---@class ToolCallError
---@field toolName string The name of the tool whose call failed.
---@field message string What went wrong; tostring(e) gives it too.
ToolCallError = {}

---Reports whether e is a ToolCallError.
---@param e any
---@return boolean
function ToolCallError.is(e) end

---The tools, one function per tool: a call blocks until the tool is done and returns its value, or raises a ToolCallError.
---@class tools
tools = {}

---Runs each function as a coroutine, so that their tool calls overlap; returns one array table of their results and raises the first error.
---@param ... fun(): any
---@return any[] results one per function, in order (null for a function that returns nothing)
function tools.gather(...) end

---@class EverythingEchoArgs: table<string, any>
---@field message string Message to echo

---Echoes back the input string
---@param args EverythingEchoArgs
---@return any
function tools.everything__echo(args) end

---@class EverythingGetAnnotatedMessageArgs: table<string, any>
---@field messageType "error"|"success"|"debug" Type of message to demonstrate different annotation patterns
---@field includeImage? boolean Whether to include an example image

---Demonstrates how annotations can be used to provide metadata about content.
---@param args EverythingGetAnnotatedMessageArgs
---@return any
tools["everything__get-annotated-message"] = function(args) end

---Returns all environment variables, helpful for debugging MCP server configuration
---@param args table<string, any>
---@return any
tools["everything__get-env"] = function(args) end

---@class EverythingGetResourceLinksArgs: table<string, any>
---@field count? number Number of resource links to return (1-10)

---Returns up to ten resource links that reference different types of resources
---@param args EverythingGetResourceLinksArgs
---@return any
tools["everything__get-resource-links"] = function(args) end

---@class EverythingGetResourceReferenceArgs: table<string, any>
---@field resourceType? "Text"|"Blob"
---@field resourceId? number ID of the text resource to fetch

---Returns a resource reference that can be used by MCP clients
---@param args EverythingGetResourceReferenceArgs
---@return any
tools["everything__get-resource-reference"] = function(args) end

---@class EverythingGetStructuredContentArgs: table<string, any>
---@field location "New York"|"Chicago"|"Los Angeles" Choose city

---@class EverythingGetStructuredContentResult
---@field temperature number Temperature in celsius
---@field conditions string Weather conditions description
---@field humidity number Humidity percentage

---Returns structured content along with an output schema for client data validation
---@param args EverythingGetStructuredContentArgs
---@return EverythingGetStructuredContentResult
tools["everything__get-structured-content"] = function(args) end

---@class EverythingGetSumArgs: table<string, any>
---@field a number First number
---@field b number Second number

---Returns the sum of two numbers
---@param args EverythingGetSumArgs
---@return any
tools["everything__get-sum"] = function(args) end

---Returns a tiny MCP logo image.
---@param args table<string, any>
---@return any
tools["everything__get-tiny-image"] = function(args) end

---@class EverythingGzipFileAsResourceArgs: table<string, any>
---@field name? string Name of the output file
---@field data? string URL or data URI of the file content to compress
---@field outputType? "resourceLink"|"resource" How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object.

---Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.
---@param args EverythingGzipFileAsResourceArgs
---@return any
tools["everything__gzip-file-as-resource"] = function(args) end

---@class EverythingSimulateResearchQueryArgs: table<string, any>
---@field topic string The research topic to investigate
---@field ambiguous? boolean Simulate an ambiguous query that requires clarification (triggers input_required status)

---Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.
---@param args EverythingSimulateResearchQueryArgs
---@return any
tools["everything__simulate-research-query"] = function(args) end

---Toggles simulated, random-leveled logging on or off.
---@param args table<string, any>
---@return any
tools["everything__toggle-simulated-logging"] = function(args) end

---Toggles simulated resource subscription updates on or off.
---@param args table<string, any>
---@return any
tools["everything__toggle-subscriber-updates"] = function(args) end

---@class EverythingTriggerLongRunningOperationArgs: table<string, any>
---@field duration? number Duration of the operation in seconds
---@field steps? number Number of steps in the operation

---Demonstrates a long running operation with progress updates.
---@param args EverythingTriggerLongRunningOperationArgs
---@return any
tools["everything__trigger-long-running-operation"] = function(args) end
