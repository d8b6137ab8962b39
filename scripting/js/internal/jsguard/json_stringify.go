package jsguard

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// jsonStringify is JSON.stringify, written after goja's (same output for
// the same input, replacer functions and lists, space, toJSON, boxed
// primitives, RawJSON), with a nesting limit of MaxDepth and a cap on the
// result's size.
func (g *guard) jsonStringify(c goja.FunctionCall) goja.Value {
	s := stringifier{gd: g}
	if r, ok := c.Argument(1).(*goja.Object); ok {
		if g.callIsArray(r) {
			s.list = []string{}
			seen := map[string]bool{}
			n := toLength(r.Get("length"))
			for i := int64(0); i < n; i++ {
				v := r.Get(strconv.FormatInt(i, 10))
				var name string
				switch {
				case goja.IsString(v) || goja.IsNumber(v):
					name = v.String()
				case isObject(v):
					switch v.(*goja.Object).ClassName() {
					case "Number", "String":
						name = v.String()
					default:
						continue
					}
				default:
					continue
				}
				if !seen[name] {
					seen[name] = true
					s.list = append(s.list, name)
				}
			}
		} else if fn, ok := goja.AssertFunction(r); ok {
			s.replacer = fn
		}
	}
	s.setGap(c.Argument(2))
	holder := g.vm.NewObject()
	rethrowDefine(holder.DefineDataProperty("", c.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE))
	if !s.str("", holder) {
		return goja.Undefined()
	}
	return g.vm.ToValue(s.buf.String())
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

type stringifier struct {
	gd          *guard
	stack       []*goja.Object
	list        []string // property list, nil when there is none
	replacer    goja.Callable
	gap, indent string
	buf         bytes.Buffer
}

func (s *stringifier) setGap(space goja.Value) {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = o.ToNumber()
		case "String":
			space = o.ToString()
		}
	}
	switch {
	case goja.IsNumber(space):
		f := space.ToFloat()
		if f >= 1 {
			s.gap = strings.Repeat(" ", int(min(f, 10)))
		}
	case goja.IsString(space):
		str := space.(goja.String)
		if str.Length() > 10 {
			str = str.Substring(0, 10)
		}
		s.gap = str.String()
	}
}

// unbox replaces a Number, String, Boolean or BigInt object by its
// primitive, as SerializeJSONProperty does.
func (s *stringifier) unbox(o *goja.Object) goja.Value {
	switch o.ClassName() {
	case "Number":
		if !isProxy(o) {
			return o.ToNumber()
		}
	case "String":
		if !isProxy(o) {
			return o.ToString()
		}
	case "Boolean", "BigInt":
		switch x := o.Export().(type) {
		case bool:
			return s.gd.vm.ToValue(x)
		case *big.Int:
			return s.gd.vm.ToValue(x)
		}
	}
	return o
}

func (s *stringifier) checkSize() {
	if int64(s.buf.Len()) > s.gd.maxBytes/2 {
		panic(s.gd.capErr("JSON.stringify", "result"))
	}
}

// str is SerializeJSONProperty; false means "undefined" (nothing written).
func (s *stringifier) str(key string, holder *goja.Object) bool {
	vm := s.gd.vm
	value := holder.Get(key)
	if value == nil {
		value = goja.Undefined()
	}
	if isObject(value) || goja.IsBigInt(value) {
		if toJSON, ok := value.ToObject(vm).Get("toJSON").(*goja.Object); ok {
			if fn, ok := goja.AssertFunction(toJSON); ok {
				v, err := fn(value, vm.ToValue(key))
				rethrow(err)
				value = v
			}
		}
	}
	if s.replacer != nil {
		v, err := s.replacer(holder, vm.ToValue(key), value)
		rethrow(err)
		value = v
	}
	if o, ok := value.(*goja.Object); ok {
		value = s.unbox(o)
	}
	switch {
	case goja.IsUndefined(value):
		return false
	case goja.IsNull(value):
		s.buf.WriteString("null")
	case goja.IsString(value):
		s.quote(value.(goja.String))
		s.checkSize()
	case goja.IsNumber(value):
		if f := value.ToFloat(); math.IsNaN(f) || math.IsInf(f, 0) {
			s.buf.WriteString("null")
		} else {
			s.buf.WriteString(value.String())
		}
	case goja.IsBigInt(value):
		panic(s.gd.typeErr("Do not know how to serialize a BigInt"))
	case isObject(value):
		o := value.(*goja.Object)
		if o.ClassName() == "RawJSON" {
			s.buf.WriteString(o.Get("rawJSON").String())
			s.checkSize()
			return true
		}
		if _, ok := goja.AssertFunction(o); ok {
			return false
		}
		for _, a := range s.stack {
			if a == o {
				panic(s.gd.typeErr("Converting circular structure to JSON"))
			}
		}
		if len(s.stack) >= s.gd.maxDepth {
			panic(s.gd.rangeErr(fmt.Sprintf("JSON.stringify: nesting deeper than %d levels", s.gd.maxDepth)))
		}
		s.stack = append(s.stack, o)
		if s.gd.callIsArray(o) {
			s.array(o)
		} else {
			s.object(o)
		}
		s.stack[len(s.stack)-1] = nil
		s.stack = s.stack[:len(s.stack)-1]
	default:
		if _, ok := value.(*goja.Symbol); ok {
			return false
		}
		if value.ToBoolean() {
			s.buf.WriteString("true")
		} else {
			s.buf.WriteString("false")
		}
	}
	return true
}

