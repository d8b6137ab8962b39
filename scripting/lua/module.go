package lua

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"weak"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// dshModule builds the dsh module of one instance.
func (i *instance) dshModule(L *glua.LState) *glua.LTable {
	m := L.CreateTable(0, 16)
	m.RawSetString("define_tool", L.NewFunction(i.defineTool))
	m.RawSetString("tools", i.toolsTable(L, nil))
	m.RawSetString("on", L.NewFunction(func(L *glua.LState) int { return i.on(L, nil) }))
	m.RawSetString("log", i.logTable(L))
	m.RawSetString("instances", L.NewFunction(func(L *glua.LState) int {
		n, err := instanceCount(L.Get(1))
		if err != nil {
			i.throw(L, err)
		}
		i.wantInstances = n
		return 0
	}))
	m.RawSetString("null", i.conv.Null())
	m.RawSetString("array", L.NewFunction(func(L *glua.LState) int { return i.mark(L, true) }))
	m.RawSetString("object", L.NewFunction(func(L *glua.LState) int { return i.mark(L, false) }))
	for k := range i.pool.host.Modules {
		mod := &i.pool.host.Modules[k]
		if _, taken := dshFields[mod.Name]; taken || mod.Name == "" {
			continue
		}
		m.RawSetString(mod.Name, i.hostModule(L, mod))
	}
	return m
}

// dshFields are the dsh module's own fields: a host module cannot take them.
var dshFields = map[string]bool{"define_tool": true, "tools": true, "on": true, "log": true, "instances": true,
	"null": true, "array": true, "object": true}

// mark is dsh.array(t) and dsh.object(t): it marks t (a new table when
// absent) and returns it.
func (i *instance) mark(L *glua.LState, array bool) int {
	var t *glua.LTable
	switch v := L.Get(1).(type) {
	case *glua.LTable:
		t = v
		if t.Metatable != glua.LNil && !i.conv.IsArray(t) && !i.conv.IsObject(t) {
			i.throw(L, errors.New("dsh.array/dsh.object cannot mark a table that has a metatable"))
		}
	case *glua.LNilType:
		t = L.NewTable()
	default:
		i.throw(L, fmt.Errorf("dsh.array/dsh.object takes a table, not a %s", v.Type()))
	}
	if array {
		i.conv.MarkArray(t)
	} else {
		i.conv.MarkObject(t)
	}
	L.Push(t)
	return 1
}

func instanceCount(v glua.LValue) (int, error) {
	n, ok := v.(glua.LNumber)
	return hostapi.InstanceCount(float64(n), ok)
}

// logTable builds dsh.log.
func (i *instance) logTable(L *glua.LState) *glua.LTable {
	t := L.CreateTable(0, 4)
	for _, level := range []string{"debug", "info", "warn", "error"} {
		t.RawSetString(level, L.NewFunction(func(L *glua.LState) int {
			var fields []any
			if ft, ok := L.Get(2).(*glua.LTable); ok {
				if g, err := i.conv.ToGo(ft, "fields", nil); err == nil {
					if o, ok := g.(*dsl.Object); ok {
						for k, v := range o.All() {
							fields = append(fields, k, v)
						}
					}
				}
			}
			i.logLine(level, i.safeString(L.Get(1)), fields)
			return 0
		}))
	}
	return t
}

// print is the plugin's print: a line in the host's log at info level.
func (i *instance) print(L *glua.LState) int {
	var b strings.Builder
	for k := 1; k <= L.GetTop(); k++ {
		if k > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(i.safeString(L.Get(k)))
	}
	i.logLine("info", b.String(), nil)
	return 0
}

// safeString renders a value for logs without running script code: strings
// and numbers as Lua prints them, tables as JSON when they are lossless.
func (i *instance) safeString(v glua.LValue) string {
	switch x := v.(type) {
	case glua.LString:
		return string(x)
	case glua.LNumber, glua.LBool, *glua.LNilType:
		return x.String()
	case *glua.LTable:
		if g, err := i.conv.ToGo(x, "value", nil); err == nil {
			if b, err := dsl.Marshal(g); err == nil {
				return string(b)
			}
		}
		return "table"
	case *glua.LFunction:
		return "function"
	case *glua.LUserData:
		if i.conv.IsNull(x) {
			return "null"
		}
		return "userdata"
	}
	return v.Type().String()
}

