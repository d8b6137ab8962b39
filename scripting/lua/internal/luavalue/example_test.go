package luavalue_test

import (
	"fmt"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting/lua/internal/luavalue"
	lua "github.com/yuin/gopher-lua"
)

func Example() {
	L := lua.NewState()
	defer L.Close()
	c := luavalue.New(L, luavalue.Limits{})

	args, _ := dsl.Unmarshal([]byte(`{"tags":[],"opts":{},"n":3}`))
	L.SetGlobal("args", c.ToLua(args))
	L.SetGlobal("null", c.Null())
	_ = L.DoString(`return { count = args.n, tags = args.tags, opts = args.opts, none = null, list = {} }`)

	schema, _ := dsl.Unmarshal([]byte(`{"type":"object","properties":{"list":{"type":"array"}}}`))
	v, err := c.ToGo(L.Get(-1), "value", schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := dsl.Marshal(v)
	fmt.Println(string(out))

	_ = L.DoString(`return { 1, nil, 3 }`)
	_, err = c.ToGo(L.Get(-1), "value", nil)
	fmt.Println(err)
	// Output:
	// {"count":3,"list":[],"none":null,"opts":{},"tags":[]}
	// value[1]: nil at Lua index 2 of an array is not lossless JSON (use dsh.null for null)
}
