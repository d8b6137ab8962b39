package sandbox

// ModulePath returns the file, relative to the scripts directory with
// forward slashes, that require loads for the dotted module name ("lib.x"
// is lib/x.lua), and false for a name require refuses. Host modules are
// not told apart: "dsh.fs" gives dsh/fs.lua.
func ModulePath(name string) (string, bool) { return modulePath(name) }