// logLine logs a script's line under the ctx of the call it runs for (see
// logContext).
func (i *instance) logLine(level, msg string, fields []any) {
	hostapi.Log(i.logContext(), i.pool.log, level, msg, fields)
}

// logContext is the ctx a script's log line is made under: that of the
// innermost call running on the instance (a body, listener, wrapper or
// guard; a body's render made in its trip counts for the body), the
// background for the top level and outside any call. Called on the owner
// goroutine.
func (i *instance) logContext() context.Context {
	if f := i.current(); f != nil && f.logCtx != nil {
		return f.logCtx
	}
	return context.Background()
}

// site returns where in the plugin's source the current Go function was
// called from: the innermost frame of the plugin's own file.
func (i *instance) site(L *glua.LState) scripting.Site {
	for level := 1; level < 64; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, glua.LNil); err != nil {
			continue
		}
		if dbg.Source == i.pool.src.Rel && dbg.CurrentLine > 0 {
			return scripting.Site{Line: dbg.CurrentLine}
		}
	}
	return scripting.Site{}
}

// disposer wraps a Go disposer as a Lua function. Disposing after the top
// level emits tools/change, which may call back into the plugin: it runs
// while the instance serves its queue. An effect made after the top level (a
// dynamic key, see key) has its callbacks forgotten when disposed, so
// registering and disposing from calls does not grow the instance; top-level
// keys stay, replays count on them.
func (i *instance) disposer(L *glua.LState, d engine.Disposer, keys ...int) *glua.LFunction {
	return L.NewFunction(func(L *glua.LState) int {
		if d != nil {
			if i.topDone {
				_, _ = i.await(func() (any, error) { d(); return nil, nil })
			} else {
				d()
			}
		}
		i.forget(keys...)
		return 0
	})
}

// forget drops the dynamic keys' callbacks and pins.
func (i *instance) forget(keys ...int) { hostapi.Forget(i.callbacks, i.pool.unpin, keys...) }

// effect makes an engine effect that may emit tools/change: after the top
// level, while the instance serves its queue.
func (i *instance) effect(f func() (engine.Disposer, error)) (engine.Disposer, error) {
	if !i.topDone {
		return f()
	}
	v, err := i.await(func() (any, error) { return f() })
	d, _ := v.(engine.Disposer)
	return d, err
}

// toolsTable builds dsh.tools (agent nil) or the view tools.scope(id) returns.
func (i *instance) toolsTable(L *glua.LState, agent *engine.Agent) *glua.LTable {
	t := L.CreateTable(0, 8)
	t.RawSetString("register", L.NewFunction(func(L *glua.LState) int { return i.register(L, agent) }))
	t.RawSetString("guard", L.NewFunction(func(L *glua.LState) int { return i.guard(L, agent) }))
	t.RawSetString("restrict", L.NewFunction(func(L *glua.LState) int { return i.restrict(L, agent) }))
	t.RawSetString("get", L.NewFunction(func(L *glua.LState) int { return i.get(L, agent) }))
	t.RawSetString("schemas", L.NewFunction(func(L *glua.LState) int { return i.schemas(L, agent) }))
	t.RawSetString("call", L.NewFunction(i.callTool))
	if agent == nil {
		t.RawSetString("scope", L.NewFunction(func(L *glua.LState) int {
			id, ok := L.Get(1).(glua.LString)
			if !ok {
				i.throw(L, errors.New("tools.scope(agent_id) needs an agent id string"))
			}
			a := i.pool.plugin.Agent(string(id))
			view := i.toolsTable(L, a)
			view.RawSetString("on", L.NewFunction(func(L *glua.LState) int { return i.on(L, a) }))
			L.Push(view)
			return 1
		}))
	}
	return t
}

