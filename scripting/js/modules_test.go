package js_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/js"
)

// textModule is a host module for the test: upper(s) and wait(ms), which
// returns early when cancelled.
var textModule = js.Module{Name: "text", Funcs: map[string]js.AsyncFunc{
	"upper": func(_ context.Context, args []any) (any, error) {
		s, _ := args[0].(string)
		return strings.ToUpper(s), nil
	},
	"wait": func(ctx context.Context, args []any) (any, error) {
		select {
		case <-ctx.Done():
			return nil, engine.NewError("Error", "ECANCELED", "wait was cancelled")
		case <-time.After(5 * time.Second):
			return "waited", nil
		}
	},
	"fail": func(context.Context, []any) (any, error) { return nil, errors.New("plain failure") },
	"args": func(_ context.Context, args []any) (any, error) { return args, nil },
	"park": func(ctx context.Context, _ []any) (any, error) {
		parked <- ctx
		<-ctx.Done()
		return nil, engine.NewError("Error", "ECANCELED", "park was cancelled")
	},
}}

// parked receives the ctx of each park() call of textModule.
var parked = make(chan context.Context, 16)

// pathModule is a synchronous host module for the test.
var pathModule = js.Module{Name: "p", Sync: true, Funcs: map[string]js.AsyncFunc{
	"twice": func(_ context.Context, args []any) (any, error) {
		s, ok := args[0].(string)
		if !ok {
			return nil, engine.NewError("Error", "EINVAL", "twice: the argument must be a string")
		}
		return s + s, nil
	},
}}

func withText(h *js.Host, _ *engine.Service) { h.Modules = append(h.Modules, textModule, pathModule) }

func TestHostModules(t *testing.T) {
	t.Run("an async host function settles on the loop", func(t *testing.T) {
		e := load(t, map[string]string{"m.ts": strings.Replace(tool("up", `{type: "string"}`, `return await upper("shout")`),
			`const { defineTool, tools } = require("dsh");`, `import { defineTool, tools } from "dsh"; import { upper } from "dsh/text";`, 1)}, withText)
		if len(e.diags) > 0 {
			t.Fatal(e.diagnostics())
		}
		if got := e.call(t, "up", nil); !strings.Contains(got, `"value":"SHOUT"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a signal in the options cancels the host work and its code reaches the script", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": tool("w", `{type: "string"}`, `
			const { wait } = require("dsh/text");
			const c = new AbortController();
			setTimeout(() => c.abort(), 10);
			try { return await wait(1, { signal: c.signal }); } catch (e) { return e.code + ": " + e.message; }`)}, withText)
		start := time.Now()
		if got := e.call(t, "w", nil); !strings.Contains(got, `"value":"ECANCELED: wait was cancelled"`) {
			t.Errorf("got %s", got)
		}
		if time.Since(start) > 2*time.Second {
			t.Error("the host work was not cancelled")
		}
	})
	t.Run("host work is cancelled with the call it was started for, without a signal", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": tool("p", `{type: "string"}`, `
			const { park } = require("dsh/text");
			await new Promise((resolve) => setTimeout(resolve, 1)); // from a timer's continuation too
			try { return await park(); } catch (e) { return e.code; }`)}, withText)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan string, 1)
		go func() { done <- e.callCtx(t, ctx, "p", nil) }()
		var work context.Context
		select {
		case work = <-parked:
		case <-time.After(5 * time.Second):
			t.Fatal("park was never called")
		}
		if work.Err() != nil {
			t.Fatal("the work started cancelled")
		}
		cancel()
		select {
		case <-work.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("cancelling the call did not cancel its host work")
		}
		if got := <-done; !strings.Contains(got, "aborted") {
			t.Errorf("got %s", got)
		}
	})
	t.Run("host work a listener started is cancelled when the listener returns", func(t *testing.T) {
		e := load(t, map[string]string{
			"t.js": tool("t", `{type: "string"}`, `return "ran"`),
			"l.js": `const { park } = require("dsh/text");
				require("dsh").on("tools/pre-execute", (exec, next) => { park().catch(() => {}); return next(); });`,
		}, withText)
		if got := e.call(t, "t", nil); !strings.Contains(got, `"value":"ran"`) {
			t.Fatalf("got %s", got)
		}
		work := <-parked
		select {
		case <-work.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the listener's leftover host work was not cancelled")
		}
	})
	t.Run("undefined trailing arguments and option members are absent, as in JSON", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": tool("a", `{type: "json"}`, `
			const text = require("dsh/text");
			const c = new AbortController();
			return [await text.args("p", undefined), await text.args("p", { limit: undefined, offset: 2, signal: c.signal }, undefined),
			        await text.args("p", [1])];`)}, withText)
		if len(e.diags) > 0 {
			t.Fatal(e.diagnostics())
		}
		if got := e.call(t, "a", nil); !strings.Contains(got, `"value":[["p"],["p",{"offset":2}],["p",[1]]]`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a rejected host call is a thrown error in the script", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": tool("f", `{type: "string"}`, `const { fail } = require("dsh/text"); await fail(); return "no"`)}, withText)
		got := e.call(t, "f", nil)
		if !strings.Contains(got, `"error":{"message":"plain failure"}`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a synchronous host function returns its value and throws its error in place", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": tool("s", `{type: "string"}`, `
			const { twice } = require("dsh/p");
			let code = "";
			try { twice(1); } catch (e) { code = e.code; }
			return twice("ab") + " " + code;`)}, withText)
		if got := e.call(t, "s", nil); !strings.Contains(got, `"value":"abab EINVAL"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("an unknown host module is a diagnostic", func(t *testing.T) {
		e := load(t, map[string]string{"m.js": `require("dsh/nope");`})
		if got := e.diagnostics(); len(got) != 1 || !strings.Contains(got[0], `cannot import "dsh/nope": no such host module`) {
			t.Errorf("diagnostics %q", got)
		}
	})
}
