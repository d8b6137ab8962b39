package js

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"weak"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
)

// setup installs the prelude, console and the dsh module in a fresh runtime.
func (i *instance) setup(vm *goja.Runtime, prog *goja.Program) error {
	// The boundary captures its intrinsics before any script runs.
	realm, err := jsvalue.Prepare(vm)
	if err != nil {
		return err
	}
	i.realm = realm
	fv, err := vm.RunProgram(prog)
	if err != nil {
		return err
	}
	fn, _ := goja.AssertFunction(fv)
	side, err := fn(goja.Undefined(), vm.GlobalObject(), vm.Get("setTimeout"), vm.Get("clearTimeout"))
	if err != nil {
		return err
	}
	i.abort = side.ToObject(vm)
	log := i.logObject(vm)
	console := vm.NewObject()
	for _, m := range []string{"log", "info", "warn", "error", "debug"} {
		level := map[string]string{"log": "info", "info": "info", "warn": "warn", "error": "error", "debug": "debug"}[m]
		_ = console.Set(m, func(call goja.FunctionCall) goja.Value {
			i.logLine(level, i.joinArgs(call.Arguments), nil)
			return goja.Undefined()
		})
	}
	_ = vm.Set("console", console)
	i.dsh = vm.NewObject()
	_ = i.dsh.Set("defineTool", i.defineTool)
	_ = i.dsh.Set("tools", i.toolsObject(vm, nil))
	_ = i.dsh.Set("on", func(call goja.FunctionCall) goja.Value { return i.on(vm, nil, call) })
	_ = i.dsh.Set("log", log)
	_ = i.dsh.Set("instances", func(call goja.FunctionCall) goja.Value {
		n, err := instanceCount(call.Argument(0))
		if err != nil {
			throw(vm, err)
		}
		i.wantInstances = n
		return goja.Undefined()
	})
	_ = i.dsh.Set("default", i.dsh)
	_ = i.dsh.Set("__esModule", true)
	return nil
}

func (i *instance) joinArgs(args []goja.Value) string {
	s := ""
	for k, a := range args {
		if k > 0 {
			s += " "
		}
		s += i.safeString(a)
	}
	return s
}

// safeString renders a value for logs without calling script code for objects.
func (i *instance) safeString(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); isFn {
			return "[function]"
		}
		if g, err := jsonOf(i.vm, o); err == nil {
			return g
		}
		return "[object " + o.ClassName() + "]"
	}
	return v.String()
}

func jsonOf(vm *goja.Runtime, o *goja.Object) (string, error) {
	if vm == nil {
		return "", errors.New("no runtime")
	}
	g, err := toGo(vm, o, "value")
	if err != nil {
		return "", err
	}
	b, err := dsl.Marshal(g)
	return string(b), err
}

func (i *instance) logObject(vm *goja.Runtime) *goja.Object {
	log := vm.NewObject()
	for _, level := range []string{"debug", "info", "warn", "error"} {
		_ = log.Set(level, func(call goja.FunctionCall) goja.Value {
			var fields []any
			if f, ok := call.Argument(1).(*goja.Object); ok {
				if g, err := toGo(vm, f, "fields"); err == nil {
					if o, ok := g.(*dsl.Object); ok {
						for k, v := range o.All() {
							fields = append(fields, k, v)
						}
					}
				}
			}
			msg := call.Argument(0)
			if goja.IsString(msg) {
				// Only what a line carries is read (hostapi.MaxLogMessage).
				i.logLine(level, eventloop.CutText(msg, hostapi.MaxLogMessage), fields)
				return goja.Undefined()
			}
			i.logLine(level, i.safeString(msg), fields)
			return goja.Undefined()
		})
	}
	return log
}

// logLine logs a script's line under the ctx of the call it runs for (see
// logContext).
func (i *instance) logLine(level, msg string, fields []any) {
	hostapi.Log(i.logContext(), i.pool.log, level, msg, fields)
}

// logContext is the ctx a script's log line is made under: that of the
// call on whose behalf the loop runs the current entry (a body, listener,
// wrapper or guard job, the promise jobs it drains, a settlement of host
// work it started, a timer it set, even once the call is over); the
// background for the top level and for entries of no call. Called on the
// loop.
func (i *instance) logContext() context.Context {
	ctx := i.loop.OwnerContext()
	if _, top := ctx.(topLevel); ctx == nil || top {
		return context.Background()
	}
	return ctx
}

// topLevel is the ctx the top level runs under (its load's): it marks the
// top level's entries, whose log lines are made under the background.
type topLevel struct{ context.Context }

