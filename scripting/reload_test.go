package scripting_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// countingHost counts the loads of a host.
type countingHost struct {
	scripting.Host
	loads *atomic.Int64
}

func (h countingHost) Load(ctx context.Context, p *scripting.Plugin, src scripting.Source) error {
	h.loads.Add(1)
	return h.Host.Load(ctx, p, src)
}

// rig is a reloader over a temporary scripts directory, with JavaScript and
// Lua hosts, a short debounce and the events it reports.
type rig struct {
	t      *testing.T
	dir    string
	svc    *engine.Service
	r      *scripting.Reloader
	loads  atomic.Int64
	mu     sync.Mutex
	events []scripting.ReloadEvent
	news   chan struct{}
}

func newRig(t *testing.T, files map[string]string) *rig {
	t.Helper()
	return newRigWith(t, files, 0)
}

// rigDebounce is the rig's reloader's debounce period.
const rigDebounce = 15 * time.Millisecond

// newRigWith is newRig with the reloader's settle window (the default when
// zero) and the Service's options.
func newRigWith(t *testing.T, files map[string]string, settle time.Duration, opts ...engine.Option) *rig {
	t.Helper()
	g := &rig{t: t, dir: writeFiles(t, files), svc: engine.New(opts...), news: make(chan struct{}, 1)}
	loader := &scripting.Loader{Service: g.svc, Hosts: []scripting.Host{
		countingHost{&js.Host{}, &g.loads}, countingHost{&lua.Host{}, &g.loads},
	}}
	g.r = &scripting.Reloader{Loader: loader, Dirs: []string{g.dir}, Debounce: rigDebounce, Settle: settle,
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.r.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return g
}

// seen returns the events so far as "kind file" lines, failures with their
// diagnostic.
func (g *rig) seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, ev := range g.events {
		s := string(ev.Kind) + " " + ev.File
		if ev.Err != nil {
			s += ": " + ev.Err.Error()
		}
		out = append(out, s)
	}
	return out
}

// waitFor waits (generously) until the events include want, in order after
// the ones already checked by earlier waits of the same count.
func (g *rig) waitFor(want ...string) {
	g.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if containsInOrder(g.seen(), want) {
			return
		}
		select {
		case <-g.news:
		case <-deadline:
			g.t.Fatalf("events %q never included %q", g.seen(), want)
		}
	}
}

func containsInOrder(have, want []string) bool {
	i := 0
	for _, h := range have {
		if i < len(want) && h == want[i] {
			i++
		}
	}
	return i == len(want)
}

