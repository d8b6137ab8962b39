package tsbuild

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsregexp"
)

func TestRegExpLiteralsGojaRunsWrongAreRefusedWhereTheyStand(t *testing.T) {
	tests := []struct {
		name, file, src, want string
	}{
		{"a named capture group in TypeScript", "p.ts",
			"const n: number = 1;\nexport const year = (s: string): string => /(?<year>\\d{4})/.exec(s)![1];\n",
			`p.ts:2:44: named capture groups are not supported: /(?<year>\d{4})/`},
		{"a named backreference in a CommonJS file", "c.js",
			"module.exports = function (s) {\n  return /(a)\\k<x>/.test(s);\n};\n",
			`c.js:2:10: named capture groups are not supported: /(a)\k<x>/`},
		{"a Unicode property escape in an ES module", "m.mjs",
			"export const letters = /\\p{L}+/gu;\n",
			`m.mjs:1:24: unicode property escapes are not supported: /\p{L}+/gu`},
		{"the flag d", "d.js", "var r = /a/d;\n", `d.js:1:9: the regular expression flag "d" is not supported: /a/d`},
		{"the flag d after others", "gd.js", "var r = /a/gd;\n", `gd.js:1:9: the regular expression flag "d" is not supported: /a/gd`},
		{"the flag v", "v.ts", "let r: RegExp = /[a]/v;\n", `v.ts:1:17: the regular expression flag "v" is not supported: /[a]/v`},
		{"an anchor escape goja's backtracking engine reads", "a.js", "var r = [1, /\\Ax/];\n",
			`a.js:1:13: the escape \A is not supported: /\Ax/`},
		{"the first of two refused literals", "two.js", "var a = /ok/;\nvar b = /\\e/, c = /(?<n>.)/;\n",
			`two.js:2:9: the escape \e is not supported: /\e/`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Transform(tt.file, []byte(tt.src))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Transform = %v, want %s", err, tt.want)
			}
			var ue *jsregexp.UnsupportedError
			if !errors.As(err, &ue) {
				t.Errorf("the error does not wrap a *jsregexp.UnsupportedError: %#v", err)
			}
		})
	}
}

func TestRegExpLiteralsJSguardMustWatchAreMadeThroughRegExp(t *testing.T) {
	tests := []struct {
		name, src    string
		wrapped      []string
		kept         []string
		wantExported any
	}{
		{"a lookahead", "export const r = /a(?=b)/.exec('ab')![0];", []string{"RegExp(/a(?=b)/)"}, nil, "a"},
		{"a lookbehind stays a literal, wrapped", "export const r = /(?<=\\$)\\d+/.exec('$12')![0];",
			[]string{`RegExp(/(?<=\$)\d+/)`}, nil, "12"},
		{"a backreference", "export const r = /(a)\\1/i.test('aA');", []string{`RegExp(/(a)\1/i)`}, nil, true},
		{"a global literal where exec is mentioned", "const re = /o/g; let n = 0; while (re.exec('foo')) n++; export const r = n;",
			[]string{"RegExp(/o/g)"}, nil, int64(2)},
		{"a global literal where exec is not mentioned", "export const r = 'foo'.replace(/o/g, '0');",
			nil, []string{"/o/g"}, "f00"},
		{"a global literal where exec only names a listener's execution object",
			"const f = (exec: { name: string }) => exec.name.replace(/o/g, '0'); export const r = f({ name: 'foo' });",
			nil, []string{"/o/g"}, "f00"},
		{"a sticky literal where exec is mentioned", "const re = /o/y; re.lastIndex = 1; export const r = re.exec('foo')!.index;",
			[]string{"RegExp(/o/y)"}, nil, int64(1)},
		{"an RE2 literal is left alone", "export const r = /\\bfoo\\b/.test('a foo');", nil, []string{`/\bfoo\b/`}, true},
		{"a dotAll literal stays a literal", "export const r = /a.b/s.test('a\\nb');", nil, []string{"/a.b/s"}, true},
		{"two on one line", "export const r = [/a(?=b)/.test('ab'), /(x)\\1/.test('xx')].join();",
			[]string{"RegExp(/a(?=b)/)", `RegExp(/(x)\1/)`}, nil, "true,true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustTransform(t, "w.ts", tt.src)
			code := string(out.Code)
			for _, w := range tt.wrapped {
				if !strings.Contains(code, w) {
					t.Errorf("the code has no %s:\n%s", w, code)
				}
			}
			for _, k := range tt.kept {
				if !strings.Contains(code, k) || strings.Contains(code, "RegExp("+k) {
					t.Errorf("the code does not keep %s as it is:\n%s", k, code)
				}
			}
			if strings.Contains(code, "new RegExp(") {
				t.Errorf("esbuild turned a literal into a string:\n%s", code)
			}
			_, exports := mustRun(t, out, nil)
			if got := exports.Get("r").Export(); got != tt.wantExported {
				t.Errorf("r = %#v, want %#v", got, tt.wantExported)
			}
		})
	}
}