// throw raises err in the script as an Error; coded errors carry name and code.
func throw(vm *goja.Runtime, err error) {
	e := vm.NewGoError(err)
	var coded engine.CodedError
	if errors.As(err, &coded) {
		_ = e.Set("name", coded.Name())
		_ = e.Set("code", coded.Code())
	} else {
		_ = e.Set("name", "Error")
	}
	_ = e.Set("message", err.Error())
	panic(e)
}

// site returns where in the plugin's source the current native call was made.
func (i *instance) site(vm *goja.Runtime) scripting.Site {
	for _, f := range vm.CaptureCallStack(16, nil) {
		p := f.Position()
		if f.SrcName() != i.pool.src.Rel || p.Line == 0 {
			continue
		}
		col := p.Column
		if p.Line == 1 {
			col -= len(moduleHead)
		}
		if _, line, c, ok := i.pool.main.Original(p.Line, col); ok {
			return scripting.Site{Line: line, Col: c}
		}
		return scripting.Site{Line: p.Line, Col: col}
	}
	return scripting.Site{}
}

// disposer wraps a Go disposer as a script function.
func disposer(vm *goja.Runtime, d engine.Disposer) goja.Value {
	return vm.ToValue(func(goja.FunctionCall) goja.Value {
		if d != nil {
			d()
		}
		return goja.Undefined()
	})
}

// effectDisposer is disposer for an effect whose callbacks are stored under
// keys: an effect made after the top level (a dynamic key, see key) has its
// callbacks forgotten when disposed, so registering and disposing from calls
// does not grow the instance. Top-level keys stay: replays count on them.
func (i *instance) effectDisposer(vm *goja.Runtime, d engine.Disposer, keys ...int) goja.Value {
	return vm.ToValue(func(goja.FunctionCall) goja.Value {
		if d != nil {
			d()
		}
		i.forget(keys...)
		return goja.Undefined()
	})
}

// forget drops the dynamic keys' callbacks and pins.
func (i *instance) forget(keys ...int) {
	hostapi.Forget(i.callbacks, i.pool.unpin, keys...)
	for _, k := range keys {
		if _, ok := i.callbacks[k]; !ok {
			delete(i.caches.callables, k)
		}
	}
}

// toolsObject builds `tools` (agent nil) or the view tools.scope(id) returns.
func (i *instance) toolsObject(vm *goja.Runtime, agent *engine.Agent) *goja.Object {
	t := vm.NewObject()
	_ = t.Set("register", func(call goja.FunctionCall) goja.Value { return i.register(vm, agent, call) })
	_ = t.Set("guard", func(call goja.FunctionCall) goja.Value { return i.guard(vm, agent, call) })
	_ = t.Set("restrict", func(call goja.FunctionCall) goja.Value { return i.restrict(vm, agent, call) })
	_ = t.Set("get", func(call goja.FunctionCall) goja.Value { return i.get(vm, agent, call.Argument(0).String()) })
	_ = t.Set("schemas", func(goja.FunctionCall) goja.Value { return i.schemas(vm, agent) })
	_ = t.Set("call", func(call goja.FunctionCall) goja.Value { return i.callTool(vm, call) })
	if agent == nil {
		_ = t.Set("scope", func(call goja.FunctionCall) goja.Value {
			id := call.Argument(0)
			if _, isStr := id.Export().(string); !isStr {
				throw(vm, errors.New("tools.scope(agentId) needs an agent id string"))
			}
			view := i.toolsObject(vm, i.pool.plugin.Agent(id.String()))
			a := i.pool.plugin.Agent(id.String())
			_ = view.Set("on", func(call goja.FunctionCall) goja.Value { return i.on(vm, a, call) })
			return view
		})
	}
	return t
}

// defined is what defineTool knows of a definition it built.
type defined struct {
	params *dsl.Schema
}

// setDefined remembers what defineTool compiled for the definition object
// def, without keeping def alive: entries of collected objects are swept as
// the map grows.
func (i *instance) setDefined(def *goja.Object, d *defined) {
	hostapi.SetWeak(i.defined, &i.swept, def, d)
}

// definedOf is what defineTool compiled for def, or nil.
func (i *instance) definedOf(def *goja.Object) *defined { return i.defined[weak.Make(def)] }

