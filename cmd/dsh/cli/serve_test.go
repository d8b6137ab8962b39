package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// greetPlugin defines greet, which a policy makes ask for approval when
// its name is "root".
const greetPlugin = `import { defineTool, tools, on } from "dsh";

tools.register(defineTool({
  name: "greet",
  description: "Greet someone.",
  parameters: { name: { type: "string", required: true } },
  output: {
    schema: { type: "object", additionalProperties: false, properties: { greeting: { type: "string", required: true } } },
    render: (_args, value) => [{ type: "text", text: value.greeting }],
  },
  async execute(args) { return { greeting: "hello " + args.name }; },
}));

on("tools/pre-execute", async (exec, next) => {
  const d = await next();
  if (exec.name === "greet" && exec.arguments.name === "root" && d.kind === "allow") {
    return { kind: "ask", reason: "greeting root" };
  }
  return d;
});
`

// syncBuffer is a buffer safe for the serving goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestServeOnStdio(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.js"), []byte(greetPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.js"), []byte("this is not JS"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"--scripts", dir, "--memory-limit", "0", "serve"}, inR, outW, stderr)
		outW.Close()
	}()

	var asked []string
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
	})
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the list has the plugin's tool", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.Tools[0].Name != "greet" || res.Tools[0].OutputSchema == nil {
			t.Errorf("tools %+v, want greet with an output schema", res.Tools)
		}
	})
	callGreet := func(t *testing.T, name string) *sdk.CallToolResult {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"name": name})
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "greet", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("a call runs the script tool", func(t *testing.T) {
		r := callGreet(t, "ada")
		b, _ := json.Marshal(r.StructuredContent)
		if r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != "hello ada" || string(b) != `{"greeting":"hello ada"}` {
			t.Errorf("result %+v (structured %s), want hello ada", r, b)
		}
	})
	t.Run("an ask is put to the client, whose decline denies the call", func(t *testing.T) {
		r := callGreet(t, "root")
		want := `Error: the user rejected tool "greet"`
		if !r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != want {
			t.Errorf("result %+v, want %q", r, want)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "greeting root") {
			t.Errorf("asked %q, want one question with the reason", asked)
		}
	})

	if err := cs.Close(); err != nil {
		t.Error(err)
	}
	if c := <-code; c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
	t.Run("diagnostics go to standard error", func(t *testing.T) {
		if !strings.Contains(stderr.String(), "broken.js") {
			t.Errorf("stderr %q, want the broken plugin's diagnostic", stderr)
		}
	})
}