func (s *stringifier) array(a *goja.Object) {
	stepback := s.indent
	s.indent += s.gap
	n := toLength(a.Get("length"))
	s.gd.checkHoles("JSON.stringify", a, n)
	if n == 0 {
		s.buf.WriteString("[]")
		s.indent = stepback
		return
	}
	s.buf.WriteByte('[')
	sep := ","
	if s.gap != "" {
		s.buf.WriteByte('\n')
		s.buf.WriteString(s.indent)
		sep = ",\n" + s.indent
	}
	for i := int64(0); i < n; i++ {
		if !s.str(strconv.FormatInt(i, 10), a) {
			s.buf.WriteString("null")
		}
		if i < n-1 {
			s.buf.WriteString(sep)
		}
		s.checkSize()
	}
	if s.gap != "" {
		s.buf.WriteByte('\n')
		s.buf.WriteString(stepback)
	}
	s.indent = stepback
	s.buf.WriteByte(']')
}

func (s *stringifier) object(o *goja.Object) {
	stepback := s.indent
	s.indent += s.gap
	keys := s.list
	if keys == nil {
		keys = o.Keys()
	}
	s.buf.WriteByte('{')
	sep := ","
	colon := ":"
	if s.gap != "" {
		sep = ",\n" + s.indent
		colon = ": "
	}
	empty := true
	for _, k := range keys {
		mark := s.buf.Len()
		if empty {
			if s.gap != "" {
				s.buf.WriteString("\n" + s.indent)
			}
		} else {
			s.buf.WriteString(sep)
		}
		s.quoteGo(k)
		s.buf.WriteString(colon)
		if s.str(k, o) {
			empty = false
		} else {
			s.buf.Truncate(mark)
		}
		s.checkSize()
	}
	if !empty && s.gap != "" {
		s.buf.WriteByte('\n')
		s.buf.WriteString(stepback)
	}
	s.indent = stepback
	s.buf.WriteByte('}')
}

const hexDigits = "0123456789abcdef"

func (s *stringifier) quote(str goja.String) {
	gs := str.String()
	// goja turns a lone surrogate into U+FFFD when it makes a Go string;
	// only then are the UTF-16 units read one by one.
	if !strings.ContainsRune(gs, utf8.RuneError) {
		s.quoteGo(gs)
		return
	}
	s.buf.WriteByte('"')
	n := str.Length()
	for i := 0; i < n; i++ {
		u := str.CharAt(i)
		switch {
		case utf16.IsSurrogate(rune(u)):
			if u < 0xdc00 && i+1 < n {
				if l := str.CharAt(i + 1); l >= 0xdc00 && l <= 0xdfff {
					s.buf.WriteRune(utf16.DecodeRune(rune(u), rune(l)))
					i++
					continue
				}
			}
			s.buf.WriteString(`\u`)
			s.buf.WriteByte(hexDigits[u>>12])
			s.buf.WriteByte(hexDigits[(u>>8)&0xf])
			s.buf.WriteByte(hexDigits[(u>>4)&0xf])
			s.buf.WriteByte(hexDigits[u&0xf])
		case u < utf8.RuneSelf:
			s.quoteByte(byte(u))
		default:
			s.buf.WriteRune(rune(u))
		}
	}
	s.buf.WriteByte('"')
}

// quoteGo quotes a Go string that holds no lone surrogate.
func (s *stringifier) quoteGo(gs string) {
	s.buf.WriteByte('"')
	start := 0
	for i := 0; i < len(gs); i++ {
		b := gs[i]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		s.buf.WriteString(gs[start:i])
		s.quoteByte(b)
		start = i + 1
	}
	s.buf.WriteString(gs[start:])
	s.buf.WriteByte('"')
}

func (s *stringifier) quoteByte(b byte) {
	switch b {
	case '"', '\\':
		s.buf.WriteByte('\\')
		s.buf.WriteByte(b)
	case '\b':
		s.buf.WriteString(`\b`)
	case '\t':
		s.buf.WriteString(`\t`)
	case '\n':
		s.buf.WriteString(`\n`)
	case '\f':
		s.buf.WriteString(`\f`)
	case '\r':
		s.buf.WriteString(`\r`)
	default:
		if b < 0x20 {
			s.buf.WriteString(`\u00`)
			s.buf.WriteByte(hexDigits[b>>4])
			s.buf.WriteByte(hexDigits[b&0xf])
		} else {
			s.buf.WriteByte(b)
		}
	}
}
