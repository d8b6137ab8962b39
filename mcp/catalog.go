package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/dsh-go/dsh/internal/display"
)

// DefaultMaxCatalog is the most resources, the most resource templates and
// the most prompts (each) dsh re-exports from one server whose spec sets no
// MaxCatalog: a listing that goes past it stops there.
const DefaultMaxCatalog = 10_000

// MaxCatalogBytes bounds the size of what dsh keeps of one server's
// catalogue, its entries' JSON added up: a listing that passes it stops
// there, whatever the counts.
const MaxCatalogBytes = 32 << 20

// maxMaxCatalog bounds a configured cap on a server's catalogue.
const maxMaxCatalog = 1_000_000

// maxCatalog is the most entries of each kind dsh re-exports from the server.
func (s ServerSpec) maxCatalog() int {
	if s.MaxCatalog > 0 {
		return s.MaxCatalog
	}
	return DefaultMaxCatalog
}

// Catalog is what the imported servers list beside their tools, as dsh
// serve re-exports it: resources, resource templates and prompts, each
// with the server that listed it, in the order of the servers' specs and
// then of each server's listing.
//
// A resource keeps its URI (clients read by URI, and a URI means the same
// thing whoever serves it) and a template its URI template; their names,
// and prompts' names, are mapped as tools' are ([ToolName]: "NAME__name").
// A URI, or URI template, listed by two servers belongs to the first in
// spec order; the other's entry is left out with a [Diagnostic]. So is a
// prompt whose mapped name another server's prompt has.
type Catalog struct {
	Resources []CatalogResource
	Templates []CatalogTemplate
	Prompts   []CatalogPrompt
}

// CatalogResource is a resource of Server, as served (its name mapped).
type CatalogResource struct {
	Server   string
	Resource *sdk.Resource
}

// CatalogTemplate is a resource template of Server, as served (its name
// mapped).
type CatalogTemplate struct {
	Server   string
	Template *sdk.ResourceTemplate
	match    *uritemplate.Template
}

// Matches reports whether uri is one of the template's URIs (an RFC 6570
// match, as the SDK's server matches its own templates).
func (t CatalogTemplate) Matches(uri string) bool {
	return t.match != nil && t.match.Regexp().MatchString(uri)
}

// CatalogPrompt is a prompt of Server, as served (its name mapped); Name
// is the server's own name for it.
type CatalogPrompt struct {
	Server string
	Name   string
	Prompt *sdk.Prompt
}

// serverCatalog is one server's latest listing.
type serverCatalog struct {
	resources []*sdk.Resource
	templates []CatalogTemplate
	prompts   []CatalogPrompt
}

// catalogHub keeps the subscribers to the client's catalogue.
type catalogHub struct {
	// merge makes a server's new listing and the conflicts it takes part
	// in one step, so that two servers listing at once report a conflict
	// once.
	merge sync.Mutex

	mu   sync.Mutex
	next int
	subs map[int]func()
}

// Catalog returns the servers' catalogue as it is now, with the
// diagnostics of the entries two servers list (see [Catalog]). A server
// not connected keeps the entries of its last listing: reading them fails
// until it reconnects.
func (c *Client) Catalog() (Catalog, []Diagnostic) {
	var cat Catalog
	var diags []Diagnostic
	uris := map[string]string{}    // a URI → the server that has it
	tmpls := map[string]string{}   // a URI template → the server that has it
	prompts := map[string]string{} // a served prompt name → the server that has it
	taken := func(seen map[string]string, key, server, kind, item string) bool {
		if first, ok := seen[key]; ok {
			diags = append(diags, Diagnostic{Server: server, Kind: kind, Item: item,
				Reason: fmt.Sprintf("not re-exported: the server %s, first in the configuration, lists it too", display.Quote(first))})
			return true
		}
		seen[key] = server
		return false
	}
	for _, s := range c.servers {
		sc := s.catalog.Load()
		if sc == nil {
			continue
		}
		name := s.spec.Name
		for _, r := range sc.resources {
			if !taken(uris, r.URI, name, "resource", r.URI) {
				cat.Resources = append(cat.Resources, CatalogResource{Server: name, Resource: r})
			}
		}
		for _, t := range sc.templates {
			if !taken(tmpls, t.Template.URITemplate, name, "resource template", t.Template.URITemplate) {
				cat.Templates = append(cat.Templates, t)
			}
		}
		for _, p := range sc.prompts {
			if !taken(prompts, p.Prompt.Name, name, "prompt", p.Name) {
				cat.Prompts = append(cat.Prompts, p)
			}
		}
	}
	return cat, diags
}

// OnCatalogChange calls f after each change of the catalogue (a server's
// listing, its re-listing on list_changed, the client's Close), from the
// goroutine of the server that changed it: f must not block. Stop ends the
// subscription.
func (c *Client) OnCatalogChange(f func()) (stop func()) {
	h := &c.catalog
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]func(){}
	}
	id := h.next
	h.next++
	h.subs[id] = f
	return func() {
		h.mu.Lock()
		delete(h.subs, id)
		h.mu.Unlock()
	}
}

