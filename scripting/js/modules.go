package js

import (
	"context"
	"fmt"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting"
)

// Module is a host module plugins import as "dsh/<Name>"; its functions are
// async in the script: each returns a promise, the Go function runs off the
// loop, and the promise settles on the loop.
type Module = scripting.Module

// AsyncFunc is one function of a host module (see [scripting.ModuleFunc]).
type AsyncFunc = scripting.ModuleFunc

// hostModule builds the script's object for a host module.
func (i *instance) hostModule(vm *goja.Runtime, name string) (goja.Value, error) {
	if m, ok := i.hostMods[name]; ok {
		return m, nil
	}
	var mod *Module
	for k := range i.pool.host.Modules {
		if i.pool.host.Modules[k].Name == name {
			mod = &i.pool.host.Modules[k]
		}
	}
	if mod == nil {
		return nil, fmt.Errorf("cannot import %q: no such host module", "dsh/"+name)
	}
	o := vm.NewObject()
	for fname, f := range mod.Funcs {
		qualified := "dsh/" + name + "." + fname
		_ = o.Set(fname, func(call goja.FunctionCall) goja.Value {
			args, ctx, err := i.hostArgs(vm, call.Arguments)
			if err != nil {
				throw(vm, fmt.Errorf("%s: %w", qualified, err))
			}
			if mod.Sync {
				if ctx == nil {
					ctx = context.Background()
				}
				v, err := i.loop.Block(func() (any, error) { return f(ctx, args) })
				if err != nil {
					throw(vm, err)
				}
				r, err := toJS(vm, v)
				if err != nil {
					throw(vm, fmt.Errorf("%s: %w", qualified, err))
				}
				return r
			}
			return vm.ToValue(i.loop.Go(vm, ctx, func(ctx context.Context) (any, error) {
				return f(ctx, args)
			}, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
				if err != nil {
					throw(vm, err)
				}
				return toJS(vm, v)
			}))
		})
	}
	if i.hostMods == nil {
		i.hostMods = map[string]goja.Value{}
	}
	i.hostMods[name] = o
	return o, nil
}

// hostArgs converts a host function's arguments and makes the work's ctx:
// cancelled when the call the script runs for ends (a body's call is
// cancelled or settles, a listener returns or times out), and by an
// AbortSignal in a trailing options object.
func (i *instance) hostArgs(vm *goja.Runtime, in []goja.Value) ([]any, context.Context, error) {
	// The call on whose behalf the script runs (nil outside any): its end
	// cancels the work, as does the signal.
	ctx := i.loop.CallContext()
	// Trailing undefined arguments are absent: readFile(path, undefined) is
	// readFile(path).
	for len(in) > 0 && goja.IsUndefined(in[len(in)-1]) {
		in = in[:len(in)-1]
	}
	if n := len(in); n > 0 {
		if o, ok := in[n-1].(*goja.Object); ok && o.ClassName() == "Object" {
			if sig := o.Get("signal"); sig != nil && !goja.IsUndefined(sig) && i.isSignal(sig) {
				base := ctx
				if base == nil {
					base = context.Background()
				}
				ctx = i.ctxFromSignal(vm, base, sig)
			}
			// The trailing options object: without its signal, and without
			// members set to undefined ({limit: args.limit} when it has none).
			in = append(append([]goja.Value(nil), in[:n-1]...), i.hostOptions(vm, o))
		}
	}
	out := make([]any, len(in))
	for k, a := range in {
		g, err := toGo(vm, a, fmt.Sprintf("arguments[%d]", k))
		if err != nil {
			return nil, nil, err
		}
		out[k] = g
	}
	return out, ctx, nil
}

func (i *instance) isSignal(v goja.Value) bool {
	f, _ := goja.AssertFunction(i.abort.Get("isSignal"))
	r, err := f(goja.Undefined(), v)
	return err == nil && r.ToBoolean()
}

func (i *instance) hostOptions(vm *goja.Runtime, o *goja.Object) goja.Value {
	f, _ := goja.AssertFunction(i.abort.Get("hostOptions"))
	r, err := f(goja.Undefined(), o)
	if err != nil {
		return o
	}
	return r
}
