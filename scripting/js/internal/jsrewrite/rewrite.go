package jsrewrite

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// The names of the operator helpers jsguard.Install defines on the global
// object. None is an identifier, so no declaration, parameter or catch
// binding of a script can shadow it, and no script text can name it: only
// the calls this package puts in a syntax tree reach them.
const (
	PowName = "%dsh**" // a ** b
	ShlName = "%dsh<<" // a << b
	SarName = "%dsh>>" // a >> b
	MulName = "%dsh*"  // a * b
)

// tempNames name the parameters of the arrow functions that keep a
// compound assignment's target evaluated once (not identifiers either).
const (
	tempObject = "%dsh.o"
	tempKey    = "%dsh.k"
	tempValue  = "%dsh.v"
)

// hints are the texts without which a source holds none of the operators:
// "*" covers * and **, "<<" and ">>" the shifts (">>>" too, which is left
// alone).
var hints = [][]byte{[]byte("*"), []byte("<<"), []byte(">>")}

// MayNeed reports whether src may hold an operator Operators rewrites:
// false means it holds none and need not be parsed for it. It looks for
// the operators' characters only, so comments and strings count too.
func MayNeed(src []byte) bool {
	for _, h := range hints {
		if bytes.Contains(src, h) {
			return true
		}
	}
	return false
}

// helperFor is the helper that replaces a binary operator, or "".
func helperFor(op token.Token) string {
	switch op {
	case token.EXPONENT:
		return PowName
	case token.SHIFT_LEFT:
		return ShlName
	case token.SHIFT_RIGHT:
		return SarName
	case token.MULTIPLY:
		return MulName
	}
	return ""
}

// numberValued reports whether an expression's value is never a BigInt
// after ToNumeric: a literal other than a BigInt one, or a unary + (which
// throws on a BigInt). An operator with such an operand cannot compute a
// BigInt: the other operand is a number or the operator throws "Cannot mix
// BigInt and other types". Those operators stay as they are, at no cost.
func numberValued(e ast.Expression) bool {
	switch e := e.(type) {
	case *ast.NumberLiteral:
		_, big := e.Value.(interface{ Sign() int }) // *big.Int for 1n
		return !big
	case *ast.StringLiteral, *ast.BooleanLiteral, *ast.NullLiteral:
		return true
	case *ast.TemplateLiteral:
		return e.Tag == nil
	case *ast.UnaryExpression:
		switch e.Operator {
		case token.PLUS, token.TYPEOF, token.NOT, token.VOID:
			return true
		case token.MINUS, token.BITWISE_NOT:
			return numberValued(e.Operand)
		}
	}
	return false
}

// Operators rewrites prog in place: every binary a ** b, a << b, a >> b and
// a * b, and every compound assignment with those operators, becomes a call
// of the helper named for the operator (PowName...), which computes the
// same value and refuses a BigInt result over jsguard's cap. An operator
// with an operand that is never a BigInt (see numberValued: x << 5, 2 ** k,
// i * 4) is left as it is. Positions stay the source's own, so nothing
// maps differently and functions keep their source text. It returns the
// number of operators rewritten; the error is for a tree it could not
// rewrite (an operator held where a call cannot stand), which a caller must
// refuse rather than compile.
//
// A compound assignment keeps its target evaluated once: x op= y becomes
// x = h(x, y); o.p op= y and o[k] op= y, with o an identifier, this or
// super and k an identifier or literal, become o.p = h(o.p, y); any other
// target is evaluated once into the parameters of an arrow function
// ((o, k) => o[k] = h(o[k], y))(obj, key). When y holds a yield or an
// await, which an arrow function cannot, y is evaluated before the target
// is read: ((o, k, v) => o[k] = h(o[k], v))(obj, key, y).
func Operators(prog *ast.Program) (n int, err error) {
	r := &rewriter{seen: make(map[uintptr]bool)}
	r.walk(reflect.ValueOf(prog))
	return r.n, r.err
}

type rewriter struct {
	seen map[uintptr]bool
	n    int
	err  error
}

