package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeNoSession is the JSON-RPC error code of a request POSTed without an
// Mcp-Session-Id header when it needs one: -32600, invalid request, sent
// with HTTP 400 Bad Request as the streamable HTTP transport asks of a
// server that requires sessions.
const CodeNoSession = jsonrpc.CodeInvalidRequest

// noSessionMessage is the message of a [CodeNoSession] error.
const noSessionMessage = "Bad Request: the request has no Mcp-Session-Id header; send initialize first and then the session ID it returns"

// sessionless checks a POST that carries no Mcp-Session-Id header, which
// the SDK would take for the start of a new session: a request (not a
// notification or a response) other than initialize or ping, that does
// not follow the sessionless protocol (its _meta naming a protocol
// version), is answered here with 400 and a [CodeNoSession] error, where
// the SDK would answer an error of code 0. It reports whether the request
// goes on, its body restored; the body, read whole, is bounded by the cap
// as the SDK bounds it.
func (g *guard) sessionless(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, g.max+1))
	if err != nil {
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	if int64(len(body)) > g.max {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" || !validID(msg.ID) {
		return true // not a request: the SDK answers it (a batch, a notification, bad JSON)
	}
	switch msg.Method {
	case "initialize", "ping":
		return true
	}
	if _, ok := msg.Params.Meta[sdk.MetaKeyProtocolVersion]; ok {
		return true // the sessionless protocol: no session to name
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", msg.ID, jsonrpc.Error{Code: CodeNoSession, Message: noSessionMessage}})
	if err != nil {
		http.Error(w, noSessionMessage, http.StatusBadRequest)
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
	return false
}

// validID reports whether id is a JSON-RPC request ID: a string or a
// number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}
