package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// listServer is an MCP server written on the wire, for what the SDK's
// server cannot send (a tool's execution field) or would not do (stall in
// the middle of a listing). Its tools/list pages are pages, the cursor of
// page i being "i"; the page numbered stall is never answered.
type listServer struct {
	pages  [][]string // each tool's JSON, per page
	stall  int        // the page never answered; -1 for none
	listed atomic.Int32
}

// toolsJSON is the JSON of tools named prefix0… with an object schema.
func toolsJSON(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"name":"%s%d","inputSchema":{"type":"object"}}`, prefix, i)
	}
	return out
}

func (r *listServer) dial(ctx context.Context, _ mcp.ServerSpec) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	conn, err := st.Connect(ctx)
	if err != nil {
		return nil, err
	}
	go r.serve(conn)
	return ct, nil
}

func (r *listServer) serve(conn sdk.Connection) {
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
		res := &jsonrpc.Response{ID: req.ID}
		switch req.Method {
		case "initialize":
			res.Result = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(req.Params, &p)
			i, _ := strconv.Atoi(p.Cursor)
			r.listed.Add(1)
			if i == r.stall {
				continue // never answered
			}
			page := `{"tools":[` + strings.Join(r.pages[i], ",") + `]`
			if i+1 < len(r.pages) {
				page += `,"nextCursor":"` + strconv.Itoa(i+1) + `"`
			}
			res.Result = json.RawMessage(page + "}")
		default:
			res.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		if err := conn.Write(ctx, res); err != nil {
			return
		}
	}
}

// importedNames is the names of svc's tools.
func importedNames(svc *engine.Service) map[string]bool {
	names := map[string]bool{}
	for _, d := range svc.Global().Definitions(nil) {
		names[d.Name] = true
	}
	return names
}

func TestListingCap(t *testing.T) {
	tests := []struct {
		name      string
		pages     [][]string
		maxTools  int
		wantTools int
		wantPages int32
		wantDiag  string
	}{
		{"a listing under the cap imports every tool", [][]string{toolsJSON("a", 3), toolsJSON("b", 3)}, 7, 6, 2, ""},
		{"a listing of exactly the cap imports every tool", [][]string{toolsJSON("a", 3), toolsJSON("b", 4)}, 7, 7, 2, ""},
		{"a listing past the cap stops at the page that passes it", [][]string{toolsJSON("a", 3), toolsJSON("b", 3), toolsJSON("c", 3), toolsJSON("d", 3), toolsJSON("e", 3)}, 7, 7, 3,
			"the server lists more than 7 tools; the rest are not imported"},
		{"the default cap is 10000 tools", [][]string{toolsJSON("a", 4000), toolsJSON("b", 4000), toolsJSON("c", 4000), toolsJSON("d", 4000)}, 0, 10000, 3,
			"the server lists more than 10000 tools; the rest are not imported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := &listServer{pages: tt.pages, stall: -1}
			svc := engine.New()
			client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "big", Command: "unused", MaxTools: tt.maxTools}}, mcp.Options{Dial: raw.dial})
			defer client.Close()
			if got := len(importedNames(svc)); got != tt.wantTools {
				t.Errorf("%d tools imported, want %d", got, tt.wantTools)
			}
			if got := raw.listed.Load(); got != tt.wantPages {
				t.Errorf("%d pages listed, want %d", got, tt.wantPages)
			}
			if tt.wantDiag == "" {
				if len(diags) != 0 {
					t.Errorf("diagnostics %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("diagnostics %v, want one", diags)
			}
			d := diags[0]
			if d.Error() != tt.wantDiag || d.Server != "big" || !d.Capped || !d.IsTool() {
				t.Errorf("diagnostic %+v (%q), want %q, capped, about the tools of a reached server", d, d.Error(), tt.wantDiag)
			}
			// The first tools are the ones imported.
			if names := importedNames(svc); !names["big__a0"] || !names["big__b0"] {
				t.Errorf("the first tools are not all imported: big__a0 %v, big__b0 %v", names["big__a0"], names["big__b0"])
			}
		})
	}
}

func TestListingStallsWithinTheConnectTimeout(t *testing.T) {
	t.Run("a server that stalls mid-listing ends the attempt at the connect timeout", func(t *testing.T) {
		raw := &listServer{pages: [][]string{toolsJSON("a", 2), toolsJSON("b", 2), toolsJSON("c", 2)}, stall: 1}
		svc := engine.New()
		const timeout = 200 * time.Millisecond
		began := time.Now()
		client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "slow", Command: "unused"}},
			mcp.Options{Dial: raw.dial, ConnectTimeout: timeout, MinBackoff: time.Hour})
		took := time.Since(began)
		defer client.Close()
		// Generous bounds: not before the timeout, and long before the
		// test's own.
		if took < timeout || took > 30*time.Second {
			t.Errorf("Connect took %v, want from %v to 30s", took, timeout)
		}
		want := "cannot connect: listing the tools: context deadline exceeded"
		if len(diags) != 1 || diags[0].Error() != want || diags[0].IsTool() {
			t.Errorf("diagnostics %v, want the server's %q", diags, want)
		}
		if got := raw.listed.Load(); got != 2 {
			t.Errorf("%d pages requested, want 2", got)
		}
		if names := importedNames(svc); len(names) != 0 {
			t.Errorf("tools %v imported from a listing that did not end", names)
		}
	})
}

func TestTaskSupport(t *testing.T) {
	tool := func(name, execution string) string {
		s := `{"name":"` + name + `","inputSchema":{"type":"object"}`
		if execution != "" {
			s += `,"execution":` + execution
		}
		return s + "}"
	}
	raw := &listServer{stall: -1, pages: [][]string{
		{tool("plain", ""), tool("optional", `{"taskSupport":"optional"}`), tool("forbidden", `{"taskSupport":"forbidden"}`)},
		{tool("required", `{"taskSupport":"required"}`), tool("empty", `{}`)},
	}}
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "tasks", Command: "unused"}}, mcp.Options{Dial: raw.dial})
	defer client.Close()
	names := importedNames(svc)
	for _, name := range []string{"plain", "optional", "forbidden", "empty"} {
		t.Run("a tool with taskSupport "+name+" is imported", func(t *testing.T) {
			if !names["tasks__"+name] {
				t.Errorf("tasks__%s is not imported: %v", name, names)
			}
		})
	}
	t.Run("a tool requiring tasks is a diagnostic, not a tool", func(t *testing.T) {
		if names["tasks__required"] {
			t.Error("tasks__required is imported")
		}
		want := `tool "required": not imported: it requires task-augmented execution (execution.taskSupport "required"), which dsh does not support`
		if len(diags) != 1 || diags[0].Error() != want || diags[0].Tool != "required" {
			t.Errorf("diagnostics %v, want %q", diags, want)
		}
	})
}
