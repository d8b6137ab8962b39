package js_test

import "testing"

// BenchmarkJSPolicyPreReturn compares the ways an async pre-execute
// listener hands back next()'s decision (issue 29, lever 5): returning the
// promise makes the language resolve the listener's promise through a
// thenable job (a then call, its derived promise and two more resolving
// functions), where awaiting it first attaches two reactions and resolves
// with the plain value.
func BenchmarkJSPolicyPreReturn(b *testing.B) {
	const head = `const { on } = require("dsh");` + "\n"
	for _, tc := range []struct{ name, listener string }{
		{"sync_return_next", `on("tools/pre-execute", (exec, next) => next());`},
		{"async_return_next", `on("tools/pre-execute", async (exec, next) => next());`},
		{"async_return_await_next", `on("tools/pre-execute", async (exec, next) => await next());`},
		{"async_await_then_return", `on("tools/pre-execute", async (exec, next) => { const d = await next(); return d; });`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchFresh(b, map[string]string{"greet.js": greetSync, "policy.js": head + tc.listener + "\n" + tc.listener + "\n"})
		})
	}
}
