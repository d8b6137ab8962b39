package luavalue

import (
	"math"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

func TestToLuaMakesMarkedTables(t *testing.T) {
	e := newEnv(t, Limits{})
	v := mustParse(t, `{"list":[1,"two",null,{"x":true}],"empty":[],"obj":{},"n":null,"1":"one"}`)
	e.L.SetGlobal("v", e.c.ToLua(v))
	for _, tc := range []struct{ name, expr, want string }{
		{"an array is a sequence", `#v.list`, `4`},
		{"array elements keep their order", `v.list[2]`, `two`},
		{"JSON null in an array is dsh.null", `tostring(v.list[3] == null)`, `true`},
		{"JSON null in an object is present as dsh.null", `tostring(v.n == null)`, `true`},
		{"a key that looks like a number stays a string key", `tostring(v["1"]) .. " " .. tostring(v[1])`, `one nil`},
		{"arrays are marked", `getmetatable(v.list)`, `dsh.array`},
		{"empty arrays are marked", `getmetatable(v.empty)`, `dsh.array`},
		{"objects are marked", `getmetatable(v.obj)`, `dsh.object`},
		{"the mark cannot be replaced", `select(2, pcall(setmetatable, v.obj, {}))`, `<string>:1: cannot change a protected metatable`},
		{"dsh.null prints as dsh.null", `tostring(null)`, `dsh.null`},
		{"dsh.null's metatable is hidden", `getmetatable(null)`, `dsh.null`},
		{"nested objects are tables", `tostring(v.list[4].x)`, `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.eval(tc.expr)
			if got.String() != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got.String(), tc.want)
			}
		})
	}
}

func TestToLuaIntegersPrintWithoutAFraction(t *testing.T) {
	e := newEnv(t, Limits{})
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{3, "3"}, {-7, "-7"}, {0, "0"}, {1 << 53, "9007199254740992"}, {1e15, "1000000000000000"},
		{0.5, "0.5"}, {1e300, "1e+300"}, {1e20, "1e+20"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			e.L.SetGlobal("x", e.c.ToLua(tc.in))
			if got := e.eval(`tostring(x)`).String(); got != tc.want {
				t.Fatalf("tostring(%v) = %q, want %q", tc.in, got, tc.want)
			}
			if got := e.eval(`"" .. x`).String(); got != tc.want {
				t.Fatalf(`"" .. %v = %q, want %q`, tc.in, got, tc.want)
			}
		})
	}
}

func TestToLuaRoundTripsExactly(t *testing.T) {
	e := newEnv(t, Limits{})
	for _, doc := range []string{
		`null`, `true`, `0`, `-1.5`, `1e300`, `"x"`, `[]`, `{}`, `[[]]`, `[{}]`, `{"a":[]}`, `{"a":{}}`,
		`[1,null,3]`, `{"a":null}`, `{"1":"a","2":"b"}`, `{"":0}`, `[[[[{"deep":[]}]]]]`,
		`{"z":1,"a":2,"m":{"y":[true,false,null]}}`,
	} {
		t.Run(doc, func(t *testing.T) {
			want := mustParse(t, doc)
			got, err := e.c.ToGo(e.c.ToLua(want), "value", nil)
			if err != nil {
				t.Fatalf("ToGo(ToLua(%s)): %v", doc, err)
			}
			if !dsl.Equal(got, want) || mustJSON(t, got) != mustJSON(t, sortedCopy(t, want)) {
				t.Fatalf("ToGo(ToLua(%s)) = %s", doc, mustJSON(t, got))
			}
		})
	}
}

// sortedCopy returns v with object keys sorted, as ToGo gives them.
func sortedCopy(t testing.TB, v any) any {
	t.Helper()
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = sortedCopy(t, x[i])
		}
		return out
	case *dsl.Object:
		keys := x.Keys()
		sortStrings(keys)
		out := dsl.NewObject()
		for _, k := range keys {
			val, _ := x.Get(k)
			out.Set(k, sortedCopy(t, val))
		}
		return out
	}
	return v
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestToLuaNormalisesOtherGoForms(t *testing.T) {
	e := newEnv(t, Limits{})
	got, err := e.c.ToGo(e.c.ToLua(map[string]any{"b": 1, "a": []int{1, 2}, "c": nil}), "value", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `{"a":[1,2],"b":1,"c":null}` {
		t.Fatalf("round trip = %s", s)
	}
}

func TestTryToLuaRefusesWhatIsNotLosslessJSON(t *testing.T) {
	e := newEnv(t, Limits{MaxDepth: 3, MaxNodes: 10})
	cyc := []any{nil}
	cyc[0] = cyc
	obj := dsl.NewObject()
	obj.Set("me", obj)
	for _, tc := range []struct {
		name         string
		in           any
		path, reason string
	}{
		{"NaN", math.NaN(), "value", "NaN is not lossless JSON"},
		{"minus zero inside", []any{1.0, math.Copysign(0, -1)}, "value[1]", "-0 is not lossless JSON"},
		{"infinity in an object", dsl.NewObject(dsl.Member{Key: "x", Value: math.Inf(1)}), "value.x", "Infinity is not lossless JSON"},
		{"invalid UTF-8", []any{"\xff"}, "value[0]", "invalid UTF-8 in string"},
		{"invalid UTF-8 in a key", dsl.NewObject(dsl.Member{Key: "\xff", Value: 1.0}), "value[\"\\xff\"]", "invalid UTF-8 in key"},
		{"a func", []any{func() {}}, "value[0]", "func() is not lossless JSON"},
		{"a slice cycle", cyc, "value[0]", "the value contains itself (cycle)"},
		{"an object cycle", obj, "value.me", "the value contains itself (cycle)"},
		{"too deep", []any{[]any{[]any{[]any{}}}}, "value[0][0][0]", "nesting deeper than 3 levels"},
		{"too many", make([]any, 10), "value", "more than 10 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.c.TryToLua(tc.in)
			wantSnapshotError(t, err, tc.path, tc.reason)
		})
	}
}

func TestToLuaPanicsOnACallerBug(t *testing.T) {
	e := newEnv(t, Limits{})
	defer func() {
		r := recover()
		err, ok := r.(*dsl.SnapshotError)
		if !ok || !strings.Contains(err.Error(), "NaN") {
			t.Fatalf("recover() = %v, want the *dsl.SnapshotError", r)
		}
	}()
	e.c.ToLua([]any{math.NaN()})
}

func TestToLuaPanicInAGoFunctionIsALuaError(t *testing.T) {
	e := newEnv(t, Limits{})
	e.L.SetGlobal("bad", e.L.NewFunction(func(L *lua.LState) int {
		L.Push(e.c.ToLua(math.NaN()))
		return 1
	}))
	if err := e.L.DoString(`bad()`); err == nil || !strings.Contains(err.Error(), "NaN is not lossless JSON") {
		t.Fatalf("DoString = %v, want a Lua error about NaN", err)
	}
}
