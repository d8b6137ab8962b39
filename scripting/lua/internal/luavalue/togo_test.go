package luavalue

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestToGoAcceptsLosslessValues(t *testing.T) {
	e := newEnv(t, Limits{})
	for _, tc := range []struct {
		name, src, want string
	}{
		{"null is dsh.null", `null`, `null`},
		{"booleans are booleans", `{true, false}`, `[true,false]`},
		{"integral numbers are JSON integers", `{1, -2, 3.0, 2^53, 1e300}`, `[1,-2,3,9007199254740992,1e+300]`},
		{"fractions stay fractions", `{0.5, -1e-7, 5e-324}`, `[0.5,-1e-7,5e-324]`},
		{"zero is fine", `0`, `0`},
		{"strings are strings", `"héllo\n"`, `"héllo\n"`},
		{"the empty string is a string", `""`, `""`},
		{"keys 1..n make an array", `{"a", "b", "c"}`, `["a","b","c"]`},
		{"explicit indices in any order make an array", `{[3]="c", [1]="a", [2]="b"}`, `["a","b","c"]`},
		{"string keys make an object, sorted", `{b=1, a=2, ["c d"]=3, [""]=4}`, `{"":4,"a":2,"b":1,"c d":3}`},
		{"a string key that looks like a number is a string", `{["1"]="x"}`, `{"1":"x"}`},
		{"an object field holding nil is absent", `{a=1, b=nil}`, `{"a":1}`},
		{"an empty table is an object", `{}`, `{}`},
		{"an empty table marked as an array is an array", `array{}`, `[]`},
		{"an empty table marked as an object is an object", `object{}`, `{}`},
		{"a marked array with elements is an array", `array{1, 2}`, `[1,2]`},
		{"a marked object turns integer keys into strings", `object{"a", "b"}`, `{"1":"a","2":"b"}`},
		{"a marked object takes zero, negative and string keys together", `object{[0]=0, [-3]=1, x=2, [10]=3}`, `{"-3":1,"0":0,"10":3,"x":2}`},
		{"dsh.null in an array is null", `{1, null, 3}`, `[1,null,3]`},
		{"dsh.null in an object is present", `{a=null}`, `{"a":null}`},
		{"nesting converts all the way down", `{a={b={1, {c=true}}}}`, `{"a":{"b":[1,{"c":true}]}}`},
		{"a shared table is copied each time", `(function() local s = {1} return {s, s, {x=s}} end)()`, `[[1],[1],{"x":[1]}]`},
		{"a table with integer keys beyond the array part is an array", `(function() local t = {} for i = 10, 1, -1 do t[i] = i end return t end)()`, `[1,2,3,4,5,6,7,8,9,10]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.toGo(tc.src, nil)
			if err != nil {
				t.Fatalf("ToGo: %v", err)
			}
			if s := mustJSON(t, got); s != tc.want {
				t.Fatalf("ToGo = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestToGoRefusesWhatIsNotLosslessJSON(t *testing.T) {
	e := newEnv(t, Limits{})
	e.L.SetGlobal("ud", e.L.NewUserData())
	e.L.SetGlobal("ch", lua.LChannel(make(chan lua.LValue)))
	for _, tc := range []struct {
		name, src, path, reason string
	}{
		{"nil at the root", `nil`, "value", "nil is not lossless JSON (use dsh.null for null)"},
		{"NaN", `{x=0/0}`, "value.x", "NaN is not lossless JSON"},
		{"infinity", `{1, 1/0}`, "value[1]", "Infinity is not lossless JSON"},
		{"minus infinity", `-1/0`, "value", "-Infinity is not lossless JSON"},
		{"minus zero", `{a={-0.0}}`, "value.a[0]", "-0 is not lossless JSON"},
		{"a function", `{f=print}`, "value.f", "a function is not lossless JSON"},
		{"a Lua function", `{function() end}`, "value[0]", "a function is not lossless JSON"},
		{"a userdata other than dsh.null", `{u=ud}`, "value.u", "a userdata is not lossless JSON"},
		{"a thread", `{co=coroutine.create(function() end)}`, "value.co", "a thread (coroutine) is not lossless JSON"},
		{"a channel", `{ch}`, "value[0]", "a channel is not lossless JSON"},
		{"invalid UTF-8", `{s=string.char(255)}`, "value.s", "invalid UTF-8 in string"},
		{"invalid UTF-8 in a key", `{[string.char(200)]=1}`, `value["\xc8"]`, "invalid UTF-8 in key"},
		{"a hole", `{1, nil, 3}`, "value[1]", "nil at Lua index 2 of an array is not lossless JSON (use dsh.null for null)"},
		{"a hole at the start", `{[2]="b"}`, "value[0]", "nil at Lua index 1 of an array is not lossless JSON (use dsh.null for null)"},
		{"a far index", `{[1]=1, [1e9]=2}`, "value[1]", "nil at Lua index 2 of an array is not lossless JSON (use dsh.null for null)"},
		{"mixed keys", `{1, 2, x=3}`, "value", "a table with both string and number keys is not lossless JSON"},
		{"key zero", `{[0]="z", "a"}`, "value", "a number key 0 is not lossless JSON (array indices are 1..n)"},
		{"a negative key", `{[-5]=1, [-2]=2}`, "value", "a number key -5 is not lossless JSON (array indices are 1..n)"},
		{"a fractional key", `{[1.5]=1}`, "value", "a number key 1.5 is not lossless JSON"},
		{"a fractional key in a marked object", `object{[2.5]=1, [0.5]=2}`, "value", "a number key 0.5 is not lossless JSON"},
		{"an integer key beyond 2^53", `object{[2^60]=1}`, "value", "a number key 1152921504606846976 is not lossless JSON"},
		{"a boolean key", `{[true]=1}`, "value", "a boolean key is not lossless JSON"},
		{"a table key", `{[{}]=1}`, "value", "a table key is not lossless JSON"},
		{"a function key", `{[print]=1}`, "value", "a function key is not lossless JSON"},
		{"a string key in a marked array", `(function() local t = array{1} t.x = 1 return t end)()`, "value", "an array (dsh.array, or from a JSON array) with a string key is not lossless JSON"},
		{"a number key colliding with a string key", `object{[1]="a", ["1"]="b"}`, "value", `the number key 1 and the string key "1" are the same JSON key`},
		{"a foreign metatable", `{x=setmetatable({}, {})}`, "value.x", "a table with a metatable is not lossless JSON"},
		{"a cycle", `(function() local t = {} t.self = t return t end)()`, "value.self", "the value contains itself (cycle)"},
		{"a deeper cycle", `(function() local t = {a={b={}}} t.a.b[1] = t.a return t end)()`, "value.a.b[0]", "the value contains itself (cycle)"},
		{"the first bad member in key order", `{b=0/0, a=1/0}`, "value.a", "Infinity is not lossless JSON"},
		{"a key that is not an identifier", `{["a b"]={0/0}}`, `value["a b"][0]`, "NaN is not lossless JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.toGo(tc.src, nil)
			wantSnapshotError(t, err, tc.path, tc.reason)
		})
	}
}