// catalogChanged calls the subscribers.
func (c *Client) catalogChanged() {
	c.catalog.mu.Lock()
	subs := make([]func(), 0, len(c.catalog.subs))
	for _, f := range c.catalog.subs {
		subs = append(subs, f)
	}
	c.catalog.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

// clearCatalog empties every server's catalogue, once the client is closed.
func (c *Client) clearCatalog() {
	for _, s := range c.servers {
		s.catalog.Store(nil)
	}
	c.catalogChanged()
}

// ReadResource reads a resource from server (the one the catalogue names
// for its URI or for a template it matches) with ctx, so that cancelling
// ctx cancels the request at the server. The result is the server's, and
// so is a JSON-RPC error (a resource the server does not find, say).
func (c *Client) ReadResource(ctx context.Context, server string, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	s, sess, err := c.session(server)
	if err != nil {
		return nil, err
	}
	res, err := sess.ReadResource(ctx, params)
	return res, s.forwardErr(ctx, err)
}

// GetPrompt gets a prompt from server, params naming it by the server's
// own name (CatalogPrompt.Name), with ctx as ReadResource has it.
func (c *Client) GetPrompt(ctx context.Context, server string, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	s, sess, err := c.session(server)
	if err != nil {
		return nil, err
	}
	res, err := sess.GetPrompt(ctx, params)
	return res, s.forwardErr(ctx, err)
}

// session is the named server's session, or why there is none.
func (c *Client) session(name string) (*server, *sdk.ClientSession, error) {
	for _, s := range c.servers {
		if s.spec.Name == name {
			st := s.state.Load()
			if st.sess == nil {
				return nil, nil, s.notConnected(st.reason)
			}
			return s, st.sess, nil
		}
	}
	return nil, nil, fmt.Errorf("no MCP server %s is imported", display.Quote(name))
}

// forwardErr words the error of a forwarded request: the server's own
// JSON-RPC error passes unchanged, a lost connection reads as a call's.
func (s *server) forwardErr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		reason := s.reason(errors.New("the connection closed during the request"))
		if now := s.state.Load(); now.sess == nil {
			reason = now.reason
		}
		return s.notConnected(reason)
	}
	return err
}

// syncCatalog lists the server's resources, resource templates and
// prompts (those its capabilities declare) and makes them its catalogue,
// telling the subscribers. An error is ctx's (the connect timeout covers
// the listing, as it does the tools'); a listing the server fails is a
// diagnostic, and leaves that kind empty.
func (s *server) syncCatalog(ctx context.Context, sess *sdk.ClientSession) ([]Diagnostic, error) {
	sc, diags, err := s.listCatalog(ctx, sess)
	if err != nil {
		return nil, err
	}
	s.c.catalog.merge.Lock()
	s.catalog.Store(sc)
	// The conflicts this listing takes part in, whichever server loses.
	_, merged := s.c.Catalog()
	s.c.catalog.merge.Unlock()
	for _, d := range merged {
		if d.Server == s.spec.Name || s.lists(d) {
			diags = append(diags, d)
		}
	}
	s.c.catalogChanged()
	return diags, nil
}

// lists reports whether d, another server's conflict, is about an entry
// of s's catalogue.
func (s *server) lists(d Diagnostic) bool {
	sc := s.catalog.Load()
	if sc == nil {
		return false
	}
	switch d.Kind {
	case "resource":
		for _, r := range sc.resources {
			if r.URI == d.Item {
				return true
			}
		}
	case "resource template":
		for _, t := range sc.templates {
			if t.Template.URITemplate == d.Item {
				return true
			}
		}
	case "prompt":
		name := servedName(s.spec.prefix(), d.Item)
		for _, p := range sc.prompts {
			if p.Prompt.Name == name {
				return true
			}
		}
	}
	return false
}

