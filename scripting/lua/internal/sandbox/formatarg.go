package sandbox

import (
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// checkFormatArg checks argument arg of string.format for verb as Lua 5.1
// does, before gopher-lua hands it to Go's fmt, which would print Go's own
// forms ("%!d(MISSING)", a table's Go struct under %d, a Go type name
// under %T): the verb is one of Lua's (c d i o x X e E f g G q s; Go's u
// prints nothing Lua-like and is refused too), a numeric verb takes a
// number or a string that converts to one (converted here), and the
// argument exists.
func checkFormatArg(L *lua.LState, arg int, verb byte) {
	switch verb {
	case 's', 'q':
	case 'c', 'd', 'i', 'o', 'x', 'X', 'e', 'E', 'f', 'g', 'G':
		if arg <= L.GetTop() {
			checkNumberArg(L, arg)
		}
	default:
		L.RaiseError("invalid option '%%%c' to 'format'", verb)
	}
	if arg > L.GetTop() {
		L.ArgError(arg, "no value")
	}
}

// checkNumberArg converts argument arg to a number, as Lua converts a
// numeric string, or raises Lua's "number expected" error.
func checkNumberArg(L *lua.LState, arg int) {
	switch v := L.Get(arg).(type) {
	case lua.LNumber:
	case lua.LString:
		n, ok := luaNumber(string(v))
		if !ok {
			L.TypeError(arg, lua.LTNumber)
		}
		L.Replace(arg, n)
	default:
		L.TypeError(arg, lua.LTNumber)
	}
}

// luaNumber parses s as Lua's tonumber does: an integer (decimal or 0x
// hexadecimal) or a float, surrounded by white space.
func luaNumber(s string) (lua.LNumber, bool) {
	s = strings.Trim(s, " \t\n\r\v\f")
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return lua.LNumber(i), true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return lua.LNumber(f), true
	}
	return 0, false
}
