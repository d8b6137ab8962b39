package tsbuild

import (
	"slices"
	"testing"
)

// FuzzParseSourceMap feeds arbitrary source maps to the parser and looks up
// positions in what it accepts: no input may panic it, and a lookup only
// returns positions in the map's own sources.
func FuzzParseSourceMap(f *testing.F) {
	for _, seed := range []string{
		`{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA;AACA,CAAC"}`,
		`{"version":3,"sources":["a.ts","b.ts"],"names":["x"],"mappings":"AAAAA,CAACC;;ACAA"}`,
		`{"version":3,"sources":[],"mappings":""}`,
		`{"version":3,"sources":["a"],"mappings":"////////+"}`,
		`not json`,
	} {
		f.Add([]byte(seed), 1, 0)
	}
	f.Fuzz(func(t *testing.T, raw []byte, line, col int) {
		m, err := ParseSourceMap(raw)
		if err != nil {
			return
		}
		if mp, ok := m.Lookup(line, col); ok && !slices.Contains(m.Sources, mp.Source) {
			t.Fatalf("Lookup(%d, %d) found a mapping to a source the map does not list: %+v", line, col, mp)
		}
	})
}

// FuzzTransform compiles arbitrary source as TypeScript and JavaScript: an
// error is a diagnostic with a position, never a panic.
func FuzzTransform(f *testing.F) {
	for _, seed := range []string{"const a: number = 1;\nexport default a;\n", "import x from './y'; x()", "{", "`${"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, name := range []string{"f.ts", "f.js"} {
			out, err := Transform(name, []byte(src))
			if err == nil && out == nil {
				t.Fatalf("Transform(%s) returned neither output nor error", name)
			}
		}
	})
}
