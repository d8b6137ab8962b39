package js_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/js"
)

// Load a scripts directory of JavaScript and TypeScript plugins and call a
// tool one of them registered.
func Example() {
	ctx := context.Background()
	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy()) // enforce the tools' timeoutMs

	// The capability modules (dsh/fs, dsh/process, dsh/http, dsh/path),
	// confined to the current directory.
	modules, err := capability.Modules(capability.Config{Workspace: "."})
	if err != nil {
		panic(err)
	}
	loader := &scripting.Loader{Service: svc, Hosts: []scripting.Host{&js.Host{Modules: modules}}}
	plugins, diagnostics, err := loader.LoadDir(ctx, filepath.Join("..", "..", "scripts", "examples", "plugins"))
	if err != nil {
		panic(err)
	}
	defer scripting.DisposeAll(ctx, plugins)
	for _, d := range diagnostics {
		fmt.Println(d) // file:line:col: message
	}
	for _, p := range plugins {
		fmt.Println("loaded", p.Source.Rel)
	}

	args, _ := dsl.Unmarshal([]byte(`{"text": "the quick brown fox"}`))
	r := svc.Call(ctx, engine.Input{CallID: "c1", Name: "word_count", Arguments: args})
	text, _ := r.MarshalJSON()
	fmt.Println(string(text))
	// Output:
	// loaded ask_before_write.js
	// loaded audit_log.js
	// loaded deny_shell.js
	// loaded fetch_url.js
	// loaded glob.js
	// loaded grep.js
	// loaded list_dir.js
	// loaded protect_secrets.js
	// loaded read_file.ts
	// loaded redact_tokens.ts
	// loaded repeat_reminder.js
	// loaded shell.js
	// loaded word_count.ts
	// loaded write_file.js
	// {"isError":false,"value":{"words":4},"content":[{"type":"text","text":"4 words"}]}
}