// defined is what define_tool knows of a definition it built: the compiled
// parameter validator, and the compiled schemas with the tables standing for
// them, so that register uses them as compiled (in the DSL's key order)
// while the script left them in place.
type defined struct {
	params              *dsl.Schema
	paramsLua, outLua   glua.LValue
	paramsJSON, outJSON any
}

// setDefined remembers what define_tool compiled for the definition table
// def, without keeping def alive: entries of collected tables are swept as
// the map grows.
func (i *instance) setDefined(def *glua.LTable, d *defined) {
	hostapi.SetWeak(i.defined, &i.swept, def, d)
}

// definedOf is what define_tool compiled for def, or nil.
func (i *instance) definedOf(def *glua.LTable) *defined { return i.defined[weak.Make(def)] }

// definitionFields are the callbacks define_tool copies onto the definition.
var definitionFields = []string{"execute", "timeout_ms", "is_concurrency_safe", "present_call", "present_result", "finalize_content", "project_content"}

// defineTool is dsh.define_tool: the design's defineTool (§4.7) for Lua.
func (i *instance) defineTool(L *glua.LState) int {
	opts, ok := L.Get(1).(*glua.LTable)
	if !ok {
		i.throw(L, errors.New("dsh.define_tool(options) needs an options table"))
	}
	name := opts.RawGetString("name")
	nameStr := ""
	if s, ok := name.(glua.LString); ok {
		nameStr = string(s)
	}
	if tv := opts.RawGetString("timeout_ms"); tv != glua.LNil {
		if !positiveFinite(tv) {
			i.throw(L, fmt.Errorf("defineTool(%s): timeoutMs must be a positive finite number", display.Line(nameStr, display.MaxName)))
		}
	}
	var spec any = dsl.NewObject()
	if pv := opts.RawGetString("parameters"); pv != glua.LNil {
		g, err := i.conv.ToGo(pv, "parameters", nil)
		if err != nil {
			i.throw(L, err)
		}
		spec = g
	}
	params, err := dsl.CompileParameterSpec(spec)
	if err != nil {
		i.throw(L, engine.SchemaError(nameStr, "parameters", err))
	}
	out, _ := opts.RawGetString("output").(*glua.LTable)
	if out == nil {
		i.throw(L, fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(nameStr)))
	}
	outSpec, err := i.conv.ToGo(out.RawGetString("schema"), "schema", nil)
	if err != nil {
		i.throw(L, err)
	}
	outSchema, err := dsl.CompileValueSpec(outSpec)
	if err != nil {
		i.throw(L, engine.SchemaError(nameStr, "output.schema", err))
	}
	compiled, err := dsl.Compile(params)
	if err != nil {
		i.throw(L, engine.SchemaError(nameStr, "parameters", err))
	}
	def := L.CreateTable(0, 10)
	def.RawSetString("name", name)
	def.RawSetString("description", opts.RawGetString("description"))
	d := &defined{params: compiled, paramsLua: i.conv.ToLua(params), outLua: i.conv.ToLua(outSchema), paramsJSON: params, outJSON: outSchema}
	def.RawSetString("parameters", d.paramsLua)
	o := L.CreateTable(0, 3)
	o.RawSetString("schema", d.outLua)
	o.RawSetString("render", out.RawGetString("render"))
	if pm := out.RawGetString("presentation_meta"); pm != glua.LNil {
		o.RawSetString("presentation_meta", pm)
	}
	def.RawSetString("output", o)
	for _, k := range definitionFields {
		if v := opts.RawGetString(k); v != glua.LNil {
			def.RawSetString(k, v)
		}
	}
	i.setDefined(def, d)
	L.Push(def)
	return 1
}

func positiveFinite(v glua.LValue) bool {
	n, ok := v.(glua.LNumber)
	f := float64(n)
	return ok && !math.IsNaN(f) && !math.IsInf(f, 0) && f > 0
}

func isFunction(v glua.LValue) bool {
	_, ok := v.(*glua.LFunction)
	return ok
}

