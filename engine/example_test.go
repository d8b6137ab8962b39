package engine_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Register a typed tool with DefineTool and call it through the pipeline.
func Example() {
	// The arguments, decoded from the model's JSON by their json tags, and
	// the value, whose JSON keys follow the struct's field order.
	type countArgs struct {
		Text   string `json:"text"`
		Unique bool   `json:"unique"`
	}
	type count struct {
		Words int    `json:"words"`
		First string `json:"first,omitempty"`
	}
	wordCount, err := engine.DefineTool(engine.ToolOptions[countArgs, count]{
		Name:        "word_count",
		Description: "Count the words of a text.",
		Parameters: dsl.Params(
			dsl.Prop("text", dsl.String().Describe("The text to count.").Required()),
			dsl.Prop("unique", dsl.Boolean().Describe("Count distinct words only.")),
		),
		Output: dsl.ObjectOf(false,
			dsl.Prop("words", dsl.Integer().Required()),
			dsl.Prop("first", dsl.String()),
		),
		// Render is what the model sees of a success.
		Render: func(args countArgs, out count) ([]engine.Block, error) {
			return []engine.Block{engine.Text(fmt.Sprintf("%d words", out.Words))}, nil
		},
		// Execute only ever sees arguments that passed the parameters.
		Execute: func(ctx context.Context, args countArgs, run *engine.Run) (count, error) {
			words := strings.Fields(args.Text)
			out := count{Words: len(words)}
			if args.Unique {
				seen := map[string]bool{}
				for _, w := range words {
					seen[strings.ToLower(w)] = true
				}
				out.Words = len(seen)
			}
			if len(words) > 0 {
				out.First = words[0]
			}
			return out, nil
		},
		// Counting touches nothing: calls may run in parallel.
		IsConcurrencySafe: func(countArgs) bool { return true },
		PresentCall: func(args countArgs) *engine.CallView {
			return &engine.CallView{Card: engine.CardGeneric, Title: "Count words", Kind: engine.KindRead}
		},
	})
	if err != nil {
		panic(err)
	}

	svc := engine.New()
	if _, err := svc.Global().Register(wordCount); err != nil {
		panic(err)
	}

	// What the model is shown.
	schemas, _ := svc.Global().Schemas()
	shown, _ := dsl.Marshal(schemas[0].JSON())
	fmt.Println(string(shown))

	// Arguments are JSON values, as dsl.Unmarshal reads them from the model's text.
	args, _ := dsl.Unmarshal([]byte(`{"text":"the cat and the hat","unique":true}`))
	r := svc.Call(context.Background(), engine.Input{CallID: "call-1", Name: "word_count", Arguments: args})
	value, _ := dsl.Marshal(r.Value)
	fmt.Println(r.Content[0].(engine.TextBlock).Text, string(value))

	// Invalid arguments never reach the body: the model is told why.
	r = svc.Call(context.Background(), engine.Input{CallID: "call-2", Name: "word_count", Arguments: dsl.NewObject()})
	fmt.Println(r.Content[0].(engine.TextBlock).Text, r.Error.Info.Code)

	// Presenters get typed arguments too.
	view, _ := wordCount.PresentCall(args).MarshalJSON()
	fmt.Println(string(view))
	// Output:
	// {"name":"word_count","description":"Count the words of a text.","parameters":{"type":"object","properties":{"text":{"type":"string","description":"The text to count."},"unique":{"type":"boolean","description":"Count distinct words only."}},"required":["text"]}}
	// 4 words {"words":4,"first":"the"}
	// Error: invalid arguments: missing required property "text" INVALID_ARGS
	// {"card":"generic","title":"Count words","kind":"read"}
}

// A tools/pre-execute policy decides before a call runs: a denial's reason is
// the call's error, and the body never runs.
func Example_preExecutePolicy() {
	type pathArgs struct {
		Path string `json:"path"`
	}
	remove := engine.MustDefineTool(engine.ToolOptions[pathArgs, string]{
		Name:       "remove",
		Parameters: dsl.Params(dsl.Prop("path", dsl.String().Required())),
		Output:     dsl.String(),
		Render: func(_ pathArgs, s string) ([]engine.Block, error) {
			return []engine.Block{engine.Text(s)}, nil
		},
		Execute: func(_ context.Context, a pathArgs, _ *engine.Run) (string, error) {
			return "removed " + a.Path, nil
		},
	})
	svc := engine.New()
	g := svc.Global()
	if _, err := g.Register(remove); err != nil {
		panic(err)
	}
	g.OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		// Arguments are a read-only JSON snapshot.
		if o, ok := exec.Arguments().(*dsl.Object); ok {
			if p, _ := o.Get("path"); p == "/etc" || p == "/" {
				return engine.Deny(fmt.Sprintf("%s may not touch %v", exec.Name(), p)), nil
			}
		}
		return next() // let later policies decide; allow by default
	})

	for _, path := range []string{"build/out.txt", "/etc"} {
		args := dsl.NewObject(dsl.Member{Key: "path", Value: path})
		r := svc.Call(context.Background(), engine.Input{CallID: "c", Name: "remove", Arguments: args})
		fmt.Printf("isError=%v: %s\n", r.IsError, r.Content[0].(engine.TextBlock).Text)
	}
	// Output:
	// isError=false: removed build/out.txt
	// isError=true: Error: remove may not touch /etc
}