// save writes a file as editors do: a temporary renamed over it.
func (g *rig) save(rel, text string) {
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

// call runs a tool and returns its value, or its error message.
func (g *rig) call(name string) string {
	g.t.Helper()
	r := g.svc.Call(context.Background(), engine.Input{CallID: "c", Name: name, Arguments: dsl.NewObject()})
	if r.IsError {
		return "error: " + r.Error.Message
	}
	s, _ := r.Value.(string)
	return s
}

// jsTool is a plugin registering a tool whose value is value; extra code
// goes before it.
func jsTool(name, value, extra string) string {
	return extra + `
const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "` + name + `", description: "A test tool.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { return ` + value + `; },
}));
`
}

func luaTool(name, value, extra string) string {
	return extra + `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "` + name + `", description = "A test tool.", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return ` + value + ` end,
})
`
}

func (g *rig) status(file string) scripting.PluginStatus {
	g.t.Helper()
	for _, s := range g.r.Status() {
		if s.File == file {
			return s
		}
	}
	return scripting.PluginStatus{}
}

// sha is the revision of a file's text.
func sha(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func TestTheReloaderLoadsEveryPluginAndReportsTheBrokenOnes(t *testing.T) {
	g := newRig(t, map[string]string{
		"a.js":       jsTool("a", `"A1"`, ""),
		"b.lua":      luaTool("b", `"B1"`, ""),
		"broken.js":  "const x = {;\n",
		"lib/mod.js": "not a plugin",
	})
	if got, want := g.seen(), []string{"loaded a.js", "loaded b.lua", `failed broken.js: broken.js:1:12: Expected identifier but found ";"`}; !slices.Equal(got, want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	st := g.r.Status()
	var files []string
	for _, s := range st {
		files = append(files, s.File)
	}
	if !slices.Equal(files, []string{"a.js", "b.lua", "broken.js"}) {
		t.Fatalf("status files %v", files)
	}
	if a := st[0]; a.Revision != sha(jsTool("a", `"A1"`, "")) || a.LoadedAt.IsZero() || a.Err != nil || a.Plugin == nil {
		t.Errorf("a.js status %+v", a)
	}
	if b := st[2]; b.Revision != "" || b.Plugin != nil || b.Err == nil || b.FailedRevision != sha("const x = {;\n") {
		t.Errorf("broken.js status %+v", b)
	}
	if g.call("a") != "A1" || g.call("b") != "B1" {
		t.Errorf("calls: %q %q", g.call("a"), g.call("b"))
	}
}

func TestAnEditReloadsThePluginAndABrokenOneKeepsTheOldServing(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"A1"`, "")})
	first := g.status("a.js")

	g.save("a.js", jsTool("a", `"A2"`, ""))
	g.waitFor("loaded a.js", "reloaded a.js")
	if got := g.call("a"); got != "A2" {
		t.Errorf("after the edit: %q", got)
	}
	second := g.status("a.js")
	if second.Revision != sha(jsTool("a", `"A2"`, "")) || !second.LoadedAt.After(first.LoadedAt) {
		t.Errorf("status %+v after %+v", second, first)
	}

	broken := jsTool("a", `"A3"`, "throw new Error(\"not today\");\n")
	g.save("a.js", broken)
	g.waitFor("reloaded a.js", "failed a.js: a.js:1:7: not today")
	if got := g.call("a"); got != "A2" {
		t.Errorf("a broken edit replaced the version serving: %q", got)
	}
	st := g.status("a.js")
	if st.Revision != second.Revision || st.Err == nil || st.Err.Error() != "a.js:1:7: not today" || st.FailedRevision != sha(broken) {
		t.Errorf("status after the broken edit %+v", st)
	}
	g.mu.Lock()
	last := g.events[len(g.events)-1]
	g.mu.Unlock()
	if last.Previous != second.Revision || last.Revision != sha(broken) {
		t.Errorf("failure event %+v", last)
	}

	g.save("a.js", jsTool("a", `"A4"`, ""))
	g.waitFor("failed a.js: a.js:1:7: not today", "reloaded a.js")
	if got := g.call("a"); got != "A4" {
		t.Errorf("after the fix: %q", got)
	}
	if st := g.status("a.js"); st.Err != nil {
		t.Errorf("the error outlived the fix: %+v", st)
	}
}

func TestAnUnchangedFileIsNotReloaded(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"A1"`, ""), "b.js": jsTool("b", `"B1"`, "")})
	before := g.loads.Load()
	g.save("a.js", jsTool("a", `"A1"`, "")) // the same content
	if err := os.Chtimes(filepath.Join(g.dir, "a.js"), time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	g.save("b.js", jsTool("b", `"B2"`, ""))
	g.waitFor("reloaded b.js")
	if got := g.loads.Load() - before; got != 1 {
		t.Errorf("%d loads, want only b.js's", got)
	}
	if slices.Contains(g.seen(), "reloaded a.js") {
		t.Errorf("a.js was reloaded: %q", g.seen())
	}
}

func TestDeletingCreatingAndRenamingFiles(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"A1"`, "")})

	t.Run("a new file loads", func(t *testing.T) {
		g.save("sub/new.js", jsTool("fresh", `"N1"`, ""))
		g.waitFor("loaded sub/new.js")
		if got := g.call("fresh"); got != "N1" {
			t.Errorf("call: %q", got)
		}
	})
	t.Run("a deleted file unloads", func(t *testing.T) {
		if err := os.Remove(filepath.Join(g.dir, "sub", "new.js")); err != nil {
			t.Fatal(err)
		}
		g.waitFor("unloaded sub/new.js")
		if got := g.call("fresh"); got != `error: unknown tool "fresh"` {
			t.Errorf("call: %q", got)
		}
		if st := g.status("sub/new.js"); st.File != "" {
			t.Errorf("status of a deleted plugin %+v", st)
		}
	})
	t.Run("a renamed file is an unload and a load", func(t *testing.T) {
		if err := os.Rename(filepath.Join(g.dir, "a.js"), filepath.Join(g.dir, "renamed.js")); err != nil {
			t.Fatal(err)
		}
		g.waitFor("unloaded a.js", "loaded renamed.js")
		if got := g.call("a"); got != "A1" {
			t.Errorf("call: %q", got)
		}
		for _, ev := range g.seen() {
			if strings.HasPrefix(ev, "failed") {
				t.Errorf("the rename failed a load: %q", g.seen())
			}
		}
	})
	t.Run("a directory moved in loads its plugins and moved out unloads them", func(t *testing.T) {
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "p.lua"), []byte(luaTool("moved", `"M1"`, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(outside, filepath.Join(g.dir, "moved")); err != nil {
			t.Fatal(err)
		}
		g.waitFor("loaded moved/p.lua")
		if got := g.call("moved"); got != "M1" {
			t.Errorf("call: %q", got)
		}
		if err := os.Rename(filepath.Join(g.dir, "moved"), filepath.Join(t.TempDir(), "gone")); err != nil {
			t.Fatal(err)
		}
		g.waitFor("loaded moved/p.lua", "unloaded moved/p.lua")
	})
}

func TestADuplicateIsLoadedOnceTheToolItClashedWithIsGone(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("x", `"from a"`, "")})
	g.save("b.js", jsTool("x", `"from b"`, ""))
	g.waitFor(`failed b.js: b.js:3:7: tool "x" is already registered (for a per-agent variant, register through that agent's scope, ` + "`tools.scope(id)`" + `, instead)`)
	if err := os.Remove(filepath.Join(g.dir, "a.js")); err != nil {
		t.Fatal(err)
	}
	g.waitFor("unloaded a.js", "loaded b.js")
	if got := g.call("x"); got != "from b" {
		t.Errorf("call: %q", got)
	}
}

func TestAModuleChangeReloadsThePluginsThatImportIt(t *testing.T) {
	g := newRig(t, map[string]string{
		"direct.js":     jsTool("direct", `require("./lib/word").word`, ""),
		"sub/deep.ts":   jsTool("deep", `require("../lib/again").word`, ""),
		"lib/again.js":  `module.exports = require("./word");`,
		"lib/word.js":   `module.exports = { word: "W1" };`,
		"other.js":      jsTool("other", `"O1"`, ""),
		"usesLua.lua":   luaTool("lua", `require("lib.word").word`, ""),
		"lib/word.lua":  `return { word = "L1" }`,
		"lib/unused.js": `module.exports = 1;`,
	})
	if got := g.call("direct") + g.call("deep") + g.call("lua"); got != "W1W1L1" {
		t.Fatalf("before: %q", got)
	}
	before := len(g.seen())
	g.save("lib/word.js", `module.exports = { word: "W2" };`)
	g.waitFor("reloaded direct.js")
	g.waitFor("reloaded sub/deep.ts")
	if got := g.call("direct") + g.call("deep"); got != "W2W2" {
		t.Errorf("after the module changed: %q", got)
	}
	g.save("lib/word.lua", `return { word = "L2" }`)
	g.waitFor("reloaded usesLua.lua")
	if got := g.call("lua"); got != "L2" {
		t.Errorf("after the Lua module changed: %q", got)
	}
	g.save("lib/unused.js", `module.exports = 2;`)
	g.save("lib/word.lua", `return { word = "L2" }`) // unchanged
	g.save("other.js", jsTool("other", `"O2"`, ""))
	g.waitFor("reloaded other.js")
	got := slices.Clone(g.seen()[before:])
	slices.Sort(got)
	want := []string{"reloaded direct.js", "reloaded other.js", "reloaded sub/deep.ts", "reloaded usesLua.lua"}
	if !slices.Equal(got, want) {
		t.Errorf("reloads %q, want %q", got, want)
	}
}

func TestAModuleThatAppearsFixesItsImporter(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `late.v`, `const late = require("./lib/late");`)})
	if ev := g.seen(); len(ev) != 1 || !strings.HasPrefix(ev[0], "failed a.js") {
		t.Fatalf("events %q", ev)
	}
	g.save("lib/late.js", `module.exports = { v: "here" };`)
	g.waitFor("loaded a.js")
	if got := g.call("a"); got != "here" {
		t.Errorf("call: %q", got)
	}
}

