package js

import (
	"context"
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
)

// TestDynamicEffectsAreForgottenWhenDisposed checks, from inside the host,
// that registering and disposing tools, guards and listeners from calls does
// not grow the instance: their callbacks and pins go with them.
func TestDynamicEffectsAreForgottenWhenDisposed(t *testing.T) {
	svc := engine.New()
	p := scripting.NewPlugin(svc, "churn.js", nil)
	h := &Host{}
	src := scripting.Source{Root: t.TempDir(), Rel: "churn.js", Code: []byte(`
const { defineTool, tools, on } = require("dsh");
tools.register(defineTool({
  name: "churn", description: "", parameters: {},
  output: { schema: { type: "number" }, render: () => [] },
  execute() {
    for (let i = 0; i < 200; i++) {
      const d1 = tools.register(defineTool({ name: "t" + i, description: "", parameters: {},
        output: { schema: { type: "number" }, render: () => [] }, execute() { return 1; } }), { when: () => true });
      const d2 = tools.guard(() => "");
      const d3 = on("tools/pre-execute", (exec, next) => next());
      d1(); d2(); d3();
    }
    return 1;
  },
}));`)}
	pl, err := h.load(context.Background(), p, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Dispose(context.Background()) })
	for range 3 {
		r := svc.Call(context.Background(), engine.Input{CallID: "c", Name: "churn", Arguments: dsl.NewObject()})
		if r.IsError {
			t.Fatal(r.Error.Message)
		}
	}
	inst := pl.instances.Instances()[0]
	done := make(chan int, 1)
	_, _ = inst.loop.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
		done <- len(inst.callbacks)
		return goja.Undefined(), nil
	}, nil, nil)
	if got := <-done; got != 1 {
		t.Errorf("the instance keeps %d callbacks, want 1 (churn's own)", got)
	}
	pins := pl.instances.Pins()
	if pins != 0 {
		t.Errorf("the pool keeps %d pins", pins)
	}
}
