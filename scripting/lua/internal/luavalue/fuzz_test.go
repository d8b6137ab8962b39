package luavalue

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// fuzzState is a state with its converter, used by one goroutine at a time.
type fuzzState struct {
	L *lua.LState
	c *Converter
}

var fuzzStates = sync.Pool{New: func() any {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	return &fuzzState{L: L, c: New(L, Limits{})}
}}

// FuzzRoundTrip checks that a JSON document dsl accepts survives ToLua then
// ToGo unchanged.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `-0.5`, `1e300`, `"a\u00e9\ud83d\ude00"`, `[]`, `{}`, `[[[]]]`, `[{}, []]`,
		`{"b":1,"a":[1,2,{"c":"d"}],"":null,"__proto__":{"x":1}}`,
		`{"10":1,"9":2,"a":3,"-1":4,"01":5,"1.5":6}`,
		`[9007199254740991,-9007199254740992,5e-324,0.1]`,
		`{"a b":{"c\"d":["\u0000\u001f\u2028"]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		s := fuzzStates.Get().(*fuzzState)
		defer fuzzStates.Put(s)
		lv, err := s.c.TryToLua(want)
		if err != nil {
			t.Fatalf("TryToLua: %v", err)
		}
		back, err := s.c.ToGo(lv, "value", nil)
		if err != nil {
			t.Fatalf("ToGo(ToLua(x)): %v", err)
		}
		if !dsl.Equal(back, want) {
			t.Fatalf("ToGo(ToLua(x)) differs from x")
		}
	})
}

// FuzzToGo builds arbitrary Lua tables from the input (keys and values of
// every type, nesting, shared and cyclic references, marks) and checks that
// ToGo never panics, and that what it accepts is lossless JSON that goes
// back and forth unchanged.
func FuzzToGo(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x02", "\x10\x11\x12\x13", "\x30\x05\x31\x00\x45", "\x07\x07\x07\x27\x28"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzStates.Get().(*fuzzState)
		defer fuzzStates.Put(s)
		root := buildTable(s, data)
		got, err := s.c.ToGo(root, "value", nil)
		if err != nil {
			if _, ok := err.(*dsl.SnapshotError); !ok {
				t.Fatalf("ToGo error %T: %v", err, err)
			}
			return
		}
		if err := dsl.CheckLossless(got); err != nil {
			t.Fatalf("ToGo returned a value that is not lossless: %v", err)
		}
		back, err := s.c.ToGo(s.c.ToLua(got), "value", nil)
		if err != nil || !dsl.Equal(back, got) {
			t.Fatalf("ToGo(ToLua(ToGo(x))) = %v, %v", back, err)
		}
	})
}

// buildTable interprets data as operations on a stack of tables.
func buildTable(s *fuzzState, data []byte) lua.LValue {
	L := s.L
	root := L.NewTable()
	stack := []*lua.LTable{root}
	all := []*lua.LTable{root}
	val := func(b byte) lua.LValue {
		switch b % 12 {
		case 0:
			return lua.LNumber(float64(b))
		case 1:
			return lua.LNumber(float64(b) / 7)
		case 2:
			return lua.LString([]byte{'a' + b%5})
		case 3:
			return lua.LString([]byte{0x80 | b})
		case 4:
			return s.c.Null()
		case 5:
			return lua.LBool(b&16 != 0)
		case 6:
			return lua.LNumber(math.NaN())
		case 7:
			return lua.LNumber(math.Copysign(0, -1))
		case 8:
			return all[int(b)%len(all)] // shared or cyclic
		case 9:
			return L.NewFunction(func(*lua.LState) int { return 0 })
		case 10:
			return L.NewUserData()
		}
		return lua.LNumber(math.Inf(1))
	}
	key := func(b byte) lua.LValue {
		switch b % 6 {
		case 0, 1:
			return lua.LNumber(float64(b%8) + 1)
		case 2:
			return lua.LString([]byte{'k', '0' + b%4})
		case 3:
			return lua.LNumber(float64(b%3) - 1)
		case 4:
			return lua.LNumber(1.5)
		}
		return lua.LTrue
	}
	for i := 0; i+1 < len(data) && len(all) < 64; i += 2 {
		op, arg := data[i], data[i+1]
		top := stack[len(stack)-1]
		switch op % 6 {
		case 0, 1:
			top.RawSet(key(arg), val(arg>>1))
		case 2:
			n := L.NewTable()
			top.RawSet(key(arg), n)
			stack = append(stack, n)
			all = append(all, n)
		case 3:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case 4:
			switch arg % 3 {
			case 0:
				s.c.MarkArray(top)
			case 1:
				s.c.MarkObject(top)
			default:
				top.Metatable = L.NewTable()
			}
		case 5:
			top.Append(val(arg))
		}
	}
	return root
}

// FuzzLimits checks the limits on JSON documents: ToLua accepts a document
// under limits exactly when ToGo accepts the table it makes of it, since
// both count depth, values and bytes alike (and as JavaScript does), and
// refuses it only for a limit.
func FuzzLimits(f *testing.F) {
	for _, seed := range []string{`[]`, `[[[1]]]`, `{"a":"xxxxxxxx","b":[1,2,3]}`, `"long string"`, `{"k":{"k":{"k":{}}}}`} {
		f.Add([]byte(seed), uint8(3), uint8(5), uint16(100))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth, nodes uint8, size uint16) {
		want, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		lim := Limits{MaxDepth: int(depth%8) + 1, MaxNodes: int(nodes%64) + 1, MaxBytes: int(size%2048) + 1}
		s := fuzzStates.Get().(*fuzzState)
		defer fuzzStates.Put(s)
		lv, err := s.c.TryToLua(want)
		if err != nil {
			t.Fatalf("TryToLua: %v", err)
		}
		limited := New(s.L, lim)
		// The marks are the converter's own: give the table limited's.
		lv = reMark(s.c, limited, lv)
		got, goErr := limited.ToGo(lv, "value", nil)
		if goErr == nil && !dsl.Equal(got, want) {
			t.Fatal("a value within the limits changed")
		}
		if goErr != nil && !errors.Is(goErr, dsl.ErrLimit) {
			t.Fatalf("ToGo refused a JSON document for another reason: %v", goErr)
		}
		_, luaErr := limited.TryToLua(want)
		if (luaErr == nil) != (goErr == nil) {
			t.Fatalf("ToLua said %v where ToGo said %v", luaErr, goErr)
		}
		if luaErr != nil && !errors.Is(luaErr, dsl.ErrLimit) {
			t.Fatalf("ToLua refused a JSON document for another reason: %v", luaErr)
		}
	})
}

// reMark moves the marks from's tables carry to to's, throughout v.
func reMark(from, to *Converter, v lua.LValue) lua.LValue {
	if v == from.Null() {
		return to.Null()
	}
	stack := []lua.LValue{v}
	for len(stack) > 0 {
		t, ok := stack[len(stack)-1].(*lua.LTable)
		stack = stack[:len(stack)-1]
		if !ok {
			continue
		}
		switch {
		case from.IsArray(t):
			to.MarkArray(t)
		case from.IsObject(t):
			to.MarkObject(t)
		}
		t.ForEach(func(k, x lua.LValue) {
			if x == from.Null() {
				t.RawSet(k, to.Null())
			}
			stack = append(stack, x)
		})
	}
	return v
}