// defineTool is the design's defineTool (§4.7) for scripts.
func (i *instance) defineTool(call goja.FunctionCall) goja.Value {
	vm := i.vm
	opts, ok := call.Argument(0).(*goja.Object)
	if !ok {
		throw(vm, errors.New("defineTool(options) needs an options object"))
	}
	name := opts.Get("name")
	nameStr := ""
	if name != nil {
		nameStr = name.String()
	}
	if tv := opts.Get("timeoutMs"); tv != nil && !goja.IsUndefined(tv) {
		f, isNum := tv.Export().(float64)
		if n, isInt := tv.Export().(int64); isInt {
			f, isNum = float64(n), true
		}
		if !isNum || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			throw(vm, fmt.Errorf("defineTool(%s): timeoutMs must be a positive finite number", display.Line(nameStr, display.MaxName)))
		}
	}
	spec, err := toGo(vm, opts.Get("parameters"), "parameters")
	if goja.IsUndefined(orUndefined(opts.Get("parameters"))) {
		spec, err = dsl.NewObject(), nil
	}
	if err != nil {
		throw(vm, err)
	}
	params, err := dsl.CompileParameterSpec(spec)
	if err != nil {
		throw(vm, engine.SchemaError(nameStr, "parameters", err))
	}
	out, _ := opts.Get("output").(*goja.Object)
	if out == nil {
		throw(vm, fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(nameStr)))
	}
	outSpec, err := toGo(vm, out.Get("schema"), "schema")
	if err != nil {
		throw(vm, err)
	}
	outSchema, err := dsl.CompileValueSpec(outSpec)
	if err != nil {
		throw(vm, engine.SchemaError(nameStr, "output.schema", err))
	}
	compiled, err := dsl.Compile(params)
	if err != nil {
		throw(vm, engine.SchemaError(nameStr, "parameters", err))
	}
	def := vm.NewObject()
	_ = def.Set("name", name)
	_ = def.Set("description", opts.Get("description"))
	pv, _ := toJS(vm, params)
	_ = def.Set("parameters", pv)
	o := vm.NewObject()
	sv, _ := toJS(vm, outSchema)
	_ = o.Set("schema", sv)
	_ = o.Set("render", out.Get("render"))
	if pm := out.Get("presentationMeta"); pm != nil && !goja.IsUndefined(pm) {
		_ = o.Set("presentationMeta", pm)
	}
	_ = def.Set("output", o)
	for _, k := range []string{"execute", "timeoutMs", "isConcurrencySafe", "presentCall", "presentResult", "finalizeContent", "projectContent"} {
		if v := opts.Get(k); v != nil && !goja.IsUndefined(v) {
			_ = def.Set(k, v)
		}
	}
	i.setDefined(def, &defined{params: compiled})
	return def
}

func orUndefined(v goja.Value) goja.Value {
	if v == nil {
		return goja.Undefined()
	}
	return v
}

// register is tools.register(def, {when}).
func (i *instance) register(vm *goja.Runtime, agent *engine.Agent, call goja.FunctionCall) goja.Value {
	obj, ok := call.Argument(0).(*goja.Object)
	if !ok {
		throw(vm, errors.New("tools.register(definition) needs a definition object"))
	}
	def, err := i.definition(vm, obj)
	if err != nil {
		throw(vm, err)
	}
	key := i.key(obj)
	i.bindDefinition(def, key, i.definedOf(obj))
	keys := []int{key}
	var opts []engine.RegisterOption
	if o, ok := call.Argument(1).(*goja.Object); ok {
		if w, ok := goja.AssertFunction(o.Get("when")); ok && w != nil {
			wkey := i.key(o.Get("when").ToObject(vm))
			keys = append(keys, wkey)
			opts = append(opts, engine.When(i.pool.whenFunc(wkey)))
		}
	}
	if i.replay {
		return disposer(vm, nil)
	}
	d, err := i.pool.plugin.Register(i.site(vm), agent, def, opts...)
	if err != nil {
		i.forget(keys...)
		throw(vm, err)
	}
	return i.effectDisposer(vm, d, keys...)
}

// definition reads a definition object's data into an engine definition
// whose callbacks are bound later.
func (i *instance) definition(vm *goja.Runtime, obj *goja.Object) (*engine.Definition, error) {
	def := &engine.Definition{}
	if n, ok := obj.Get("name").Export().(string); ok {
		def.Name = n
	}
	// The name first, as the engine checks it: every later message quotes it.
	if err := engine.CheckToolName(def.Name); err != nil {
		return nil, err
	}
	if d, ok := orUndefined(obj.Get("description")).Export().(string); ok {
		def.Description = d
	}
	params, err := toGo(vm, obj.Get("parameters"), "parameters")
	if err != nil {
		params = nonLossless{}
	}
	def.Parameters = params
	out, _ := obj.Get("output").(*goja.Object)
	if out == nil {
		return nil, fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(def.Name))
	}
	if _, ok := goja.AssertFunction(out.Get("render")); !ok {
		return nil, fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(def.Name))
	}
	if pm := orUndefined(out.Get("presentationMeta")); !goja.IsUndefined(pm) {
		if _, ok := goja.AssertFunction(pm); !ok {
			return nil, fmt.Errorf("tool %s must declare output { schema, render, presentationMeta? }", display.Quote(def.Name))
		}
	}
	schema, err := toGo(vm, out.Get("schema"), "schema")
	if err != nil {
		return nil, engine.SchemaError(def.Name, "output.schema", schemaError(err))
	}
	def.Output.Schema = schema
	if tv := orUndefined(obj.Get("timeoutMs")); !goja.IsUndefined(tv) {
		f, isNum := number(tv)
		if !isNum || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return nil, fmt.Errorf("tool %s timeoutMs must be a positive finite number", display.Quote(def.Name))
		}
		def.Timeout = time.Duration(f * float64(time.Millisecond))
	}
	return def, nil
}

