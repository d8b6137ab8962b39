package luavalue

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// hostileMeta is a metatable whose every metamethod counts its calls in the
// global calls.
const hostileMeta = `
calls = 0
local function count(...) calls = calls + 1 return 1 end
meta = {
  __index = function(t, k) calls = calls + 1 return "x" end,
  __newindex = count, __pairs = function(t) calls = calls + 1 return next, {a = 1}, nil end,
  __len = function() calls = calls + 1 return 3 end, __eq = count, __lt = count, __le = count,
  __tostring = function() calls = calls + 1 return "t" end, __call = count, __concat = count,
  __unm = count, __add = count,
}
`

func TestToGoNeverCallsMetamethods(t *testing.T) {
	for _, tc := range []struct{ name, src, path string }{
		{"at the root", `setmetatable({1, 2}, meta)`, "value"},
		{"an empty table", `setmetatable({}, meta)`, "value"},
		{"inside an object", `{a = {b = setmetatable({x = 1}, meta)}}`, "value.a.b"},
		{"inside an array", `{1, setmetatable({}, meta)}`, "value[1]"},
		{"inside a marked object", `object{k = setmetatable({}, meta)}`, "value.k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Limits{})
			e.run(hostileMeta)
			_, err := e.toGo(tc.src, mustParse(t, `{"type":"array","items":{"type":"array"}}`))
			wantSnapshotError(t, err, tc.path, "a table with a metatable is not lossless JSON")
			if calls := e.eval(`calls`).String(); calls != "0" {
				t.Fatalf("%s metamethod calls", calls)
			}
		})
	}
}

func TestScriptsCannotReachTheMarks(t *testing.T) {
	e := newEnv(t, Limits{})
	e.run(hostileMeta)
	e.L.SetGlobal("v", e.c.ToLua(mustParse(t, `{"list":[1,2],"empty":{}}`)))
	// getmetatable gives a string, so the shared mark tables cannot be
	// changed, and setmetatable cannot swap them.
	e.run(`
		ok1 = pcall(function() getmetatable(v.list).__index = meta.__index end)
		ok2 = pcall(setmetatable, v.list, meta)
		ok3 = pcall(setmetatable, {}, getmetatable(v.list))
	`)
	for _, name := range []string{"ok1", "ok2", "ok3"} {
		if got := e.eval(name).String(); got != "false" {
			t.Fatalf("%s = %s, want false", name, got)
		}
	}
	got, err := e.c.ToGo(e.L.GetGlobal("v"), "value", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `{"empty":{},"list":[1,2]}` {
		t.Fatalf("ToGo = %s", s)
	}
	if calls := e.eval(`calls`).String(); calls != "0" {
		t.Fatalf("%s metamethod calls", calls)
	}
}

// deepLua builds a table n levels deep: {{{...}}}.
const deepLua = `
local root = {}
local cur = root
for i = 2, %d do local n = {} cur[1] = n cur = n end
return root
`

func TestToGoHandlesATenThousandDeepTable(t *testing.T) {
	e := newEnv(t, Limits{})
	v := e.run(strings.Replace(deepLua, "%d", "10000", 1))
	got, err := e.c.ToGo(v, "value", nil)
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for x := got; ; depth++ {
		list, ok := x.([]any)
		if !ok {
			break
		}
		if len(list) == 0 {
			// the innermost table is empty: an object
			t.Fatalf("empty array at depth %d", depth)
		}
		x = list[0]
	}
	if depth != 9999 {
		t.Fatalf("depth = %d, want 9999 arrays around an empty object", depth)
	}
	// And back: ToLua is iterative too.
	back, err := e.c.ToGo(e.c.ToLua(got), "value", nil)
	if err != nil || !dsl.Equal(back, got) {
		t.Fatalf("round trip of the deep value: %v", err)
	}
}

func TestToGoRefusesTablesDeeperThanTheLimit(t *testing.T) {
	e := newEnv(t, Limits{MaxDepth: 50})
	v := e.run(strings.Replace(deepLua, "%d", "51", 1))
	_, err := e.c.ToGo(v, "value", nil)
	// The path counts the levels it leaves out, so the message stays short.
	wantSnapshotError(t, err, "value"+strings.Repeat("[0]", 20)+"…(8 more)…"+strings.Repeat("[0]", 22), "nesting deeper than 50 levels")
}

func TestToGoCountsNodes(t *testing.T) {
	const build = `local t = {} for i = 1, %d do t[i] = i end return t`
	t.Run("exactly the limit passes", func(t *testing.T) {
		e := newEnv(t, Limits{MaxNodes: 1000})
		if _, err := e.c.ToGo(e.run(strings.Replace(build, "%d", "999", 1)), "value", nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one more is refused", func(t *testing.T) {
		e := newEnv(t, Limits{MaxNodes: 1000})
		_, err := e.c.ToGo(e.run(strings.Replace(build, "%d", "1000", 1)), "value", nil)
		wantSnapshotError(t, err, "value", "more than 1000 values")
	})
	t.Run("the default limit is a million", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds a million-element table")
		}
		e := newEnv(t, Limits{})
		_, err := e.c.ToGo(e.run(strings.Replace(build, "%d", "1000000", 1)), "value", nil)
		wantSnapshotError(t, err, "value", "more than 1000000 values")
	})
	t.Run("shared references cannot blow up", func(t *testing.T) {
		e := newEnv(t, Limits{})
		// 2^60 paths through 60 tables.
		v := e.run(`local t = {} for i = 1, 60 do t = {t, t} end return t`)
		_, err := e.c.ToGo(v, "value", nil)
		var se *dsl.SnapshotError
		if err == nil || !asSnapshot(err, &se) || se.Reason != "more than 1000000 values" {
			t.Fatalf("ToGo = %v, want more than 1000000 values", err)
		}
	})
}

func asSnapshot(err error, se **dsl.SnapshotError) bool {
	x, ok := err.(*dsl.SnapshotError)
	*se = x
	return ok
}

func TestToGoRefusesHugeSparseTablesCheaply(t *testing.T) {
	e := newEnv(t, Limits{})
	_, err := e.toGo(`{[2^52] = 1}`, nil)
	wantSnapshotError(t, err, "value[0]", "nil at Lua index 1 of an array is not lossless JSON (use dsh.null for null)")
}

func TestToGoNumbersFromLuaArithmetic(t *testing.T) {
	e := newEnv(t, Limits{})
	// In gopher-lua math.huge is the largest float, not infinity (the
	// sandbox replaces it with infinity, as in Lua).
	got, err := e.toGo(`{math.huge, 2^1023 * 1.5, 10 / 4, 6 / 2}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `[1.7976931348623157e+308,1.348269851146737e+308,2.5,3]` {
		t.Fatalf("ToGo = %s", s)
	}
	_, err = e.toGo(`{n = 0 * -1}`, nil)
	wantSnapshotError(t, err, "value.n", "-0 is not lossless JSON")
}