func TestAStormOfWritesIsCoalesced(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"0"`, ""), "b.lua": luaTool("b", `"0"`, "")})
	before := g.loads.Load()
	const writes = 1000
	start := time.Now()
	for i := 1; i <= writes; i++ {
		g.save("a.js", jsTool("a", fmt.Sprintf(`"%d"`, i), ""))
		if i%10 == 0 {
			g.save("b.lua", luaTool("b", fmt.Sprintf(`"%d"`, i), ""))
		}
	}
	storm := time.Since(start)
	deadline := time.Now().Add(20 * time.Second)
	for g.call("a") != fmt.Sprint(writes) || g.call("b") != fmt.Sprint(writes) {
		if time.Now().After(deadline) {
			t.Fatalf("the last version never served: %q %q", g.call("a"), g.call("b"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// At most one load running and one waiting per plugin, each batch of
	// changes at least every two debounce periods: far fewer loads than
	// writes, and at most a batch per debounce period and plugin however
	// long a busy machine takes to make the writes.
	limit := max(writes/5, 2*int(storm/rigDebounce)+4)
	if n := g.loads.Load() - before; n > int64(limit) {
		t.Errorf("%d writes (and %d) over %v made %d loads, want at most %d", writes, writes/10, storm.Round(time.Millisecond), n, limit)
	}
}

func TestCloseDisposesEveryPlugin(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.js": jsTool("a", `"A1"`, "")})
	svc := engine.New()
	r := &scripting.Reloader{Loader: &scripting.Loader{Service: svc, Hosts: []scripting.Host{&js.Host{}}}, Dirs: []string{dir}}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if svc.Global().Get("a") == nil {
		t.Fatal("not loaded")
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if svc.Global().Get("a") != nil {
		t.Error("a tool outlived Close")
	}
	if st := r.Status(); len(st) != 0 {
		t.Errorf("status after Close %+v", st)
	}
}

func TestStartReportsADirectoryThatCannotBeRead(t *testing.T) {
	r := &scripting.Reloader{Loader: &scripting.Loader{Service: engine.New(), Hosts: []scripting.Host{&js.Host{}}},
		Dirs: []string{filepath.Join(t.TempDir(), "nowhere")}}
	err := r.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("err = %v", err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestALuaMetaFileIsNoPlugin(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"A1"`, "")})
	g.save("types/dsh.lua", "---@meta\nlocal dsh = {}\nreturn dsh\n")
	g.save("a.js", jsTool("a", `"A2"`, ""))
	g.waitFor("reloaded a.js")
	for _, ev := range g.seen() {
		if strings.Contains(ev, "dsh.lua") {
			t.Errorf("the meta file was taken for a plugin: %q", g.seen())
		}
	}
}

