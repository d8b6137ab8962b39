package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/cmd/dsh/cli"
	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// Hot reload under load: real files, real fsnotify, real interpreters.

// reloadRig is a reloader over a temporary scripts directory with the
// JavaScript and Lua hosts, and the events it reported.
type reloadRig struct {
	t      *testing.T
	dir    string
	svc    *engine.Service
	r      *scripting.Reloader
	mu     sync.Mutex
	events []scripting.ReloadEvent
	news   chan struct{}
	closed bool
}

func newReloadRig(t *testing.T, debounce time.Duration, files map[string]string) *reloadRig {
	t.Helper()
	g := &reloadRig{t: t, dir: t.TempDir(), svc: engine.New(), news: make(chan struct{}, 1)}
	for rel, text := range files {
		g.save(rel, text)
	}
	loader := &scripting.Loader{Service: g.svc, Hosts: []scripting.Host{&js.Host{}, &lua.Host{}}}
	g.r = &scripting.Reloader{Loader: loader, Dirs: []string{g.dir}, Debounce: debounce,
		OnReload: func(ev scripting.ReloadEvent) {
			g.mu.Lock()
			g.events = append(g.events, ev)
			g.mu.Unlock()
			select {
			case g.news <- struct{}{}:
			default:
			}
		}}
	if err := g.r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.close)
	return g
}

func (g *reloadRig) close() {
	if g.closed {
		return
	}
	g.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.r.Close(ctx); err != nil {
		g.t.Error(err)
	}
}

// save writes a file as editors do: a temporary renamed over it.
func (g *reloadRig) save(rel, text string) {
	g.t.Helper()
	p := filepath.Join(g.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".swp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		g.t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		g.t.Fatal(err)
	}
}

// count returns how many events of a kind a file had.
func (g *reloadRig) count(kind scripting.ReloadKind, file string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, ev := range g.events {
		if ev.Kind == kind && ev.File == file {
			n++
		}
	}
	return n
}

// waitCount waits (generously) until a file had n events of a kind.
func (g *reloadRig) waitCount(kind scripting.ReloadKind, file string, n int) {
	g.t.Helper()
	deadline := time.After(30 * time.Second)
	for g.count(kind, file) < n {
		select {
		case <-g.news:
		case <-deadline:
			g.t.Fatalf("%s never had %d %s events (%d)", file, n, kind, g.count(kind, file))
		}
	}
}

