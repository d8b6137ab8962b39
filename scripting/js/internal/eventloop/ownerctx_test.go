package eventloop

import (
	"context"
	"testing"

	"github.com/dop251/goja"
)

// installOwner defines owner(), which names the Run the current entry runs
// for (from OwnerContext's value), and a host add() as installHost's.
func installOwner(l **Loop) func(vm *goja.Runtime) error {
	return func(vm *goja.Runtime) error {
		if err := installHost(l, nil)(vm); err != nil {
			return err
		}
		return vm.Set("owner", func(goja.FunctionCall) goja.Value {
			ctx := (*l).OwnerContext()
			if ctx == nil {
				return vm.ToValue("none")
			}
			name, _ := ctx.Value(whoKey{}).(string)
			return vm.ToValue(name)
		})
	}
}

func TestOwnerContextOutlivesTheRun(t *testing.T) {
	var l *Loop
	l = newLoop(t, Options{Setup: installOwner(&l)})
	as := func(name string) context.Context { return context.WithValue(context.Background(), whoKey{}, name) }
	t.Run("it follows the Run through awaits and timers as CallContext does", func(t *testing.T) {
		v, err := runJS(l, as("A"), `(async () => {
			const out = [owner()];
			await add(1, 2);
			out.push(owner());
			await new Promise((resolve) => setTimeout(() => { out.push(owner()); resolve(); }, 1));
			out.push(owner());
			return out.join(",");
		})()`)
		if err != nil || v != "A,A,A,A" {
			t.Fatalf("got %v, %v", v, err)
		}
	})
	t.Run("a timer and host work left by a finished Run still name it", func(t *testing.T) {
		if _, err := runJS(l, as("B"), `globalThis.late = []; setTimeout(() => late.push(owner()), 1); add(1, 1).then(() => late.push(owner())); "done"`); err != nil {
			t.Fatal(err)
		}
		for n := 0; ; n++ {
			if v := mustRun(t, l, `late.length`); v == int64(2) {
				break
			}
			if n > 1000 {
				t.Fatal("the leftovers never ran")
			}
			mustRun(t, l, `new Promise((resolve) => setTimeout(resolve, 1))`)
		}
		if v := mustRun(t, l, `late.join(",")`); v != "B,B" {
			t.Fatalf("got %v", v)
		}
	})
}
