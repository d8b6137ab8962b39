package engine_test

// Conformance: the registry (§2) and §6 cases 1–22 and 101–103. See
// helpers_test.go for the cases that do not apply in Go.

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestConfRegistryProjection(t *testing.T) {
	t.Run("case 1: schemas() of echo is exactly name, description and the parameters schema", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		ss, err := svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		list := []any{}
		for _, s := range ss {
			list = append(list, s.JSON())
		}
		want := `[{"name":"echo","description":"echo arguments back","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}]`
		if got := cfJSON(t, list); got != want {
			t.Errorf("schemas\n got: %s\nwant: %s", got, want)
		}
		if ss[0].JSON().Has("execute") {
			t.Error("the wire projection has an execute key")
		}
	})

	t.Run("case 2: a definition with every optional callback projects to exactly description, name, parameters", func(t *testing.T) {
		svc := engine.New()
		d := cfEchoDef("present")
		d.FinalizeContent = func(_ *engine.Execution, r *engine.Result) ([]engine.Block, error) { return r.Content, nil }
		d.ProjectContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) { return nil, nil }
		d.PresentCall = func(any) *engine.CallView { return &engine.CallView{Card: "generic"} }
		d.PresentResult = func(any, engine.ResultSummary) *engine.ResultView { return &engine.ResultView{Card: "generic"} }
		d.IsConcurrencySafe = func(any) bool { return true }
		d.Timeout = 5 * time.Second
		d.Output.PresentationMeta = func(_, _ any) (any, error) { return nil, nil }
		cfMustRegister(t, svc.Global(), d)
		ss, err := svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 1 {
			t.Fatalf("got %d schemas", len(ss))
		}
		if got := ss[0].JSON().Keys(); !reflect.DeepEqual(got, []string{"name", "description", "parameters"}) {
			t.Errorf("schema keys = %q, want name, description, parameters", got)
		}
	})

	t.Run("case 3: mutating a returned schema's parameters or description leaves the next schemas() unchanged", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		first, err := svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		params := first[0].Parameters.(*dsl.Object)
		props, _ := params.Get("properties")
		props.(*dsl.Object).Set("mutated", cfObj("type", "string"))
		params.Set("extra", true)
		first[0].Description = "mutated"
		second, err := svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"name":"echo","description":"echo arguments back","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}`
		if got := cfJSON(t, second[0].JSON()); got != want {
			t.Errorf("second schemas()\n got: %s\nwant: %s", got, want)
		}
	})

	t.Run("case 4: raw parameters with 5000 levels of nested oneOf project to the full depth", func(t *testing.T) {
		const depth = 5000
		var nested any = cfObj("type", "string")
		for i := 0; i < depth; i++ {
			nested = cfObj("oneOf", []any{nested, cfObj("type", "null")})
		}
		svc := engine.New()
		d := cfEchoDef("deep-schema")
		d.Parameters = cfObj("type", "object", "properties", cfObj("nested", nested))
		cfMustRegister(t, svc.Global(), d)
		ss, err := svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		props, _ := ss[0].Parameters.(*dsl.Object).Get("properties")
		cursor, _ := props.(*dsl.Object).Get("nested")
		layers := 0
		for {
			o := cursor.(*dsl.Object)
			one, ok := o.Get("oneOf")
			if !ok {
				break
			}
			cursor = one.([]any)[0]
			layers++
		}
		if layers != depth {
			t.Errorf("projected depth = %d, want %d", layers, depth)
		}
		if got := cfJSON(t, cursor); got != `{"type":"string"}` {
			t.Errorf("leaf = %s", got)
		}
		if ss[0].Parameters == d.Parameters {
			t.Error("schemas() returned the registered parameters, not a snapshot")
		}
	})

	t.Run("§2.2: non-lossless raw parameters fail only when schemas() projects them", func(t *testing.T) {
		svc := engine.New()
		d := cfEchoDef("lossy-schema")
		d.Parameters = map[string]any{"type": "object", "default": math.NaN()}
		cfMustRegister(t, svc.Global(), d) // not validated at registration
		_, err := svc.Global().Schemas()
		cfExpectErr(t, err, `tool "lossy-schema" parameters must be lossless JSON before schema projection`)
	})
}

