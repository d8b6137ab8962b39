package lua

import (
	"errors"
	"fmt"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// The errors of exec.elicit: its arguments, and asking once the body's call
// has returned.
var (
	errElicitMessage = errors.New("exec.elicit(message, schema): message must be a string")
	errElicitSchema  = errors.New("exec.elicit(message, schema): schema must be an object")
	errElicitOver    = errors.New("exec.elicit(message, schema): the call is over")
)

// elicitSchemaHint tells the conversion of an elicitation schema which empty
// tables are arrays: required, and a property's enum and enumNames.
var elicitSchemaHint = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
	dsl.Member{Key: "required", Value: arraySchema},
	dsl.Member{Key: "properties", Value: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "additionalProperties", Value: dsl.NewObject(
		dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
			dsl.Member{Key: "enum", Value: arraySchema}, dsl.Member{Key: "enumNames", Value: arraySchema})})})})})

// elicit is exec.elicit(message, schema) (with a dot or a colon): it puts
// the question to the user behind the body's caller (engine.Elicit under
// the body's ctx) and waits for the answer while the instance serves other
// calls, as tools.call does, then returns {action = ..., content = ...}
// (content nil unless the user accepted). It raises the Go error's text
// when asking fails or the call is cancelled meanwhile.
func (i *instance) elicit(L *glua.LState, l *liveExec) int {
	arg := i.selfArg(L, l.ud)
	q, err := i.elicitArgs(L.Get(arg), L.Get(arg+1))
	if err != nil {
		i.throw(L, err)
	}
	if l.settled() {
		i.throw(L, errElicitOver)
	}
	ctx, done := l.frame.hostCtx(i.kill)
	v, err := i.await(func() (any, error) { return hostapi.Elicit(ctx, q) })
	done()
	if err != nil {
		i.throw(L, err)
	}
	r := v.(engine.ElicitResult)
	t := L.CreateTable(0, 2)
	t.RawSetString("action", glua.LString(r.Action))
	if r.Action == "accept" && r.Content != nil {
		c, err := i.conv.TryToLua(r.Content)
		if err != nil {
			i.throw(L, fmt.Errorf("exec.elicit(message, schema): the answer's %w", err))
		}
		t.RawSetString("content", c)
	}
	L.Push(t)
	return 1
}

// elicitArgs reads exec.elicit(message, schema): message a string, schema
// nil or a table converted as a tool's result is (members in sorted key
// order, as every Lua table converts).
func (i *instance) elicitArgs(message, schema glua.LValue) (engine.Elicitation, error) {
	var q engine.Elicitation
	m, ok := message.(glua.LString)
	if !ok {
		return q, errElicitMessage
	}
	q.Message = string(m)
	if schema == glua.LNil {
		return q, nil
	}
	if _, ok := schema.(*glua.LTable); !ok {
		return q, errElicitSchema
	}
	g, err := i.conv.ToGo(schema, "schema", elicitSchemaHint)
	if err != nil {
		return q, fmt.Errorf("exec.elicit(message, schema): %w", err)
	}
	o, ok := g.(*dsl.Object)
	if !ok {
		return q, errElicitSchema
	}
	q.Schema = o
	return q, nil
}
