package js_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting/js"
)

func TestImportsFindsEveryLiteralImport(t *testing.T) {
	tests := []struct {
		name, file, code string
		want             []string
		dynamic          bool
	}{
		{"a CommonJS require", "a.js", `const x = require("./lib/x");`, []string{"./lib/x"}, false},
		{"ES imports of every form", "sub/a.ts", "import { a,\n b } from '../lib/a';\nimport '../lib/side';\nexport * from \"./re\";\nimport d from \"dsh\";", []string{"../lib/a", "../lib/side", "./re", "dsh"}, false},
		{"a dynamic import with a literal", "a.mjs", "const m = await import(`./lib/m`);", []string{"./lib/m"}, false},
		{"a require of a variable", "a.js", `const x = require(name);`, nil, true},
		{"an import() of a template with a substitution", "a.js", "import(`./lib/${n}`)", nil, true},
		{"no import", "a.js", `const required = 1;`, nil, false},
	}
	h := &js.Host{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, dyn := h.Imports(tt.file, []byte(tt.code))
			slices.Sort(specs)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(specs, want) || dyn != tt.dynamic {
				t.Errorf("Imports = %q, %v; want %q, %v", specs, dyn, want, tt.dynamic)
			}
		})
	}
}

func TestImportCandidatesFollowTheHostsResolution(t *testing.T) {
	tests := []struct {
		name, from, spec string
		want             []string
	}{
		{"a relative path: as written, with each extension, as a folder", "a.js", "./lib/x", []string{"lib/x", "lib/x.ts", "lib/x.js", "lib/x.mjs", "lib/x/index.ts", "lib/x/index.js", "lib/x/index.mjs"}},
		{"x.js may be x.ts", "sub/a.ts", "../lib/x.js", []string{"lib/x.js", "lib/x.ts", "lib/x.js.ts", "lib/x.js.js", "lib/x.js.mjs", "lib/x.js/index.ts", "lib/x.js/index.js", "lib/x.js/index.mjs"}},
		{"a trailing slash is a folder", "a.js", "./lib/", []string{"lib/index.ts", "lib/index.js", "lib/index.mjs"}},
		{"the host module", "a.js", "dsh", nil},
		{"a host module", "a.js", "dsh/fs", nil},
		{"a bare name", "a.js", "lodash", nil},
		{"a path outside", "a.js", "../outside", nil},
	}
	h := &js.Host{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := h.ImportCandidates(tt.from, tt.spec); !slices.Equal(got, tt.want) {
				t.Errorf("ImportCandidates(%q, %q) = %q, want %q", tt.from, tt.spec, got, tt.want)
			}
		})
	}
}

func TestDeclarationFilesAreTheDTsFiles(t *testing.T) {
	dir := t.TempDir()
	h := &js.Host{}
	for name, want := range map[string]bool{"types.d.ts": true, "sub/x.d.ts": true, "a.ts": false, "a.js": false, "d.ts": false} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := h.IsDeclaration(p); got != want {
			t.Errorf("IsDeclaration(%s) = %v, want %v", name, got, want)
		}
	}
	if got := h.ModuleExtensions(); !slices.Equal(got, []string{".ts", ".js", ".mjs"}) {
		t.Errorf("ModuleExtensions = %q", got)
	}
}

// FuzzImports runs the import scan of hot reload on arbitrary sources: it
// must not panic, and every specifier it reports is text the source holds.
func FuzzImports(f *testing.F) {
	for _, seed := range []string{
		`const a = require("./lib/a"); import b from "../lib/b"; require(name)`,
		`import {x} from './y'; export * from "./z"`,
		"import(`./m`)", `require(`, `from "`,
	} {
		f.Add(seed)
	}
	h := &js.Host{}
	f.Fuzz(func(t *testing.T, src string) {
		for _, file := range []string{"p.js", "p.ts", "p.mjs"} {
			specs, _ := h.Imports(file, []byte(src))
			for _, s := range specs {
				if !strings.Contains(src, s) {
					t.Fatalf("%s: specifier %q is not in the source", file, s)
				}
			}
		}
	})
}
