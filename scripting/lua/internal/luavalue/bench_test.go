package luavalue

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// object1K is a JSON object of about 1 KB, of the kind tool arguments and
// results are made of.
const object1K = `{"path":"/home/user/projects/dsh/scripting/lua/internal/luavalue/convert.go",
"content":"package luavalue\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
"options":{"overwrite":true,"mode":420,"encoding":"utf-8","backup":false,"tags":["go","lua","json","dsh"]},
"ranges":[{"start":1,"end":10},{"start":20,"end":35},{"start":50,"end":51}],
"meta":{"author":"someone","reviewers":["a","b","c"],"score":0.875,"count":12345,"nested":{"deep":{"deeper":[null,true,false]}}},
"description":"A fairly typical argument object with strings, numbers, booleans, nulls, arrays and objects, sized to about one kilobyte so that the benchmark measures the per-call conversion cost a tool pays.",
"limits":{"maxBytes":1048576,"timeoutMs":30000,"retries":3}}`

const greetArgs = `{"name":"world"}`

func benchValue(b *testing.B, doc string) (*Converter, any) {
	b.Helper()
	v, err := dsl.Unmarshal([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	b.Cleanup(L.Close)
	return New(L, Limits{}), v
}

func BenchmarkToLua(b *testing.B) {
	for _, bc := range []struct{ name, doc string }{{"greet", greetArgs}, {"1KB", object1K}} {
		b.Run(bc.name, func(b *testing.B) {
			c, v := benchValue(b, bc.doc)
			b.ReportAllocs()
			for b.Loop() {
				c.ToLua(v)
			}
		})
	}
}

func BenchmarkToGo(b *testing.B) {
	for _, bc := range []struct{ name, doc string }{{"greet", greetArgs}, {"1KB", object1K}} {
		b.Run(bc.name+"/marked", func(b *testing.B) {
			c, v := benchValue(b, bc.doc)
			lv := c.ToLua(v)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.ToGo(lv, "value", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("1KB/unmarked", func(b *testing.B) {
		// Tables as a script builds them, without marks, as a tool result is.
		c, v := benchValue(b, object1K)
		lv := c.ToLua(v)
		unmark(lv)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ToGo(lv, "value", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// unmark clears the marks of every table in v.
func unmark(v lua.LValue) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return
	}
	t.Metatable = lua.LNil
	t.ForEach(func(_, x lua.LValue) { unmark(x) })
}