// TestPositionsAfterAWrappedLiteralMapBack checks that the source map moves
// with the text the wrapping inserts: a throw after two wrapped literals on
// its line maps to its own column.
func TestPositionsAfterAWrappedLiteralMapBack(t *testing.T) {
	// esbuild puts each statement on a line of its own: the throw goes in
	// the expression of the literals.
	line := `export const f = (s: string): boolean => /a(?=b)/.test(s) && /(c)\1/.test(s) || fail(new Error("no"));`
	out := mustTransform(t, "pos.ts", "// first\n"+line+"\nfunction fail(e: Error): never { throw e; }\n")
	if !strings.Contains(string(out.Code), "RegExp(/a(?=b)/)") {
		t.Fatalf("the literal was not wrapped: the test shows nothing\n%s", out.Code)
	}
	vm, exports := mustRun(t, out, nil)
	fn, _ := goja.AssertFunction(exports.Get("f"))
	_, err := fn(goja.Undefined(), vm.ToValue("x"))
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("f() error = %v", err)
	}
	want := fmt.Sprintf("2:%d", strings.Index(line, "new Error")+1)
	if got := framePos(t, out.MapStack(ex.String()), "pos.ts"); got != want {
		t.Errorf("mapped position = %s, want %s\n%s\n%s", got, want, out.MapStack(ex.String()), out.Code)
	}
	// Raw is written anew with the moved mappings.
	m, err := ParseSourceMap(out.Map.Raw)
	if err != nil {
		t.Fatal(err)
	}
	for l := range out.genLines {
		for c := 0; c < len(lineText(out.Code, out.genLines, l)); c++ {
			a, aok := out.Map.Lookup(l, c)
			b, bok := m.Lookup(l, c)
			if a != b || aok != bok {
				t.Fatalf("at %d:%d the map says %v %v, its Raw %v %v", l, c, a, aok, b, bok)
			}
		}
	}
}

func TestGuardRegExpLiteralsOfEvalAndFunctionSources(t *testing.T) {
	tests := []struct {
		name, src, prefix, suffix, want, wantErr string
	}{
		{"a script with a lookahead", "var r = /a(?=b)/; r", "", "", "var r = RegExp(/a(?=b)/); r", ""},
		{"a function body that mentions exec", "return /x/g.exec(s)", "(function anonymous(s\n) {\n", "\n})",
			"return RegExp(/x/g).exec(s)", ""},
		{"a script with nothing to do", "1 + 2 / 3", "", "", "1 + 2 / 3", ""},
		{"a script that ends in a literal with flags", "/o/g.exec(s); /o/g", "", "", "RegExp(/o/g).exec(s); RegExp(/o/g)", ""},
		{"a script that does not parse is left to goja", "var = /(?<x>a)/", "", "", "var = /(?<x>a)/", ""},
		{"a named group", "/(?<x>a)/.test(s)", "", "", "", "named capture groups are not supported: /(?<x>a)/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GuardRegExpLiterals(tt.src, tt.prefix, tt.suffix)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("GuardRegExpLiterals = %q, %v; want the error %s", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("GuardRegExpLiterals = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
