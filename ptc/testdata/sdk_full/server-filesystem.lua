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

---@class FsCreateDirectoryArgs: table<string, any>
---@field path string

---@class FsCreateDirectoryResult
---@field content string

---Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation. If the directory already exists, this operation will succeed silently. Perfect for setting up directory structures for projects or ensuring required paths exist. Only works within allowed directories.
---@param args FsCreateDirectoryArgs
---@return FsCreateDirectoryResult
function tools.fs__create_directory(args) end

---@class FsDirectoryTreeArgs: table<string, any>
---@field path string
---@field excludePatterns? string[]

---@class FsDirectoryTreeResult
---@field content string

---Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories.
---@param args FsDirectoryTreeArgs
---@return FsDirectoryTreeResult
function tools.fs__directory_tree(args) end

---@class FsEditFileArgs: table<string, any>
---@field path string
---@field edits FsEditFileArgsEditsItem[]
---@field dryRun? boolean Preview changes using git-style diff format

---@class FsEditFileArgsEditsItem: table<string, any>
---@field oldText string Text to search for - must match exactly
---@field newText string Text to replace with

---@class FsEditFileResult
---@field content string

---Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.
---@param args FsEditFileArgs
---@return FsEditFileResult
function tools.fs__edit_file(args) end

---@class FsGetFileInfoArgs: table<string, any>
---@field path string

---@class FsGetFileInfoResult
---@field content string

---Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. This tool is perfect for understanding file characteristics without reading the actual content. Only works within allowed directories.
---@param args FsGetFileInfoArgs
---@return FsGetFileInfoResult
function tools.fs__get_file_info(args) end

---@class FsListAllowedDirectoriesResult
---@field content string

---Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files.
---@param args table<string, any>
---@return FsListAllowedDirectoriesResult
function tools.fs__list_allowed_directories(args) end

---@class FsListDirectoryArgs: table<string, any>
---@field path string

---@class FsListDirectoryResult
---@field content string

---Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories.
---@param args FsListDirectoryArgs
---@return FsListDirectoryResult
function tools.fs__list_directory(args) end

---@class FsListDirectoryWithSizesArgs: table<string, any>
---@field path string
---@field sortBy? "name"|"size" Sort entries by name or size

---@class FsListDirectoryWithSizesResult
---@field content string

---Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories.
---@param args FsListDirectoryWithSizesArgs
---@return FsListDirectoryWithSizesResult
function tools.fs__list_directory_with_sizes(args) end

---@class FsMoveFileArgs: table<string, any>
---@field source string
---@field destination string

---@class FsMoveFileResult
---@field content string

---Move or rename files and directories. Can move files between directories and rename them in a single operation. If the destination exists, the operation will fail. Works across different directories and can be used for simple renaming within the same directory. Both source and destination must be within allowed directories.
---@param args FsMoveFileArgs
---@return FsMoveFileResult
function tools.fs__move_file(args) end

---@class FsReadFileArgs: table<string, any>
---@field path string
---@field tail? number If provided, returns only the last N lines of the file
---@field head? number If provided, returns only the first N lines of the file

---@class FsReadFileResult
---@field content string

---Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.
---@param args FsReadFileArgs
---@return FsReadFileResult
function tools.fs__read_file(args) end

---@class FsReadMediaFileArgs: table<string, any>
---@field path string

---@class FsReadMediaFileResult
---@field content (FsReadMediaFileResultContentItemVariant1|FsReadMediaFileResultContentItemVariant2)[]

---@class FsReadMediaFileResultContentItemVariant1
---@field type "image"|"audio"
---@field data string
---@field mimeType string

---@class FsReadMediaFileResultContentItemVariant2
---@field type "resource"
---@field resource FsReadMediaFileResultContentItemVariant2Resource

---@class FsReadMediaFileResultContentItemVariant2Resource
---@field uri string
---@field mimeType? string
---@field blob string

---Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. Only works within allowed directories.
---@param args FsReadMediaFileArgs
---@return FsReadMediaFileResult
function tools.fs__read_media_file(args) end

---@class FsReadMultipleFilesArgs: table<string, any>
---@field paths string[] Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.

---@class FsReadMultipleFilesResult
---@field content string

---Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Each file's content is returned with its path as a reference. Failed reads for individual files won't stop the entire operation. Only works within allowed directories.
---@param args FsReadMultipleFilesArgs
---@return FsReadMultipleFilesResult
function tools.fs__read_multiple_files(args) end

---@class FsReadTextFileArgs: table<string, any>
---@field path string
---@field tail? number If provided, returns only the last N lines of the file
---@field head? number If provided, returns only the first N lines of the file

---@class FsReadTextFileResult
---@field content string

---Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.
---@param args FsReadTextFileArgs
---@return FsReadTextFileResult
function tools.fs__read_text_file(args) end

---@class FsSearchFilesArgs: table<string, any>
---@field path string
---@field pattern string
---@field excludePatterns? string[]

---@class FsSearchFilesResult
---@field content string

---Recursively search for files and directories matching a pattern. The patterns should be glob-style patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories.
---@param args FsSearchFilesArgs
---@return FsSearchFilesResult
function tools.fs__search_files(args) end

---@class FsWriteFileArgs: table<string, any>
---@field path string
---@field content string

---@class FsWriteFileResult
---@field content string

---Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.
---@param args FsWriteFileArgs
---@return FsWriteFileResult
function tools.fs__write_file(args) end
