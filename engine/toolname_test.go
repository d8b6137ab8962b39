package engine_test

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/toolnametest"
)

func TestToolNameRule(t *testing.T) {
	for _, c := range toolnametest.Cases() {
		t.Run(c.Label+" is refused at registration, shown escaped and bounded", func(t *testing.T) {
			svc := engine.New()
			_, err := svc.Global().Register(cfEchoDef(c.Name))
			cfExpectErr(t, err, c.Want())
			if len(err.Error()) > 400 {
				t.Errorf("the error is %d bytes long", len(err.Error()))
			}
			if got := svc.Global().Definitions(nil); len(got) != 0 {
				t.Errorf("%d tools registered", len(got))
			}
		})
		t.Run(c.Label+" is refused in an agent's scope too", func(t *testing.T) {
			svc := engine.New()
			_, err := svc.Scope(engine.NewAgent("a", nil)).Register(cfEchoDef(c.Name))
			cfExpectErr(t, err, c.Want())
		})
		t.Run(c.Label+" is refused by ValidateDefinition", func(t *testing.T) {
			cfExpectErr(t, engine.ValidateDefinition(cfEchoDef(c.Name)), c.Want())
		})
	}
	t.Run("the name is checked before the output contract", func(t *testing.T) {
		d := cfEchoDef("a.b")
		d.Output.Render = nil
		cfExpectErr(t, engine.ValidateDefinition(d), toolnametest.Message(`"a.b"`))
	})
	for _, name := range []string{"a", "Z", "0", "_", "-", "read_file", "my-tool", "__proto__", "__index", strings.Repeat("aZ9_-", 12) + "abcd"} {
		t.Run("the conforming name "+name+" registers", func(t *testing.T) {
			svc := engine.New()
			cfMustRegister(t, svc.Global(), cfEchoDef(name))
		})
	}
	t.Run("run_code conforms and stays reserved", func(t *testing.T) {
		_, err := engine.New().Global().Register(cfEchoDef("run_code"))
		cfExpectErr(t, err, `tool name "run_code" is reserved for the PTC transport and cannot be registered or shadowed`)
	})
}

func TestNamesFromOutsideAreQuotedBounded(t *testing.T) {
	t.Run("a model's call of a megabyte escape name fails with a short escaped error", func(t *testing.T) {
		svc := engine.New()
		r := cfCall(svc, strings.Repeat("\x1b", 1<<20), cfObj())
		want := `unknown tool "` + strings.Repeat(`\x1b`, 64) + `…"`
		if r.Error == nil || r.Error.Message != want {
			t.Fatalf("got %+v, want %s", r.Error, want)
		}
	})
	t.Run("a model's call of a name with a newline quotes it escaped", func(t *testing.T) {
		r := cfCall(engine.New(), "a\nb", cfObj())
		if want := `unknown tool "a\nb"`; r.Error == nil || r.Error.Message != want {
			t.Fatalf("got %+v, want %s", r.Error, want)
		}
	})
	t.Run("a restriction naming many bad unknown names lists ten, escaped and bounded", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		deny := []string{"a\x1bb", strings.Repeat("y", 1<<20)}
		for i := range 20 {
			deny = append(deny, strings.Repeat("z", i+1))
		}
		_, err := svc.Scope(engine.NewAgent("a", nil)).Restrict(engine.Filter{Deny: deny})
		want := `tools.restrict() names unknown global tools "a\x1bb", "` + strings.Repeat("y", 64) + `…", "z", "zz", "zzz", "zzzz", "zzzzz", "zzzzzz", "zzzzzzz", "zzzzzzzz", and 12 more; known global tools: echo`
		cfExpectErr(t, err, want)
	})
	t.Run("defineTool's timeout error shows a bad name escaped", func(t *testing.T) {
		_, err := engine.DefineTool(engine.ToolOptions[any, any]{Name: "a\x1b" + strings.Repeat("b", 100), Timeout: -1})
		cfExpectErr(t, err, `defineTool(a\x1b`+strings.Repeat("b", 62)+`…): timeoutMs must be a positive finite number`)
	})
}
