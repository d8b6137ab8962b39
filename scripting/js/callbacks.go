package js

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
)

// bindDefinition fills def's callbacks with calls into the plugin: each one
// looks its script function up by key on whichever instance serves the call.
func (i *instance) bindDefinition(def *engine.Definition, key int, d *defined) {
	pl := i.pool
	name := def.Name
	// The body renders its value in the same trip into the interpreter
	// (engine.Prerendered) when it can check it against the output schema.
	out, _ := dsl.Compile(def.Output.Schema)
	// What each callback is called in errors, made once.
	whats := &toolWhats{
		body:   fmt.Sprintf("tool %q", name),
		render: fmt.Sprintf("tool %q output.render", name),
		meta:   fmt.Sprintf("tool %q output.presentationMeta", name),
	}
	if d != nil {
		def.ValidateArgs = d.params.ValidateArgs
	}
	def.Execute = func(ctx context.Context, args any, run *engine.Run) (any, error) {
		if d != nil {
			if vs := d.params.ValidateArgs(args); vs != nil {
				return nil, &engine.ArgsError{Violations: vs}
			}
		}
		// The loop writes it; this goroutine reads it after an interrupt,
		// which the loop's goroutine does not synchronize with.
		var state atomic.Pointer[callState]
		v, err := pl.invokeBody(key, ctx, run.Caller(), whats.body, func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			state.Store(st)
			fn, obj, err := i.callable(key, "execute")
			if err != nil {
				return nil, err
			}
			a, err := i.argsJS(vm, args)
			if err != nil {
				return nil, err
			}
			exec, err := i.execObject(vm, ctx, st, run.Execution, run, false)
			if err != nil {
				return nil, err
			}
			return fn(obj, a, exec)
		}, func(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
			g, err := i.toGo(vm, v, "value")
			if err != nil {
				return hostapi.BodyValue(i.pool.log, name, err), nil
			}
			if out == nil || !out.Valid(g) {
				return g, nil
			}
			return i.prerender(vm, state.Load(), key, whats, args, g)
		})
		if err != nil {
			if p := renderTimedOut(state.Load(), err); p != nil {
				return p, nil
			}
		}
		return v, err
	}
	lt := pl.host.listenerTimeout()
	def.Output.Render = func(args, value any) ([]engine.Block, error) {
		v, err := pl.invoke(key, context.Background(), whats.render, lt, func(i *instance, vm *goja.Runtime, _ *callState) (goja.Value, error) {
			return i.callRender(vm, key, args, value)
		}, convertContent)
		if err != nil {
			return nil, err
		}
		return v.([]engine.Block), nil
	}
	if out, _ := i.callbacks[key].Get("output").(*goja.Object); out != nil {
		if _, ok := goja.AssertFunction(out.Get("presentationMeta")); ok {
			def.Output.PresentationMeta = func(args, value any) (any, error) {
				return pl.invoke(key, context.Background(), whats.meta, lt, func(i *instance, vm *goja.Runtime, _ *callState) (goja.Value, error) {
					return i.callMeta(vm, key, args, value)
				}, convertMeta)
			}
		}
	}
	has := func(prop string) bool {
		_, ok := goja.AssertFunction(i.callbacks[key].Get(prop))
		return ok
	}
	valid := func(args any) bool { return d == nil || d.params.Valid(args) }
	if has("isConcurrencySafe") {
		what := fmt.Sprintf("tool %q isConcurrencySafe", name) // made once, not per call
		def.IsConcurrencySafe = func(args any) bool {
			if !valid(args) {
				return false
			}
			v, err := pl.invoke(key, context.Background(), what, lt, i.method(key, "isConcurrencySafe", args),
				func(_ *instance, _ *goja.Runtime, v goja.Value) (any, error) {
					b, ok := v.Export().(bool)
					return ok && b, nil
				})
			return err == nil && v == true
		}
	}
	if has("presentCall") {
		what := fmt.Sprintf("tool %q presentCall", name)
		def.PresentCall = func(args any) *engine.CallView {
			if !valid(args) {
				return nil
			}
			v, err := pl.invoke(key, context.Background(), what, lt, i.method(key, "presentCall", args),
				func(_ *instance, vm *goja.Runtime, v goja.Value) (any, error) {
					if noView(v) {
						return (*engine.CallView)(nil), nil
					}
					g, err := i.toGo(vm, v, "view")
					if err != nil {
						return nil, err
					}
					return engine.CallViewFromJSON(g)
				})
			return hostapi.View[engine.CallView](pl.log, name, "presentCall", v, err)
		}
	}
	if has("presentResult") {
		what := fmt.Sprintf("tool %q presentResult", name)
		def.PresentResult = func(args any, r engine.ResultSummary) *engine.ResultView {
			if !valid(args) {
				return nil
			}
			summary := hostapi.SummaryJSON(r)
			v, err := pl.invoke(key, context.Background(), what, lt, i.method(key, "presentResult", args, summary),
				func(_ *instance, vm *goja.Runtime, v goja.Value) (any, error) {
					if noView(v) {
						return (*engine.ResultView)(nil), nil
					}
					g, err := i.toGo(vm, v, "view")
					if err != nil {
						return nil, err
					}
					return engine.ResultViewFromJSON(g)
				})
			return hostapi.View[engine.ResultView](pl.log, name, "presentResult", v, err)
		}
	}
	for _, prop := range []string{"finalizeContent", "projectContent"} {
		if !has(prop) {
			continue
		}
		prop := prop
		what := fmt.Sprintf("tool %q %s", name, prop)
		f := func(exec *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			v, err := pl.invoke(key, context.Background(), what, lt, func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
				fn, obj, err := i.callable(key, prop)
				if err != nil {
					return nil, err
				}
				e, err := i.execObject(vm, context.Background(), st, exec, nil, false)
				if err != nil {
					return nil, err
				}
				rv, err := i.toJS(vm, r.JSON())
				if err != nil {
					return nil, err
				}
				return fn(obj, e, rv)
			}, func(_ *instance, vm *goja.Runtime, v goja.Value) (any, error) {
				if v == nil || goja.IsUndefined(v) {
					return []engine.Block(nil), nil
				}
				return convertContent(nil, vm, v)
			})
			if err != nil {
				return nil, err
			}
			return v.([]engine.Block), nil
		}
		if prop == "finalizeContent" {
			def.FinalizeContent = f
		} else {
			def.ProjectContent = f
		}
	}
}