func TestConfRegisterValidation(t *testing.T) {
	t.Run("case 6: a registration without output fails with must declare output", func(t *testing.T) {
		svc := engine.New()
		d := &engine.Definition{Name: "legacy-content-tool", Description: "missing output", Parameters: cfObj(),
			Execute: func(context.Context, any, *engine.Run) (any, error) { return nil, nil }}
		_, err := svc.Global().Register(d)
		cfExpectErr(t, err, `tool "legacy-content-tool" must declare output { schema, render, presentationMeta? }`)
		if svc.Global().Get("legacy-content-tool") != nil {
			t.Error("the rejected tool is registered")
		}
	})

	t.Run("§2.2.2: an unsupported output.schema fails with the JsonSchemaError", func(t *testing.T) {
		svc := engine.New()
		d := cfEchoDef("bad-schema")
		d.Output.Schema = cfObj("type", "tuple")
		_, err := svc.Global().Register(d)
		var se *dsl.JsonSchemaError
		if !errors.As(err, &se) {
			t.Fatalf("want a *dsl.JsonSchemaError, got %T %v", err, err)
		}
		// The error says which schema; the JsonSchemaError in it keeps the
		// spec's message.
		cfExpectErr(t, err, `tool "bad-schema": output.schema: unsupported JSON schema: schema.type must be one of object/array/string/number/integer/boolean/null`)
		cfExpectErr(t, se, "unsupported JSON schema: schema.type must be one of object/array/string/number/integer/boolean/null")
	})

	t.Run("case 7: a non-positive timeout fails with timeoutMs must be a positive finite number", func(t *testing.T) {
		// Go: Timeout 0 means "no timeout" and Infinity/NaN do not exist; a
		// negative duration is the invalid value.
		svc := engine.New()
		d := cfEchoDef("negative-timeout")
		d.Timeout = -5 * time.Millisecond
		_, err := svc.Global().Register(d)
		cfExpectErr(t, err, `tool "negative-timeout" timeoutMs must be a positive finite number`)
	})

	t.Run("case 8: the same name twice globally points to tools.scope; twice in one scope says already registered in this scope", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		_, err := svc.Global().Register(cfEchoDef("echo"))
		if err == nil {
			t.Fatal("duplicate global registration accepted")
		}
		// §2.2.5's prose says "that agent's scope": the message names the
		// script API for it (issue 12), not the upstream agent.ctx.
		cfExpectErr(t, err, "tool \"echo\" is already registered (for a per-agent variant, register through that agent's scope, `tools.scope(id)`, instead)")

		a := engine.NewAgent("a", nil)
		cfMustRegister(t, svc.Scope(a), cfEchoDef("mine"))
		_, err = svc.Scope(a).Register(cfEchoDef("mine"))
		cfExpectErr(t, err, `tool "mine" is already registered in this scope`)
	})

	t.Run("case 9: registering run_code globally or in a scope is reserved", func(t *testing.T) {
		svc := engine.New()
		const want = `tool name "run_code" is reserved for the PTC transport and cannot be registered or shadowed`
		_, err := svc.Global().Register(cfEchoDef("run_code"))
		cfExpectErr(t, err, want)
		_, err = svc.Scope(engine.NewAgent("a", nil)).Register(cfEchoDef("run_code"))
		cfExpectErr(t, err, want)
	})

	t.Run("§2.2: the validations run in the order output, output.schema, timeoutMs, run_code, duplicate", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("run_code-dup-probe"))
		d := cfEchoDef("run_code")
		d.Output.Render = nil
		d.Output.Schema = cfObj("type", "tuple")
		d.Timeout = -1
		_, err := svc.Global().Register(d)
		cfExpectErr(t, err, `tool "run_code" must declare output { schema, render, presentationMeta? }`)
		d.Output.Render = cfRenderString
		_, err = svc.Global().Register(d)
		cfExpectErr(t, err, `tool "run_code": output.schema: unsupported JSON schema: schema.type must be one of object/array/string/number/integer/boolean/null`)
		d.Output.Schema = cfStringSchema()
		_, err = svc.Global().Register(d)
		cfExpectErr(t, err, `tool "run_code" timeoutMs must be a positive finite number`)
		d.Timeout = 0
		_, err = svc.Global().Register(d)
		cfExpectErr(t, err, `tool name "run_code" is reserved for the PTC transport and cannot be registered or shadowed`)

		dup := cfEchoDef("run_code-dup-probe")
		dup.Timeout = -1
		_, err = svc.Global().Register(dup)
		cfExpectErr(t, err, `tool "run_code-dup-probe" timeoutMs must be a positive finite number`)
	})

	t.Run("§2.2: a failing tools/change listener rolls the registration back and the name stays free", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				threw := false
				svc.Global().OnChange(func(engine.Change) error {
					if !threw {
						threw = true
						return cfRaise(mode, errors.New("boom change listener"))
					}
					return nil
				})
				_, err := svc.Global().Register(cfEchoDef("echo"))
				cfExpectErr(t, err, "boom change listener")
				if svc.Global().Get("echo") != nil {
					t.Error("the rolled-back tool is still visible")
				}
				cfExpectNames(t, svc.Global())
				dispose := cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				cfExpectNames(t, svc.Global(), "echo")
				dispose()
				if svc.Global().Get("echo") != nil {
					t.Error("disposed tool still visible")
				}
			})
		}
	})

	t.Run("§2.2: registration and disposal each emit tools/change", func(t *testing.T) {
		svc := engine.New()
		var tr cfTrace
		svc.Global().OnChange(func(c engine.Change) error { tr.add(string(c.Kind) + ":" + c.Name); return nil })
		a := engine.NewAgent("a", nil)
		d1 := cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		d2 := cfMustRegister(t, svc.Scope(a), cfEchoDef("mine"))
		d2()
		d1()
		d1() // idempotent: no second dispose event
		if got := tr.String(); got != "register:echo,register:mine,dispose:mine,dispose:echo" {
			t.Errorf("tools/change events = %s", got)
		}
	})
}

