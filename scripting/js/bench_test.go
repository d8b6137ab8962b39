package js_test

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
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

// benchGreet measures greet("Ada") on files loaded by the JS host.
func benchGreet(b *testing.B, cfg hosttest.Config, files map[string]string) {
	hosttest.Load(b, hosttest.JS, cfg, files).Bench(b,
		engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})})
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
	benchGreet(b, hosttest.Config{}, map[string]string{"greet.js": greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)})
}

// BenchmarkJSGreetAsync is the same with an async body.
func BenchmarkJSGreetAsync(b *testing.B) {
	benchGreet(b, hosttest.Config{}, map[string]string{"greet.js": greetPlugin(`async execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)})
}

// BenchmarkJSGreetPreListener adds a pass-through JS pre-execute listener.
func BenchmarkJSGreetPreListener(b *testing.B) {
	benchGreet(b, hosttest.Config{}, map[string]string{
		"greet.js":  greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`),
		"policy.js": `require("dsh").on("tools/pre-execute", (exec, next) => next());`,
	})
}
