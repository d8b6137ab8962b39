package js

import (
	_ "embed"
	"slices"
)

//go:embed dsh.d.ts
var declarations []byte

// Declarations returns dsh.d.ts, the TypeScript declarations of the "dsh"
// module and of the capability modules dsh/fs, dsh/process, dsh/http and
// dsh/path, for plugin authors' editors. Each call returns a fresh copy.
func Declarations() []byte { return slices.Clone(declarations) }
