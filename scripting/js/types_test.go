package js_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

// declaredModule returns the body of `declare module "name" { ... }` in the
// declarations: from its opening line to the first line that is exactly "}".
func declaredModule(t *testing.T, name string) string {
	t.Helper()
	src := string(js.Declarations())
	head := "declare module " + `"` + name + `" {` + "\n"
	start := strings.Index(src, head)
	if start < 0 {
		t.Fatalf("dsh.d.ts declares no module %q", name)
	}
	body := src[start+len(head):]
	end := strings.Index(body, "\n}\n")
	if end < 0 {
		t.Fatalf("module %q is not closed by a line with only }", name)
	}
	return body[:end]
}

// declaredBlock returns the members of `interface name ... {` or
// `const name: {` (two-space indented inside a module) up to its closing line.
func declaredBlock(t *testing.T, module, opener string) string {
	t.Helper()
	body := declaredModule(t, module)
	start := strings.Index(body, "\n  "+opener)
	if start < 0 {
		t.Fatalf("module %q declares no %q", module, opener)
	}
	rest := body[start+1:]
	end := strings.Index(rest, "\n  }")
	if end < 0 {
		t.Fatalf("%q in module %q is not closed", opener, module)
	}
	return rest[:end]
}

var (
	valueExport = regexp.MustCompile(`(?m)^  export (?:function|const|let|var|class) (\w+)`)
	defaultOut  = regexp.MustCompile(`(?m)^  export default \w+;`)
	member      = regexp.MustCompile(`(?m)^    (\w+)[?]?(?:\(|:)`)
)

// exportedValues lists the runtime exports a module declaration names.
func exportedValues(t *testing.T, module string) []string {
	t.Helper()
	body := declaredModule(t, module)
	var out []string
	for _, m := range valueExport.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	if defaultOut.MatchString(body) {
		out = append(out, "default")
	}
	return sorted(out)
}

// members lists the member names of a declared interface or object type.
func members(t *testing.T, module, opener string) []string {
	t.Helper()
	var out []string
	for _, m := range member.FindAllStringSubmatch(declaredBlock(t, module, opener), -1) {
		out = append(out, m[1])
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = slices.Compact(slices.Sorted(slices.Values(s)))
	if s == nil {
		s = []string{}
	}
	return s
}

func TestTheDeclarationsAreTypeScriptWithoutRuntimeCode(t *testing.T) {
	r := api.Transform(string(js.Declarations()), api.TransformOptions{Loader: api.LoaderTS, Sourcefile: "dsh.d.ts"})
	for _, m := range r.Errors {
		line := 0
		if m.Location != nil {
			line = m.Location.Line
		}
		t.Errorf("dsh.d.ts:%d: %s", line, m.Text)
	}
	if code := bytes.TrimSpace(r.Code); len(code) != 0 {
		t.Errorf("the declarations compile to code:\n%s", code)
	}
	t.Run("each call returns a copy", func(t *testing.T) {
		a := js.Declarations()
		a[0] = 'X'
		if js.Declarations()[0] == 'X' {
			t.Error("changing the returned slice changed the declarations")
		}
	})
}

// TestTheDeclarationsNameWhatTheHostInstalls compares the declared exports of
// "dsh" (and the members of tools, a scope's view and log) with the keys a
// plugin really sees.
func TestTheDeclarationsNameWhatTheHostInstalls(t *testing.T) {
	e := load(t, map[string]string{"keys.js": `
const dsh = require("dsh");
const keys = (o) => Object.keys(o).sort();
dsh.tools.register({ name: "keys", description: "", parameters: { type: "object" },
  output: { schema: {}, render: () => [] },
  async execute() {
    return {
      dsh: keys(dsh).filter((k) => k !== "__esModule"),
      tools: keys(dsh.tools),
      scope: keys(dsh.tools.scope("a")),
      log: keys(dsh.log),
      defaultIsTheModule: dsh.default === dsh,
    };
  } });
`})
	apiNoDiags(t, e)
	got := e.apiValue(t, "keys", nil)
	toolsView := members(t, "dsh", "export interface ToolsView {")
	want := dsl.NewObject(
		dsl.Member{Key: "dsh", Value: exportedValues(t, "dsh")},
		dsl.Member{Key: "tools", Value: sorted(append(members(t, "dsh", "export interface Tools extends ToolsView {"), toolsView...))},
		dsl.Member{Key: "scope", Value: sorted(append(members(t, "dsh", "export interface ScopedTools extends ToolsView {"), toolsView...))},
		dsl.Member{Key: "log", Value: members(t, "dsh", "export interface Logger {")},
		dsl.Member{Key: "defaultIsTheModule", Value: true},
	)
	b, err := dsl.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	hosttest.Want(t, got, string(b))
	t.Run("the default export names the module's values", func(t *testing.T) {
		values := slices.DeleteFunc(exportedValues(t, "dsh"), func(s string) bool { return s == "default" })
		hosttest.Want(t, strings.Join(members(t, "dsh", "const dsh: {"), ","), strings.Join(values, ","))
	})
}

// TestTheDeclarationsNameEveryCapabilityFunction compares each declared
// capability module with the functions the capability package provides.
func TestTheDeclarationsNameEveryCapabilityFunction(t *testing.T) {
	mods, err := capability.Modules(capability.Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mods {
		names = append(names, m.Name)
		t.Run("dsh/"+m.Name+" is declared function by function", func(t *testing.T) {
			var funcs []string
			for name := range m.Funcs {
				funcs = append(funcs, name)
			}
			hosttest.Want(t, strings.Join(exportedValues(t, "dsh/"+m.Name), ","), strings.Join(sorted(funcs), ","))
		})
	}
	declared := regexp.MustCompile(`(?m)^declare module "dsh/(\w+)" \{$`)
	var modules []string
	for _, m := range declared.FindAllStringSubmatch(string(js.Declarations()), -1) {
		modules = append(modules, m[1])
	}
	hosttest.Want(t, strings.Join(sorted(modules), ","), strings.Join(sorted(names), ","))
}
