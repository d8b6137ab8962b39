package lua_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/lua"
)

// Give an agent the PTC executor with the gopher-lua program runtime, and run one
// run_code program that calls a Go tool twice.
func ExampleProgramRuntime() {
	svc := engine.New()
	params, err := dsl.Params(dsl.Prop("text", dsl.String().Required())).Compile()
	if err != nil {
		panic(err)
	}
	upper := &engine.Definition{
		Name:        "upper",
		Description: "Upper-case a text.",
		Parameters:  params,
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		IsConcurrencySafe: func(any) bool { return true },
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			text, _ := args.(*dsl.Object).Get("text")
			return strings.ToUpper(text.(string)), nil
		},
	}
	if _, err := svc.Global().Register(upper); err != nil {
		panic(err)
	}

	rt, err := lua.NewProgramRuntime(lua.ProgramOptions{}) // the default budgets
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	exec, err := ptc.NewExecutor(svc, rt, ptc.Options{})
	if err != nil {
		panic(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(exec) // and to the agents below it

	program := `local r = tools.gather(
  function() return tools.upper{text = "hello"} end,
  function() return tools.upper{text = "world"} end)
print("two", "calls")
return r[1] .. " " .. r[2]`
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ptc.ToolName, Agent: agent,
		Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: program}, dsl.Member{Key: "description", Value: "Shout two words"})})
	fmt.Println(r.Content[0].(engine.TextBlock).Text)
	// Output:
	// two	calls
	// HELLO WORLD
}
