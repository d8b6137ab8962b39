package jsguard

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

const errUnexpectedEnd = "Unexpected end of JSON input"

// jsonParse is JSON.parse: an iterative parser (an explicit stack, no Go
// recursion per nesting level) that refuses documents nesting deeper than
// MaxDepth. Objects get their members as own data properties (so
// "__proto__" is an ordinary key and setters on Object.prototype are not
// called) and a repeated key keeps its first position and its last value.
// Messages follow encoding/json's, which goja's own JSON.parse reports.
func (g *guard) jsonParse(c goja.FunctionCall) goja.Value {
	p := jsonParser{g: g, s: c.Argument(0).String()}
	v := p.parse()
	if r, ok := c.Argument(1).(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(r); ok {
			root := g.vm.NewObject()
			rethrowDefine(root.DefineDataProperty("", v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE))
			return g.revive(fn, root, "", 0)
		}
	}
	return v
}

func rethrowDefine(err error) {
	if err != nil {
		panic(err)
	}
}

// revive is InternalizeJSONProperty. Its Go recursion is bounded by
// MaxDepth: a reviver can graft a deeper value onto a part not yet walked.
func (g *guard) revive(reviver goja.Callable, holder *goja.Object, key string, depth int) goja.Value {
	if depth > g.maxDepth {
		panic(g.rangeErr(fmt.Sprintf("JSON.parse: nesting deeper than %d levels", g.maxDepth)))
	}
	val := holder.Get(key)
	if val == nil {
		val = goja.Undefined()
	}
	if o, ok := val.(*goja.Object); ok {
		visit := func(k string) {
			nv := g.revive(reviver, o, k, depth+1)
			if goja.IsUndefined(nv) {
				rethrowDefine(o.Delete(k))
			} else {
				// CreateDataProperty: a refusal is not an error.
				_ = o.DefineDataProperty(k, nv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
			}
		}
		if g.callIsArray(o) {
			n := toLength(o.Get("length"))
			for i := int64(0); i < n; i++ {
				visit(strconv.FormatInt(i, 10))
			}
		} else {
			for _, k := range o.Keys() {
				visit(k)
			}
		}
	}
	v, err := reviver(holder, g.vm.ToValue(key), val)
	rethrow(err)
	return v
}

// toLength is ToLength.
func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	f := v.ToNumber().ToFloat()
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 1<<53-1:
		return 1<<53 - 1
	}
	return int64(f)
}

type jsonParser struct {
	g *guard
	s string
	i int
}

type jsonFrame struct {
	obj   *goja.Object // nil for an array
	key   string
	items []any
}

func (p *jsonParser) fail(msg string) {
	panic(p.g.syntaxErr(msg))
}

func (p *jsonParser) failAt(context string) {
	if p.i >= len(p.s) {
		p.fail(errUnexpectedEnd)
	}
	p.fail("invalid character " + quoteChar(p.s[p.i:]) + " " + context)
}

// quoteChar formats the character at the start of s as encoding/json does.
func quoteChar(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	switch r {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(r))
	return "'" + q[1:len(q)-1] + "'"
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) parse() goja.Value {
	vm := p.g.vm
	var stack []jsonFrame
	for {
		// A value starts here.
		p.skipSpace()
		if p.i >= len(p.s) {
			p.fail(errUnexpectedEnd)
		}
		var val goja.Value
		switch ch := p.s[p.i]; {
		case ch == '{' || ch == '[':
			if len(stack) >= p.g.maxDepth {
				panic(p.g.rangeErr(fmt.Sprintf("JSON.parse: nesting deeper than %d levels", p.g.maxDepth)))
			}
			p.i++
			p.skipSpace()
			if ch == '[' {
				if p.i < len(p.s) && p.s[p.i] == ']' {
					p.i++
					val = vm.NewArray()
					break
				}
				stack = append(stack, jsonFrame{})
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				val = vm.NewObject()
				break
			}
			stack = append(stack, jsonFrame{obj: vm.NewObject(), key: p.key()})
			continue
		case ch == '"':
			val = p.str()
		case ch == '-' || ch >= '0' && ch <= '9':
			val = p.number()
		case ch == 't':
			p.literal("true")
			val = vm.ToValue(true)
		case ch == 'f':
			p.literal("false")
			val = vm.ToValue(false)
		case ch == 'n':
			p.literal("null")
			val = goja.Null()
		default:
			p.failAt("looking for beginning of value")
		}
		// Complete the containers val closes.
		for {
			if len(stack) == 0 {
				p.skipSpace()
				if p.i < len(p.s) {
					p.failAt("after top-level value")
				}
				return val
			}
			top := &stack[len(stack)-1]
			if top.obj != nil {
				rethrowDefine(top.obj.DefineDataProperty(top.key, val, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE))
			} else {
				top.items = append(top.items, val)
			}
			p.skipSpace()
			if p.i >= len(p.s) {
				p.fail(errUnexpectedEnd)
			}
			ch := p.s[p.i]
			if ch == ',' {
				p.i++
				if top.obj != nil {
					p.skipSpace()
					top.key = p.key()
				}
				break
			}
			if top.obj != nil && ch == '}' {
				val = top.obj
			} else if top.obj == nil && ch == ']' {
				val = vm.NewArray(top.items...)
			} else if top.obj != nil {
				p.failAt("after object key:value pair")
			} else {
				p.failAt("after array element")
			}
			p.i++
			stack[len(stack)-1] = jsonFrame{}
			stack = stack[:len(stack)-1]
		}
	}
}