// listCatalog lists what the server's capabilities declare, within ctx,
// each kind page after page up to the server's cap.
func (s *server) listCatalog(ctx context.Context, sess *sdk.ClientSession) (*serverCatalog, []Diagnostic, error) {
	sc := &serverCatalog{}
	var diags []Diagnostic
	var caps *sdk.ServerCapabilities
	if init := sess.InitializeResult(); init != nil {
		caps = init.Capabilities
	}
	if caps == nil {
		return sc, nil, nil
	}
	name := s.spec.Name
	limit := s.spec.maxCatalog()
	failed := func(kind, what string, err error) {
		diags = append(diags, Diagnostic{Server: name, Kind: kind,
			Reason: fmt.Sprintf("not re-exported: listing the %s: %v", what, err)})
	}
	capped := func(kind, what string) {
		diags = append(diags, Diagnostic{Server: name, Kind: kind, Capped: true,
			Reason: fmt.Sprintf("the server lists more than %d %s; the rest are not re-exported", limit, what)})
	}
	// Every entry kept is charged its JSON size: past MaxCatalogBytes the
	// listing stops, whatever the counts.
	spent, over := 0, false
	fits := func(kind string, v any) bool {
		if over {
			return false
		}
		b, err := json.Marshal(v)
		spent += len(b)
		if err == nil && spent <= MaxCatalogBytes {
			return true
		}
		over = true
		diags = append(diags, Diagnostic{Server: name, Kind: kind, Capped: true,
			Reason: fmt.Sprintf("the server's resources, resource templates and prompts pass %d MiB; the rest are not re-exported", MaxCatalogBytes>>20)})
		return false
	}
	if caps.Resources != nil {
		seen := map[string]bool{}
		for r, err := range sess.Resources(ctx, nil) {
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, fmt.Errorf("listing the resources: %w", ctx.Err())
				}
				failed("resource", "resources", err)
				sc.resources = nil
				break
			}
			if len(sc.resources) == limit {
				capped("resource", "resources")
				break
			}
			if !fits("resource", r) {
				break
			}
			if reason := checkURI(r.URI, seen); reason != "" {
				diags = append(diags, Diagnostic{Server: name, Kind: "resource", Item: r.URI, Reason: reason})
				continue
			}
			served := *r
			served.Name = servedName(s.spec.prefix(), r.Name)
			sc.resources = append(sc.resources, &served)
		}
		seen = map[string]bool{}
		for t, err := range sess.ResourceTemplates(ctx, nil) {
			if over {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, fmt.Errorf("listing the resource templates: %w", ctx.Err())
				}
				failed("resource template", "resource templates", err)
				sc.templates = nil
				break
			}
			if len(sc.templates) == limit {
				capped("resource template", "resource templates")
				break
			}
			if !fits("resource template", t) {
				break
			}
			if seen[t.URITemplate] {
				diags = append(diags, Diagnostic{Server: name, Kind: "resource template", Item: t.URITemplate,
					Reason: "not re-exported: the server lists it twice"})
				continue
			}
			seen[t.URITemplate] = true
			match, err := uritemplate.New(t.URITemplate)
			if err == nil && !absoluteTemplate(t.URITemplate) {
				err = errors.New("it is not absolute (no scheme)")
			}
			if err != nil {
				diags = append(diags, Diagnostic{Server: name, Kind: "resource template", Item: t.URITemplate,
					Reason: "not re-exported: not a URI template: " + err.Error()})
				continue
			}
			served := *t
			served.Name = servedName(s.spec.prefix(), t.Name)
			sc.templates = append(sc.templates, CatalogTemplate{Server: name, Template: &served, match: match})
		}
	}
	if caps.Prompts != nil && !over {
		var prompts []*sdk.Prompt
		for p, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, fmt.Errorf("listing the prompts: %w", ctx.Err())
				}
				failed("prompt", "prompts", err)
				prompts = nil
				break
			}
			if len(prompts) == limit {
				capped("prompt", "prompts")
				break
			}
			if !fits("prompt", p) {
				break
			}
			prompts = append(prompts, p)
		}
		own := make([]string, len(prompts))
		for i, p := range prompts {
			own[i] = p.Name
		}
		names, reasons := mapNames(s.spec.prefix(), "prompt", own)
		for i, p := range prompts {
			if reasons[i] != "" {
				diags = append(diags, Diagnostic{Server: name, Kind: "prompt", Item: p.Name, Reason: reasons[i], Unnamed: p.Name == ""})
				continue
			}
			served := *p
			served.Name = names[i]
			sc.prompts = append(sc.prompts, CatalogPrompt{Server: name, Name: p.Name, Prompt: &served})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("listing the catalogue: %w", err)
	}
	return sc, diags, nil
}

// checkURI is why a listed resource URI is not re-exported ("" when it
// is): the SDK's server takes only URIs that parse with a scheme, once.
func checkURI(uri string, seen map[string]bool) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return "not re-exported: not a URI: " + err.Error()
	case u.Scheme == "":
		return "not re-exported: the URI is not absolute (no scheme)"
	case seen[uri]:
		return "not re-exported: the server lists it twice"
	}
	seen[uri] = true
	return ""
}

// absoluteTemplate reports whether a URI template starts with a scheme
// (letters, digits, '+', '-' or '.' after a letter, then ':').
func absoluteTemplate(tmpl string) bool {
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// catalogChanged asks the server's goroutine to re-list its catalogue.
func (s *server) catalogChanged() {
	select {
	case s.recatalog <- struct{}{}:
	default: // one is pending already
	}
}

// configMaxCatalog reads a server's "maxCatalog": a whole number of
// entries, positive and at most maxMaxCatalog.
func configMaxCatalog(x any) (int, error) {
	n, ok := x.(float64)
	if !ok || n != math.Trunc(n) || n < 1 || n > maxMaxCatalog {
		return 0, fmt.Errorf(`"maxCatalog" must be a whole number from 1 to %d`, maxMaxCatalog)
	}
	return int(n), nil
}