// nonLossless stands for raw parameters a script gave that are not lossless
// JSON: they fail when schemas() projects them, as the spec says.
type nonLossless = hostapi.NonLossless

func schemaError(err error) error { return hostapi.SchemaError(err) }

func number(v goja.Value) (float64, bool) {
	switch x := v.Export().(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// guard is tools.guard(fn).
func (i *instance) guard(vm *goja.Runtime, agent *engine.Agent, call goja.FunctionCall) goja.Value {
	fn := call.Argument(0)
	if _, ok := goja.AssertFunction(fn); !ok {
		throw(vm, errors.New("tools.guard(fn) needs a function"))
	}
	key := i.key(fn.ToObject(vm))
	if i.replay {
		return disposer(vm, nil)
	}
	d, err := i.pool.plugin.Guard(i.site(vm), agent, i.pool.guardFunc(key))
	if err != nil {
		i.forget(key)
		throw(vm, err)
	}
	return i.effectDisposer(vm, d, key)
}

// restrict is tools.restrict({allow, deny}).
func (i *instance) restrict(vm *goja.Runtime, agent *engine.Agent, call goja.FunctionCall) goja.Value {
	v, err := toGo(vm, call.Argument(0), "filter")
	if err != nil {
		throw(vm, err)
	}
	o, _ := v.(*dsl.Object)
	f, err := hostapi.Filter(o)
	if err != nil {
		throw(vm, err)
	}
	i.seq++ // restrictions take a key too, so replays count alike
	if i.replay {
		return disposer(vm, nil)
	}
	d, err := i.pool.plugin.Restrict(i.site(vm), agent, f)
	if err != nil {
		throw(vm, err)
	}
	return disposer(vm, d)
}

// get is tools.get(name): a read-only view, or undefined.
func (i *instance) get(vm *goja.Runtime, agent *engine.Agent, name string) goja.Value {
	def := i.pool.plugin.Service().Scope(agent).Get(name)
	if def == nil {
		return goja.Undefined()
	}
	return i.schemaView(vm, def)
}

func (i *instance) schemaView(vm *goja.Runtime, def *engine.Definition) goja.Value {
	params, err := dsl.Snapshot(def.Parameters)
	if err != nil {
		params = nil
	}
	v, err := toJS(vm, dsl.NewObject(dsl.Member{Key: "name", Value: def.Name}, dsl.Member{Key: "description", Value: def.Description},
		dsl.Member{Key: "parameters", Value: params}))
	if err != nil {
		throw(vm, err)
	}
	return v
}

// schemas is tools.schemas().
func (i *instance) schemas(vm *goja.Runtime, agent *engine.Agent) goja.Value {
	list, err := i.pool.plugin.Service().Scope(agent).Schemas()
	if err != nil {
		throw(vm, err)
	}
	out := make([]any, len(list))
	for k, s := range list {
		out[k] = s.JSON()
	}
	v, err := toJS(vm, out)
	if err != nil {
		throw(vm, err)
	}
	return v
}

// callTool is tools.call(name, args, parentExec): a nested call with the
// parent's token, root call id, agent and current signal.
func (i *instance) callTool(vm *goja.Runtime, call goja.FunctionCall) goja.Value {
	name := call.Argument(0).String()
	args, err := toGo(vm, call.Argument(1), "arguments")
	if err != nil {
		throw(vm, err)
	}
	pe, _ := call.Argument(2).(*goja.Object)
	live := i.liveExec(pe)
	if live == nil {
		throw(vm, errors.New("tools.call(name, args, parentExec) needs the execution of the call it is made from"))
	}
	live.nested++
	in := engine.Input{
		CallID: callID(live.exec.CallID(), live.nested), RootCallID: live.exec.RootCallID(), Name: name, Arguments: args,
		Agent: live.exec.Agent(), Parent: live.exec.Token(), ToolSet: live.exec.ToolSet(),
	}
	svc := i.pool.plugin.Service()
	ctx := live.signalCtx(vm, i)
	return vm.ToValue(i.loop.Go(vm, ctx, func(ctx context.Context) (any, error) {
		return svc.Call(ctx, in), nil
	}, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
		if err != nil {
			return nil, err
		}
		return toJS(vm, v.(*engine.Result).JSON())
	}))
}
