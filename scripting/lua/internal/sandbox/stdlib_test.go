package sandbox

import (
	"cmp"
	"slices"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// pairsOf lists t's keys and values in the order next gives them.
func pairsOf(t *lua.LTable) []string {
	var out []string
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		out = append(out, k.String()+"="+v.String())
	}
	return out
}

// byRawSet is t's fields set one by one, as gopher-lua's libraries do.
func byRawSet(fields []field) *lua.LTable {
	t := &lua.LTable{Metatable: lua.LNil}
	for _, f := range fields {
		t.RawSetString(f.name, f.value)
	}
	return t
}

func testFields(names ...string) []field {
	fields := make([]field, len(names))
	for i, n := range names {
		fields[i] = field{n, lua.LString("v" + n)}
	}
	return fields
}

func TestTheLayoutOfGopherLuasTablesIsTheOneSetFieldsKnows(t *testing.T) {
	// Otherwise every state's libraries are built key by key again: twice
	// the allocations of a fresh state.
	if !ltableLayout().ok {
		t.Fatal("gopher-lua's LTable has no strdict, keys and k2i fields of the known types")
	}
}

func TestATableSetFieldsBuildsBehavesAsOneBuiltKeyByKey(t *testing.T) {
	fields := testFields("b", "a", "c", "_G", "d")
	var sh shape
	for _, tc := range []struct {
		name   string
		change func(*lua.LTable)
	}{
		{"it lists the same pairs in the same order", func(*lua.LTable) {}},
		{"a key added after lists last", func(t *lua.LTable) { t.RawSetString("z", lua.LTrue) }},
		{"a key removed is no longer listed", func(t *lua.LTable) { t.RawSetString("a", lua.LNil) }},
		{"a key removed and set again keeps its place", func(t *lua.LTable) {
			t.RawSetString("a", lua.LNil)
			t.RawSetString("a", lua.LFalse)
		}},
		{"a value replaced keeps its place", func(t *lua.LTable) { t.RawSetString("c", lua.LNumber(3)) }},
		{"other keys follow the string keys", func(t *lua.LTable) {
			t.RawSetInt(1, lua.LTrue)
			t.RawSet(lua.LTrue, lua.LTrue)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &lua.LTable{Metatable: lua.LNil}
			setFields(got, &sh, fields)
			want := byRawSet(fields)
			tc.change(got)
			tc.change(want)
			if g, w := pairsOf(got), pairsOf(want); !slices.Equal(g, w) {
				t.Fatalf("pairs %v, want %v", g, w)
			}
			for _, f := range fields {
				if g, w := got.RawGetString(f.name), want.RawGetString(f.name); g != w {
					t.Errorf("%s = %v, want %v", f.name, g, w)
				}
			}
		})
	}
}

func TestTablesOfOneShapeShareNothingTheyChange(t *testing.T) {
	fields := testFields("x", "y")
	var sh shape
	a, b := &lua.LTable{Metatable: lua.LNil}, &lua.LTable{Metatable: lua.LNil}
	setFields(a, &sh, fields)
	setFields(b, &sh, fields)
	a.RawSetString("planted", lua.LTrue)
	a.RawSetString("x", lua.LNil)
	b.RawSetString("other", lua.LFalse)
	if got, want := pairsOf(a), []string{"y=vy", "planted=true"}; !slices.Equal(got, want) {
		t.Errorf("a lists %v, want %v", got, want)
	}
	if got, want := pairsOf(b), []string{"x=vx", "y=vy", "other=false"}; !slices.Equal(got, want) {
		t.Errorf("b lists %v, want %v", got, want)
	}
	c := &lua.LTable{Metatable: lua.LNil}
	setFields(c, &sh, fields)
	if got, want := pairsOf(c), []string{"x=vx", "y=vy"}; !slices.Equal(got, want) {
		t.Errorf("a table made after lists %v, want %v", got, want)
	}
}

func TestSetFieldsFallsBackToSettingKeysOneByOne(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  []field // fixes the shape
		fields []field
		before []field // already in the table
	}{
		{"when the keys differ from the shape's", testFields("a", "b"), testFields("a", "c"), nil},
		{"when there are more keys than the shape's", testFields("a", "b"), testFields("a", "b", "c"), nil},
		{"when the shape repeats a key", testFields("a", "a"), testFields("a", "a"), nil},
		{"when a value is nil", testFields("a", "b"), []field{{"a", lua.LTrue}, {"b", lua.LNil}}, nil},
		{"when the table already has a key", testFields("a", "b"), testFields("a", "b"), testFields("c")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sh shape
			setFields(&lua.LTable{Metatable: lua.LNil}, &sh, tc.first)
			got := byRawSet(tc.before)
			setFields(got, &sh, tc.fields)
			want := byRawSet(append(slices.Clone(tc.before), tc.fields...))
			if g, w := pairsOf(got), pairsOf(want); !slices.Equal(g, w) {
				t.Fatalf("pairs %v, want %v", g, w)
			}
		})
	}
}

func TestAFreshStatesLibrariesListTheirKeptMembersFirstInGopherLuasOrder(t *testing.T) {
	L := newState(t, Options{})
	for _, lib := range []string{lua.BaseLibName, lua.StringLibName, lua.TabLibName, lua.MathLibName, lua.CoroutineLibName, lua.OsLibName} {
		t.Run("in "+cmp.Or(lib, "the globals"), func(t *testing.T) {
			tbl, want := L.G.Global, append([]string{"_G", "_VERSION"}, stdKept[lib]...)
			if lib != lua.BaseLibName {
				tbl, want = L.G.Global.RawGetString(lib).(*lua.LTable), stdKept[lib]
			}
			var got []string
			for k, _ := tbl.Next(lua.LNil); k != lua.LNil && len(got) < len(want); k, _ = tbl.Next(k) {
				got = append(got, k.String())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("next lists %v first, want %v", got, want)
			}
		})
	}
}
