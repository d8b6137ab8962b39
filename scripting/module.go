package scripting

import "context"

// Module is a Go-implemented module that plugins import as "dsh/<Name>" in
// JavaScript (require("dsh/fs")) and as "dsh.<Name>" in Lua. The capability
// modules (fs, process, http, path) are Modules; each host binds the same
// functions in its own style (async in JavaScript, blocking in Lua).
type Module struct {
	Name  string
	Funcs map[string]ModuleFunc
	// Sync marks a module of pure, quick functions (dsh/path): JavaScript
	// calls them synchronously on the loop instead of through a promise.
	Sync bool
}

// ModuleFunc is one function of a host module. Its arguments arrive as
// lossless JSON values (package dsl's Go form); a trailing options object has
// lost its "signal", which instead cancels ctx. ctx is also cancelled when the
// calling call is cancelled or the plugin's instance closes. The returned
// JSON value is the script's result; an error is thrown to the script as an
// Error whose message is the error's and, for a coded error
// (engine.CodedError), whose name and code are the error's.
type ModuleFunc func(ctx context.Context, args []any) (any, error)
