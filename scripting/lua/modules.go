package lua

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/scripting"
)

// hostModule builds the Lua table of a host module: each function under its
// snake_case name (readFile → read_file), blocking the calling Lua code.
func (i *instance) hostModule(L *glua.LState, mod *scripting.Module) *glua.LTable {
	t := L.CreateTable(0, len(mod.Funcs))
	for fname, f := range mod.Funcs {
		qualified := "dsh." + mod.Name + "." + snakeCase(fname)
		t.RawSetString(snakeCase(fname), L.NewFunction(func(L *glua.LState) int {
			args, err := i.hostArgs(L)
			if err != nil {
				i.throw(L, fmt.Errorf("%s: %w", qualified, err))
			}
			ctx, done := i.hostCtx()
			v, err := f(ctx, args)
			done()
			if err != nil {
				i.throw(L, err)
			}
			r, err := i.conv.TryToLua(v)
			if err != nil {
				i.throw(L, fmt.Errorf("%s: %w", qualified, err))
			}
			L.Push(r)
			return 1
		}))
	}
	return t
}

// hostCtx is the ctx of a host call made now: the running call's, which is
// cancelled when the call's signal aborts or the instance is interrupted.
func (i *instance) hostCtx() (context.Context, func()) {
	if f := i.current(); f != nil {
		return f.hostCtx(i.kill)
	}
	return i.kill, func() {}
}

// hostArgs converts a host function's arguments. A trailing options table
// loses its "signal": the call's own cancellation is the function's ctx.
func (i *instance) hostArgs(L *glua.LState) ([]any, error) {
	n := L.GetTop()
	out := make([]any, n)
	for k := 1; k <= n; k++ {
		v := L.Get(k)
		if t, ok := v.(*glua.LTable); ok && k == n && t.Metatable == glua.LNil {
			if s := t.RawGetString("signal"); s != glua.LNil {
				c := L.CreateTable(0, 4)
				t.ForEach(func(key, val glua.LValue) {
					if key != glua.LString("signal") {
						c.RawSet(key, val)
					}
				})
				v = c
			}
		}
		g, err := i.conv.ToGo(v, fmt.Sprintf("arguments[%d]", k-1), nil)
		if err != nil {
			return nil, err
		}
		out[k-1] = g
	}
	return out, nil
}

// snakeCase turns a host function's name into Lua's: readFile → read_file.
func snakeCase(s string) string {
	var b strings.Builder
	for k, r := range s {
		if unicode.IsUpper(r) {
			if k > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
