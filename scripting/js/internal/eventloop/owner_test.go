package eventloop

import (
	"context"
	"sync"
	"testing"

	"github.com/dop251/goja"
)

type whoKey struct{}

// installWho defines who(), which names the Run on whose behalf it is called
// (from CallContext's value), and a host add() as installHost's.
func installWho(l **Loop) func(vm *goja.Runtime) error {
	return func(vm *goja.Runtime) error {
		if err := installHost(l, nil)(vm); err != nil {
			return err
		}
		return vm.Set("who", func(goja.FunctionCall) goja.Value {
			ctx := (*l).CallContext()
			if ctx == nil {
				return vm.ToValue("none")
			}
			name, _ := ctx.Value(whoKey{}).(string)
			return vm.ToValue(name)
		})
	}
}

func TestCallContextFollowsTheRunThroughAwaitsAndTimers(t *testing.T) {
	var l *Loop
	l = newLoop(t, Options{Setup: installWho(&l)})
	as := func(name string) context.Context { return context.WithValue(context.Background(), whoKey{}, name) }

	t.Run("in the Run's own job, after awaiting host work, and in its timers", func(t *testing.T) {
		v, err := runJS(l, as("A"), `(async () => {
			const out = [who()];
			await add(1, 2);
			out.push(who());
			await new Promise((resolve) => setTimeout(() => { out.push(who()); resolve(); }, 1));
			out.push(who());
			return out.join(",");
		})()`)
		if err != nil || v != "A,A,A,A" {
			t.Fatalf("got %v, %v", v, err)
		}
	})
	t.Run("two Runs interleaving on the loop each see their own", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make([]any, 2)
		for k, name := range []string{"A", "B"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := runJS(l, as(name), `(async () => {
					const out = [];
					for (let i = 0; i < 20; i++) { await add(i, 1); out.push(who()); }
					return out.every((w) => w === out[0]) ? out[0] : out.join(",");
				})()`)
				if err != nil {
					t.Error(err)
				}
				got[k] = v
			}()
		}
		wg.Wait()
		if got[0] != "A" || got[1] != "B" {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("once the Run has finished, its leftover timers and host work have none", func(t *testing.T) {
		mustRun(t, l, `globalThis.late = []; setTimeout(() => late.push(who()), 1); add(1, 1).then(() => late.push(who())); "done"`)
		deadline := 0
		for {
			if v := mustRun(t, l, `late.length`); v == int64(2) {
				break
			}
			if deadline++; deadline > 1000 {
				t.Fatal("the leftovers never ran")
			}
			mustRun(t, l, `new Promise((resolve) => setTimeout(resolve, 1))`)
		}
		if v := mustRun(t, l, `late.join(",")`); v != "none,none" {
			t.Fatalf("got %v", v)
		}
	})
	t.Run("a Run's own context is the one it was given", func(t *testing.T) {
		if v := mustRun(t, l, `who()`); v != "" {
			t.Fatalf("a Run without a value gave %v", v)
		}
	})
}
