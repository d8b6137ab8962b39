package scripting_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// lineHost is a test host for the machinery, not an interpreter: each line
// of a ".plug" file is one top-level statement — "tool NAME" registers a
// tool, "deny NAME" a pre-execute denial of it, "restrict AGENT NAME" a deny
// restriction, "fail MESSAGE" throws at that line, "block" waits for the
// context (a top level that never returns).
type lineHost struct{}

func (lineHost) Extensions() []string { return []string{".plug"} }

// Its files import nothing and are all plugins.
func (lineHost) IsDeclaration(string) bool                   { return false }
func (lineHost) ModuleExtensions() []string                  { return nil }
func (lineHost) Imports(string, []byte) ([]string, bool)     { return nil, false }
func (lineHost) ImportCandidates(from, spec string) []string { return nil }

func (lineHost) Load(ctx context.Context, p *scripting.Plugin, src scripting.Source) error {
	sc := bufio.NewScanner(bytes.NewReader(src.Code))
	for n := 1; sc.Scan(); n++ {
		site := scripting.Site{Line: n, Col: 1}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch f[0] {
		case "tool":
			_, err = p.Register(site, nil, echo(f[1]))
		case "deny":
			name := f[1]
			_, err = p.OnPreExecute(site, nil, func(_ context.Context, e *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				if e.Name() == name {
					return engine.Deny("denied by " + src.Rel), nil
				}
				return next()
			})
		case "restrict":
			_, err = p.Restrict(site, p.Agent(f[1]), engine.Filter{Deny: f[2:]})
		case "fail":
			err = errors.New(strings.Join(f[1:], " "))
		case "block":
			<-ctx.Done()
			err = errors.New("top level timed out")
		}
		if err != nil {
			return &scripting.Diagnostic{Line: n, Col: 1, Message: err.Error(), Err: err}
		}
	}
	return nil
}

func echo(name string) *engine.Definition {
	return &engine.Definition{
		Name: name, Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output:  engine.Output{Schema: dsl.NewObject(), Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(name)}, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return name, nil },
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func names(t *testing.T, svc *engine.Service) []string {
	t.Helper()
	var out []string
	for _, d := range svc.Global().Definitions(nil) {
		out = append(out, d.Name)
	}
	return out
}

func TestLoadDirLoadsTheGoodFilesAndReportsEachBrokenOne(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"a.plug":          "tool alpha\ntool beta\n",
		"b.plug":          "tool gamma\nfail boom at top level\n",
		"c.plug":          "tool delta\ntool alpha\n",
		"sub/d.plug":      "tool epsilon\n",
		"lib/helper.plug": "tool hidden\n",
		"_draft.plug":     "tool hidden2\n",
		".swap.plug":      "tool hidden3\n",
		"notes.txt":       "tool nope\n",
	})
	svc := engine.New()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{lineHost{}}}
	loaded, diags, err := l.LoadDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range loaded {
		got = append(got, p.Source.Rel)
	}
	if !slices.Equal(got, []string{"a.plug", "sub/d.plug"}) {
		t.Errorf("loaded %v", got)
	}
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Error())
	}
	want := []string{
		"b.plug:2:1: boom at top level",
		`c.plug:2:1: tool "alpha" is already registered (for a per-agent variant, register through that agent's scope, ` + "`tools.scope(id)`" + `, instead)`,
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("diagnostics\n got %q\nwant %q", msgs, want)
	}
	// Nothing of a broken file stays: not gamma (top level threw), not delta
	// (registered before the duplicate that failed the commit).
	if got := names(t, svc); !slices.Equal(got, []string{"alpha", "beta", "epsilon"}) {
		t.Errorf("registered %v", got)
	}
}

func TestAPluginIsDisposedAsAUnit(t *testing.T) {
	root := writeFiles(t, map[string]string{"a.plug": "tool one\ntool two\ndeny two\nrestrict worker one\n"})
	svc := engine.New()
	agents := scripting.NewAgents()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{lineHost{}}, Agents: agents.Agent}
	p, err := l.Load(context.Background(), root, "a.plug")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Revision()) != 64 {
		t.Errorf("revision %q", p.Revision())
	}
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "two", Arguments: dsl.NewObject()})
	if r.Error == nil || r.Error.Message != "denied by a.plug" {
		t.Fatalf("the plugin's policy did not run: %+v", r)
	}
	worker := agents.Agent("worker")
	if svc.Scope(worker).Get("one") != nil {
		t.Error("the restriction did not apply")
	}
	if err := p.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, svc); len(got) != 0 {
		t.Errorf("after disposal %v", got)
	}
	svc.Global().Register(echo("one"))
	if svc.Scope(worker).Get("one") == nil {
		t.Error("the restriction outlived its plugin")
	}
	if _, err := p.Register(scripting.Site{}, nil, echo("late")); !errors.Is(err, scripting.ErrDisposed) {
		t.Errorf("an effect after disposal: %v", err)
	}
}

func TestATopLevelThatNeverReturnsIsCutByTheLoadDeadline(t *testing.T) {
	root := writeFiles(t, map[string]string{"slow.plug": "tool one\nblock\n"})
	svc := engine.New()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{lineHost{}}, LoadTimeout: 20 * time.Millisecond}
	_, err := l.Load(context.Background(), root, "slow.plug")
	if err == nil || err.Error() != "slow.plug:2:1: top level timed out" {
		t.Fatalf("err = %v", err)
	}
	if got := names(t, svc); len(got) != 0 {
		t.Errorf("registered %v", got)
	}
}