// settle waits until the versions replaced so far are disposed: the
// goroutine count (an interpreter is one event-loop goroutine) is back to
// at most steady.
func settle(t *testing.T, steady int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > steady {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, steady was %d: replaced versions leaked", runtime.NumGoroutine(), steady)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func callTool(svc *engine.Service, id, name string) *engine.Result {
	return svc.Call(context.Background(), engine.Input{CallID: id, Name: name, Arguments: dsl.NewObject()})
}

// resultText is a result's value or its failure's message.
func resultText(r *engine.Result) string {
	if r.IsError {
		return "error: " + r.Error.Message
	}
	s, _ := r.Value.(string)
	return s
}

const targetPlugin = `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "target", description: "The tool the policy guards.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  async execute() { return "allowed"; },
}));
`

func policy(decision string) string {
	return `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "target") ` + decision + `
  return next();
});
`
}

func TestAPolicyEditedFromDenyToAllowWhileCallsRun(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	g := newReloadRig(t, 10*time.Millisecond, map[string]string{
		"target.js": targetPlugin,
		"policy.js": policy(`return { kind: "deny", reason: "denied by v1" };`),
	})
	var swapped atomic.Bool
	var stop atomic.Bool
	var mu sync.Mutex
	var before, after map[string]int = map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				late := swapped.Load() // the swap was committed before this call began
				got := resultText(callTool(g.svc, fmt.Sprintf("w%d-%d", w, i), "target"))
				mu.Lock()
				if late {
					after[got]++
				} else {
					before[got]++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	g.save("policy.js", policy(`return next();`))
	g.waitCount(scripting.PluginReloaded, "policy.js", 1)
	swapped.Store(true)
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	for got := range before {
		if got != "error: denied by v1" && got != "allowed" {
			t.Errorf("a call matched neither version: %q", got)
		}
	}
	if before["error: denied by v1"] == 0 {
		t.Errorf("no call saw the first version: %v", before)
	}
	if len(after) != 1 || after["allowed"] == 0 {
		t.Errorf("calls begun after the swap: %v, want all allowed", after)
	}
	g.close()
	goleak.VerifyNone(t, leaks, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// soakVersion is version n of the soak plugin: a tool and a pre and a post
// listener, each knowing the version. Pre-execute stamps the version into a
// map by call id; the body returns its version and the stamp it finds; post
// blocks the result, naming the versions, unless all three agree.
func soakVersion(n int) string {
	return fmt.Sprintf(`const { defineTool, tools, on } = require("dsh");
const VERSION = "v%d";
const stamps = new Map();
tools.register(defineTool({
  name: "soak", description: "Return the version.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  async execute(args, exec) { return VERSION + ":" + (stamps.get(exec.callId) || "none"); },
}));
on("tools/pre-execute", (exec, next) => {
  if (exec.name === "soak") stamps.set(exec.callId, VERSION);
  return next();
});
on("tools/post-execute", (exec, result, next) => {
  if (exec.name !== "soak") return next();
  const pre = stamps.get(exec.callId);
  stamps.delete(exec.callId);
  if (pre !== VERSION || result.value !== VERSION + ":" + VERSION)
    return { kind: "block", feedback: [{ type: "text", text: "mixed: pre " + pre + ", body " + result.value + ", post " + VERSION }] };
  return next();
});
`, n)
}

// brokenVersion is a version that fails to load, by a syntax error or a
// top level that throws after registering.
func brokenVersion(n int) string {
	if n%4 == 1 {
		return "const { on } = require(\"dsh\");\non(\"tools/pre-execute\", (exec, next) => {\n"
	}
	return soakVersion(n) + "throw new Error(\"broken on purpose\");\n"
}

var soakValue = regexp.MustCompile(`^(v[0-9]+):(v[0-9]+)$`)

func TestSoakReloadsUnderLoad(t *testing.T) {
	calls, workers, rewrites := 4000, 8, 40
	if os.Getenv("DSH_SOAK") == "1" {
		calls, rewrites = 20000, 200
	}
	leaks := goleak.IgnoreCurrent()
	g := newReloadRig(t, 5*time.Millisecond, map[string]string{"soak.js": soakVersion(0)})
	steady := runtime.NumGoroutine()

	var done atomic.Bool
	var made atomic.Int64
	var mu sync.Mutex
	problems := map[string]int{}
	versions := map[string]int{}
	results := int64(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !done.Load() || made.Load() < int64(calls); i++ {
				made.Add(1)
				r := callTool(g.svc, fmt.Sprintf("w%d-%d", w, i), "soak")
				m := soakValue.FindStringSubmatch(resultText(r))
				mu.Lock()
				results++
				switch {
				case m == nil || m[1] != m[2]:
					problems[resultText(r)]++
				default:
					versions[m[1]]++
				}
				mu.Unlock()
			}
		}()
	}
	for n := 1; n <= rewrites; n++ {
		if n%2 == 0 {
			g.save("soak.js", soakVersion(n))
		} else {
			g.save("soak.js", brokenVersion(n))
		}
		time.Sleep(15 * time.Millisecond)
	}
	last := rewrites + 1
	g.save("soak.js", soakVersion(last))
	deadline := time.Now().Add(30 * time.Second)
	for resultText(callTool(g.svc, "probe", "soak")) != fmt.Sprintf("v%d:v%d", last, last) {
		if time.Now().After(deadline) {
			t.Fatalf("the last version never served")
		}
		time.Sleep(5 * time.Millisecond)
	}
	done.Store(true)
	wg.Wait()

	if len(problems) > 0 {
		t.Errorf("calls that were lost, mixed versions or failed: %v", problems)
	}
	if n := made.Load(); n < int64(calls) || results != n {
		t.Errorf("%d calls made, %d results, want %d of each", n, results, calls)
	}
	reloads, failures := g.count(scripting.PluginReloaded, "soak.js"), g.count(scripting.PluginFailed, "soak.js")
	if reloads == 0 || failures == 0 {
		t.Errorf("%d reloads and %d failures: the rewrites did not interleave", reloads, failures)
	}
	t.Logf("%d calls over %d versions; %d reloads, %d failed loads", made.Load(), len(versions), reloads, failures)
	settle(t, steady)
	g.close()
	goleak.VerifyNone(t, leaks, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

func jsVersionTool(name string, n int) string {
	return fmt.Sprintf(`const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: %q, description: "A version.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  async execute() { return "J%d"; },
}));
`, name, n)
}

func luaVersionTool(name string, n int) string {
	return fmt.Sprintf(`local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = %q, description = "A version.", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  is_concurrency_safe = function() return true end,
  execute = function() return "L%d" end,
})
`, name, n)
}

func TestAStormReloadsLuaAndJavaScriptPluginsTogether(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	g := newReloadRig(t, 5*time.Millisecond, map[string]string{
		"j.js":  jsVersionTool("jtool", 0),
		"l.lua": luaVersionTool("ltool", 0),
	})
	steady := runtime.NumGoroutine()
	var stop atomic.Bool
	var mu sync.Mutex
	bad := map[string]int{}
	valid := regexp.MustCompile(`^[JL][0-9]+$`)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				for _, tool := range []string{"jtool", "ltool"} {
					if got := resultText(callTool(g.svc, fmt.Sprintf("w%d-%d", w, i), tool)); !valid.MatchString(got) {
						mu.Lock()
						bad[got]++
						mu.Unlock()
					}
				}
			}
		}()
	}
	const writes = 100
	for n := 1; n <= writes; n++ {
		g.save("j.js", jsVersionTool("jtool", n))
		g.save("l.lua", luaVersionTool("ltool", n))
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for resultText(callTool(g.svc, "p", "jtool")) != fmt.Sprintf("J%d", writes) || resultText(callTool(g.svc, "p", "ltool")) != fmt.Sprintf("L%d", writes) {
		if time.Now().After(deadline) {
			t.Fatal("the last versions never served")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("calls that failed during the storm: %v", bad)
	}
	if g.count(scripting.PluginReloaded, "j.js") == 0 || g.count(scripting.PluginReloaded, "l.lua") == 0 {
		t.Error("a plugin was never reloaded")
	}
	settle(t, steady)
	g.close()
	goleak.VerifyNone(t, leaks, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// lineStream hands over the lines written to it.
type lineStream struct {
	w     *io.PipeWriter
	lines chan string
}

func newLineStream() *lineStream {
	r, w := io.Pipe()
	s := &lineStream{w: w, lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s
}

// next waits (generously) for a line matching re, skipping others; it
// returns the line.
func (s *lineStream) next(t *testing.T, what, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("%s ended before a line matching %s", what, re)
			}
			if rx.MatchString(l) {
				return l
			}
		case <-deadline:
			t.Fatalf("no line of %s matched %s", what, re)
		}
	}
}

func TestTheWatchCommandReloadsAsFilesChange(t *testing.T) {
	dir := t.TempDir()
	g := &reloadRig{t: t, dir: dir}
	g.save("version.js", jsVersionTool("version", 1))
	g.save("word.js", `const { defineTool, tools } = require("dsh");
const { word } = require("./lib/word");
tools.register(defineTool({
  name: "word", description: "The word of the module.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { return word; },
}));
`)
	g.save("lib/word.js", `module.exports = { word: "first" };`)

	stdinR, stdinW := io.Pipe()
	stdout, stderr := newLineStream(), newLineStream()
	exit := make(chan int, 1)
	go func() {
		exit <- cli.Run(context.Background(), []string{"--scripts", dir, "--debounce", "20ms", "watch"}, stdinR, stdout.w, stderr.w)
		stdout.w.Close()
		stderr.w.Close()
	}()
	n := 0
	call := func(name, want string) {
		t.Helper()
		n++
		id := fmt.Sprintf("k%d", n)
		fmt.Fprintf(stdinW, `{"id": %q, "name": %q}`+"\n", id, name)
		got := stdout.next(t, "stdout", `^\{"callId":"`+id+`"`)
		if !strings.Contains(got, want) {
			t.Errorf("call %s of %s: %s, want %s", id, name, got, want)
		}
	}
	p := func(rel string) string { return regexp.QuoteMeta(filepath.Join(dir, rel)) }
	stderr.next(t, "stderr", `^dsh: watching .*: 2 plugins loaded, 0 diagnostics`)
	call("version", `"value":"J1"`)
	call("word", `"value":"first"`)

	t.Run("an edit reloads", func(t *testing.T) {
		g.save("version.js", jsVersionTool("version", 2))
		stderr.next(t, "stderr", `^`+p("version.js")+`: reloaded [0-9a-f]{12} \(was [0-9a-f]{12}\)$`)
		call("version", `"value":"J2"`)
	})
	t.Run("a broken edit keeps the old version serving", func(t *testing.T) {
		g.save("version.js", "throw new Error('no');\n")
		stderr.next(t, "stderr", `^`+p("version.js")+`:1:7: no$`)
		stderr.next(t, "stderr", `^`+p("version.js")+`: reload failed; [0-9a-f]{12} keeps serving$`)
		call("version", `"value":"J2"`)
		g.save("version.js", jsVersionTool("version", 3))
		stderr.next(t, "stderr", `^`+p("version.js")+`: reloaded`)
		call("version", `"value":"J3"`)
	})
	t.Run("a module change reloads its importer", func(t *testing.T) {
		g.save("lib/word.js", `module.exports = { word: "second" };`)
		stderr.next(t, "stderr", `^`+p("word.js")+`: reloaded`)
		call("word", `"value":"second"`)
	})
	t.Run("delete, create and rename", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "word.js")); err != nil {
			t.Fatal(err)
		}
		stderr.next(t, "stderr", `^`+p("word.js")+`: unloaded [0-9a-f]{12}$`)
		call("word", `"code":"UNKNOWN_TOOL"`)
		g.save("sub/new.js", jsVersionTool("fresh", 7))
		stderr.next(t, "stderr", `^`+p("sub/new.js")+`: loaded [0-9a-f]{12}$`)
		call("fresh", `"value":"J7"`)
		if err := os.Rename(filepath.Join(dir, "sub", "new.js"), filepath.Join(dir, "renamed.js")); err != nil {
			t.Fatal(err)
		}
		stderr.next(t, "stderr", `^`+p("sub/new.js")+`: unloaded`)
		stderr.next(t, "stderr", `^`+p("renamed.js")+`: loaded`)
		call("fresh", `"value":"J7"`)
	})

	stdinW.Close()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit status %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not exit when its input ended")
	}
}
