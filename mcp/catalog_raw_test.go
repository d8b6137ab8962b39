package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// rawCatalogue is an MCP server written on the wire, listing what the
// SDK's server refuses to hold (URIs without a scheme, bad templates,
// entries listed twice) or stalling a listing. Each list method answers
// its one page of JSON items (resources, its pages: the cursor of page i is
// "i"); a method in stall is never answered.
type rawCatalogue struct {
	resources          []string
	templates, prompts string
	stall              string
}

func (r *rawCatalogue) dial(ctx context.Context, _ mcp.ServerSpec) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	conn, err := st.Connect(ctx)
	if err != nil {
		return nil, err
	}
	go r.serve(conn)
	return ct, nil
}

func (r *rawCatalogue) serve(conn sdk.Connection) {
	defer conn.Close()
	ctx := context.Background()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if req.Method == r.stall {
			continue
		}
		res := &jsonrpc.Response{ID: req.ID}
		switch req.Method {
		case "initialize":
			res.Result = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			res.Result = json.RawMessage(`{"tools":[]}`)
		case "resources/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(req.Params, &p)
			i, _ := strconv.Atoi(p.Cursor)
			page := `{"resources":[`
			if i < len(r.resources) {
				page += r.resources[i]
			}
			page += `]`
			if i+1 < len(r.resources) {
				page += `,"nextCursor":"` + strconv.Itoa(i+1) + `"`
			}
			res.Result = json.RawMessage(page + "}")
		case "resources/templates/list":
			res.Result = json.RawMessage(`{"resourceTemplates":[` + r.templates + `]}`)
		case "prompts/list":
			res.Result = json.RawMessage(`{"prompts":[` + r.prompts + `]}`)
		default:
			res.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		if err := conn.Write(ctx, res); err != nil {
			return
		}
	}
}

func TestACatalogueEntryTheSDKCannotServeIsADiagnostic(t *testing.T) {
	raw := &rawCatalogue{
		resources: []string{`{"uri":"memo://ok","name":"ok"},{"uri":"relative/path","name":"rel"},{"uri":"memo://%zz","name":"bad"},{"uri":"memo://ok","name":"again"}`},
		templates: `{"uriTemplate":"memo://t/{id}","name":"t"},{"uriTemplate":"memo://t/{id","name":"open"},{"uriTemplate":"{id}/x","name":"rel"},{"uriTemplate":"memo://t/{id}","name":"twice"}`,
		prompts:   `{"name":"a.b"},{"name":"a b"},{"name":"fine"},{"name":""}`,
	}
	client, diags := mcp.Connect(context.Background(), engine.New(), []mcp.ServerSpec{{Name: "r", Command: "unused"}}, mcp.Options{Dial: raw.dial})
	defer client.Close()
	var got []string
	for _, d := range diags {
		if !d.IsTool() {
			t.Errorf("diagnostic %q is about the server, want one about its catalogue", d.Error())
		}
		got = append(got, d.Error())
	}
	want := []string{
		`resource "relative/path": not re-exported: the URI is not absolute (no scheme)`,
		`resource "memo://%zz": not re-exported: not a URI: parse "memo://%zz": invalid URL escape "%zz"`,
		`resource "memo://ok": not re-exported: the server lists it twice`,
		`resource template "memo://t/{id": not re-exported: not a URI template: ` + templateErr(t, "memo://t/{id"),
		`resource template "{id}/x": not re-exported: not a URI template: it is not absolute (no scheme)`,
		`resource template "memo://t/{id}": not re-exported: the server lists it twice`,
		`prompt "a.b": not imported: its name maps to "r__a_b", as the prompt "a b"'s does`,
		`prompt "a b": not imported: its name maps to "r__a_b", as the prompt "a.b"'s does`,
		`prompt "": not imported: tool name "" is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cat, _ := client.Catalog()
	if len(cat.Resources) != 1 || cat.Resources[0].Resource.Name != "r__ok" ||
		len(cat.Templates) != 1 || cat.Templates[0].Template.Name != "r__t" ||
		len(cat.Prompts) != 1 || cat.Prompts[0].Prompt.Name != "r__fine" || cat.Prompts[0].Name != "fine" {
		t.Errorf("catalogue %+v, want r__ok, r__t and r__fine", cat)
	}
}

// templateErr is the SDK's URI template parser's reason for tmpl.
func templateErr(t *testing.T, tmpl string) (reason string) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			reason = strings.TrimPrefix(e.(error).Error(), `URI template "`+tmpl+`" is invalid: `)
		}
	}()
	sdk.NewServer(&sdk.Implementation{Name: "x", Version: "1"}, nil).AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: tmpl}, nil)
	t.Fatalf("the SDK takes the template %q", tmpl)
	return ""
}

func TestTheConnectTimeoutCoversTheCatalogue(t *testing.T) {
	for _, method := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		t.Run("a server that never answers "+method+" is not connected", func(t *testing.T) {
			raw := &rawCatalogue{stall: method}
			began := time.Now()
			client, diags := mcp.Connect(context.Background(), engine.New(), []mcp.ServerSpec{{Name: "r", Command: "unused"}},
				mcp.Options{Dial: raw.dial, ConnectTimeout: 200 * time.Millisecond, MinBackoff: time.Hour})
			took := time.Since(began)
			defer client.Close()
			if len(diags) != 1 || diags[0].IsTool() || !strings.Contains(diags[0].Reason, "cannot connect: listing the ") ||
				!strings.HasSuffix(diags[0].Reason, "context deadline exceeded") {
				t.Errorf("diagnostics %v, want the server not connected: listing ...: context deadline exceeded", diags)
			}
			if took < 200*time.Millisecond || took > 30*time.Second {
				t.Errorf("Connect took %v, want the connect timeout (200ms) and not much more", took)
			}
		})
	}
}

func TestACatalogueOverItsSizeIsCut(t *testing.T) {
	// Three pages of a 12 MiB resource each: the third passes the 32 MiB
	// bound.
	big := strings.Repeat("x", 12<<20)
	var res []string
	for _, uri := range []string{"memo://1", "memo://2", "memo://3"} {
		res = append(res, `{"uri":"`+uri+`","name":"n","description":"`+big+`"}`)
	}
	raw := &rawCatalogue{resources: res, templates: `{"uriTemplate":"memo://t/{id}","name":"t"}`, prompts: `{"name":"p"}`}
	client, diags := mcp.Connect(context.Background(), engine.New(), []mcp.ServerSpec{{Name: "r", Command: "unused"}}, mcp.Options{Dial: raw.dial})
	defer client.Close()
	want := []mcp.Diagnostic{{Server: "r", Kind: "resource", Capped: true,
		Reason: "the server's resources, resource templates and prompts pass 32 MiB; the rest are not re-exported"}}
	if !slices.Equal(diags, want) {
		t.Errorf("diagnostics %v, want %v", diags, want)
	}
	cat, _ := client.Catalog()
	if len(cat.Resources) != 2 || len(cat.Templates) != 0 || len(cat.Prompts) != 0 {
		t.Errorf("catalogue of %d resources, %d templates, %d prompts; want the first 2 resources alone",
			len(cat.Resources), len(cat.Templates), len(cat.Prompts))
	}
}
