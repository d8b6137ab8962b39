package sandbox

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// tooLarge raises the error for a result of n bytes (or more, when n is
// negative) over MaxStringBytes.
func (b *box) tooLarge(L *lua.LState, fn string, n float64) {
	if n < 0 {
		L.RaiseError("%s: the result would be over the limit of %d bytes", fn, b.opts.MaxStringBytes)
	}
	size := strconv.FormatFloat(n, 'f', 0, 64)
	if n >= 1e15 {
		size = strconv.FormatFloat(n, 'g', 6, 64)
	}
	L.RaiseError("%s: the result would be %s bytes, over the limit of %d bytes", fn, size, b.opts.MaxStringBytes)
}

// strRep is string.rep(s, n) with the result capped at MaxStringBytes.
func (b *box) strRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := math.Floor(float64(L.CheckNumber(2)))
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if size := float64(len(s)) * n; size > float64(b.opts.MaxStringBytes) {
		b.tooLarge(L, "string.rep", size)
	}
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

// strFormat is gopher-lua's string.format (Go's fmt under Lua's syntax)
// after checking the format as Lua 5.1 does, width and precision of at most
// two digits, and that the result cannot exceed MaxStringBytes.
func (b *box) strFormat(format lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		f := L.CheckString(1)
		bound := float64(len(f))
		arg := 1
		for i := 0; i < len(f); i++ {
			if f[i] != '%' {
				continue
			}
			i++
			if i < len(f) && f[i] == '%' {
				continue
			}
			flags := 0
			for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
				i++
				flags++
			}
			if flags > 5 {
				L.RaiseError("invalid format (repeated flags)")
			}
			digits := func() int {
				n, v := 0, 0
				for i < len(f) && f[i] >= '0' && f[i] <= '9' {
					v = 10*v + int(f[i]-'0')
					i++
					n++
				}
				if n > 2 {
					L.RaiseError("invalid format (width or precision too long)")
				}
				return v
			}
			width, prec := digits(), -1
			if i < len(f) && f[i] == '.' {
				i++
				prec = digits()
			}
			if i >= len(f) || f[i] == '*' || f[i] == '[' {
				spec := f[min(i, len(f)-1):min(i+1, len(f))]
				L.RaiseError("invalid option '%%%s' to 'format'", spec)
			}
			arg++
			checkFormatArg(L, arg, f[i])
			bound += max(float64(width), argBound(L.Get(arg), f[i], prec))
		}
		if bound > float64(b.opts.MaxStringBytes) {
			b.tooLarge(L, "string.format", -1)
		}
		return format(L)
	}
}

// argBound bounds the text a format verb with the given precision (-1:
// none) makes of v, before padding to the width.
func argBound(v lua.LValue, verb byte, prec int) float64 {
	p := float64(max(prec, 0))
	s, ok := v.(lua.LString)
	if !ok {
		switch verb {
		case 'f', 'F':
			return 330 + p // 309 digits of 1e308, a sign, a point, the decimals
		case 'e', 'E', 'g', 'G':
			return 32 + p
		}
		return 64 // an integer, a character, or a short description of the value
	}
	n := float64(len(s))
	switch verb {
	case 's':
		if prec >= 0 {
			return min(n, p)
		}
		return n
	case 'x', 'X':
		return 2 * n
	case 'q':
		return 4*n + 2 // an escape is at most 4 bytes
	}
	return n + 64 // other verbs print the string inside a note
}

// tableConcat is table.concat with the result capped at MaxStringBytes.
func (b *box) tableConcat(L *lua.LState) int {
	tbl := L.CheckTable(1)
	sep := L.OptString(2, "")
	n := tbl.Len()
	i := L.OptInt(3, 1)
	j := L.OptInt(4, n)
	if L.GetTop() == 3 && (i > n || i < 1) {
		L.Push(lua.LString(""))
		return 1
	}
	i = max(min(i, n), 1)
	j = min(j, n)
	if i > j {
		L.Push(lua.LString(""))
		return 1
	}
	size := float64(len(sep)) * float64(j-i)
	for k := i; k <= j; k++ {
		v := tbl.RawGetInt(k)
		switch v := v.(type) {
		case lua.LString:
			size += float64(len(v))
		case lua.LNumber:
			size += float64(len(v.String()))
		default:
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type().String(), k)
		}
	}
	if size > float64(b.opts.MaxStringBytes) {
		b.tooLarge(L, "table.concat", size)
	}
	var sb strings.Builder
	sb.Grow(int(size))
	for k := i; k <= j; k++ {
		sb.WriteString(lua.LVAsString(tbl.RawGetInt(k)))
		if k != j {
			sb.WriteString(sep)
		}
	}
	L.Push(lua.LString(sb.String()))
	return 1
}

// posrelat turns a Lua string position (negative: from the end) into a
// 1-based one, at least 0.
func posrelat(pos, n int) int {
	if pos < 0 {
		pos += n + 1
	}
	return max(pos, 0)
}

