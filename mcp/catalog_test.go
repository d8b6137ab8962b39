package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// catUpstream is a Go-SDK server with resources (text, and a blob with
// annotations and _meta), a template and prompts (with arguments, with an
// embedded resource, with an image), and no tools.
func catUpstream(prefix string) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "catalogue", Version: "v1"}, &sdk.ServerOptions{PageSize: 2})
	text := func(uri, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	srv.AddResource(&sdk.Resource{URI: "memo://" + prefix + "/notes", Name: "notes.txt", Title: "Notes", MIMEType: "text/plain"},
		text("memo://"+prefix+"/notes", "the notes of "+prefix))
	srv.AddResource(&sdk.Resource{URI: "memo://" + prefix + "/logo", Name: "logo", MIMEType: "image/png",
		Annotations: &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5}, Meta: sdk.Meta{"origin": prefix}},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
				URI: "memo://" + prefix + "/logo", MIMEType: "image/png", Blob: []byte("\x89PNG"),
				Meta: sdk.Meta{"origin": prefix},
			}}}, nil
		})
	srv.AddResource(&sdk.Resource{URI: "memo://shared", Name: "shared"}, text("memo://shared", "shared by "+prefix))
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "memo://" + prefix + "/items/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item at " + req.Params.URI}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets someone.",
		Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Description: "a greeting", Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + req.Params.Arguments["who"] + "."}},
			}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "with.resource"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "memo://" + prefix + "/notes", Text: "embedded"},
					Annotations: &sdk.Annotations{Priority: 1}}},
				{Role: "assistant", Content: &sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")}},
			}}, nil
		})
	return srv
}

// catConnect imports the upstreams (named, in order) and serves the
// result, returning the client's diagnostics and a client of dsh serve,
// speaking version, that hears list_changed on changed.
func catConnect(t *testing.T, version string, specs []mcp.ServerSpec, ups map[string]*impMemServer, changed chan<- string) (*mcp.Client, []mcp.Diagnostic, *sdk.ClientSession) {
	t.Helper()
	svc := engine.New()
	dial := func(ctx context.Context, spec mcp.ServerSpec) (sdk.Transport, error) {
		return ups[spec.Name].dial(ctx, spec)
	}
	client, diags := mcp.Connect(context.Background(), svc, specs, mcp.Options{Dial: dial, MinBackoff: 1})
	t.Cleanup(func() {
		_ = client.Close()
		for _, u := range ups {
			u.closeAll()
		}
	})
	f := serveEngine(t, svc)
	t.Cleanup(f.srv.Reexport(client))
	cs := f.connect(t, version, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- "resources" },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { changed <- "prompts" },
	})
	return client, diags, cs
}

// direct connects a client to srv itself.
func direct(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "direct", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listAll(t *testing.T, cs *sdk.ClientSession) (resources, templates, prompts []string) {
	t.Helper()
	ctx := context.Background()
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		resources = append(resources, r.Name+" "+r.URI)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, r.Name+" "+r.URITemplate)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
	}
	slices.Sort(resources)
	slices.Sort(templates)
	slices.Sort(prompts)
	return resources, templates, prompts
}

