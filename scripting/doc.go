// Package scripting is the language-neutral plugin machinery: a plugin is one
// script file, whose effects on the engine (tools, restrictions, guards,
// listeners) are committed all together after its top level succeeded, or
// not at all, and disposed as a unit.
//
// A [Host] (scripting/js for JavaScript and TypeScript, scripting/lua for Lua)
// evaluates a file's top level and makes its effects through a [Plugin]; the
// [Loader] finds the plugins of a scripts directory ([PluginFiles]), loads
// each under a deadline and commits it, reporting each broken file as a
// [Diagnostic] ("file:line:col: message") while the good ones load.
//
// Hot reload builds on the same steps: load the new version into a new
// Plugin, commit it, dispose the old one, which waits (with a deadline) for
// its in-flight calls before its interpreters close.
package scripting
