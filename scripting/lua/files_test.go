package lua_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting/lua"
)

func TestImportsFindsEveryLiteralRequire(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string
		dynamic    bool
	}{
		{"every literal form", "local x = require(\"lib.x\")\nlocal y = require 'lib.y'\nlocal z = require [[lib.z]]", []string{"lib.x", "lib.y", "lib.z"}, false},
		{"a host module", `local fs = require("dsh.fs")`, []string{"dsh.fs"}, false},
		{"a require of a variable", `local x = require(name)`, nil, true},
		{"no require", `local required = 1`, nil, false},
	}
	h := &lua.Host{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, dyn := h.Imports("a.lua", []byte(tt.code))
			if !slices.Equal(specs, tt.want) || dyn != tt.dynamic {
				t.Errorf("Imports = %q, %v; want %q, %v", specs, dyn, tt.want, tt.dynamic)
			}
		})
	}
}

func TestImportCandidatesFollowTheSandboxesRequire(t *testing.T) {
	tests := []struct {
		name, from, spec string
		want             []string
	}{
		{"a dotted name is a path below the scripts directory", "a.lua", "lib.util", []string{"lib/util.lua"}},
		{"wherever the importer is", "sub/a.lua", "lib.deep.x", []string{"lib/deep/x.lua"}},
		{"the host module", "a.lua", "dsh", nil},
		{"a host module", "a.lua", "dsh.fs", nil},
		{"an empty part", "a.lua", "bad..name", nil},
		{"a slash", "a.lua", "lib/x", nil},
		{"an empty name", "a.lua", "", nil},
	}
	h := &lua.Host{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := h.ImportCandidates(tt.from, tt.spec); !slices.Equal(got, tt.want) {
				t.Errorf("ImportCandidates(%q, %q) = %q, want %q", tt.from, tt.spec, got, tt.want)
			}
		})
	}
}

func TestDeclarationFilesAreLuaLSMetaFiles(t *testing.T) {
	dir := t.TempDir()
	h := &lua.Host{}
	for text, want := range map[string]bool{
		"---@meta dsh\n-- declarations\n": true,
		"---@meta":                        true,
		"-- ---@meta is not first\n":      false,
		"local dsh = require('dsh')\n":    false,
		"":                                false,
	} {
		p := filepath.Join(dir, "f.lua")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := h.IsDeclaration(p); got != want {
			t.Errorf("IsDeclaration(%q) = %v, want %v", text, got, want)
		}
	}
	if h.IsDeclaration(filepath.Join(dir, "missing.lua")) {
		t.Error("a missing file is a declaration file")
	}
	if got := h.ModuleExtensions(); !slices.Equal(got, []string{".lua"}) {
		t.Errorf("ModuleExtensions = %q", got)
	}
}

// FuzzImports runs the require scan of hot reload on arbitrary sources: it
// must not panic, and every name it reports is text the source holds.
func FuzzImports(f *testing.F) {
	for _, seed := range []string{
		`local m = require("lib.m") local n = require 'lib.n' require(x)`,
		`require [[lib.z]]`, `require(`, `require "`,
	} {
		f.Add(seed)
	}
	h := &lua.Host{}
	f.Fuzz(func(t *testing.T, src string) {
		specs, _ := h.Imports("p.lua", []byte(src))
		for _, s := range specs {
			if !strings.Contains(src, s) {
				t.Fatalf("specifier %q is not in the source", s)
			}
		}
	})
}