// hear waits for a list_changed of kind: a generous bound, so that a
// notification that never comes fails the test instead of hanging it.
func hear(t *testing.T, changed <-chan string, kind string) {
	t.Helper()
	select {
	case got := <-changed:
		if got != kind {
			t.Fatalf("heard %s list_changed, want %s", got, kind)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s list_changed in 30 s", kind)
	}
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestServeReexportsResourcesAndPrompts(t *testing.T) {
	for _, version := range []string{legacy, multiRoundTrip} {
		t.Run("to a client on "+version, func(t *testing.T) { testReexport(t, version) })
	}
}

func testReexport(t *testing.T, version string) {
	up := catUpstream("a")
	changed := make(chan string, 16)
	_, diags, cs := catConnect(t, version, []mcp.ServerSpec{{Name: "a", Command: "unused"}},
		map[string]*impMemServer{"a": newImpMemServer(up)}, changed)
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v, want none", diags)
	}
	ctx := context.Background()
	own := direct(t, up)

	t.Run("the initialize result declares resources and prompts with list_changed", func(t *testing.T) {
		caps := cs.InitializeResult().Capabilities
		if caps.Resources == nil || !caps.Resources.ListChanged || caps.Resources.Subscribe || caps.Prompts == nil || !caps.Prompts.ListChanged {
			t.Errorf("capabilities %s, want resources and prompts with listChanged, no subscribe", jsonOf(t, caps))
		}
	})
	t.Run("the lists show namespaced names and unchanged URIs", func(t *testing.T) {
		res, tmpls, prompts := listAll(t, cs)
		wantRes := []string{"a__logo memo://a/logo", "a__notes_txt memo://a/notes", "a__shared memo://shared"}
		if !slices.Equal(res, wantRes) {
			t.Errorf("resources %q, want %q", res, wantRes)
		}
		if want := []string{"a__item memo://a/items/{id}"}; !slices.Equal(tmpls, want) {
			t.Errorf("templates %q, want %q", tmpls, want)
		}
		if want := []string{"a__greet", "a__with_resource"}; !slices.Equal(prompts, want) {
			t.Errorf("prompts %q, want %q", prompts, want)
		}
	})
	t.Run("a listed resource keeps everything but its name", func(t *testing.T) {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if r.URI != "memo://a/logo" {
				continue
			}
			want := `{"_meta":{"origin":"a"},"annotations":{"audience":["user"],"priority":0.5},"mimeType":"image/png","name":"a__logo","uri":"memo://a/logo"}`
			if got := jsonOf(t, r); got != want {
				t.Errorf("resource %s\nwant %s", got, want)
			}
		}
	})
	t.Run("a read returns the server's contents unchanged", func(t *testing.T) {
		for _, uri := range []string{"memo://a/notes", "memo://a/logo", "memo://shared", "memo://a/items/42"} {
			got, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("reading %s: %v", uri, err)
			}
			want, err := own.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
				t.Errorf("reading %s through dsh: %s\nwant the server's own %s", uri, g, w)
			}
		}
	})
	t.Run("a prompt is got under its served name, its messages unchanged", func(t *testing.T) {
		for _, p := range []struct {
			served, own string
			args        map[string]string
		}{{"a__greet", "greet", map[string]string{"who": "Ada"}}, {"a__with_resource", "with.resource", nil}} {
			got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.served, Arguments: p.args})
			if err != nil {
				t.Fatalf("getting %s: %v", p.served, err)
			}
			want, err := own.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.own, Arguments: p.args})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
				t.Errorf("getting %s through dsh: %s\nwant the server's own %s", p.served, g, w)
			}
		}
	})
	t.Run("a URI nobody lists gets the SDK's resource-not-found error", func(t *testing.T) {
		// -32602 in the Go SDK v1.8.0 (SEP-2164; it was -32002).
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "memo://b/notes"})
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || e.Message != "Resource not found" || string(e.Data) != `{"uri":"memo://b/notes"}` {
			t.Errorf("error %#v, want the SDK's resource-not-found error (-32602)", err)
		}
	})
	t.Run("an unknown prompt is invalid params", func(t *testing.T) {
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet"})
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Errorf("error %v (code %d), want code %d", err, code, jsonrpc.CodeInvalidParams)
		}
	})
	t.Run("a change upstream reaches the client as list_changed and a new listing", func(t *testing.T) {
		up.AddResource(&sdk.Resource{URI: "memo://a/late", Name: "late"},
			func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "memo://a/late", Text: "late"}}}, nil
			})
		hear(t, changed, "resources")
		res, _, _ := listAll(t, cs)
		if !slices.Contains(res, "a__late memo://a/late") {
			t.Errorf("resources %q, want a__late memo://a/late among them", res)
		}
		up.RemovePrompts("greet")
		hear(t, changed, "prompts")
		if _, _, prompts := listAll(t, cs); !slices.Equal(prompts, []string{"a__with_resource"}) {
			t.Errorf("prompts %q, want [a__with_resource]", prompts)
		}
	})
}

func TestTwoServersListingOneURI(t *testing.T) {
	changed := make(chan string, 64)
	client, diags, cs := catConnect(t, legacy, []mcp.ServerSpec{{Name: "a", Command: "unused"}, {Name: "b", Command: "unused"}},
		map[string]*impMemServer{"a": newImpMemServer(catUpstream("a")), "b": newImpMemServer(catUpstream("b"))}, changed)
	want := []mcp.Diagnostic{{Server: "b", Kind: "resource", Item: "memo://shared",
		Reason: `not re-exported: the server "a", first in the configuration, lists it too`}}
	if !slices.Equal(diags, want) {
		t.Errorf("diagnostics %#v\nwant %#v", diags, want)
	}
	t.Run("the diagnostic reads as a resource's", func(t *testing.T) {
		if got, want := diags[0].Error(), `resource "memo://shared": not re-exported: the server "a", first in the configuration, lists it too`; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if !diags[0].IsTool() {
			t.Error("IsTool() = false: the server would count as not reached")
		}
	})
	t.Run("the first server in spec order keeps the URI", func(t *testing.T) {
		_, cdiags := client.Catalog()
		if !slices.Equal(cdiags, want) {
			t.Errorf("Catalog diagnostics %#v, want %#v", cdiags, want)
		}
		r, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "memo://shared"})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Contents[0].Text; got != "shared by a" {
			t.Errorf("memo://shared reads %q, want %q", got, "shared by a")
		}
	})
	t.Run("each server's own URIs and templates are served", func(t *testing.T) {
		res, tmpls, prompts := listAll(t, cs)
		if len(res) != 5 || len(tmpls) != 2 || len(prompts) != 4 {
			t.Errorf("resources %q, templates %q, prompts %q: want 5, 2 and 4", res, tmpls, prompts)
		}
		r, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "memo://b/items/7"})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Contents[0].Text; got != "item at memo://b/items/7" {
			t.Errorf("memo://b/items/7 reads %q", got)
		}
	})
}

