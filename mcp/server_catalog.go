package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reexport serves the catalogue of c's imported servers (see [Catalog]):
// their resources, resource templates and prompts, kept in step with it
// (each change reaches the clients as notifications/resources/list_changed
// or notifications/prompts/list_changed). resources/read is forwarded, with
// the caller's context, to the server that listed the URI, or else to the
// first server (in spec order) with a template that matches it; a URI that
// neither names gets the SDK's resource-not-found error
// ([sdk.ResourceNotFoundError]). prompts/get is forwarded to the prompt's
// server under its own name. Results, and the servers' JSON-RPC errors,
// pass unchanged. resources/subscribe is not offered.
//
// Call Reexport once per server, before or after c's servers connect. It
// follows c until stop is called or c is closed (which empties the
// catalogue).
func (s *Server) Reexport(c *Client) (stop func()) {
	r := &reexport{srv: s.server, c: c,
		resources: map[string]string{}, templates: map[string]string{}, prompts: map[string]string{}}
	r.routes.Store(&catalogRoutes{})
	unsub := c.OnCatalogChange(r.sync)
	r.sync()
	return unsub
}

// reexport keeps an SDK server's resources, templates and prompts those of
// a client's catalogue.
type reexport struct {
	srv    *sdk.Server
	c      *Client
	routes atomic.Pointer[catalogRoutes] // where requests go, as of the last sync

	mu        sync.Mutex        // one sync at a time
	resources map[string]string // registered with srv: URI → JSON
	templates map[string]string // URI template → JSON
	prompts   map[string]string // served name → JSON
}

// catalogRoutes is a catalogue indexed for forwarding.
type catalogRoutes struct {
	resources map[string]string // URI → server
	templates []CatalogTemplate // in spec order
	prompts   map[string]CatalogPrompt
}

// sync registers the catalogue with the SDK server: what is new or changed
// first, then the removals, so that an entry that stays is never missing.
// The SDK sends one list_changed for the changes made in a burst.
func (r *reexport) sync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	cat, _ := r.c.Catalog() // the conflicts are the client's diagnostics
	routes := &catalogRoutes{
		resources: make(map[string]string, len(cat.Resources)),
		templates: cat.Templates,
		prompts:   make(map[string]CatalogPrompt, len(cat.Prompts)),
	}
	for _, e := range cat.Resources {
		routes.resources[e.Resource.URI] = e.Server
	}
	for _, p := range cat.Prompts {
		routes.prompts[p.Prompt.Name] = p
	}
	r.routes.Store(routes)

	keep := make(map[string]string, len(cat.Resources))
	for _, e := range cat.Resources {
		keep[e.Resource.URI] = jsonText(e.Resource)
		if r.resources[e.Resource.URI] != keep[e.Resource.URI] {
			r.srv.AddResource(e.Resource, r.read)
		}
	}
	r.srv.RemoveResources(gone(r.resources, keep)...)
	r.resources = keep

	keep = make(map[string]string, len(cat.Templates))
	for _, e := range cat.Templates {
		key := e.Template.URITemplate
		keep[key] = jsonText(e.Template)
		if r.templates[key] != keep[key] {
			r.srv.AddResourceTemplate(e.Template, r.read)
		}
	}
	r.srv.RemoveResourceTemplates(gone(r.templates, keep)...)
	r.templates = keep

	keep = make(map[string]string, len(cat.Prompts))
	for _, p := range cat.Prompts {
		key := p.Prompt.Name
		keep[key] = jsonText(p.Prompt) + "\x00" + p.Server + "\x00" + p.Name
		if r.prompts[key] != keep[key] {
			r.srv.AddPrompt(p.Prompt, r.get)
		}
	}
	r.srv.RemovePrompts(gone(r.prompts, keep)...)
	r.prompts = keep
}

// gone lists the keys of was that are not in now.
func gone(was, now map[string]string) []string {
	var out []string
	for k := range was {
		if _, ok := now[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// jsonText is v's JSON, to tell a changed entry from an unchanged one.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%p", v) // never equal to a JSON text: re-registered
	}
	return string(b)
}

// read forwards resources/read to the server of the URI.
func (r *reexport) read(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	server := r.routes.Load().route(uri)
	if server == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	return r.c.ReadResource(ctx, server, &sdk.ReadResourceParams{URI: uri})
}

// route is the server that listed uri, or else the first whose template
// matches it, or "".
func (rt *catalogRoutes) route(uri string) string {
	if server, ok := rt.resources[uri]; ok {
		return server
	}
	for _, t := range rt.templates {
		if t.Matches(uri) {
			return t.Server
		}
	}
	return ""
}

// get forwards prompts/get to the prompt's server, under its own name.
func (r *reexport) get(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	p, ok := r.routes.Load().prompts[req.Params.Name]
	if !ok { // removed since the SDK looked it up
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	return r.c.GetPrompt(ctx, p.Server, &sdk.GetPromptParams{Name: p.Name, Arguments: req.Params.Arguments})
}
