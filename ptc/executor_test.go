package ptc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// goRuntime is a Runtime whose programs are Go functions, named by the
// program text: it holds the executor to the seam without an interpreter
// (the goja and Lua runtimes are tested against the same seam in their
// packages).
type goRuntime struct {
	mu       sync.Mutex
	programs map[string]func(ctx context.Context, tools map[string]Binding) Result
	requests []Request
}

func (g *goRuntime) Run(ctx context.Context, req Request) (Result, error) {
	if err := ValidateBindingsFor(TypeScript, "go", req.Bindings); err != nil {
		return Result{}, err
	}
	g.mu.Lock()
	g.requests = append(g.requests, req)
	p := g.programs[req.Program]
	g.mu.Unlock()
	if p == nil {
		return Result{Err: ExceptionFailure("SyntaxError: no such program")}, nil
	}
	tools := map[string]Binding{}
	for _, b := range req.Bindings[0].Bindings {
		tools[b.Name] = b
	}
	return p(ctx, tools), nil
}
func (g *goRuntime) Language() Language   { return TypeScript }
func (g *goRuntime) Isolation() Isolation { return InProcess }
func (g *goRuntime) Close() error         { return nil }

var _ Runtime = (*goRuntime)(nil)

// ptcEnv is an engine whose agent "main" has the PTC executor over g, with
// an echo tool and a tool that fails.
func ptcEnv(t *testing.T, g *goRuntime, opts Options) (*engine.Service, *engine.Agent, *Executor) {
	t.Helper()
	svc := engine.New()
	agent := engine.NewAgent("main", nil)
	e, err := NewExecutor(svc, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	svc.Scope(agent).SetExecutor(e)
	params := dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
		dsl.Member{Key: "text", Value: dsl.NewObject(dsl.Member{Key: "type", Value: "string"})})})
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	render := func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil }
	for _, def := range []*engine.Definition{
		{Name: "echo", Description: "Echo the text.", Parameters: params, Output: engine.Output{Schema: str, Render: render},
			Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
				v, _ := args.(*dsl.Object).Get("text")
				return v, nil
			}},
		{Name: "fail", Description: "Always fails.", Parameters: params, Output: engine.Output{Schema: str, Render: render},
			Execute: func(context.Context, any, *engine.Run) (any, error) { return nil, errors.New("deliberate failure") }},
	} {
		if _, err := svc.Global().Register(def); err != nil {
			t.Fatal(err)
		}
	}
	return svc, agent, e
}

func runCode(code, description string) *dsl.Object {
	return dsl.NewObject(dsl.Member{Key: "code", Value: code}, dsl.Member{Key: "description", Value: description})
}

func resultJSON(t *testing.T, r *engine.Result) string {
	t.Helper()
	b, err := dsl.Marshal(r.JSON())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTheExecutorShowsRunCodeAndItsSections(t *testing.T) {
	for _, direct := range []bool{false, true} {
		svc, agent, e := ptcEnv(t, &goRuntime{}, Options{Direct: direct})
		d, err := e.Describe(svc.Scope(agent).Definitions(nil))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"run_code"}
		if direct {
			want = []string{"echo", "fail", "run_code"}
		}
		if strings.Join(d.Names, ",") != strings.Join(want, ",") {
			t.Errorf("direct %v: names %v, want %v", direct, d.Names, want)
		}
		if len(d.Sections) != 2 || d.Sections[0].ID != "tools:code-only" || d.Sections[0].Order != 99 ||
			d.Sections[1].ID != "tools:sdk" || d.Sections[1].Order != 150 {
			t.Fatalf("sections %+v", d.Sections)
		}
		codeOnly := d.Sections[0].Text
		if direct && codeOnly != "" || !direct && !strings.Contains(codeOnly, "is the only tool you can call directly") {
			t.Errorf("direct %v: tools:code-only %q", direct, codeOnly)
		}
		sdk := d.Sections[1].Text
		if !strings.Contains(sdk, "## Writing code for run_code") || !strings.Contains(sdk, "echo: ") || strings.Contains(sdk, "run_code: ") {
			t.Errorf("tools:sdk:\n%s", sdk)
		}
	}
}

func TestAModelDirectCallToAnotherToolIsUnknownUnderThePTCExecutor(t *testing.T) {
	svc, agent, _ := ptcEnv(t, &goRuntime{}, Options{})
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Agent: agent, Arguments: dsl.NewObject()})
	want := "unknown tool \"echo\": only `run_code` is callable directly — call `echo` from inside a `run_code` program instead"
	if !r.IsError || r.Error.Message != want {
		t.Fatalf("got %s", resultJSON(t, r))
	}
}

