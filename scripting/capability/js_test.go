package capability_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/js"
)

// jsEnv is an engine with one JavaScript plugin loaded with the capability
// modules.
type jsEnv struct {
	svc *engine.Service
}

func loadJS(t *testing.T, cfg capability.Config, file, code string) *jsEnv {
	t.Helper()
	mods, err := capability.Modules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	if err := os.WriteFile(filepath.Join(scripts, file), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy())
	host := &js.Host{ListenerTimeout: time.Second, Grace: 50 * time.Millisecond, Modules: mods}
	agents := scripting.NewAgents()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{host}, Agents: agents.Agent, LoadTimeout: 5 * time.Second}
	loaded, diags, err := l.LoadDir(context.Background(), scripts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		t.Fatalf("diagnostic: %v", d)
	}
	t.Cleanup(func() {
		if err := scripting.DisposeAll(context.Background(), loaded); err != nil {
			t.Error(err)
		}
	})
	return &jsEnv{svc: svc}
}

// call calls a tool without arguments and returns the result's JSON.
func (e *jsEnv) call(t *testing.T, name string) string {
	t.Helper()
	r := e.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: name, Arguments: dsl.NewObject()})
	b, err := dsl.Marshal(r.JSON())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolPrelude defines tool(name, execute), which registers a tool without
// parameters returning a string.
const toolPrelude = `
import { defineTool, tools } from "dsh";
function tool(name: string, execute: () => Promise<string>) {
  tools.register(defineTool({
    name, description: "test", parameters: {},
    output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
    execute,
  }));
}
`

func TestThroughTheJSHost(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes/a.txt"), "first\nsecond\n")
	cfg := capability.Config{Workspace: ws, KillGrace: 200 * time.Millisecond}
	e := loadJS(t, cfg, "caps.ts", toolPrelude+`
import { readFile, writeFile, glob, stat } from "dsh/fs";
import { run } from "dsh/process";
import { fetch } from "dsh/http";
import { join, basename } from "dsh/path";

tool("read", async () => {
  const r = await readFile(join("notes", "x", "..", "a.txt"), { offset: 1, limit: 1 });
  await writeFile("out/b.txt", r.content.toUpperCase(), { createDirs: true });
  const g = await glob("**/*.txt");
  return [r.content, r.totalLines, g.paths.join(","), basename(g.paths[1], ".txt")].join("|");
});
tool("statSignal", async () => {
  const s = await stat("notes", { signal: new AbortController().signal });
  return s.type;
});
tool("outside", async () => {
  try { await readFile("../etc/passwd"); return "read it"; }
  catch (e) { return [e.name, e.code, e.message, e instanceof Error].join("|"); }
});
tool("abort", async () => {
  const c = new AbortController();
  setTimeout(() => c.abort(), 50);
  try { await run(["sleep", "30"], { signal: c.signal }); return "finished"; }
  catch (e) { return e.code + "|" + e.message; }
});
tool("abortFetch", async () => {
  const c = new AbortController();
  setTimeout(() => c.abort(), 50);
  try { await fetch("http://example.com/", { signal: c.signal }); return "fetched"; }
  catch (e) { return e.code; }
});
tool("runs", async () => {
  const r = await run(["sh", "-c", "echo $GREETING; exit 2"], { env: { GREETING: "hi" }, timeoutMs: 5000 });
  return JSON.stringify(r);
});
tool("badArgs", async () => {
  try { await readFile("a", { limit: -1 }); return "no"; } catch (e) { return e.code + "|" + e.message; }
});
`)
	t.Run("await readFile works and paths come back workspace-relative", func(t *testing.T) {
		got := e.call(t, "read")
		if !strings.Contains(got, `"value":"second\n|2|notes/a.txt,out/b.txt|b"`) {
			t.Errorf("got %s", got)
		}
		if b := read(t, filepath.Join(ws, "out/b.txt")); b != "SECOND\n" {
			t.Errorf("out/b.txt holds %q", b)
		}
	})
	t.Run("stat takes an options object for its signal", func(t *testing.T) {
		if got := e.call(t, "statSignal"); !strings.Contains(got, `"value":"dir"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a refused path rejects with code EOUTSIDE", func(t *testing.T) {
		got := e.call(t, "outside")
		if !strings.Contains(got, `"value":"Error|EOUTSIDE|EOUTSIDE: path resolves outside the workspace: ../etc/passwd|true"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("an AbortSignal in the options cancels run with ECANCELED", func(t *testing.T) {
		start := time.Now()
		got := e.call(t, "abort")
		if !strings.Contains(got, `"value":"ECANCELED|ECANCELED: run was cancelled: sleep"`) {
			t.Errorf("got %s", got)
		}
		if time.Since(start) > 10*time.Second {
			t.Error("the signal did not stop the program")
		}
	})
	t.Run("a fetch off the allow-list rejects before the signal matters", func(t *testing.T) {
		if got := e.call(t, "abortFetch"); !strings.Contains(got, `"value":"EHOSTDENIED"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("run resolves with the result object", func(t *testing.T) {
		got := e.call(t, "runs")
		want := `{\"stdout\":\"hi\\n\",\"stderr\":\"\",\"exitCode\":2,\"signal\":null,\"truncated\":false,\"timedOut\":false,\"stdoutBytes\":3,\"stderrBytes\":0}`
		if !strings.Contains(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("bad arguments reject with EINVAL naming the argument", func(t *testing.T) {
		got := e.call(t, "badArgs")
		if !strings.Contains(got, `"value":"EINVAL|EINVAL: readFile: options.limit must be a non-negative integer"`) {
			t.Errorf("got %s", got)
		}
	})
}

func TestThroughTheJSHostFetchCancels(t *testing.T) {
	srv := newServer(t)
	e := loadJS(t, capability.Config{Workspace: t.TempDir()}, "f.ts", toolPrelude+`
import { fetch } from "dsh/http";
tool("hang", async () => {
  const c = new AbortController();
  setTimeout(() => c.abort(), 50);
  try { await fetch(`+quote(srv.URL+"/hang")+`, { signal: c.signal }); return "answered"; }
  catch (e) { return e.code; }
});
`)
	if got := e.call(t, "hang"); !strings.Contains(got, `"value":"ECANCELED"`) {
		t.Errorf("got %s", got)
	}
}