// jsPolicy is a plugin whose tools/pre-execute policy denies the tool a
// with reason.
func jsPolicy(reason string) string {
	return `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => exec.name === "a" ? { kind: "deny", reason: "` + reason + `" } : next());
`
}

// truncate empties a file in place, as an editor that saves slowly does
// before it writes.
func (g *rig) truncate(rel string) {
	g.t.Helper()
	if err := os.Truncate(filepath.Join(g.dir, filepath.FromSlash(rel)), 0); err != nil {
		g.t.Fatal(err)
	}
}

// writeInPlace writes a file's content into it (no rename).
func (g *rig) writeInPlace(rel, text string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, filepath.FromSlash(rel)), []byte(text), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// quiet waits several debounce periods: long enough for the reloader to
// have acted on the changes so far.
func quiet() { time.Sleep(150 * time.Millisecond) }

func TestASlowSaveKeepsThePoliciesServing(t *testing.T) {
	g := newRigWith(t, map[string]string{"a.js": jsTool("a", `"A1"`, ""), "policy.js": jsPolicy("v1")}, 10*time.Second)
	if got := g.call("a"); got != "error: v1" {
		t.Fatalf("before: %q", got)
	}
	g.truncate("policy.js")
	quiet()
	if got := g.call("a"); got != "error: v1" {
		t.Errorf("while the file is empty: %q", got)
	}
	g.writeInPlace("policy.js", jsPolicy("v2"))
	g.waitFor("loaded policy.js", "reloaded policy.js")
	if got := g.call("a"); got != "error: v2" {
		t.Errorf("after the save: %q", got)
	}
	for _, ev := range g.seen() {
		if strings.HasPrefix(ev, "unloaded") {
			t.Errorf("the save unloaded a plugin: %q", g.seen())
		}
	}
}

