package js_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

const greetJS = `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "greet",
  description: "Greet someone by name.",
  parameters: { name: { type: "string", required: true } },
  output: {
    schema: { type: "object", additionalProperties: false, properties: { greeting: { type: "string" } } },
    render: (args, value) => [{ type: "text", text: value.greeting }],
  },
  BODY
}));
`

func benchGreet(b *testing.B, files map[string]string) {
	e := load(b, files)
	if len(e.diags) > 0 {
		b.Fatal(e.diagnostics())
	}
	in := engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})}
	ctx := context.Background()
	if r := e.svc.Call(ctx, in); r.IsError {
		b.Fatal(r.Error.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.svc.Call(ctx, in); r.IsError {
			b.Fatal(r.Error.Message)
		}
	}
}

func greetPlugin(body string) string {
	return replace(greetJS, "BODY", body)
}

func replace(s, old, new string) string {
	for k := 0; k+len(old) <= len(s); k++ {
		if s[k:k+len(old)] == old {
			return s[:k] + new + s[k+len(old):]
		}
	}
	return s
}

// BenchmarkJSGreet is the greet tool written in JS, through the full pipeline.
func BenchmarkJSGreet(b *testing.B) {
	benchGreet(b, map[string]string{"greet.js": greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)})
}

// BenchmarkJSGreetAsync is the same with an async body.
func BenchmarkJSGreetAsync(b *testing.B) {
	benchGreet(b, map[string]string{"greet.js": greetPlugin(`async execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)})
}

// BenchmarkJSGreetPreListener adds a pass-through JS pre-execute listener.
func BenchmarkJSGreetPreListener(b *testing.B) {
	benchGreet(b, map[string]string{
		"greet.js":  greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`),
		"policy.js": `require("dsh").on("tools/pre-execute", (exec, next) => next());`,
	})
}