// method returns a job calling the definition's method prop with Go values.
func (i *instance) method(key int, prop string, args ...any) func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
	return func(i *instance, vm *goja.Runtime, _ *callState) (goja.Value, error) {
		fn, obj, err := i.callable(key, prop)
		if err != nil {
			return nil, err
		}
		vals := make([]goja.Value, len(args))
		for k, a := range args {
			if vals[k], err = i.toJS(vm, a); err != nil {
				return nil, err
			}
		}
		return fn(obj, vals...)
	}
}

func (i *instance) twoJS(vm *goja.Runtime, a, b any) (goja.Value, goja.Value, error) {
	av, err := i.argsJS(vm, a)
	if err != nil {
		return nil, nil, err
	}
	bv, err := i.toJS(vm, b)
	return av, bv, err
}

// noView reports whether a presenter returned no view (undefined or null),
// which is its way to leave the call or result without a card.
func noView(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// renderTimedOut is the outcome of a body that finished while its render
// or presentationMeta did not (err is that deadline), reported as if they
// had been called apart; nil for any other failure.
func renderTimedOut(st *callState, err error) *engine.Prerendered {
	rt := stateRendering(st)
	var to *hostapi.TimedOut
	if rt == nil || !errors.As(err, &to) || to != rt.render && to != rt.meta {
		return nil
	}
	if to == rt.meta {
		return &engine.Prerendered{Value: rt.pre.Value, Content: rt.pre.Content, HasMeta: true, MetaErr: to}
	}
	return &engine.Prerendered{Value: rt.pre.Value, Err: to}
}

func stateRendering(st *callState) *renderTimeout {
	if st == nil {
		return nil
	}
	return st.rendering.Load()
}

// callRender calls the tool's output.render(args, value).
func (i *instance) callRender(vm *goja.Runtime, key int, args, value any) (goja.Value, error) {
	out, _ := i.callbacks[key].Get("output").(*goja.Object)
	if out == nil {
		return nil, errors.New("output is gone")
	}
	f, _ := out.Get("render").(*goja.Object)
	fn, ok := i.assertCached(key, "output.render", out, f)
	if !ok {
		return nil, errors.New("output.render is not a function")
	}
	a, v, err := i.twoJS(vm, args, value)
	if err != nil {
		return nil, err
	}
	return fn(out, a, v)
}

// callMeta calls the tool's output.presentationMeta(args, value).
func (i *instance) callMeta(vm *goja.Runtime, key int, args, value any) (goja.Value, error) {
	out, _ := i.callbacks[key].Get("output").(*goja.Object)
	if out == nil {
		return nil, errors.New("output is gone")
	}
	f, _ := out.Get("presentationMeta").(*goja.Object)
	fn, ok := i.assertCached(key, "output.presentationMeta", out, f)
	if !ok {
		return nil, errors.New("output.presentationMeta is not a function")
	}
	a, v, err := i.twoJS(vm, args, value)
	if err != nil {
		return nil, err
	}
	return fn(out, a, v)
}

// convertMeta reads the metadata a script returned.
func convertMeta(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
	g, err := i.toGo(vm, v, "meta")
	if err != nil {
		return nonLossless{}, nil // reported as non-lossless metadata
	}
	return g, nil
}

// prerender renders a body's valid value right away, on the loop, under the
// listener deadline as a separate render would be: the engine then takes
// the blocks (engine.Prerendered) instead of asking for them in another trip.
// A render that throws is render's failure; one cut by its deadline ends the
// body's run, reported as the render's timeout.
func (i *instance) prerender(vm *goja.Runtime, st *callState, key int, whats *toolWhats, args, value any) (any, error) {
	lt := i.pool.host.listenerTimeout()
	// What a prerender keeps, allocated with the call's state (once per
	// call; a state-less prerender allocates it).
	var all *prerendering
	if st == nil || st.used.prerender {
		all = new(prerendering)
	} else {
		st.used.prerender, all = true, &st.prerender
	}
	all.pre = engine.Prerendered{Value: value}
	all.render = hostapi.TimedOut{What: whats.render, D: lt}
	all.meta = hostapi.TimedOut{What: whats.meta, D: lt}
	pre, rt := &all.pre, &all.rt
	rt.pre, rt.render, rt.meta = pre, &all.render, &all.meta
	rt.cur.Store(rt.render)
	if lt > 0 && st != nil && st.cancel != nil {
		st.rendering.Store(rt)
		i.renders.arm(st, lt)
		defer i.renders.disarm()
	}
	// thrown turns a callback's exception into its failure; an interrupt
	// is returned as is, for the loop.
	thrown := func(err error) (error, error) {
		var ex *goja.Exception
		if !errors.As(err, &ex) {
			return nil, err
		}
		return i.thrown(vm, i.loop.Thrown(vm, ex.Value())), nil
	}
	// Once a deadline cut a callback, the caller owns pre: the loop
	// writes nothing more to it (see the timeout case in Execute).
	rv, err := i.callRender(vm, key, args, value)
	if err != nil {
		failure, interrupted := thrown(err)
		if interrupted != nil {
			return nil, interrupted
		}
		pre.Err = failure
		return pre, nil // the pipeline stops at a failed render
	}
	blocks, _ := convertContent(i, vm, rv)
	pre.Content = blocks.([]engine.Block)
	if !engine.LosslessContent(pre.Content) {
		return pre, nil // the pipeline stops at content that is not lossless
	}
	out, _ := i.callbacks[key].Get("output").(*goja.Object)
	if out == nil {
		return pre, nil
	}
	if _, ok := goja.AssertFunction(out.Get("presentationMeta")); !ok {
		return pre, nil
	}
	pre.HasMeta = true
	rt.cur.Store(rt.meta) // the rest of the same deadline
	mv, err := i.callMeta(vm, key, args, value)
	if err != nil {
		failure, interrupted := thrown(err)
		if interrupted != nil {
			return nil, interrupted
		}
		pre.MetaErr = failure
		return pre, nil
	}
	pre.Meta, _ = convertMeta(i, vm, mv)
	return pre, nil
}

// toolWhats name a tool's body, render and presentationMeta in errors.
type toolWhats struct{ body, render, meta string }

// prerendering is what a prerender makes, allocated together.
type prerendering struct {
	pre          engine.Prerendered
	rt           renderTimeout
	render, meta hostapi.TimedOut
}

// convertContent reads content blocks a script returned; content that is not
// lossless JSON becomes a block the pipeline reports as non-lossless.
func convertContent(i *instance, vm *goja.Runtime, v goja.Value) (any, error) {
	// Text blocks only, the usual content, read without building the
	// value ToGo would; any other content goes through ToGo.
	if r, ok := i.realmFor(vm); ok {
		if blocks, ok := jsvalue.TextBlocks(r, v, limits, newTextBlock); ok {
			return blocks, nil
		}
	}
	g, err := i.toGo(vm, v, "content")
	if err != nil {
		return []engine.Block{engine.RawBlock{Value: nonLossless{}}}, nil
	}
	blocks, err := contentBlocks(g)
	if err != nil {
		return []engine.Block{engine.RawBlock{Value: nonLossless{}}}, nil
	}
	return blocks, nil
}

// newTextBlock is a text block of content.
func newTextBlock(text string) engine.Block { return engine.TextBlock{Text: text} }

// whenFunc is a registration's activation condition in the script.
func (pl *pool) whenFunc(key int) engine.WhenFunc {
	return func(ctx context.Context, w engine.WhenContext) (bool, error) {
		v, err := pl.invoke(key, ctx, "a when condition", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, err := i.callable(key, "")
			if err != nil {
				return nil, err
			}
			c := vm.NewObject()
			if w.Agent != nil {
				_ = c.Set("agent", i.agentObject(vm, w.Agent))
			}
			ms, err := i.toJS(vm, w.ModelSelection)
			if err == nil {
				_ = c.Set("modelSelection", ms)
			}
			_, signal := i.newController(vm, st, ctx)
			_ = c.Set("signal", signal)
			return fn(obj, c)
		}, func(_ *instance, _ *goja.Runtime, v goja.Value) (any, error) {
			b, ok := v.Export().(bool)
			return ok && b, nil
		})
		if err != nil {
			return false, err
		}
		return v == true, nil
	}
}

// guardFunc is a guard in the script: a string return denies.
func (pl *pool) guardFunc(key int) engine.GuardFunc {
	return func(ctx context.Context, exec *engine.Execution) (string, error) {
		v, err := pl.invoke(key, ctx, "a guard", pl.host.listenerTimeout(), func(i *instance, vm *goja.Runtime, st *callState) (goja.Value, error) {
			fn, obj, e, err := i.listenerCall(vm, st, key, ctx, exec, false)
			if err != nil {
				return nil, err
			}
			return fn(obj, e)
		}, func(_ *instance, _ *goja.Runtime, v goja.Value) (any, error) {
			if v == nil || goja.IsUndefined(v) {
				return "", nil
			}
			s, ok := v.Export().(string)
			if !ok {
				return nil, errors.New("a guard must return a denial reason string or undefined")
			}
			if s == "" {
				return nil, errors.New("a guard returned an empty denial reason")
			}
			return s, nil
		})
		if err != nil {
			return "", pl.policyFailure(ctx, "a guard", exec, err)
		}
		return v.(string), nil
	}
}