func TestACatalogueOverItsCapIsCut(t *testing.T) {
	up := catUpstream("a")
	mem := newImpMemServer(up)
	client, diags := mcp.Connect(context.Background(), engine.New(), []mcp.ServerSpec{{Name: "a", Command: "unused", MaxCatalog: 1}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	defer mem.closeAll()
	defer client.Close()
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%s %v %s", d.Kind, d.Capped, d.Error()))
	}
	want := []string{
		"resource true the server lists more than 1 resources; the rest are not re-exported",
		"prompt true the server lists more than 1 prompts; the rest are not re-exported",
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics %q\nwant %q", got, want)
	}
	cat, _ := client.Catalog()
	if len(cat.Resources) != 1 || len(cat.Templates) != 1 || len(cat.Prompts) != 1 {
		t.Errorf("catalogue of %d resources, %d templates, %d prompts; want 1 of each", len(cat.Resources), len(cat.Templates), len(cat.Prompts))
	}
}

func TestAServerThatConnectsLaterBringsItsCatalogue(t *testing.T) {
	mem := newImpMemServer(catUpstream("a"))
	mem.held.Store(true)
	defer mem.closeAll()
	svc := engine.New()
	f := serveEngine(t, svc)
	changed := make(chan string, 16)
	cs := f.connect(t, legacy, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- "resources" },
	})
	client := mcp.Start(svc, []mcp.ServerSpec{{Name: "a", Command: "unused"}}, mcp.Options{Dial: mem.dial, MinBackoff: time.Hour}, nil)
	defer client.Close()
	stop := f.srv.Reexport(client)
	defer stop()
	<-mem.dialed

	t.Run("before the server connects, the lists are empty", func(t *testing.T) {
		if res, tmpls, prompts := listAll(t, cs); len(res)+len(tmpls)+len(prompts) != 0 {
			t.Errorf("resources %q, templates %q, prompts %q: want none", res, tmpls, prompts)
		}
	})
	t.Run("its catalogue arrives with list_changed when it connects", func(t *testing.T) {
		close(mem.release)
		hear(t, changed, "resources")
		if res, _, _ := listAll(t, cs); len(res) != 3 {
			t.Errorf("resources %q, want the server's 3", res)
		}
	})
	t.Run("closing the client empties the lists", func(t *testing.T) {
		_ = client.Close()
		hear(t, changed, "resources")
		if res, tmpls, prompts := listAll(t, cs); len(res)+len(tmpls)+len(prompts) != 0 {
			t.Errorf("resources %q, templates %q, prompts %q: want none", res, tmpls, prompts)
		}
	})
}

func TestCancellingAReadCancelsItAtTheServer(t *testing.T) {
	up := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "v1"}, nil)
	started, stopped, quit := make(chan struct{}), make(chan error, 1), make(chan struct{})
	up.AddResource(&sdk.Resource{URI: "memo://slow", Name: "slow"},
		func(ctx context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			close(started)
			select {
			case <-ctx.Done():
			case <-quit: // the test failed: let its cleanup end the sessions
			}
			stopped <- ctx.Err()
			return nil, errors.New("stopped")
		})
	_, _, cs := catConnect(t, legacy, []mcp.ServerSpec{{Name: "s", Command: "unused"}},
		map[string]*impMemServer{"s": newImpMemServer(up)}, make(chan string, 16))
	t.Cleanup(func() { // first of the cleanups
		if quit != nil {
			close(quit)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "memo://slow"})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the read ended before it reached the server: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the read did not reach the server in 30 s")
	}
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the server's read ended with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the server's read was not cancelled in 30 s")
		close(quit)
		quit = nil
	}
	if err := <-done; err == nil {
		t.Error("the cancelled read succeeded")
	}
}

// TestManyServersConnectingAtOnce imports sixteen servers that connect at
// once and list the same URI: each one, as it connects, reads the others'
// catalogues, which must all be in place before the first starts (the
// race detector caught a server reading the list while it was built).
func TestManyServersConnectingAtOnce(t *testing.T) {
	var specs []mcp.ServerSpec
	ups := map[string]*impMemServer{}
	for k := range 16 {
		name := fmt.Sprintf("s%02d", k)
		specs = append(specs, mcp.ServerSpec{Name: name, Command: "unused"})
		ups[name] = newImpMemServer(catUpstream(name))
	}
	client, diags, _ := catConnect(t, legacy, specs, ups, make(chan string, 256))
	// What each server's first attempt reported depends on who connected
	// before it; all of it is about the one shared URI.
	for _, d := range diags {
		if d.Item != "memo://shared" {
			t.Errorf("Connect diagnostic %#v", d)
		}
	}
	cat, cdiags := client.Catalog()
	if len(cdiags) != 15 {
		t.Fatalf("%d diagnostics, want 15 (memo://shared kept by s00 only): %v", len(cdiags), cdiags)
	}
	for _, d := range cdiags {
		if d.Item != "memo://shared" || d.Server == "s00" || !strings.Contains(d.Reason, `the server "s00", first in the configuration`) {
			t.Errorf("Catalog diagnostic %#v", d)
		}
	}
	if len(cat.Resources) != 2*16+1 {
		t.Errorf("%d resources, want each server's two and the shared one", len(cat.Resources))
	}
}