// strFind is string.find(s, pattern [, init [, plain]]).
func (b *box) strFind(L *lua.LState) int { return b.find(L, true) }

// strMatch is string.match(s, pattern [, init]).
func (b *box) strMatch(L *lua.LState) int { return b.find(L, false) }

func (b *box) find(L *lua.LState, find bool) int {
	s := L.CheckString(1)
	p := L.CheckString(2)
	init := posrelat(L.OptInt(3, 1), len(s)) - 1
	init = min(max(init, 0), len(s))
	if find && (L.ToBool(4) || !strings.ContainsAny(p, specials)) {
		if k := strings.Index(s[init:], p); k >= 0 {
			L.Push(lua.LNumber(init + k + 1))
			L.Push(lua.LNumber(init + k + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	anchor := strings.HasPrefix(p, "^")
	if anchor {
		p = p[1:]
	}
	ms := newMatchState(L, s, p, b.opts.MaxPatternSteps)
	for s1 := init; ; s1++ {
		ms.level = 0
		if e := ms.match(s1, 0); e != -1 {
			if find {
				L.Push(lua.LNumber(s1 + 1))
				L.Push(lua.LNumber(e))
				return ms.pushCaptures(-1, -1, false) + 2
			}
			return ms.pushCaptures(s1, e, true)
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

// strGmatch is string.gmatch(s, pattern): an iterator over the matches,
// found one at a time, each with its own step budget.
func (b *box) strGmatch(L *lua.LState) int {
	s := L.CheckString(1)
	p := L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := newMatchState(L, s, p, b.opts.MaxPatternSteps)
		for src := pos; src <= len(s); src++ {
			ms.level = 0
			if e := ms.match(src, 0); e != -1 {
				pos = e
				if e == src {
					pos++ // an empty match: go on at the next position
				}
				return ms.pushCaptures(src, e, true)
			}
		}
		pos = len(s) + 1
		return 0
	}))
	return 1
}

// gsubCheckEvery is how many replacements string.gsub makes between two
// looks at the state's context.
const gsubCheckEvery = 16

// strGsub is string.gsub(s, pattern, repl [, n]), building the result once,
// capped at MaxStringBytes.
func (b *box) strGsub(L *lua.LState) int {
	src := L.CheckString(1)
	p := L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LNumber, lua.LString, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	anchor := strings.HasPrefix(p, "^")
	if anchor {
		p = p[1:]
	}
	limit := b.opts.MaxStringBytes
	var out strings.Builder
	grow := func(n int) {
		if out.Len()+n > limit {
			b.tooLarge(L, "string.gsub", -1)
		}
	}
	ms := newMatchState(L, src, p, b.opts.MaxPatternSteps)
	n := 0
	s := 0
	for n < maxN {
		ms.level = 0
		e := ms.match(s, 0)
		if e != -1 {
			n++
			b.addValue(L, ms, &out, grow, repl, s, e)
			if n%gsubCheckEvery == 0 {
				reraise(L) // replacements are work the matcher does not count
			}
		}
		switch {
		case e != -1 && e > s:
			s = e
		case s < len(src):
			grow(1)
			out.WriteByte(src[s])
			s++
		default:
			goto done
		}
		if anchor {
			break
		}
	}
done:
	grow(len(src) - s)
	out.WriteString(src[s:])
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue appends the replacement for the match from s to e.
func (b *box) addValue(L *lua.LState, ms *matchState, out *strings.Builder, grow func(int), repl lua.LValue, s, e int) {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		r1 := lua.LVAsString(r)
		for i := 0; i < len(r1); i++ {
			if r1[i] != '%' { // the run up to the next %, at once
				j := strings.IndexByte(r1[i:], '%')
				if j < 0 {
					j = len(r1) - i
				}
				grow(j)
				out.WriteString(r1[i : i+j])
				i += j - 1
				continue
			}
			i++
			switch {
			case i == len(r1):
				L.RaiseError("%s", "invalid use of '%' in replacement string")
			case r1[i] == '0':
				grow(e - s)
				out.WriteString(ms.src[s:e])
			case r1[i] >= '1' && r1[i] <= '9':
				c := ms.captureString(int(r1[i]-'1'), s, e)
				grow(len(c))
				out.WriteString(c)
			default:
				grow(1)
				out.WriteByte(r1[i])
			}
		}
		return
	case *lua.LFunction:
		L.Push(r)
		nargs := ms.pushCaptures(s, e, true)
		L.Call(nargs, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		ms.pushCapture(0, s, e)
		key := L.Get(-1)
		L.Pop(1)
		v = L.GetTable(r, key)
	}
	var text string
	switch x := v.(type) {
	case lua.LString:
		text = string(x)
	case lua.LNumber:
		text = x.String()
	default:
		if lua.LVAsBool(v) {
			L.RaiseError("invalid replacement value (a %s)", v.Type().String())
		}
		text = ms.src[s:e] // nil or false: keep the match
	}
	grow(len(text))
	out.WriteString(text)
}
