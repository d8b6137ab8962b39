package sandbox

import (
	"strings"
	"sync"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// fuzzState is a sandboxed state with the pattern check compiled in it,
// used by one goroutine at a time.
type fuzzState struct {
	L     *lua.LState
	check *lua.LFunction
}

var fuzzStates = sync.Pool{New: func() any {
	L, err := New(Options{MaxPatternSteps: 100_000, MaxStringBytes: 1 << 20})
	if err != nil {
		panic(err)
	}
	fn, err := Load(L, patternCheck, "check", 0)
	if err != nil {
		panic(err)
	}
	return &fuzzState{L: L, check: fn}
}}

// patternCheck runs the pattern functions on s and p and checks what must
// hold whatever they are: no Go runtime error, find's positions within s,
// and gsub with "%0" giving s back.
const patternCheck = `
local s, p = ...
local function check(ok, err)
  if not ok and tostring(err):find("runtime error", 1, true) then error("Go panic: " .. tostring(err)) end
end
local ok, r, n = pcall(string.gsub, s, p, "%0")
check(ok, r)
if ok and r ~= s then error("gsub with %0 changed the subject") end
local ok2, i, j = pcall(string.find, s, p)
check(ok2, i)
if ok2 and i and not (1 <= i and i <= j + 1 and j <= #s) then error("find out of bounds: " .. i .. "," .. j) end
local ok3, err3 = pcall(function() local k = 0 for _ in s:gmatch(p) do k = k + 1 if k > #s + 1 then error("gmatch did not advance") end end end)
check(ok3, err3)
check(pcall(string.match, s, p, 2))
`

// FuzzPatterns throws arbitrary patterns and subjects at the sandbox's
// matcher.
func FuzzPatterns(f *testing.F) {
	for _, seed := range [][2]string{
		{"hello world", "o"}, {"abc", ""}, {"key = value", "(%w+)%s*=%s*(%w+)"}, {"f(a(b)c)d", "%b()"},
		{"THE (quick) fox", "%f[%a]%a+"}, {"hello hello", "(h%a+) %1"}, {"aaa", "a-$"}, {"[]", "[]]"},
		{"x", "%"}, {"x", "[a"}, {"x", "(()"}, {"aaaa", "^(a*)(a-)()$"}, {"\x00\xff", "[%z\xff]+"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		if len(s) > 1<<12 || len(p) > 1<<10 {
			return
		}
		st := fuzzStates.Get().(*fuzzState)
		defer fuzzStates.Put(st)
		L := st.L
		L.Push(st.check)
		L.Push(lua.LString(s))
		L.Push(lua.LString(p))
		if err := L.PCall(2, 0, nil); err != nil {
			t.Fatalf("s=%q p=%q: %v", s, p, err)
		}
	})
}

// FuzzLoad compiles arbitrary source: Load must return a function or an
// error, never panic or hang.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"return 1", "local t = {1, 2, x = {y = 'z'}} return t.x.y", "do do end end", "if a then elseif b then else end",
		"return ((((1))))", "f()()()", "a.b.c:d()", "return function(...) return ... end", "--[[ comment ]] x = [==[s]==]",
		strings.Repeat("do ", 1100) + strings.Repeat("end ", 1100), "\x1bLua", "return 1 +", "goto x ::x::",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st := fuzzStates.Get().(*fuzzState)
		defer fuzzStates.Put(st)
		fn, err := Load(st.L, src, "fuzz", 1<<16)
		if (fn == nil) == (err == nil) {
			t.Fatalf("Load = %v, %v", fn, err)
		}
		if err != nil && strings.Contains(err.Error(), "cannot compile the chunk") {
			t.Fatalf("the compiler panicked: %v", err)
		}
	})
}