// A tools/execute wrapper runs around every dispatch, like net/http
// middleware: this one times calls. TimeoutPolicy is such a wrapper too: it
// enforces the Timeout a definition declares.
func Example_wrapper() {
	render := func(_ any, s string) ([]engine.Block, error) { return []engine.Block{engine.Text(s)}, nil }
	fast := engine.MustDefineTool(engine.ToolOptions[any, string]{
		Name:   "fast",
		Output: dsl.String(),
		Render: render,
		Execute: func(context.Context, any, *engine.Run) (string, error) {
			return "done", nil
		},
	})
	slow := engine.MustDefineTool(engine.ToolOptions[any, string]{
		Name:    "slow",
		Output:  dsl.String(),
		Render:  render,
		Timeout: 20 * time.Millisecond,
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (string, error) {
			select {
			case <-ctx.Done(): // the timeout policy's deadline
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				return "done at last", nil
			}
		},
	})
	svc := engine.New()
	g := svc.Global()
	for _, def := range []*engine.Definition{fast, slow} {
		if _, err := g.Register(def); err != nil {
			panic(err)
		}
	}

	// Wrappers run in registration order, the first outermost.
	g.OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		start := time.Now()
		r := next(ctx)
		fmt.Printf("%s took under a second: %v\n", exec.Name(), time.Since(start) < time.Second)
		return r, nil
	})
	g.OnExecute(engine.TimeoutPolicy())

	for _, name := range []string{"fast", "slow"} {
		r := svc.Call(context.Background(), engine.Input{CallID: "c-" + name, Name: name, Arguments: dsl.NewObject()})
		fmt.Println(r.Content[0].(engine.TextBlock).Text)
	}
	// Output:
	// fast took under a second: true
	// done
	// slow took under a second: true
	// Error: tool call timed out after 20ms
}

// An assistant step's tool calls run as a batch through the scope's executor;
// every call gets a result, failures included, in the calls' order.
func Example_batch() {
	type echoArgs struct {
		Text string `json:"text"`
	}
	echo := engine.MustDefineTool(engine.ToolOptions[echoArgs, string]{
		Name:       "echo",
		Parameters: dsl.Params(dsl.Prop("text", dsl.String().Required())),
		Output:     dsl.String(),
		Render: func(_ echoArgs, s string) ([]engine.Block, error) {
			return []engine.Block{engine.Text(s)}, nil
		},
		Execute: func(_ context.Context, a echoArgs, _ *engine.Run) (string, error) {
			return a.Text, nil
		},
		IsConcurrencySafe: func(echoArgs) bool { return true },
	})
	svc := engine.New()
	g := svc.Global()
	if _, err := g.Register(echo); err != nil {
		panic(err)
	}

	// Arguments are the raw JSON text the model emitted.
	res, err := g.Execute(context.Background(), engine.Batch{Calls: []engine.ToolCallBlock{
		{ID: "c1", Name: "echo", Arguments: `{"text":"hello"}`},
		{ID: "c2", Name: "echo", Arguments: `{"text":42}`},
		{ID: "c3", Name: "echo", Arguments: `{"text": "unfinished`},
		{ID: "c4", Name: "translate", Arguments: `{}`},
		{ID: "c5", Name: "echo", Arguments: `{"text":"bye"}`},
	}})
	if err != nil { // a scheduler failure, not a tool's
		panic(err)
	}
	for _, c := range res.Results {
		fmt.Printf("%s: %s\n", c.CallID, c.Result.Content[0].(engine.TextBlock).Text)
	}
	// Output:
	// c1: hello
	// c2: Error: invalid arguments: "text" must be a string
	// c3: Error: invalid arguments: "arguments" must be an object
	// c4: Error: unknown tool "translate"
	// c5: bye
}
