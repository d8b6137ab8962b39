package js_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// The shapes of JS policy whose cost issue 13 sets targets for, each in
// front of the JS greet tool: pass-through pre-execute listeners (sync and
// async, in one plugin and in several), a pass-through post-execute
// listener, a tools/result observer, and a listener that reads exec.name
// and one argument and decides. Every call has a fresh call id and fresh
// arguments, as a model's calls do.

// greetSync is the plain greet tool the policies stand in front of.
var greetSync = greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)

// policyListeners are the listener expressions by event and style.
var policyListeners = map[string]string{
	"pre/sync":   `on("tools/pre-execute", (exec, next) => next());`,
	"pre/async":  `on("tools/pre-execute", async (exec, next) => next());`,
	"post/sync":  `on("tools/post-execute", (exec, result, next) => next());`,
	"post/async": `on("tools/post-execute", async (exec, result, next) => next());`,
	"result":     `on("tools/result", (exec, result) => {});`,
	// A guard in the shape of deny_shell: it looks at the tool's name and
	// one argument, and denies or lets the call through.
	"decide/sync": `on("tools/pre-execute", (exec, next) => {
  if (exec.name === "greet" && exec.arguments.name === "Mallory") {
    return { kind: "deny", reason: "not Mallory" };
  }
  return next();
});`,
	"decide/async": `on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "greet" && exec.arguments.name === "Mallory") {
    return { kind: "deny", reason: "not Mallory" };
  }
  return next();
});`,
}

// policyFiles returns greet plus n copies of the listener of kind, all in
// one plugin file or one plugin file each.
func policyFiles(kind string, n int, onePlugin bool) map[string]string {
	const head = `const { on } = require("dsh");` + "\n"
	listener := policyListeners[kind]
	files := map[string]string{"greet.js": greetSync}
	if onePlugin {
		files["policy.js"] = head + strings.Repeat(listener+"\n", n)
		return files
	}
	for i := range n {
		files[fmt.Sprintf("policy%02d.js", i)] = head + listener + "\n"
	}
	return files
}

// greetInput is call i of greet, with its own call id and name.
func greetInput(i int, name string) engine.Input {
	return engine.Input{
		CallID:    "c" + strconv.Itoa(i),
		Name:      "greet",
		Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: name + " " + strconv.Itoa(i)}),
	}
}

// benchFresh loads files and calls greet b.N times, each call with a fresh
// call id and fresh arguments.
func benchFresh(b *testing.B, files map[string]string) {
	b.Helper()
	benchEnv(b, hosttest.Load(b, hosttest.JS, hosttest.Config{}, files))
}

// benchEnv calls greet in env b.N times with fresh inputs. It fails when
// the plugins did not load, or a call fails or greets wrongly.
func benchEnv(b *testing.B, env *hosttest.Env) {
	b.Helper()
	env.NoDiagnostics(b)
	ctx := context.Background()
	r := env.Service.Call(ctx, greetInput(0, "Ada"))
	if r.IsError {
		b.Fatal(r.Error.Message)
	}
	if got := hosttest.JSON(b, r.JSON()); !strings.Contains(got, `"greeting":"Hello, Ada 0!"`) {
		b.Fatalf("the first call's result is %s, want Ada 0 greeted", got)
	}
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		if r := env.Service.Call(ctx, greetInput(i, "Ada")); r.IsError {
			b.Fatal(r.Error.Message)
		}
		i++
	}
}

// BenchmarkJSPolicyNone is greet alone with fresh inputs: the baseline the
// other JSPolicy benchmarks add to.
func BenchmarkJSPolicyNone(b *testing.B) {
	benchFresh(b, map[string]string{"greet.js": greetSync})
}

// BenchmarkJSPolicyPre is N pass-through pre-execute listeners, sync or
// async, all in one plugin or one plugin each.
func BenchmarkJSPolicyPre(b *testing.B) {
	for _, style := range []string{"sync", "async"} {
		for _, onePlugin := range []bool{true, false} {
			where := "plugins"
			if onePlugin {
				where = "plugin"
			}
			for _, n := range []int{1, 2, 3, 10} {
				b.Run(fmt.Sprintf("%s/%d_in_one_%s", style, n, where), func(b *testing.B) {
					if !onePlugin && n == 1 {
						b.Skip("the same as one plugin")
					}
					benchFresh(b, policyFiles("pre/"+style, n, onePlugin))
				})
			}
		}
	}
}

// BenchmarkJSPolicyPost is one pass-through post-execute listener.
func BenchmarkJSPolicyPost(b *testing.B) {
	for _, style := range []string{"sync", "async"} {
		b.Run(style, func(b *testing.B) {
			benchFresh(b, policyFiles("post/"+style, 1, true))
		})
	}
}

// BenchmarkJSPolicyTwoPreOnePostAsync is the stack issue 13 compares with
// the TypeScript engine: two pre-execute and one post-execute async
// pass-through listeners, in one plugin.
func BenchmarkJSPolicyTwoPreOnePostAsync(b *testing.B) {
	files := policyFiles("pre/async", 2, true)
	files["policy.js"] += policyListeners["post/async"] + "\n"
	benchFresh(b, files)
}

// BenchmarkJSPolicyResultObserver is one tools/result observer that does
// nothing.
func BenchmarkJSPolicyResultObserver(b *testing.B) {
	benchFresh(b, policyFiles("result", 1, true))
}

// BenchmarkJSPolicyDecide is one pre-execute listener that reads exec.name
// and one argument and decides; the benchmark first checks that it denies
// the call it should.
func BenchmarkJSPolicyDecide(b *testing.B) {
	for _, style := range []string{"sync", "async"} {
		b.Run(style, func(b *testing.B) {
			env := hosttest.Load(b, hosttest.JS, hosttest.Config{}, policyFiles("decide/"+style, 1, true))
			env.NoDiagnostics(b)
			r := env.Service.Call(context.Background(), engine.Input{
				CallID: "deny", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Mallory"}),
			})
			if !r.IsError || r.Error.Message != "not Mallory" {
				b.Fatalf("the guard let Mallory through: %s", hosttest.JSON(b, r.JSON()))
			}
			benchEnv(b, env)
		})
	}
}