func TestABadDefinitionFailsWhereTheScriptRegistersIt(t *testing.T) {
	p := scripting.NewPlugin(engine.New(), "x.plug", nil)
	bad := echo("x")
	bad.Output.Render = nil
	if _, err := p.Register(scripting.Site{}, nil, bad); err == nil || err.Error() != `tool "x" must declare output { schema, render, presentationMeta? }` {
		t.Errorf("err = %v", err)
	}
	if _, err := p.Restrict(scripting.Site{}, nil, engine.Filter{Deny: []string{"a"}}); err == nil || !strings.HasPrefix(err.Error(), "tools.restrict() requires a scoped context") {
		t.Errorf("restrict err = %v", err)
	}
}

func TestAnEffectDisposedBeforeCommitIsNotApplied(t *testing.T) {
	svc := engine.New()
	p := scripting.NewPlugin(svc, "x.plug", nil)
	d, err := p.Register(scripting.Site{}, nil, echo("temp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Register(scripting.Site{}, nil, echo("kept")); err != nil {
		t.Fatal(err)
	}
	d()
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, svc); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("registered %v", got)
	}
	// After commit, effects apply at once.
	d2, err := p.Register(scripting.Site{}, nil, echo("live"))
	if err != nil || !slices.Equal(names(t, svc), []string{"kept", "live"}) {
		t.Fatalf("live registration: %v %v", err, names(t, svc))
	}
	d2()
	if !slices.Equal(names(t, svc), []string{"kept"}) {
		t.Errorf("live disposer: %v", names(t, svc))
	}
}

func TestDisposeWaitsForCallsInFlightThenCloses(t *testing.T) {
	p := scripting.NewPlugin(engine.New(), "x.plug", nil)
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	p.OnClose(func() { close(closed) })
	exit, ok := p.Enter()
	if !ok {
		t.Fatal("Enter refused a live plugin")
	}
	done := make(chan error)
	go func() { done <- p.Dispose(context.Background()) }()
	select {
	case <-closed:
		t.Fatal("closed while a call was in flight")
	case <-time.After(20 * time.Millisecond):
	}
	if _, ok := p.Enter(); ok {
		t.Error("a disposing plugin accepted a new call")
	}
	exit()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
}

func TestDisposeGivesUpWaitingAtItsDeadline(t *testing.T) {
	p := scripting.NewPlugin(engine.New(), "x.plug", nil)
	_ = p.Commit()
	closed := make(chan struct{})
	p.OnClose(func() { close(closed) })
	exit, _ := p.Enter()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := p.Dispose(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	exit() // the straggler settles later: the plugin closes then
	<-closed
}

func TestPluginFilesFollowsTheFileRules(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"a.ts": "", "b.js": "", "c.mjs": "", "d.lua": "", "types.d.ts": "", "_x.ts": "", ".y.js": "",
		"lib/m.ts": "", "deep/lib/m.js": "", "deep/e.ts": "", "notes.md": "", ".git/hooks/h.js": "",
		"types/dsh.lua": "---@meta dsh\n-- declarations\n", "f.lua": "-- ---@meta is not first\n",
	})
	got, err := scripting.PluginFiles(root, []scripting.Host{&js.Host{}, &lua.Host{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.ts", "b.js", "c.mjs", "d.lua", "deep/e.ts", "f.lua"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDiagnosticsRenderFileLineAndColumn(t *testing.T) {
	for _, tt := range []struct {
		d    scripting.Diagnostic
		want string
	}{
		{scripting.Diagnostic{File: "a.ts", Line: 3, Col: 7, Message: "boom"}, "a.ts:3:7: boom"},
		{scripting.Diagnostic{File: "a.ts", Line: 3, Message: "boom"}, "a.ts:3: boom"},
		{scripting.Diagnostic{File: "a.ts", Message: "boom"}, "a.ts: boom"},
	} {
		if got := tt.d.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestAgentsReturnsOneAgentPerIDWithItsParentChain(t *testing.T) {
	a := scripting.NewAgents()
	a.SetParent("child", "parent")
	a.SetParent("parent", "child") // a cycle is cut
	c := a.Agent("child")
	if c != a.Agent("child") || c.Parent() == nil || c.Parent().ID() != "parent" || c.Parent().Parent() != nil {
		t.Errorf("child %v parent %v", c.ID(), c.Parent())
	}
}

func TestEffectsListWhatTheTopLevelMade(t *testing.T) {
	svc := engine.New()
	p := scripting.NewPlugin(svc, "x.plug", nil)
	agent := engine.NewAgent("a", nil)
	mustDo := func(_ engine.Disposer, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustDo(p.Register(scripting.Site{Line: 1}, nil, echo("t1")))
	mustDo(p.Guard(scripting.Site{Line: 2}, agent, func(context.Context, *engine.Execution) (string, error) { return "", nil }))
	mustDo(p.OnPreExecute(scripting.Site{Line: 3}, nil, func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return next()
	}))
	gone, err := p.Register(scripting.Site{Line: 4}, nil, echo("gone"))
	mustDo(gone, err)
	gone()
	describe := func() string {
		var out []string
		for _, e := range p.Effects() {
			s := fmt.Sprintf("%d:%s", e.Site.Line, e.Kind)
			if e.Name != "" {
				s += " " + e.Name
			}
			if e.Agent != nil {
				s += " @" + e.Agent.ID()
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	want := "1:tool t1, 2:guard @a, 3:tools/pre-execute"
	if got := describe(); got != want {
		t.Errorf("while loading: %s\nwant %s", got, want)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	mustDo(p.Register(scripting.Site{Line: 9}, nil, echo("later")))
	if got := describe(); got != want {
		t.Errorf("once live: %s\nwant %s", got, want)
	}
}
