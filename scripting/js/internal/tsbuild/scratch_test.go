package tsbuild

import (
	"fmt"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

func tr(name string, loader api.Loader, src string, raw string) {
	r := api.Transform(src, api.TransformOptions{Loader: loader, Format: api.FormatCommonJS, Target: api.ES2017, Sourcemap: api.SourceMapExternal, Sourcefile: name, TsconfigRaw: raw})
	fmt.Printf("=== %s\n%s\nMAP %s\nERR %+v\nWARN %+v\n", name, r.Code, r.Map, r.Errors, r.Warnings)
	for _, e := range r.Errors { fmt.Printf("  %+v\n", *e.Location) }
}

func TestScratch(t *testing.T) {
	strict := `{"compilerOptions":{"alwaysStrict":true}}`
	tr("a.js", api.LoaderJS, "var x = 1;\nthis.y = 2;\nif (x) return;\nmodule.exports = {x};\n", strict)
	tr("b.mjs", api.LoaderJS, "var x = 1;\nx = 3;\n", strict)
	tr("c.js", api.LoaderJS, "import x from './x';\nx();\n", "")
	tr("c2.js", api.LoaderJS, "import './x';\n", "")
	tr("c3.js", api.LoaderJS, "export {};\n", "")
	tr("c4.js", api.LoaderJS, "const x = import.meta;\n", "")
	tr("c5.js", api.LoaderJS, "await 1;\n", "")
	tr("d.ts", api.LoaderTS, "const x: number = 1;\nenum E { A, B }\nundeclared = x;\n", strict)
	tr("d2.ts", api.LoaderTS, "with (a) {}\n", strict)
	tr("e.ts", api.LoaderTS, "import type {T} from './t';\nexport type U = T;\nconst x: number = 1;\n", "")
}