// key reads `"name" :` with the space around the colon.
func (p *jsonParser) key() string {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		p.failAt("looking for beginning of object key string")
	}
	k := p.str().String()
	p.skipSpace()
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		p.failAt("after object key")
	}
	p.i++
	return k
}

func (p *jsonParser) literal(word string) {
	for j := 0; j < len(word); j++ {
		if p.i >= len(p.s) {
			p.fail(errUnexpectedEnd)
		}
		if p.s[p.i] != word[j] {
			p.failAt(fmt.Sprintf("in literal %s (expecting %s)", word, quoteChar(word[j:])))
		}
		p.i++
	}
}

// str reads a string literal; p.s[p.i] is its opening quote.
func (p *jsonParser) str() goja.Value {
	p.i++
	start := p.i
	for p.i < len(p.s) {
		switch ch := p.s[p.i]; {
		case ch == '"':
			v := p.g.vm.ToValue(p.s[start:p.i])
			p.i++
			return v
		case ch == '\\':
			return p.escaped(start)
		case ch < 0x20:
			p.failAt("in string literal")
		}
		p.i++
	}
	p.fail(errUnexpectedEnd)
	return nil
}

// escaped finishes a string literal with escapes as UTF-16 code units, so
// that a \u escape of a lone surrogate keeps it, as JavaScript does.
func (p *jsonParser) escaped(start int) goja.Value {
	units := make([]uint16, 0, p.i-start+16)
	for _, r := range p.s[start:p.i] {
		units = utf16.AppendRune(units, r)
	}
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == '"':
			p.i++
			return goja.StringFromUTF16(units)
		case ch < 0x20:
			p.failAt("in string literal")
		case ch == '\\':
			p.i++
			if p.i >= len(p.s) {
				p.fail(errUnexpectedEnd)
			}
			switch e := p.s[p.i]; e {
			case '"', '\\', '/':
				units = append(units, uint16(e))
			case 'b':
				units = append(units, '\b')
			case 'f':
				units = append(units, '\f')
			case 'n':
				units = append(units, '\n')
			case 'r':
				units = append(units, '\r')
			case 't':
				units = append(units, '\t')
			case 'u':
				var u uint16
				for j := 0; j < 4; j++ {
					p.i++
					if p.i >= len(p.s) {
						p.fail(errUnexpectedEnd)
					}
					h := p.s[p.i]
					switch {
					case h >= '0' && h <= '9':
						u = u<<4 | uint16(h-'0')
					case h >= 'a' && h <= 'f':
						u = u<<4 | uint16(h-'a'+10)
					case h >= 'A' && h <= 'F':
						u = u<<4 | uint16(h-'A'+10)
					default:
						p.failAt(`in \u hexadecimal character escape`)
					}
				}
				units = append(units, u)
			default:
				p.failAt("in string escape code")
			}
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			units = utf16.AppendRune(units, r)
			p.i += size
		}
	}
	p.fail(errUnexpectedEnd)
	return nil
}

func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// number reads a number literal; p.s[p.i] is '-' or a digit.
func (p *jsonParser) number() goja.Value {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
		if p.i >= len(p.s) {
			p.fail(errUnexpectedEnd)
		}
		if c := p.s[p.i]; c < '0' || c > '9' {
			p.failAt("in numeric literal")
		}
	}
	if p.s[p.i] == '0' {
		p.i++
	} else {
		p.digits()
	}
	integer := true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		integer = false
		p.i++
		if !p.digits() {
			p.failAt("after decimal point in numeric literal")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		integer = false
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			p.failAt("in exponent of numeric literal")
		}
	}
	lit := p.s[start:p.i]
	if integer && len(lit) <= 15 && lit != "-0" {
		n, err := strconv.ParseInt(lit, 10, 64)
		if err == nil {
			return p.g.vm.ToValue(n)
		}
	}
	// The grammar was checked above: the only error left is ErrRange, whose
	// result (±Inf or ±0) is what JavaScript gives.
	f, _ := strconv.ParseFloat(lit, 64)
	return p.g.vm.ToValue(f)
}