// register is tools.register(def, {when}).
func (i *instance) register(L *glua.LState, agent *engine.Agent) int {
	obj, ok := L.Get(1).(*glua.LTable)
	if !ok {
		i.throw(L, errors.New("tools.register(definition) needs a definition table"))
	}
	d := i.definedOf(obj)
	def, err := i.definition(obj, d)
	if err != nil {
		i.throw(L, err)
	}
	key := i.key(obj)
	i.bindDefinition(def, key, d)
	keys := []int{key}
	var opts []engine.RegisterOption
	if o, ok := L.Get(2).(*glua.LTable); ok {
		if w := o.RawGetString("when"); isFunction(w) {
			wkey := i.key(w)
			keys = append(keys, wkey)
			opts = append(opts, engine.When(i.pool.whenFunc(wkey)))
		}
	}
	if i.replay {
		L.Push(i.disposer(L, nil))
		return 1
	}
	site := i.site(L)
	dispose, err := i.effect(func() (engine.Disposer, error) { return i.pool.plugin.Register(site, agent, def, opts...) })
	if err != nil {
		i.forget(keys...)
		i.throw(L, err)
	}
	L.Push(i.disposer(L, dispose, keys...))
	return 1
}

// definition reads a definition table's data into an engine definition
// whose callbacks are bound later; d is define_tool's record, if obj came
// from it.
func (i *instance) definition(obj *glua.LTable, d *defined) (*engine.Definition, error) {
	def := &engine.Definition{}
	if n, ok := obj.RawGetString("name").(glua.LString); ok {
		def.Name = string(n)
	}
	// The name first, as the engine checks it: every later message quotes it.
	if err := engine.CheckToolName(def.Name); err != nil {
		return nil, err
	}
	if d, ok := obj.RawGetString("description").(glua.LString); ok {
		def.Description = string(d)
	}
	if pv := obj.RawGetString("parameters"); d != nil && pv == d.paramsLua {
		def.Parameters = d.paramsJSON
	} else if params, err := i.conv.ToGo(pv, "parameters", nil); err == nil {
		def.Parameters = params
	} else {
		def.Parameters = nonLossless{}
	}
	out, _ := obj.RawGetString("output").(*glua.LTable)
	mustDeclare := fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(def.Name))
	if out == nil || !isFunction(out.RawGetString("render")) {
		return nil, mustDeclare
	}
	if pm := out.RawGetString("presentation_meta"); pm != glua.LNil && !isFunction(pm) {
		return nil, mustDeclare
	}
	if sv := out.RawGetString("schema"); d != nil && sv == d.outLua {
		def.Output.Schema = d.outJSON
	} else {
		schema, err := i.conv.ToGo(sv, "schema", nil)
		if err != nil {
			return nil, engine.SchemaError(def.Name, "output.schema", schemaError(err))
		}
		def.Output.Schema = schema
	}
	if tv := obj.RawGetString("timeout_ms"); tv != glua.LNil {
		if !positiveFinite(tv) {
			return nil, fmt.Errorf("tool %s timeoutMs must be a positive finite number", display.Quote(def.Name))
		}
		def.Timeout = time.Duration(float64(tv.(glua.LNumber)) * float64(time.Millisecond))
	}
	return def, nil
}

// nonLossless stands for values a script gave that are not lossless JSON
// (see hostapi.NonLossless).
type nonLossless = hostapi.NonLossless

func schemaError(err error) error { return hostapi.SchemaError(err) }

// guard is tools.guard(fn).
func (i *instance) guard(L *glua.LState, agent *engine.Agent) int {
	fn := L.Get(1)
	if !isFunction(fn) {
		i.throw(L, errors.New("tools.guard(fn) needs a function"))
	}
	key := i.key(fn)
	if i.replay {
		L.Push(i.disposer(L, nil))
		return 1
	}
	d, err := i.pool.plugin.Guard(i.site(L), agent, i.pool.guardFunc(key))
	if err != nil {
		i.forget(key)
		i.throw(L, err)
	}
	L.Push(i.disposer(L, d, key))
	return 1
}

