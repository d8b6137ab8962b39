package lua

import (
	_ "embed"
	"slices"
)

//go:embed dsh.lua
var declarations []byte

// Declarations returns dsh.lua, the LuaLS meta file describing the "dsh"
// module and the capability modules dsh.fs, dsh.process, dsh.http and
// dsh.path, for plugin authors' editors. Each call returns a fresh copy.
func Declarations() []byte { return slices.Clone(declarations) }