func TestConfRegistryLifetime(t *testing.T) {
	t.Run("case 10: the register disposer removes the tool, scope disposal removes its registrations, get(unknown) is nil", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		dispose := cfMustRegister(t, svc.Global(), cfEchoDef("disposable"))
		cfExpectNames(t, svc.Global(), "echo", "disposable")
		dispose()
		cfExpectNames(t, svc.Global(), "echo")
		if svc.Global().Get("disposable") != nil {
			t.Error("get(disposable) after dispose is not nil")
		}
		dispose() // idempotent
		cfExpectNames(t, svc.Global(), "echo")

		plugin := svc.Global()
		cfMustRegister(t, plugin, cfEchoDef("scoped"))
		cfExpectNames(t, svc.Global(), "echo", "scoped")
		plugin.Dispose()
		cfExpectNames(t, svc.Global(), "echo")
		if svc.Global().Get("scoped") != nil {
			t.Error("get(scoped) after scope disposal is not nil")
		}

		a := engine.NewAgent("a", nil)
		agentScope := svc.Scope(a)
		cfMustRegister(t, agentScope, cfEchoDef("mine"))
		if svc.Scope(a).Get("mine") == nil {
			t.Fatal("scoped tool not visible to its scope")
		}
		agentScope.Dispose()
		if svc.Scope(a).Get("mine") != nil {
			t.Error("scoped tool visible after its scope was disposed")
		}
		if svc.Global().Get("nope") != nil {
			t.Error("get(unknown) is not nil")
		}
		if got := svc.Global().Get("echo"); got == nil || got.Name != "echo" {
			t.Errorf("get(echo) = %v", got)
		}
	})

	t.Run("§2.2: the definition is borrowed, not copied", func(t *testing.T) {
		svc := engine.New()
		d := cfEchoDef("echo")
		cfMustRegister(t, svc.Global(), d)
		if svc.Global().Get("echo") != d {
			t.Error("get returned another definition than the registered one")
		}
	})
}

func TestConfScopedVisibility(t *testing.T) {
	t.Run("case 12: a scoped tool is visible and executable only for its scope", func(t *testing.T) {
		svc := engine.New()
		a, b := engine.NewAgent("a", nil), engine.NewAgent("b", nil)
		cfMustRegister(t, svc.Scope(a), cfConst("mine", "mine ran"))
		if r := cfCallAs(svc, a, "mine", cfObj()); r.IsError || r.Value != "mine ran" {
			t.Errorf("own scope: %s", cfResultJSON(t, r))
		}
		want := cfCoded(t, `unknown tool "mine"`, "ToolNotFoundError", "UNKNOWN_TOOL")
		cfExpect(t, cfCall(svc, "mine", cfObj()), want)
		cfExpect(t, cfCallAs(svc, b, "mine", cfObj()), want)
		cfExpectNames(t, svc.Global())
		cfExpectNames(t, svc.Scope(b))
		cfExpectNames(t, svc.Scope(a), "mine")
		if svc.Global().Get("mine") != nil || svc.Scope(b).Get("mine") != nil {
			t.Error("scoped tool visible outside its scope")
		}
	})

	t.Run("case 13: a scoped and a global tool of the same name, in either order: the scope runs its own, the global view the global", func(t *testing.T) {
		for _, scopedFirst := range []bool{false, true} {
			name := "global first"
			if scopedFirst {
				name = "scoped first"
			}
			t.Run(name, func(t *testing.T) {
				svc := engine.New()
				a := engine.NewAgent("a", nil)
				if scopedFirst {
					cfMustRegister(t, svc.Scope(a), cfConst("echo", "scoped"))
					cfMustRegister(t, svc.Global(), cfConst("echo", "global"))
				} else {
					cfMustRegister(t, svc.Global(), cfConst("echo", "global"))
					cfMustRegister(t, svc.Scope(a), cfConst("echo", "scoped"))
				}
				if r := cfCallAs(svc, a, "echo", cfObj()); r.Value != "scoped" {
					t.Errorf("scope ran %s", cfResultJSON(t, r))
				}
				if r := cfCall(svc, "echo", cfObj()); r.Value != "global" {
					t.Errorf("global view ran %s", cfResultJSON(t, r))
				}
				cfExpectNames(t, svc.Scope(a), "echo")
			})
		}
	})

	t.Run("§2.4: a shadowing entry keeps the position of the name it shadows", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		for _, n := range []string{"a1", "b1", "c1"} {
			cfMustRegister(t, svc.Global(), cfEchoDef(n))
		}
		own := cfEchoDef("d1")
		cfMustRegister(t, svc.Scope(a), own)
		shadow := cfEchoDef("b1")
		cfMustRegister(t, svc.Scope(a), shadow)
		cfExpectNames(t, svc.Scope(a), "a1", "b1", "c1", "d1")
		if svc.Scope(a).Get("b1") != shadow {
			t.Error("the scope does not see its own shadowing definition")
		}
	})
}

