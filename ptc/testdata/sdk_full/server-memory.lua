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

---@class MemoryAddObservationsArgs: table<string, any>
---@field observations MemoryAddObservationsArgsObservationsItem[]

---@class MemoryAddObservationsArgsObservationsItem: table<string, any>
---@field entityName string The name of the entity to add the observations to
---@field contents string[] An array of observation contents to add

---@class MemoryAddObservationsResult
---@field results MemoryAddObservationsResultResultsItem[]

---@class MemoryAddObservationsResultResultsItem
---@field entityName string
---@field addedObservations string[]

---Add new observations to existing entities in the knowledge graph
---@param args MemoryAddObservationsArgs
---@return MemoryAddObservationsResult
function tools.memory__add_observations(args) end

---@class MemoryCreateEntitiesArgs: table<string, any>
---@field entities MemoryCreateEntitiesArgsEntitiesItem[]

---@class MemoryCreateEntitiesArgsEntitiesItem: table<string, any>
---@field name string The name of the entity
---@field entityType string The type of the entity
---@field observations string[] An array of observation contents associated with the entity

---@class MemoryCreateEntitiesResult
---@field entities MemoryCreateEntitiesResultEntitiesItem[]

---@class MemoryCreateEntitiesResultEntitiesItem
---@field name string The name of the entity
---@field entityType string The type of the entity
---@field observations string[] An array of observation contents associated with the entity

---Create multiple new entities in the knowledge graph
---@param args MemoryCreateEntitiesArgs
---@return MemoryCreateEntitiesResult
function tools.memory__create_entities(args) end

---@class MemoryCreateRelationsArgs: table<string, any>
---@field relations MemoryCreateRelationsArgsRelationsItem[]

---@class MemoryCreateRelationsArgsRelationsItem: table<string, any>
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---@class MemoryCreateRelationsResult
---@field relations MemoryCreateRelationsResultRelationsItem[]

---@class MemoryCreateRelationsResultRelationsItem
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---Create multiple new relations between entities in the knowledge graph. Relations should be in active voice
---@param args MemoryCreateRelationsArgs
---@return MemoryCreateRelationsResult
function tools.memory__create_relations(args) end

---@class MemoryDeleteEntitiesArgs: table<string, any>
---@field entityNames string[] An array of entity names to delete

---@class MemoryDeleteEntitiesResult
---@field success boolean
---@field message string

---Delete multiple entities and their associated relations from the knowledge graph
---@param args MemoryDeleteEntitiesArgs
---@return MemoryDeleteEntitiesResult
function tools.memory__delete_entities(args) end

---@class MemoryDeleteObservationsArgs: table<string, any>
---@field deletions MemoryDeleteObservationsArgsDeletionsItem[]

---@class MemoryDeleteObservationsArgsDeletionsItem: table<string, any>
---@field entityName string The name of the entity containing the observations
---@field observations string[] An array of observations to delete

---@class MemoryDeleteObservationsResult
---@field success boolean
---@field message string

---Delete specific observations from entities in the knowledge graph
---@param args MemoryDeleteObservationsArgs
---@return MemoryDeleteObservationsResult
function tools.memory__delete_observations(args) end

---@class MemoryDeleteRelationsArgs: table<string, any>
---@field relations MemoryDeleteRelationsArgsRelationsItem[] An array of relations to delete

---@class MemoryDeleteRelationsArgsRelationsItem: table<string, any>
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---@class MemoryDeleteRelationsResult
---@field success boolean
---@field message string

---Delete multiple relations from the knowledge graph
---@param args MemoryDeleteRelationsArgs
---@return MemoryDeleteRelationsResult
function tools.memory__delete_relations(args) end

---@class MemoryOpenNodesArgs: table<string, any>
---@field names string[] An array of entity names to retrieve

---@class MemoryOpenNodesResult
---@field entities MemoryOpenNodesResultEntitiesItem[]
---@field relations MemoryOpenNodesResultRelationsItem[]

---@class MemoryOpenNodesResultEntitiesItem
---@field name string The name of the entity
---@field entityType string The type of the entity
---@field observations string[] An array of observation contents associated with the entity

---@class MemoryOpenNodesResultRelationsItem
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---Open specific nodes in the knowledge graph by their names
---@param args MemoryOpenNodesArgs
---@return MemoryOpenNodesResult
function tools.memory__open_nodes(args) end

---@class MemoryReadGraphResult
---@field entities MemoryReadGraphResultEntitiesItem[]
---@field relations MemoryReadGraphResultRelationsItem[]

---@class MemoryReadGraphResultEntitiesItem
---@field name string The name of the entity
---@field entityType string The type of the entity
---@field observations string[] An array of observation contents associated with the entity

---@class MemoryReadGraphResultRelationsItem
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---Read the entire knowledge graph
---@param args table<string, any>
---@return MemoryReadGraphResult
function tools.memory__read_graph(args) end

---@class MemorySearchNodesArgs: table<string, any>
---@field query string The search query to match against entity names, types, and observation content

---@class MemorySearchNodesResult
---@field entities MemorySearchNodesResultEntitiesItem[]
---@field relations MemorySearchNodesResultRelationsItem[]

---@class MemorySearchNodesResultEntitiesItem
---@field name string The name of the entity
---@field entityType string The type of the entity
---@field observations string[] An array of observation contents associated with the entity

---@class MemorySearchNodesResultRelationsItem
---@field from string The name of the entity where the relation starts
---@field to string The name of the entity where the relation ends
---@field relationType string The type of the relation

---Search for nodes in the knowledge graph based on a query
---@param args MemorySearchNodesArgs
---@return MemorySearchNodesResult
function tools.memory__search_nodes(args) end