func TestAnEmptiedFileIsUnloadedOnceItStayedEmpty(t *testing.T) {
	const settle = 300 * time.Millisecond
	g := newRigWith(t, map[string]string{"a.js": jsTool("a", `"A1"`, ""), "policy.js": jsPolicy("v1")}, settle)
	emptied := time.Now()
	g.truncate("policy.js")
	g.waitFor("unloaded policy.js")
	if waited := time.Since(emptied); waited < settle {
		t.Errorf("unloaded %v after the file was emptied, before the settle window of %v", waited, settle)
	}
	if got := g.call("a"); got != "A1" {
		t.Errorf("after the unload: %q", got)
	}
	if st := g.status("policy.js"); st.File != "" {
		t.Errorf("status of an emptied plugin %+v", st)
	}

	g.writeInPlace("policy.js", jsPolicy("v2"))
	g.waitFor("unloaded policy.js", "loaded policy.js")
	if got := g.call("a"); got != "error: v2" {
		t.Errorf("after it was written again: %q", got)
	}
}

func TestAnEmptiedFileThatIsDeletedIsUnloadedAtOnce(t *testing.T) {
	g := newRigWith(t, map[string]string{"a.js": jsTool("a", `"A1"`, ""), "policy.js": jsPolicy("v1")}, time.Hour)
	g.truncate("policy.js")
	quiet()
	if err := os.Remove(filepath.Join(g.dir, "policy.js")); err != nil {
		t.Fatal(err)
	}
	g.waitFor("unloaded policy.js")
	if got := g.call("a"); got != "A1" {
		t.Errorf("after the delete: %q", got)
	}
}

func TestAnEmptyFileLoadsNothing(t *testing.T) {
	g := newRig(t, map[string]string{"a.js": jsTool("a", `"A1"`, ""), "empty.js": "", "blank.lua": " \n\t\n"})
	g.save("new.js", "")
	g.save("a.js", jsTool("a", `"A2"`, ""))
	g.waitFor("reloaded a.js")
	if got, want := g.seen(), []string{"loaded a.js", "reloaded a.js"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestAFileBackToTheVersionServingAfterAFailedReloadSaysSo(t *testing.T) {
	good := jsTool("a", `"A1"`, "")
	g := newRig(t, map[string]string{"a.js": good})
	broken := "const x = {;\n"
	g.save("a.js", broken)
	g.waitFor(`failed a.js: a.js:1:12: Expected identifier but found ";"`)
	g.save("a.js", good)
	g.waitFor(`failed a.js: a.js:1:12: Expected identifier but found ";"`, "restored a.js")
	g.mu.Lock()
	last := g.events[len(g.events)-1]
	g.mu.Unlock()
	if last.Revision != sha(good) || last.Previous != sha(broken) || last.Err != nil {
		t.Errorf("restore event %+v", last)
	}
	if st := g.status("a.js"); st.Err != nil || st.Revision != sha(good) {
		t.Errorf("status after the restore %+v", st)
	}
	if got := g.call("a"); got != "A1" {
		t.Errorf("call: %q", got)
	}

	// Saved again unchanged, it says nothing more.
	g.save("a.js", good)
	g.save("b.js", jsTool("b", `"B1"`, ""))
	g.waitFor("loaded b.js")
	if n := strings.Count(strings.Join(g.seen(), "\n"), "restored a.js"); n != 1 {
		t.Errorf("%d restores: %q", n, g.seen())
	}
}
