package hostapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

func TestAPolicyErrorReads(t *testing.T) {
	coded := engine.NewError("HarnessError", "DENIED", "guard store is down")
	tests := []struct {
		name           string
		raised         hostapi.Raised
		message, where string
	}{
		{"an interpreter's error in Lua gives the file and line",
			hostapi.Raised{Err: errors.New("attempt to index a non-table object(nil) with key 'find'"), File: "policy.lua", Line: 12, Fault: true, Text: "attempt to index a non-table object(nil) with key 'find'"},
			`policy.lua:12: attempt to index a non-table object(nil) with key 'find' (plugin "policy.lua")`,
			`policy.lua:12: attempt to index a non-table object(nil) with key 'find' (plugin "policy.lua")`},
		{"an interpreter's error in JavaScript gives the column and the error's type",
			hostapi.Raised{Err: errors.New("Cannot read property 'x' of undefined"), File: "lib/a.js", Line: 3, Col: 9, Fault: true, Text: "TypeError: Cannot read property 'x' of undefined"},
			`lib/a.js:3:9: TypeError: Cannot read property 'x' of undefined (plugin "policy.lua")`,
			`lib/a.js:3:9: TypeError: Cannot read property 'x' of undefined (plugin "policy.lua")`},
		{"an interpreter's error without a position still names the plugin",
			hostapi.Raised{Err: errors.New("boom"), Fault: true, Text: "RangeError: boom"},
			`RangeError: boom (plugin "policy.lua")`,
			`RangeError: boom (plugin "policy.lua")`},
		{"an error raised on purpose reads as its message; the log line says where",
			hostapi.Raised{Err: errors.New("gate interrupted"), File: "policy.lua", Line: 3},
			"gate interrupted",
			`policy.lua:3: gate interrupted (plugin "policy.lua")`},
		{"a coded error raised on purpose reads as its message",
			hostapi.Raised{Err: coded, File: "policy.lua", Line: 3},
			"guard store is down",
			`policy.lua:3: guard store is down (plugin "policy.lua")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe := &hostapi.PolicyError{Raised: &tt.raised, Plugin: "policy.lua"}
			if got := pe.Error(); got != tt.message {
				t.Errorf("Error() %q\nwant    %q", got, tt.message)
			}
			if got := pe.Located(); got != tt.where {
				t.Errorf("Located() %q\nwant      %q", got, tt.where)
			}
		})
	}
}

func TestPolicyFailure(t *testing.T) {
	svc := engine.New()
	var seen *engine.Execution
	svc.Global().OnPreExecute(func(_ context.Context, e *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		seen = e
		return engine.Deny("stop"), nil
	})
	svc.Call(context.Background(), engine.Input{CallID: "c7", Name: "t", Arguments: dsl.NewObject()})
	if seen == nil {
		t.Fatal("no execution")
	}
	coded := engine.NewError("HarnessError", "DENIED", "guard store is down")
	tests := []struct {
		name string
		err  error
		want string // the failure's message
		logs string
	}{
		{"an error the script raised is logged with where", &hostapi.Raised{Err: coded, File: "g.js", Line: 2, Col: 5},
			"guard store is down", `WARN a guard failed: g.js:2:5: guard store is down (plugin "g.js") tool=t callId=c7`},
		{"an error the script did not raise is logged too", errors.New("a guard timed out after 50ms"),
			"a guard timed out after 50ms", `WARN a guard failed: a guard timed out after 50ms (plugin "g.js") tool=t callId=c7`},
		{"a failure reported by another policy is not logged again", &hostapi.Raised{Err: &hostapi.PolicyError{Raised: &hostapi.Raised{Err: coded}, Plugin: "other.js"}},
			"guard store is down", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, nil))
			err := hostapi.PolicyFailure(context.Background(), log, "g.js", "a guard", seen, tt.err)
			if got := err.Error(); got != tt.want {
				t.Errorf("message %q, want %q", got, tt.want)
			}
			var c engine.CodedError
			if errors.As(tt.err, &c) && (!errors.As(err, &c) || c.Code() != "DENIED") {
				t.Errorf("the failure lost its code: %v", err)
			}
			got := ""
			if buf.Len() > 0 {
				var r struct{ Level, Msg, Tool, CallID string }
				if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
					t.Fatalf("log %q: %v", buf.String(), err)
				}
				got = r.Level + " " + r.Msg + " tool=" + r.Tool + " callId=" + r.CallID
			}
			if got != tt.logs {
				t.Errorf("logs %q\nwant %q", got, tt.logs)
			}
		})
	}
}
