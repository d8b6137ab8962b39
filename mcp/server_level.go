package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevels are the protocol's logging levels, least severe first (RFC
// 5424's syslog severities).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkSetLevel is a receiving middleware that answers a logging/setLevel
// naming a level the protocol does not define with -32602 (invalid
// params), where the SDK would accept it and answer {}.
func checkSetLevel(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "logging/setLevel" {
			if err := validLevel(req.GetParams()); err != nil {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}

// validLevel returns the -32602 error of logging/setLevel params whose
// level is not one of logLevels, or nil. (The params are read through
// their JSON form: their Go type is deprecated with the logging feature.)
func validLevel(params sdk.Params) error {
	var p struct {
		Level *string `json:"level"`
	}
	if b, err := json.Marshal(params); err == nil {
		_ = json.Unmarshal(b, &p)
	}
	if p.Level != nil && slices.Contains(logLevels, *p.Level) {
		return nil
	}
	level := "no level"
	if p.Level != nil && *p.Level != "" {
		level = fmt.Sprintf("unknown level %q", *p.Level)
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("logging/setLevel: %s; want one of debug, info, notice, warning, error, critical, alert, emergency", level),
	}
}