func TestRunCodeRunsAProgramWhoseCallsGoThroughThePipeline(t *testing.T) {
	g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
		"echo twice": func(ctx context.Context, tools map[string]Binding) Result {
			a, err := tools["echo"].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: "a"}))
			if err != nil {
				return Result{Err: ExceptionFailure(err.Error())}
			}
			b, err := tools["echo"].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: "b"}))
			if err != nil {
				return Result{Err: ExceptionFailure(err.Error())}
			}
			return Result{Value: a.(string) + b.(string), HasValue: true, Logs: []string{"called twice"}}
		},
		"fail": func(ctx context.Context, tools map[string]Binding) Result {
			_, err := tools["fail"].Call(ctx, dsl.NewObject())
			return Result{Logs: []string{"before"}, Err: ExceptionFailure("ToolCallError: " + err.Error())}
		},
		"lossy": func(ctx context.Context, tools map[string]Binding) Result {
			_, err := tools["echo"].Call(ctx, nil)
			return Result{Value: err.Error(), HasValue: true}
		},
	}}
	svc, agent, _ := ptcEnv(t, g, Options{})
	var seen []string
	var mu sync.Mutex
	svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		mu.Lock()
		seen = append(seen, exec.CallID()+" "+exec.Name())
		mu.Unlock()
		return next()
	})
	call := func(code string) *engine.Result {
		return svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ToolName, Agent: agent, Arguments: runCode(code, "Run a test program")})
	}
	t.Run("a program's calls are sub-calls with their own ids, and its output is rendered", func(t *testing.T) {
		r := call("echo twice")
		if got := resultJSON(t, r); got != `{"isError":false,"value":{"logs":["called twice"],"result":"ab"},"content":[{"type":"text","text":"called twice\nab"}]}` {
			t.Errorf("got %s", got)
		}
		if got := strings.Join(seen, ","); got != "c1 run_code,c1:ptc:1 echo,c1:ptc:2 echo" {
			t.Errorf("pre-execute saw %s", got)
		}
		if names := bindingNames(g.requests[0]); names != "echo,fail" {
			t.Errorf("bindings %s (run_code is never bound)", names)
		}
	})
	t.Run("a failed run is a CodeRunFailedError with the captured output", func(t *testing.T) {
		r := call("fail")
		want := "code run failed (exception): ToolCallError: deliberate failure\nCaptured output:\nbefore"
		if !r.IsError || r.Error.Message != want || r.Error.Info == nil {
			t.Fatalf("got %s", resultJSON(t, r))
		}
	})
	t.Run("an absent argument never reaches the tool", func(t *testing.T) {
		r := call("lossy")
		if got := resultJSON(t, r); !strings.Contains(got, "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)") {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a blank description is refused before the program runs", func(t *testing.T) {
		n := len(g.requests)
		r := svc.Call(context.Background(), engine.Input{CallID: "c9", Name: ToolName, Agent: agent, Arguments: runCode("echo twice", "  ")})
		if !r.IsError || r.Error.Message != "invalid description: expected a non-empty string" || len(g.requests) != n {
			t.Fatalf("got %s", resultJSON(t, r))
		}
	})
}

func bindingNames(req Request) string {
	var names []string
	for _, b := range req.Bindings[0].Bindings {
		names = append(names, b.Name)
	}
	return strings.Join(names, ",")
}

// otherLang is a goRuntime of a language run_code has no flavor for.
type otherLang struct{ *goRuntime }

func (*otherLang) Language() Language { return "python" }

func TestNewExecutorRefusesWhatCannotRunRunCode(t *testing.T) {
	svc := engine.New()
	cases := []struct {
		name string
		rt   Runtime
		opts Options
		want string
	}{
		{"no runtime", nil, Options{}, "ptc: run_code requires a code runtime"},
		{"a language without a run_code flavor", &otherLang{&goRuntime{}}, Options{}, `ptc: no SDK renderer registered for runtime language "python"`},
		{"a negative sub-call cap", &goRuntime{}, Options{MaxParallelSubCalls: -1}, "maxParallelSubCalls must be a positive integer"},
		{"a negative cap on a run's calls", &goRuntime{}, Options{MaxSubCalls: -1}, "ptc: MaxSubCalls must be positive, got -1"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewExecutor(svc, tt.rt, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