var (
	astPkg = reflect.TypeFor[ast.Program]().PkgPath()
)

// walk visits v's syntax tree children first, then replaces v when it is
// an interface holding an operator to rewrite. goja's tree holds every
// expression as an interface (ast.Expression and its refinements); an
// operator found in a field of a concrete pointer type could not be
// replaced, and is reported rather than silently left.
func (r *rewriter) walk(v reflect.Value) {
	if r.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		r.node(v.Elem())
		if rep := r.replacement(v.Elem()); rep != nil {
			rv := reflect.ValueOf(rep)
			if !v.CanSet() || !rv.Type().AssignableTo(v.Type()) {
				r.err = fmt.Errorf("jsrewrite: cannot rewrite an operator held as %s", v.Type())
				return
			}
			v.Set(rv)
			r.n++
		}
	case reflect.Pointer:
		if !v.IsNil() && r.replacement(v) != nil {
			r.err = fmt.Errorf("jsrewrite: cannot rewrite an operator held as %s", v.Type())
			return
		}
		r.node(v)
	case reflect.Struct:
		for i := range v.NumField() {
			r.walk(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			r.walk(v.Index(i))
		}
	}
}

// node walks the children of a pointer to a syntax tree node, once.
func (r *rewriter) node(v reflect.Value) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
		return
	}
	if r.seen[v.Pointer()] {
		return
	}
	r.seen[v.Pointer()] = true
	r.walk(v.Elem())
}

// replacement returns the node that replaces v (a pointer to a node), or
// nil.
func (r *rewriter) replacement(v reflect.Value) ast.Expression {
	if !v.CanInterface() {
		return nil
	}
	switch n := v.Interface().(type) {
	case *ast.BinaryExpression:
		h := helperFor(n.Operator)
		if h == "" || numberValued(n.Left) || numberValued(n.Right) {
			return nil
		}
		return call(h, n.Left, n.Right)
	case *ast.AssignExpression:
		h := helperFor(n.Operator)
		if h == "" || numberValued(n.Right) {
			return nil
		}
		return compound(h, n)
	}
	return nil
}

// call is helper(args...), positioned over the operator it replaces.
func call(helper string, left, right ast.Expression) *ast.CallExpression {
	return &ast.CallExpression{
		Callee:           &ast.Identifier{Name: unistring.String(helper), Idx: left.Idx0()},
		LeftParenthesis:  left.Idx1(),
		ArgumentList:     []ast.Expression{left, right},
		RightParenthesis: right.Idx1() - 1,
	}
}

// compound rewrites target op= value (see Operators).
func compound(helper string, n *ast.AssignExpression) ast.Expression {
	assign := func(target, read ast.Expression, value ast.Expression) *ast.AssignExpression {
		return &ast.AssignExpression{Operator: token.ASSIGN, Left: target, Right: call(helper, read, value)}
	}
	switch t := n.Left.(type) {
	case *ast.Identifier:
		return assign(t, ident(t.Name, t.Idx), n.Right)
	case *ast.DotExpression:
		if pureObject(t.Left) {
			return assign(t, &ast.DotExpression{Left: copyPure(t.Left), Identifier: t.Identifier}, n.Right)
		}
		return viaArrow(t.Left, nil, t.Idx0(), func(o, _ ast.Expression) ast.Expression {
			return &ast.DotExpression{Left: o, Identifier: t.Identifier}
		}, assign, n.Right)
	case *ast.PrivateDotExpression:
		if pureObject(t.Left) {
			return assign(t, &ast.PrivateDotExpression{Left: copyPure(t.Left), Identifier: t.Identifier}, n.Right)
		}
		return viaArrow(t.Left, nil, t.Idx0(), func(o, _ ast.Expression) ast.Expression {
			return &ast.PrivateDotExpression{Left: o, Identifier: t.Identifier}
		}, assign, n.Right)
	case *ast.BracketExpression:
		if pureObject(t.Left) && pureKey(t.Member) {
			read := &ast.BracketExpression{Left: copyPure(t.Left), Member: copyPure(t.Member),
				LeftBracket: t.LeftBracket, RightBracket: t.RightBracket}
			return assign(t, read, n.Right)
		}
		return viaArrow(t.Left, t.Member, t.Idx0(), func(o, k ast.Expression) ast.Expression {
			return &ast.BracketExpression{Left: o, Member: k, LeftBracket: t.LeftBracket, RightBracket: t.RightBracket}
		}, assign, n.Right)
	}
	// Not a valid compound target (goja's parser refuses the rest).
	return nil
}

