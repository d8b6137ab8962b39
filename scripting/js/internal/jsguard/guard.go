package jsguard

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

const (
	// DefaultMaxDepth is the nesting limit used when Options.MaxDepth is not
	// positive: the deepest JSON document JSON.parse accepts, the deepest
	// value JSON.stringify writes, and the deepest chain of builtins,
	// bound functions or proxies that re-enter one another in Go.
	DefaultMaxDepth = 10000
	// DefaultMaxAllocBytes is the cap used when Options.MaxAllocBytes is not
	// positive: the largest string, buffer or array a single builtin call
	// may make.
	DefaultMaxAllocBytes = 256 << 20
	// RegexpMatchTimeout bounds one regular-expression match run by the
	// backtracking engine (see the package documentation).
	RegexpMatchTimeout = time.Second

	// valueBytes is what one element of a goja array costs (a Value is an
	// interface: two words).
	valueBytes = 16
)

// Options configures Install. The zero value is usable.
type Options struct {
	// MaxDepth bounds nesting: JSON.parse and JSON.stringify depth and
	// native re-entry depth. <= 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxAllocBytes caps the size of one string (two bytes per UTF-16
	// code unit), buffer or array (16 bytes per element) made by one
	// builtin call. <= 0 means DefaultMaxAllocBytes.
	MaxAllocBytes int64
	// Contained is for a runtime whose process is its own guard (a
	// run_code child under process isolation: memory-capped, killed
	// whole, its Go stack capped low), where a Go stack overflow ends that
	// process alone. The builtins jsguard would only count for native
	// re-entry keep goja's own functions (see contained.go); everything
	// that changes what a builtin returns or throws stays.
	Contained bool
}

// ErrInstall is wrapped by the errors Install returns.
var ErrInstall = errors.New("jsguard: install")

// regexpOnce sets regexp2's package-level match timeout once per process;
// see the package documentation for why this global is acceptable.
var regexpOnce sync.Once

// guard is the per-runtime state. Everything but the fields set by Install
// is touched only by the goroutine that owns the runtime.
type guard struct {
	vm       *goja.Runtime
	maxDepth int
	maxBytes int64
	// contained leaves the counted-only builtins alone (Options.Contained).
	contained bool

	depth int // current native re-entry depth

	// Intrinsics captured before any script ran.
	rangeError  goja.Constructor
	typeError   goja.Constructor
	syntaxError goja.Constructor
	objectProto *goja.Object
	isArray     func(goja.FunctionCall) goja.Value
	hasOwn      func(goja.FunctionCall) goja.Value
	origJoin    func(goja.FunctionCall) goja.Value
	origFlat    func(goja.FunctionCall) goja.Value
	origApply   func(goja.FunctionCall) goja.Value
	origBind    func(goja.FunctionCall) goja.Value
	origExec    *goja.Object // RegExp.prototype.exec, left unwrapped (see stdRegExp)
	re          regexpState  // the watched regular expressions (see regexp.go)
	reflectAppl func(goja.FunctionCall) goja.Value
	reflectCons func(goja.FunctionCall) goja.Value

	// joining holds the objects whose join is in progress (cycle check).
	joining []*goja.Object

	fwd *forwardTable

	proxied map[*goja.Object]*goja.Object // original constructor -> proxy
	// proxyOrig maps each constructor proxy back to its original.
	proxyOrig map[*goja.Object]*goja.Object

	reflectGet      func(goja.FunctionCall) goja.Value
	gopd            func(goja.FunctionCall) goja.Value
	origHasInstance *goja.Object // Function.prototype[Symbol.hasInstance]
	hasInstanceFn   goja.Value

	nums       numberTypes   // goja's number types (see bigint.go)
	origBigInt goja.Callable // the intrinsic BigInt
}

// Install replaces or wraps the builtins of a fresh runtime that can recurse
// in Go without bound or allocate without bound. It must be called on the
// goroutine that owns vm, before any script runs on it.
func Install(vm *goja.Runtime, opts Options) error {
	_, err := install(vm, opts)
	return err
}

