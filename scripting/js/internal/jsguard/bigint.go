package jsguard

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// MaxBigIntBits caps the size of a BigInt that an operator or a builtin
// computes (see the package documentation, "BigInt"). At the cap, the
// slowest step one value can cost is a conversion to a decimal string
// (about 80 ms) or parsing one (BigInt of a 315,653-digit string, about
// 0.3 s; on a loaded two-core machine).
const MaxBigIntBits = 1 << 20

// maxBigIntDigits is the most significant decimal digits a BigInt under the
// cap can have: ceil(MaxBigIntBits * log10(2)).
var maxBigIntDigits = int(math.Ceil(MaxBigIntBits * math.Log10(2)))

// numberTypes are goja's dynamic types of numbers, learned from values it
// makes (they are unexported): an integer and a float.
type numberTypes struct {
	integer, float reflect.Type
}

func (g *guard) bigErr() any {
	return g.rangeErr(fmt.Sprintf("BigInt: result larger than %d bits", MaxBigIntBits))
}

// mixErr is goja's error for an operator given a BigInt and a number.
func (g *guard) mixErr() any {
	return g.typeErr("Cannot mix BigInt and other types, use explicit conversions")
}

// installOperators defines the helpers jsrewrite.Operators calls in place of
// **, <<, >> and *: non-enumerable, non-writable, non-configurable
// properties of the global object under names no script text can spell,
// so that no script can replace or shadow them.
func (g *guard) installOperators() error {
	g.nums = numberTypes{
		integer: reflect.TypeOf(g.vm.ToValue(1)),
		float:   reflect.TypeOf(g.vm.ToValue(1.5)),
	}
	global := g.vm.GlobalObject()
	bigint, _ := global.Get("BigInt").(*goja.Object)
	if orig, ok := g.proxyOrig[bigint]; ok {
		bigint = orig
	}
	call, ok := goja.AssertFunction(bigint)
	if !ok {
		return fmt.Errorf("the intrinsic BigInt is not a function")
	}
	g.origBigInt = call
	for _, h := range []struct {
		name, display string
		f             func(goja.FunctionCall) goja.Value
	}{
		{jsrewrite.PowName, "**", g.opPow},
		{jsrewrite.ShlName, "<<", g.opShl},
		{jsrewrite.SarName, ">>", g.opSar},
		{jsrewrite.MulName, "*", g.opMul},
	} {
		f := g.vm.ToValue(h.f).(*goja.Object)
		if err := f.DefineDataProperty("name", g.vm.ToValue(h.display), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
		if err := global.DefineDataProperty(h.name, f, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// toNumeric is ToNumeric, as goja's operators do it: an object is converted
// by ToPrimitive with hint number, a BigInt stays, the rest goes through
// ToNumber. The result is a BigInt (big non-nil) or a number: i when isInt
// (goja's integer form), f otherwise.
type numeric struct {
	big   *big.Int
	isInt bool
	i     int64
	f     float64
}

func (g *guard) toNumeric(v goja.Value) numeric {
	if o, ok := v.(*goja.Object); ok {
		v = g.toPrimitiveNumber(o)
	}
	switch reflect.TypeOf(v) {
	case g.nums.integer:
		return numeric{isInt: true, i: v.ToInteger()}
	case g.nums.float:
		return g.fromFloat(v.ToFloat())
	}
	if goja.IsBigInt(v) {
		return numeric{big: v.Export().(*big.Int)}
	}
	n := v.ToNumber() // throws for a Symbol, as the operators do
	if reflect.TypeOf(n) == g.nums.integer {
		return numeric{isInt: true, i: n.ToInteger()}
	}
	return g.fromFloat(n.ToFloat())
}

// fromFloat is goja's floatToValue: an integral float in the safe range
// (not -0) is an integer.
func (g *guard) fromFloat(f float64) numeric {
	const maxInt = 1 << 53
	if (f != 0 || !math.Signbit(f)) && !math.IsInf(f, 0) && f == math.Trunc(f) && f >= -maxInt && f <= maxInt {
		return numeric{isInt: true, i: int64(f)}
	}
	return numeric{f: f}
}

func (n numeric) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

// toPrimitiveNumber is ToPrimitive(o, number), as goja does it: the
// object's Symbol.toPrimitive with "number", else valueOf, else toString.
// Where goja's message would print its own Go structure ("Could not
// convert &{...} to primitive"), this one says what V8 says.
func (g *guard) toPrimitiveNumber(o *goja.Object) goja.Value {
	if m := o.GetSymbol(goja.SymToPrimitive); m != nil && !goja.IsUndefined(m) && !goja.IsNull(m) {
		f, ok := goja.AssertFunction(m)
		if !ok {
			panic(g.typeErr(fmt.Sprintf("%s is not a method", m.String())))
		}
		v, err := f(o, g.vm.ToValue("number"))
		rethrow(err)
		if _, ok := v.(*goja.Object); ok {
			panic(g.typeErr("Cannot convert object to primitive value"))
		}
		return v
	}
	for _, name := range [...]string{"valueOf", "toString"} {
		if f, ok := goja.AssertFunction(o.Get(name)); ok {
			v, err := f(o)
			rethrow(err)
			if _, ok := v.(*goja.Object); !ok {
				return v
			}
		}
	}
	panic(g.typeErr("Cannot convert object to primitive value"))
}

// operands converts both operands, left first, and reports whether they
// are BigInts; one BigInt and one number is goja's TypeError.
func (g *guard) operands(c goja.FunctionCall) (x, y numeric, bigs bool) {
	x = g.toNumeric(c.Argument(0))
	y = g.toNumeric(c.Argument(1))
	if (x.big != nil) != (y.big != nil) {
		panic(g.mixErr())
	}
	return x, y, x.big != nil
}

func (g *guard) intValue(i int64) goja.Value { return g.vm.ToValue(i) }

func (g *guard) floatValue(f float64) goja.Value { return g.vm.ToValue(f) }

func (g *guard) bigValue(b *big.Int) goja.Value {
	if b.BitLen() > MaxBigIntBits {
		panic(g.bigErr())
	}
	return g.vm.ToValue(b)
}

// opPow is a ** b.
func (g *guard) opPow(c goja.FunctionCall) goja.Value {
	x, y, bigs := g.operands(c)
	if !bigs {
		return g.numberPow(x, y)
	}
	if y.big.Sign() < 0 {
		panic(g.rangeErr("exponent must be positive"))
	}
	switch {
	case x.big.Sign() == 0 || y.big.Sign() == 0 || x.big.CmpAbs(big.NewInt(1)) == 0:
		// 0, 1 or -1 to any power, or anything to the power 0: no larger
		// than the base.
	default:
		// |x| >= 2: the result has more than (bitlen(x)-1)*y bits.
		if !y.big.IsInt64() || (int64(x.big.BitLen())-1)*y.big.Int64() >= MaxBigIntBits {
			panic(g.bigErr())
		}
	}
	return g.bigValue(new(big.Int).Exp(x.big, y.big, nil))
}

// numberPow is goja's pow for numbers.
func (g *guard) numberPow(x, y numeric) goja.Value {
	if x.isInt && y.isInt && y.i >= 0 {
		if y.i == 0 {
			return g.intValue(1)
		}
		if x.i == 0 {
			return g.intValue(0)
		}
		if ip := ipow(x.i, y.i); ip != 0 {
			return g.intValue(ip)
		}
	}
	xf, yf := x.float(), y.float()
	if math.Abs(xf) == 1 && math.IsInf(yf, 0) {
		return g.floatValue(math.NaN())
	}
	if xf == 1 && math.IsNaN(yf) {
		return g.floatValue(math.NaN())
	}
	return g.floatValue(math.Pow(xf, yf))
}

// opShl is a << b.
func (g *guard) opShl(c goja.FunctionCall) goja.Value {
	x, y, bigs := g.operands(c)
	if !bigs {
		return g.intValue(int64(toInt32(x) << (toUint32(y) & 0x1F)))
	}
	return g.bigShift(x.big, y.big, false)
}

// opSar is a >> b.
func (g *guard) opSar(c goja.FunctionCall) goja.Value {
	x, y, bigs := g.operands(c)
	if !bigs {
		return g.intValue(int64(toInt32(x) >> (toUint32(y) & 0x1F)))
	}
	return g.bigShift(x.big, y.big, true)
}

// bigShift shifts x left by n bits (right when right is set; a negative n
// shifts the other way), refusing a result over the cap. Unlike goja, a
// count of 2^64 or more is not cut to its low 64 bits.
func (g *guard) bigShift(x, n *big.Int, right bool) goja.Value {
	if n.Sign() < 0 {
		right = !right
	}
	abs := new(big.Int).Abs(n)
	if right {
		if !abs.IsUint64() || abs.Uint64() > uint64(x.BitLen()) {
			if x.Sign() < 0 {
				return g.bigValue(big.NewInt(-1))
			}
			return g.bigValue(big.NewInt(0))
		}
		return g.bigValue(new(big.Int).Rsh(x, uint(abs.Uint64())))
	}
	if x.Sign() == 0 {
		return g.bigValue(x)
	}
	if !abs.IsUint64() || abs.Uint64() > MaxBigIntBits {
		panic(g.bigErr())
	}
	if x.BitLen()+int(abs.Uint64()) > MaxBigIntBits {
		panic(g.bigErr())
	}
	return g.bigValue(new(big.Int).Lsh(x, uint(abs.Uint64())))
}

// opMul is a * b.
func (g *guard) opMul(c goja.FunctionCall) goja.Value {
	x, y, bigs := g.operands(c)
	if !bigs {
		if x.isInt && y.isInt {
			// goja's integer product, -0 and overflow rules included.
			l, r := x.i, y.i
			if l == 0 && r == -1 || l == -1 && r == 0 {
				return g.floatValue(math.Copysign(0, -1))
			}
			res := l * r
			if l == 0 || r == 0 || res/l == r {
				return g.intValue(res)
			}
		}
		return g.floatValue(x.float() * y.float())
	}
	if x.big.Sign() != 0 && y.big.Sign() != 0 && x.big.BitLen()+y.big.BitLen()-1 > MaxBigIntBits {
		panic(g.bigErr())
	}
	return g.bigValue(new(big.Int).Mul(x.big, y.big))
}

// toInt32 and toUint32 are goja's, on a converted number.
func toInt32(n numeric) int32 {
	if n.isInt {
		return int32(n.i)
	}
	if !math.IsNaN(n.f) && !math.IsInf(n.f, 0) {
		return int32(int64(n.f))
	}
	return 0
}

func toUint32(n numeric) uint32 {
	if n.isInt {
		return uint32(n.i)
	}
	if !math.IsNaN(n.f) && !math.IsInf(n.f, 0) {
		return uint32(int64(n.f))
	}
	return 0
}

// ipow is goja's integer power (from its ipow.go): base**exp, or 0 when it
// overflows an int64.
func ipow(base, exp int64) int64 {
	if exp >= 63 {
		switch base {
		case 1:
			return 1
		case -1:
			return 1 - 2*(exp&1)
		}
		return 0
	}
	result := int64(1)
	for exp > 0 {
		if exp&1 != 0 {
			hi, lo := mul64(result, base)
			if hi {
				return 0
			}
			result = lo
		}
		exp >>= 1
		if exp > 0 {
			hi, sq := mul64(base, base)
			if hi {
				return 0
			}
			base = sq
		}
	}
	return result
}

// mul64 multiplies with an overflow report.
func mul64(a, b int64) (overflow bool, p int64) {
	if a == 0 || b == 0 {
		return false, 0
	}
	p = a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return true, 0
	}
	return false, p
}

// bigintCheck returns the cap check of the BigInt builtins at path, or nil.
func (g *guard) bigintCheck(path string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	switch path {
	case "BigInt.asIntN", "BigInt.asUintN":
		signed := path == "BigInt.asIntN"
		return func(c goja.FunctionCall) goja.Value {
			if len(c.Arguments) < 2 {
				return impl(c)
			}
			bitsV := c.Arguments[0].ToNumber()
			bits := toInteger(bitsV.ToFloat())
			if bits <= MaxBigIntBits || math.IsInf(bits, 0) || bits > 1<<53-1 {
				// Within the cap, or out of range (goja's RangeError).
				return impl(c)
			}
			v := c.Arguments[1]
			if o, ok := v.(*goja.Object); ok {
				v = g.toPrimitiveNumber(o)
			}
			var x *big.Int
			switch {
			case goja.IsBigInt(v):
				x = v.Export().(*big.Int)
			case goja.IsString(v) || v.ExportType() == reflect.TypeFor[bool]():
				// ToBigInt of a string or a boolean is what BigInt makes
				// of it (the string checked first).
				g.bigintArgs([]goja.Value{v})
				bv, err := g.origBigInt(goja.Undefined(), v)
				rethrow(err)
				x = bv.Export().(*big.Int)
			default:
				// goja's TypeError for the rest, with bits 0.
				return impl(goja.FunctionCall{This: c.This, Arguments: []goja.Value{g.vm.ToValue(0), v}})
			}
			// More bits than the cap: the value is its own result when it
			// fits, and anything else is larger than the cap.
			fits := x.Sign() >= 0 || signed
			if fits && float64(x.BitLen()) < bits {
				return g.vm.ToValue(x)
			}
			panic(g.bigErr())
		}
	case "BigInt.prototype.toString", "BigInt.prototype.toLocaleString":
		return func(c goja.FunctionCall) goja.Value {
			if x, ok := c.This.Export().(*big.Int); ok && x.BitLen() > MaxBigIntBits {
				panic(g.rangeErr(fmt.Sprintf("%s: BigInt larger than %d bits", path, MaxBigIntBits)))
			}
			return impl(c)
		}
	}
	return nil
}

// bigintArgs checks the argument of BigInt(value): a string is parsed by
// math/big in time quadratic in its digits, so one whose value cannot fit
// the cap is refused before it is parsed. Objects are converted first
// (ToPrimitive with hint number, as BigInt does), once.
func (g *guard) bigintArgs(args []goja.Value) []goja.Value {
	if len(args) == 0 {
		return args
	}
	v := args[0]
	if o, ok := v.(*goja.Object); ok {
		v = g.toPrimitiveNumber(o)
		args = append([]goja.Value{v}, args[1:]...)
	}
	if !goja.IsString(v) {
		return args
	}
	if bigIntStringTooLarge(v.String()) {
		panic(g.bigErr())
	}
	return args
}

// bigIntStringTooLarge reports whether StringToBigInt of s would be larger
// than the cap: its digits (after the whitespace, a sign or a 0x, 0o or 0b
// prefix, and leading zeros) are too many for MaxBigIntBits. It may say no
// to a string that is no number at all; goja refuses that itself.
func bigIntStringTooLarge(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) <= MaxBigIntBits/4 {
		// Even hexadecimal digits (4 bits each) fit.
		return false
	}
	bitsPerDigit := 0.0
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			bitsPerDigit = 4
		case 'o', 'O':
			bitsPerDigit = 3
		case 'b', 'B':
			bitsPerDigit = 1
		}
	}
	if bitsPerDigit != 0 {
		s = strings.TrimLeft(s[2:], "0")
		return float64(len(s)-1)*bitsPerDigit >= MaxBigIntBits
	}
	s = strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
	return len(s) > maxBigIntDigits
}
