package lua_test

import (
	"context"
	"fmt"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The example plugins of scripts/examples/lua, loaded with the capability
// modules: a tool (word_count) and a policy (deny_shell) written in Lua.
func ExampleHost() {
	ctx := context.Background()
	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy())
	mods, err := capability.Modules(capability.Config{Workspace: "."})
	if err != nil {
		panic(err)
	}
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{&lua.Host{Modules: mods}}}
	loaded, diags, err := l.LoadDir(ctx, "../../scripts/examples/lua")
	if err != nil || len(diags) > 0 {
		panic(fmt.Sprint(err, diags))
	}
	defer scripting.DisposeAll(ctx, loaded)

	r := svc.Call(ctx, engine.Input{CallID: "c1", Name: "word_count",
		Arguments: dsl.NewObject(dsl.Member{Key: "text", Value: "the quick brown fox"})})
	b, _ := dsl.Marshal(r.JSON())
	fmt.Println(string(b))

	if _, err := svc.Global().Register(&engine.Definition{
		Name: "shell", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output:  engine.Output{Schema: dsl.NewObject(), Render: func(_, v any) ([]engine.Block, error) { return nil, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "ran", nil },
	}); err != nil {
		panic(err)
	}
	r = svc.Call(ctx, engine.Input{CallID: "c2", Name: "shell",
		Arguments: dsl.NewObject(dsl.Member{Key: "command", Value: "rm -rf /"})})
	fmt.Println(r.Error.Message, r.Error.Info.Code)
	// Output:
	// {"isError":false,"value":{"words":4},"content":[{"type":"text","text":"4 words"}]}
	// shell command refused: recursive removal of /, ~ or $HOME SHELL_DENIED
}