func install(vm *goja.Runtime, opts Options) (*guard, error) {
	regexpOnce.Do(func() { regexp2.DefaultMatchTimeout = RegexpMatchTimeout })
	g := &guard{
		vm:        vm,
		maxDepth:  opts.MaxDepth,
		maxBytes:  opts.MaxAllocBytes,
		contained: opts.Contained,
		fwd:       newForwardTable(),
		proxied:   make(map[*goja.Object]*goja.Object, len(proxiedCtors)+2),
		proxyOrig: make(map[*goja.Object]*goja.Object, len(proxiedCtors)+2),
	}
	if g.maxDepth <= 0 {
		g.maxDepth = DefaultMaxDepth
	}
	if g.maxBytes <= 0 {
		g.maxBytes = DefaultMaxAllocBytes
	}
	if err := g.capture(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInstall, err)
	}
	if err := g.wrapAll(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInstall, err)
	}
	if err := g.wrapEval(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInstall, err)
	}
	if err := g.installOperators(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInstall, err)
	}
	return g, nil
}

// wrapEval replaces the global eval with one that refuses source nesting
// deep enough to overflow goja's parser before it parses it. goja
// recognises a direct eval by the identity of its own eval, so every eval
// is then an indirect one: it runs in the global scope, not the caller's
// (a deliberate departure, documented in the package doc).
func (g *guard) wrapEval() error {
	global := g.vm.GlobalObject()
	orig, ok := goja.AssertFunction(global.Get("eval"))
	if !ok {
		return fmt.Errorf("the intrinsic eval is not a function")
	}
	w := g.vm.ToValue(func(c goja.FunctionCall) goja.Value {
		args := c.Arguments
		if src, ok := c.Argument(0).Export().(string); ok {
			if err := tsbuild.CheckNesting([]byte(src), g.maxDepth); err != nil {
				panic(g.syntaxErr("eval: " + err.Error()))
			}
			guarded, err := tsbuild.GuardRegExpLiterals(src, "", "")
			if err != nil {
				panic(g.syntaxErr("eval: " + err.Error()))
			}
			if guarded != src {
				args = append([]goja.Value{g.vm.ToValue(guarded)}, args[1:]...)
			}
			if prog, ok := g.rewriteSource("<eval>", guarded); ok {
				g.enter("eval")
				defer g.leave()
				return g.evalRewritten(prog)
			}
		}
		g.enter("eval")
		defer g.leave()
		v, err := orig(goja.Undefined(), args...)
		rethrow(err)
		return v
	}).(*goja.Object)
	for prop, v := range map[string]any{"name": "eval", "length": 1} {
		if err := w.DefineDataProperty(prop, g.vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return global.DefineDataProperty("eval", w, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

func (g *guard) capture() error {
	global := g.vm.GlobalObject()
	get := func(path ...string) (*goja.Object, error) {
		o := global
		for _, name := range path {
			v, ok := o.Get(name).(*goja.Object)
			if !ok {
				return nil, fmt.Errorf("intrinsic %v not found", path)
			}
			o = v
		}
		return o, nil
	}
	ctor := func(name string) (goja.Constructor, error) {
		o, err := get(name)
		if err != nil {
			return nil, err
		}
		c, ok := goja.AssertConstructor(o)
		if !ok {
			return nil, fmt.Errorf("intrinsic %s is not a constructor", name)
		}
		return c, nil
	}
	native := func(path ...string) (func(goja.FunctionCall) goja.Value, error) {
		o, err := get(path...)
		if err != nil {
			return nil, err
		}
		f, ok := o.Export().(func(goja.FunctionCall) goja.Value)
		if !ok {
			return nil, fmt.Errorf("intrinsic %v is not a native function", path)
		}
		return f, nil
	}
	var err error
	if g.rangeError, err = ctor("RangeError"); err != nil {
		return err
	}
	if g.typeError, err = ctor("TypeError"); err != nil {
		return err
	}
	if g.syntaxError, err = ctor("SyntaxError"); err != nil {
		return err
	}
	if g.objectProto, err = get("Object", "prototype"); err != nil {
		return err
	}
	for _, c := range []struct {
		dst  *func(goja.FunctionCall) goja.Value
		path []string
	}{
		{&g.isArray, []string{"Array", "isArray"}},
		{&g.hasOwn, []string{"Object", "prototype", "hasOwnProperty"}},
		{&g.origJoin, []string{"Array", "prototype", "join"}},
		{&g.origFlat, []string{"Array", "prototype", "flat"}},
		{&g.origApply, []string{"Function", "prototype", "apply"}},
		{&g.origBind, []string{"Function", "prototype", "bind"}},
		{&g.reflectAppl, []string{"Reflect", "apply"}},
		{&g.reflectCons, []string{"Reflect", "construct"}},
		{&g.reflectGet, []string{"Reflect", "get"}},
		{&g.gopd, []string{"Object", "getOwnPropertyDescriptor"}},
	} {
		if *c.dst, err = native(c.path...); err != nil {
			return err
		}
	}
	if g.origExec, err = get("RegExp", "prototype", "exec"); err != nil {
		return err
	}
	if _, ok := g.origExec.Export().(func(goja.FunctionCall) goja.Value); !ok {
		return errors.New("intrinsic RegExp.prototype.exec is not native")
	}
	fp, err := get("Function", "prototype")
	if err != nil {
		return err
	}
	if err := g.captureRegExp(); err != nil {
		return err
	}
	hi, ok := fp.GetSymbol(goja.SymHasInstance).(*goja.Object)
	if !ok {
		return errors.New("intrinsic Function.prototype[Symbol.hasInstance] not found")
	}
	hif, ok := hi.Export().(func(goja.FunctionCall) goja.Value)
	if !ok {
		return errors.New("intrinsic Function.prototype[Symbol.hasInstance] is not native")
	}
	g.origHasInstance = hi
	w := g.vm.ToValue(g.hasInstance(hif)).(*goja.Object)
	for prop, v := range map[string]any{"name": "[Symbol.hasInstance]", "length": 1} {
		if err := w.DefineDataProperty(prop, g.vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	g.hasInstanceFn = w
	return nil
}

// enter counts one level of native re-entry; leave must follow (deferred).
func (g *guard) enter(name string) {
	if g.depth >= g.maxDepth {
		panic(g.rangeErr(fmt.Sprintf("%s: nesting deeper than %d levels", name, g.maxDepth)))
	}
	g.depth++
}

func (g *guard) leave() { g.depth-- }

// throwable makes a script error object; if the constructor itself fails
// (it is an intrinsic captured before any script ran, so only an interrupt
// can make it fail), the failure is thrown instead.
func throwable(c goja.Constructor, vm *goja.Runtime, msg string) any {
	o, err := c(nil, vm.ToValue(msg))
	if err != nil {
		return err
	}
	return o
}

func (g *guard) rangeErr(msg string) any  { return throwable(g.rangeError, g.vm, msg) }
func (g *guard) typeErr(msg string) any   { return throwable(g.typeError, g.vm, msg) }
func (g *guard) syntaxErr(msg string) any { return throwable(g.syntaxError, g.vm, msg) }

// rethrow propagates an error returned by a goja Callable or Constructor
// as the panic goja's native calling convention expects.
func rethrow(err error) {
	if err != nil {
		panic(err)
	}
}

// capErr is the error for an allocation over the cap.
func (g *guard) capErr(name string, what string) any {
	return g.rangeErr(fmt.Sprintf("%s: %s larger than %d bytes", name, what, g.maxBytes))
}

// stringBytes is what a string of n code units costs, as the cap counts it:
// two bytes a unit, the size of goja's UTF-16 form (ASCII strings take one,
// so the cap is conservative for them).
func stringBytes(n int64) int64 {
	if n > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return 2 * n
}

func (g *guard) callIsArray(v goja.Value) bool {
	return g.isArray(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{v}}).ToBoolean()
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// isProxy reports whether o is a Proxy. It asks for the export type, which
// costs nothing, never for the export itself (which copies arrays).
func isProxy(o *goja.Object) bool {
	return o.ExportType() == proxyType
}
