package scripting

import (
	"strings"
	"testing"
)

// FuzzScanImports runs the import scanner of hot reload on arbitrary sources
// of each language: it must not panic, and every specifier it reports is
// text the source holds.
func FuzzScanImports(f *testing.F) {
	for _, seed := range []string{
		`const a = require("./lib/a"); import b from "../lib/b"; require(name)`,
		`local m = require("lib.m") local n = require 'lib.n' require(x)`,
		`import {x} from './y'; export * from "./z"`,
		`require(`, `from "`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, file := range []string{"p.js", "p.ts", "p.mjs", "p.lua", "p.txt"} {
			specs, _ := scanImports(file, []byte(src))
			for _, s := range specs {
				if !strings.Contains(src, s) {
					t.Fatalf("%s: specifier %q is not in the source", file, s)
				}
			}
		}
	})
}