// viaArrow builds ((o[, k]) => T = h(T, value))(obj[, key]), or, when
// value holds a yield or an await, ((o[, k], v) => T = h(T, v))(obj[,
// key], value). super stays inside the arrow (arrows see the enclosing
// super), as an object it cannot be passed.
func viaArrow(obj, key ast.Expression, at file.Idx, target func(o, k ast.Expression) ast.Expression,
	assign func(target, read, value ast.Expression) *ast.AssignExpression, value ast.Expression) ast.Expression {
	var params []*ast.Binding
	var args []ast.Expression
	o, k := obj, key
	if _, super := obj.(*ast.SuperExpression); !super {
		params = append(params, &ast.Binding{Target: ident(tempObject, at)})
		args = append(args, obj)
		o = ident(tempObject, at)
	}
	if key != nil {
		params = append(params, &ast.Binding{Target: ident(tempKey, at)})
		args = append(args, key)
		k = ident(tempKey, at)
	}
	v := value
	if suspends(value) {
		params = append(params, &ast.Binding{Target: ident(tempValue, at)})
		args = append(args, value)
		v = ident(tempValue, at)
	}
	readO, readK := o, k
	if id, ok := o.(*ast.Identifier); ok {
		readO = ident(id.Name, id.Idx)
	}
	if id, ok := k.(*ast.Identifier); ok {
		readK = ident(id.Name, id.Idx)
	}
	body := assign(target(o, k), target(readO, readK), v)
	arrow := &ast.ArrowFunctionLiteral{
		Start:         at,
		ParameterList: &ast.ParameterList{Opening: at, List: params, Closing: at},
		Body:          &ast.ExpressionBody{Expression: body},
	}
	return &ast.CallExpression{Callee: arrow, LeftParenthesis: at, ArgumentList: args, RightParenthesis: at}
}

func ident(name unistring.String, at file.Idx) *ast.Identifier {
	return &ast.Identifier{Name: name, Idx: at}
}

// pureObject reports whether evaluating e twice is the same as once: an
// identifier, this or super.
func pureObject(e ast.Expression) bool {
	switch e.(type) {
	case *ast.Identifier, *ast.ThisExpression, *ast.SuperExpression:
		return true
	}
	return false
}

// pureKey reports whether a computed key can be evaluated twice: an
// identifier or a literal.
func pureKey(e ast.Expression) bool {
	switch e.(type) {
	case *ast.Identifier, *ast.StringLiteral, *ast.NumberLiteral:
		return true
	}
	return false
}

// copyPure copies a pure expression's node, so that the tree holds no
// node twice.
func copyPure(e ast.Expression) ast.Expression {
	switch e := e.(type) {
	case *ast.Identifier:
		return ident(e.Name, e.Idx)
	case *ast.ThisExpression:
		c := *e
		return &c
	case *ast.SuperExpression:
		c := *e
		return &c
	case *ast.StringLiteral:
		c := *e
		return &c
	case *ast.NumberLiteral:
		c := *e
		return &c
	}
	return e
}

// suspends reports whether e holds a yield or an await outside a nested
// function (where an arrow function could not hold it).
func suspends(e ast.Expression) bool {
	found := false
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if found {
			return
		}
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
				return
			}
			switch v.Interface().(type) {
			case *ast.YieldExpression, *ast.AwaitExpression:
				found = true
				return
			case *ast.FunctionLiteral, *ast.ClassLiteral:
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(e))
	return found
}