func TestConfRestrictions(t *testing.T) {
	t.Run("case 14: allow read in a scope with globals read, bash and own capture", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		cfMustRegister(t, svc.Global(), cfConst("read", "read"))
		cfMustRegister(t, svc.Global(), cfConst("bash", "bash"))
		cfMustRegister(t, svc.Scope(a), cfConst("capture", "capture"))
		cfMustRestrict(t, svc.Scope(a), engine.Filter{Allow: []string{"read"}})
		names := cfNames(t, svc.Scope(a))
		if len(names) != 2 || !(names[0] == "read" && names[1] == "capture") {
			t.Errorf("scope schemas = %q, want {capture, read}", names)
		}
		cfExpect(t, cfCallAs(svc, a, "bash", cfObj()), cfCoded(t, `unknown tool "bash"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		if svc.Scope(a).Get("bash") != nil || svc.Scope(a).Executable("bash", nil) != nil {
			t.Error("restricted-away bash reads as present")
		}
		cfExpectNames(t, svc.Global(), "read", "bash")
		if r := cfCall(svc, "bash", cfObj()); r.IsError {
			t.Errorf("global view lost bash: %s", cfResultJSON(t, r))
		}
	})

	t.Run("case 15: a later global is visible to a deny scope and hidden from an allow-list scope", func(t *testing.T) {
		svc := engine.New()
		denyScope, allowScope := engine.NewAgent("deny", nil), engine.NewAgent("allow", nil)
		cfMustRegister(t, svc.Global(), cfConst("read", "read"))
		cfMustRegister(t, svc.Global(), cfConst("bash", "bash"))
		cfMustRestrict(t, svc.Scope(denyScope), engine.Filter{Deny: []string{"bash"}})
		cfMustRestrict(t, svc.Scope(allowScope), engine.Filter{Allow: []string{"read"}})
		cfMustRegister(t, svc.Global(), cfConst("web", "web"))
		cfExpectNames(t, svc.Scope(denyScope), "read", "web")
		if r := cfCallAs(svc, denyScope, "web", cfObj()); r.IsError {
			t.Errorf("deny scope cannot run web: %s", cfResultJSON(t, r))
		}
		cfExpectNames(t, svc.Scope(allowScope), "read")
		cfExpect(t, cfCallAs(svc, allowScope, "web", cfObj()), cfCoded(t, `unknown tool "web"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
	})

	t.Run("case 16: allow [a, b] plus deny [b] leaves [a]; lifting the allow leaves [a, c]", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		for _, n := range []string{"a", "b", "c"} {
			cfMustRegister(t, svc.Global(), cfEchoDef(n))
		}
		lift := cfMustRestrict(t, svc.Scope(s), engine.Filter{Allow: []string{"a", "b"}})
		cfMustRestrict(t, svc.Scope(s), engine.Filter{Deny: []string{"b"}})
		cfExpectNames(t, svc.Scope(s), "a")
		lift()
		cfExpectNames(t, svc.Scope(s), "a", "c")
		lift() // idempotent
		cfExpectNames(t, svc.Scope(s), "a", "c")
	})

	t.Run("§2.3: an explicitly empty allow list hides every inherited tool but not the scope's own", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("read"))
		cfMustRegister(t, svc.Scope(s), cfEchoDef("own"))
		cfMustRestrict(t, svc.Scope(s), engine.Filter{Allow: []string{}})
		cfExpectNames(t, svc.Scope(s), "own")
	})

	t.Run("case 17: mutating the filter's array after restrict has no effect", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("read"))
		cfMustRegister(t, svc.Global(), cfEchoDef("bash"))
		allow := []string{"read"}
		deny := []string{"bash"}
		cfMustRestrict(t, svc.Scope(s), engine.Filter{Allow: allow})
		allow[0] = "bash"
		cfExpectNames(t, svc.Scope(s), "read")
		s2 := engine.NewAgent("s2", nil)
		cfMustRestrict(t, svc.Scope(s2), engine.Filter{Deny: deny})
		deny[0] = "read"
		cfExpectNames(t, svc.Scope(s2), "read")
	})

	t.Run("case 18: restrict's error messages", func(t *testing.T) {
		svc := engine.New()
		_, err := svc.Global().Restrict(engine.Filter{Deny: []string{"x"}})
		if err == nil {
			t.Fatal("restrict from a plain context accepted")
		}
		// §2.3's prose says "requires an agent scope"; case 18 wants "requires a
		// scoped context": the upstream literal, which the engine uses.
		cfExpectErr(t, err, "tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead")

		s := engine.NewAgent("s", nil)
		_, err = svc.Scope(s).Restrict(engine.Filter{})
		if err == nil || err.Error() != "tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)" {
			t.Errorf("restrict({}) = %v, want the no-op error", err)
		}

		_, err = svc.Scope(s).Restrict(engine.Filter{Deny: []string{"x"}})
		cfExpectErr(t, err, `tools.restrict() names unknown global tool "x"; known global tools: (none)`)

		cfMustRegister(t, svc.Global(), cfEchoDef("real"))
		cfMustRegister(t, svc.Scope(s), cfEchoDef("local"))
		_, err = svc.Scope(s).Restrict(engine.Filter{Deny: []string{"local"}})
		cfExpectErr(t, err, `tools.restrict() names unknown global tool "local"; known global tools: real`)
		_, err = svc.Scope(s).Restrict(engine.Filter{Allow: []string{"reel"}})
		cfExpectErr(t, err, `tools.restrict() names unknown global tool "reel"; known global tools: real`)
		_, err = svc.Scope(s).Restrict(engine.Filter{Allow: []string{"real", "ghost"}, Deny: []string{"wraith"}})
		cfExpectErr(t, err, `tools.restrict() names unknown global tools "ghost", "wraith"; known global tools: real`)

		cfMustRegister(t, svc.Global(), cfEchoDef("alpha"))
		_, err = svc.Scope(s).Restrict(engine.Filter{Deny: []string{"zz"}})
		cfExpectErr(t, err, `tools.restrict() names unknown global tool "zz"; known global tools: alpha, real`)
		cfExpectNames(t, svc.Scope(s), "real", "alpha", "local")
	})

	t.Run("case 19: restrict naming run_code in allow or deny is refused", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("read"))
		const want = `tools.restrict() cannot name reserved PTC transport "run_code"; restrict end-capability tools instead`
		_, err := svc.Scope(s).Restrict(engine.Filter{Allow: []string{"read", "run_code"}})
		cfExpectErr(t, err, want)
		_, err = svc.Scope(s).Restrict(engine.Filter{Deny: []string{"run_code"}})
		cfExpectErr(t, err, want)
	})

	t.Run("§2.3: restrict's checks run in the order scope, no-op, run_code, unknown names", func(t *testing.T) {
		svc := engine.New()
		_, err := svc.Global().Restrict(engine.Filter{})
		if err == nil || !strings.HasPrefix(err.Error(), "tools.restrict() requires a scoped context") {
			t.Errorf("plain {} restrict = %v", err)
		}
		s := engine.NewAgent("s", nil)
		_, err = svc.Scope(s).Restrict(engine.Filter{Deny: []string{"ghost", "run_code"}})
		cfExpectErr(t, err, `tools.restrict() cannot name reserved PTC transport "run_code"; restrict end-capability tools instead`)
	})

	t.Run("§2.3: restrict emits tools/change on add and on lift", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("read"))
		var tr cfTrace
		svc.Global().OnChange(func(c engine.Change) error { tr.add(string(c.Kind)); return nil })
		lift := cfMustRestrict(t, svc.Scope(s), engine.Filter{Deny: []string{"read"}})
		lift()
		if got := tr.String(); got != "restrict,lift" {
			t.Errorf("tools/change = %s, want restrict,lift", got)
		}
	})

	t.Run("case 20: a child inherits the parent's tools; the child's deny hides bash for the child only", func(t *testing.T) {
		svc := engine.New()
		parent := engine.NewAgent("parent", nil)
		child := engine.NewAgent("child", parent)
		cfMustRegister(t, svc.Scope(parent), cfConst("read", "read"))
		cfMustRegister(t, svc.Scope(parent), cfConst("bash", "bash"))
		cfExpectNames(t, svc.Scope(child), "read", "bash")
		cfMustRestrict(t, svc.Scope(child), engine.Filter{Deny: []string{"bash"}})
		cfExpectNames(t, svc.Scope(child), "read")
		cfExpect(t, cfCallAs(svc, child, "bash", cfObj()), cfCoded(t, `unknown tool "bash"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		cfExpectNames(t, svc.Scope(parent), "read", "bash")
		if r := cfCallAs(svc, parent, "bash", cfObj()); r.IsError {
			t.Errorf("parent lost bash: %s", cfResultJSON(t, r))
		}
	})

	t.Run("case 21: the child's own registration survives the child's allow-list", func(t *testing.T) {
		svc := engine.New()
		parent := engine.NewAgent("parent", nil)
		child := engine.NewAgent("child", parent)
		cfMustRegister(t, svc.Global(), cfConst("read", "read"))
		cfMustRegister(t, svc.Global(), cfConst("bash", "bash"))
		cfMustRegister(t, svc.Scope(child), cfConst("own", "own"))
		cfMustRestrict(t, svc.Scope(child), engine.Filter{Allow: []string{"read"}})
		cfExpectNames(t, svc.Scope(child), "read", "own")
		if r := cfCallAs(svc, child, "own", cfObj()); r.IsError {
			t.Errorf("own tool hidden: %s", cfResultJSON(t, r))
		}
	})

	t.Run("case 22: the parent's deny of a global reaches the child and the parent", func(t *testing.T) {
		svc := engine.New()
		parent := engine.NewAgent("parent", nil)
		child := engine.NewAgent("child", parent)
		cfMustRegister(t, svc.Global(), cfConst("read", "read"))
		cfMustRegister(t, svc.Global(), cfConst("bash", "bash"))
		cfMustRestrict(t, svc.Scope(parent), engine.Filter{Deny: []string{"bash"}})
		cfExpectNames(t, svc.Scope(parent), "read")
		cfExpectNames(t, svc.Scope(child), "read")
		want := cfCoded(t, `unknown tool "bash"`, "ToolNotFoundError", "UNKNOWN_TOOL")
		cfExpect(t, cfCallAs(svc, child, "bash", cfObj()), want)
		cfExpect(t, cfCallAs(svc, parent, "bash", cfObj()), want)
		cfExpectNames(t, svc.Global(), "read", "bash")
	})

	t.Run("§2.3: a restriction never affects other scopes", func(t *testing.T) {
		svc := engine.New()
		a, b := engine.NewAgent("a", nil), engine.NewAgent("b", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("read"))
		cfMustRestrict(t, svc.Scope(a), engine.Filter{Deny: []string{"read"}})
		cfExpectNames(t, svc.Scope(a))
		cfExpectNames(t, svc.Scope(b), "read")
	})
}

func TestConfExecutionMode(t *testing.T) {
	t.Run("case 101: a true classifier is parallel; undeclared, unknown and arg-dependent write calls are exclusive", func(t *testing.T) {
		svc := engine.New()
		safe := cfEchoDef("safe")
		safe.IsConcurrencySafe = func(any) bool { return true }
		cfMustRegister(t, svc.Global(), safe)
		cfMustRegister(t, svc.Global(), cfEchoDef("plain"))
		fs := cfEchoDef("fs")
		fs.IsConcurrencySafe = func(args any) bool {
			m, ok := args.(map[string]any)
			return ok && m["mode"] == "read"
		}
		cfMustRegister(t, svc.Global(), fs)
		g := svc.Global()
		for _, c := range []struct {
			name string
			args any
			want engine.Mode
		}{
			{"safe", cfObj(), engine.Parallel},
			{"plain", cfObj(), engine.Exclusive},
			{"nope", cfObj(), engine.Exclusive},
			{"fs", map[string]any{"mode": "read"}, engine.Parallel},
			{"fs", map[string]any{"mode": "write"}, engine.Exclusive},
		} {
			if got := g.ExecutionMode(cfIn("c", c.name, c.args)); got != c.want {
				t.Errorf("executionMode(%s %v) = %s, want %s", c.name, c.args, got, c.want)
			}
		}
	})

	t.Run("case 102: a panicking raw classifier is exclusive; the raw classifier receives the arguments as given", func(t *testing.T) {
		svc := engine.New()
		boom := cfEchoDef("boom")
		boom.IsConcurrencySafe = func(any) bool { panic("classifier exploded") }
		cfMustRegister(t, svc.Global(), boom)
		args := map[string]any{"x": []any{1.0}}
		var seen any
		probe := cfEchoDef("probe")
		probe.IsConcurrencySafe = func(a any) bool { seen = a; return false }
		cfMustRegister(t, svc.Global(), probe)
		if got := svc.Global().ExecutionMode(cfIn("c", "boom", cfObj())); got != engine.Exclusive {
			t.Errorf("panicking classifier: %s", got)
		}
		svc.Global().ExecutionMode(cfIn("c", "probe", args))
		m, ok := seen.(map[string]any)
		if !ok || reflect.ValueOf(m).UnsafePointer() != reflect.ValueOf(args).UnsafePointer() {
			t.Errorf("classifier received %T %v, want the caller's own arguments map", seen, seen)
		}
	})

	t.Run("§2.6: a tool hidden by a restriction is exclusive for the restricted scope", func(t *testing.T) {
		svc := engine.New()
		s := engine.NewAgent("s", nil)
		safe := cfEchoDef("safe")
		safe.IsConcurrencySafe = func(any) bool { return true }
		cfMustRegister(t, svc.Global(), safe)
		cfMustRestrict(t, svc.Scope(s), engine.Filter{Deny: []string{"safe"}})
		if got := svc.Scope(s).ExecutionMode(cfIn("c", "safe", cfObj())); got != engine.Exclusive {
			t.Errorf("restricted: %s", got)
		}
		if got := svc.Global().ExecutionMode(cfIn("c", "safe", cfObj())); got != engine.Parallel {
			t.Errorf("global: %s", got)
		}
	})
}

func TestConfCollapse(t *testing.T) {
	t.Run("case 103: a collapsed scope: a model-direct native call is exclusive and fails before policy with the route message", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		var pre, guards, body, post, finals, results cfCounter
		d := cfTool("echo", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "ran", nil })
		d.IsConcurrencySafe = func(any) bool { return true }
		d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
			finals.inc()
			return []engine.Block{engine.Text("finalized")}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		svc.Scope(a).SetExecutor(cfNewPTC())
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			pre.inc()
			return next()
		})
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { guards.inc(); return "", nil })
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			post.inc()
			return next()
		})
		svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { results.inc(); return nil })

		in := cfIn("c1", "echo", cfObj())
		in.Agent = a
		if got := svc.Scope(a).ExecutionMode(in); got != engine.Exclusive {
			t.Errorf("collapsed model-direct call mode = %s, want exclusive", got)
		}
		r := svc.Call(context.Background(), in)
		cfExpect(t, r, cfCoded(t, "unknown tool \"echo\": only `run_code` is callable directly — call `echo` from inside a `run_code` program instead",
			"ToolNotFoundError", "UNKNOWN_TOOL"))
		if pre.get()+guards.get()+body.get()+post.get()+finals.get() != 0 {
			t.Errorf("pre %d guards %d body %d post %d finalizer %d, want all 0", pre.get(), guards.get(), body.get(), post.get(), finals.get())
		}
		if results.get() != 1 {
			t.Errorf("tools/result fired %d times, want 1", results.get())
		}

		t.Run("pre-aborted: ABORTED_BEFORE_DISPATCH, the finalizer applied", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			r := svc.Call(ctx, in)
			if !r.IsError || cfFirstText(r) != "finalized" {
				t.Errorf("content = %s, want the finalizer's", cfResultJSON(t, r))
			}
			cfExpectCode(t, r, "AbortError", "ABORTED_BEFORE_DISPATCH")
			if r.Error.Message != "tool call aborted before dispatch" {
				t.Errorf("message = %q", r.Error.Message)
			}
			if body.get() != 0 || finals.get() != 1 {
				t.Errorf("body %d finalizer %d", body.get(), finals.get())
			}
		})

		t.Run("a call carrying a parent token bypasses the collapse", func(t *testing.T) {
			nested := in
			nested.Parent = new(engine.Token)
			nested.CallID = "c1:ptc:1"
			if got := svc.Scope(a).ExecutionMode(nested); got != engine.Parallel {
				t.Errorf("nested mode = %s, want parallel", got)
			}
			r := svc.Call(context.Background(), nested)
			if r.IsError || cfFirstText(r) != "finalized" || r.Value != "ran" {
				t.Errorf("nested call = %s", cfResultJSON(t, r))
			}
		})

		t.Run("a non-visible name under collapse takes the ordinary unknown-tool path", func(t *testing.T) {
			ghost := in
			ghost.Name = "ghost"
			cfExpect(t, svc.Call(context.Background(), ghost), cfCoded(t, `unknown tool "ghost"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		})

		t.Run("the transport run_code is resolvable for the collapsed scope only", func(t *testing.T) {
			rc := in
			rc.Name = engine.TransportName
			if r := svc.Call(context.Background(), rc); r.IsError || r.Value != "ran" {
				t.Errorf("run_code in the collapsed scope = %s", cfResultJSON(t, r))
			}
			cfExpect(t, cfCall(svc, engine.TransportName, cfObj()), cfCoded(t, `unknown tool "run_code"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		})
	})
}

func TestConfConditionalRegistrations(t *testing.T) {
	when := func(ok *bool) engine.RegisterOption {
		return engine.When(func(_ context.Context, w engine.WhenContext) (bool, error) { return *ok, nil })
	}

	t.Run("§2.4: without a step's tool set a conditional registration is unavailable; with one it is usable when admitted", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		on := true
		cfMustRegister(t, svc.Global(), cfConst("plain", "plain"))
		cfMustRegister(t, svc.Global(), cfConst("cond", "cond ran"), when(&on))
		sc := svc.Scope(a)
		if sc.Executable("cond", nil) != nil {
			t.Error("a conditional tool is executable without a tool set")
		}
		cfExpect(t, cfCallAs(svc, a, "cond", cfObj()), cfCoded(t, `unknown tool "cond"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		set, err := sc.Resolve(context.Background(), "model-x")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range sc.Definitions(set) {
			names = append(names, d.Name)
		}
		if strings.Join(names, ",") != "plain,cond" {
			t.Errorf("definitions(set) = %q", names)
		}
		if sc.Executable("cond", set) == nil {
			t.Error("an admitted conditional tool is not executable with its set")
		}
		in := cfIn("c1", "cond", cfObj())
		in.Agent, in.ToolSet = a, set
		if r := svc.Call(context.Background(), in); r.IsError || r.Value != "cond ran" {
			t.Errorf("call with the set: %s", cfResultJSON(t, r))
		}
		on = false
		set2, err := sc.Resolve(context.Background(), "model-x")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Executable("cond", set2) != nil {
			t.Error("a conditional tool whose condition is false is executable")
		}
		in.ToolSet = set2
		cfExpect(t, svc.Call(context.Background(), in), cfCoded(t, `unknown tool "cond"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
	})

	t.Run("§2.4: the condition sees the agent and the model selection", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		var seen engine.WhenContext
		cfMustRegister(t, svc.Global(), cfEchoDef("cond"), engine.When(func(_ context.Context, w engine.WhenContext) (bool, error) {
			seen = w
			return true, nil
		}))
		if _, err := svc.Scope(a).Resolve(context.Background(), "model-x"); err != nil {
			t.Fatal(err)
		}
		if seen.Agent != a || seen.ModelSelection != "model-x" {
			t.Errorf("condition saw %+v", seen)
		}
	})

	t.Run("§2.4: a failing or cancelled resolve publishes nothing", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run("a condition that "+mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("cond"), engine.When(func(context.Context, engine.WhenContext) (bool, error) {
					return false, cfRaise(mode, errors.New("condition exploded"))
				}))
				set, err := svc.Global().Resolve(context.Background(), nil)
				if err == nil || err.Error() != "condition exploded" || set != nil {
					t.Errorf("resolve = %v, %v; want nil and the condition's error", set, err)
				}
			})
		}
		t.Run("cancelled while a condition runs", func(t *testing.T) {
			svc := engine.New()
			ctx, cancel := context.WithCancel(context.Background())
			cfMustRegister(t, svc.Global(), cfEchoDef("cond"), engine.When(func(context.Context, engine.WhenContext) (bool, error) {
				cancel()
				return true, nil
			}))
			set, err := svc.Global().Resolve(ctx, nil)
			if err == nil || set != nil {
				t.Errorf("resolve = %v, %v; want nil and an error", set, err)
			}
		})
	})

	t.Run("a step's tool set pins only the conditions: a later unconditional replacement serves, a restriction or a conditional replacement stops", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		on := true
		dispose := cfMustRegister(t, svc.Global(), cfConst("tool", "original"))
		disposeCond := cfMustRegister(t, svc.Global(), cfConst("cond", "cond original"), when(&on))
		cfMustRegister(t, svc.Global(), cfConst("other", "other"))
		set, err := svc.Scope(a).Resolve(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		dispose()
		in := cfIn("c1", "tool", cfObj())
		in.Agent, in.ToolSet = a, set
		cfExpect(t, svc.Call(context.Background(), in), cfCoded(t, `unknown tool "tool"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		cfMustRegister(t, svc.Global(), cfConst("tool", "replacement"))
		if r := svc.Call(context.Background(), in); r.IsError || r.Value != "replacement" {
			t.Errorf("the replacement with the earlier set: %s", cfResultJSON(t, r))
		}
		in.Name = "cond"
		if r := svc.Call(context.Background(), in); r.IsError || r.Value != "cond original" {
			t.Errorf("the admitted conditional tool: %s", cfResultJSON(t, r))
		}
		disposeCond()
		cfMustRegister(t, svc.Global(), cfConst("cond", "cond replacement"), when(&on))
		cfExpect(t, svc.Call(context.Background(), in), cfCoded(t, `unknown tool "cond"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		cfMustRestrict(t, svc.Scope(a), engine.Filter{Deny: []string{"other"}})
		in.Name = "other"
		cfExpect(t, svc.Call(context.Background(), in), cfCoded(t, `unknown tool "other"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
	})
}