// filterSchema makes empty allow/deny tables arrays.
var filterSchema = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
	dsl.Member{Key: "allow", Value: arraySchema}, dsl.Member{Key: "deny", Value: arraySchema})})

var arraySchema = dsl.NewObject(dsl.Member{Key: "type", Value: "array"})

// restrict is tools.restrict({allow, deny}).
func (i *instance) restrict(L *glua.LState, agent *engine.Agent) int {
	v, err := i.conv.ToGo(L.Get(1), "filter", filterSchema)
	if err != nil {
		i.throw(L, err)
	}
	o, _ := v.(*dsl.Object)
	if o == nil {
		i.throw(L, errors.New("tools.restrict(filter) needs a filter table {allow?, deny?}"))
	}
	f, err := hostapi.Filter(o)
	if err != nil {
		i.throw(L, err)
	}
	i.seq++ // restrictions take a key too, so replays count alike
	if i.replay {
		L.Push(i.disposer(L, nil))
		return 1
	}
	site := i.site(L)
	d, err := i.effect(func() (engine.Disposer, error) { return i.pool.plugin.Restrict(site, agent, f) })
	if err != nil {
		i.throw(L, err)
	}
	L.Push(i.disposer(L, d))
	return 1
}

// get is tools.get(name): a copy of the visible tool's schema, or nil.
func (i *instance) get(L *glua.LState, agent *engine.Agent) int {
	name, ok := L.Get(1).(glua.LString)
	if !ok {
		i.throw(L, errors.New("tools.get(name) needs a tool name string"))
	}
	def := i.pool.plugin.Service().Scope(agent).Get(string(name))
	if def == nil {
		L.Push(glua.LNil)
		return 1
	}
	params, err := dsl.Snapshot(def.Parameters)
	if err != nil {
		params = nil
	}
	L.Push(i.conv.ToLua(dsl.NewObject(dsl.Member{Key: "name", Value: def.Name}, dsl.Member{Key: "description", Value: def.Description},
		dsl.Member{Key: "parameters", Value: params})))
	return 1
}

// schemas is tools.schemas().
func (i *instance) schemas(L *glua.LState, agent *engine.Agent) int {
	list, err := i.pool.plugin.Service().Scope(agent).Schemas()
	if err != nil {
		i.throw(L, err)
	}
	out := make([]any, len(list))
	for k, s := range list {
		out[k] = s.JSON()
	}
	L.Push(i.conv.ToLua(out))
	return 1
}

// callTool is tools.call(name, args, parent_exec): a nested call with the
// parent's token, root call id, agent and signal. It blocks the Lua code
// until the nested call settles; meanwhile the instance serves its queue, so
// the nested call may reach this plugin's own tools and listeners.
func (i *instance) callTool(L *glua.LState) int {
	name, ok := L.Get(1).(glua.LString)
	if !ok {
		i.throw(L, errors.New("tools.call(name, args, parent_exec) needs a tool name string"))
	}
	var args any = dsl.NewObject()
	if a := L.Get(2); a != glua.LNil {
		g, err := i.conv.ToGo(a, "arguments", nil)
		if err != nil {
			i.throw(L, err)
		}
		args = g
	}
	live := i.liveExec(L.Get(3))
	if live == nil || live.settled() {
		i.throw(L, errors.New("tools.call(name, args, parent_exec) needs the execution of the call it is made from"))
	}
	live.nested++
	in := engine.Input{
		CallID: callID(live.exec.CallID(), live.nested), RootCallID: live.exec.RootCallID(), Name: string(name), Arguments: args,
		Agent: live.exec.Agent(), Parent: live.exec.Token(), ToolSet: live.exec.ToolSet(),
	}
	svc := i.pool.plugin.Service()
	ctx := live.frame.caller
	v, err := i.await(func() (any, error) { return svc.Call(ctx, in), nil })
	if err != nil {
		i.throw(L, err)
	}
	L.Push(i.conv.ToLua(v.(*engine.Result).JSON()))
	return 1
}
