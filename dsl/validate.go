package dsl

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is a raw JSON Schema of the supported subset, asserted and compiled
// once for repeated validation. It is safe for concurrent use.
type Schema struct {
	raw  any
	root *node
}

type nodeKind uint8

const (
	kindAny nodeKind = iota // annotation-only: any lossless JSON value
	kindOneOf
	kindObject
	kindArray
	kindString
	kindNumber
	kindInteger
	kindBoolean
	kindNull
)

// node is one compiled schema node.
type node struct {
	kind      nodeKind
	branches  []*node
	props     []prop
	propIndex map[string]int // only for many properties
	required  []string
	closed    bool // additionalProperties: false
	items     *node
	enum      []any
	enumText  string
	hasConst  bool
	constVal  any
	constText string
}

type prop struct {
	name string
	node *node
}

// Compile asserts that schema is inside the supported subset and compiles it
// for validation. The schema is snapshotted: later changes to it have no effect.
func Compile(schema any) (*Schema, error) {
	if err := AssertSupported(schema); err != nil {
		return nil, err
	}
	raw, err := Snapshot(schema)
	if err != nil {
		return nil, schemaError("schema is not lossless JSON: " + err.Error())
	}
	return &Schema{raw: raw, root: compileNode(raw)}, nil
}

// MustCompile is [Compile] for schemas known at build time; it panics on error.
func MustCompile(schema any) *Schema {
	s, err := Compile(schema)
	if err != nil {
		panic(err)
	}
	return s
}

// Raw returns the schema as a JSON value. The caller must not modify it.
func (s *Schema) Raw() any { return s.raw }

// compileNode builds the validator for an asserted, snapshotted schema.
func compileNode(schema any) *node {
	r := schema.(*Object)
	n := &node{}
	if b, ok := r.Get("oneOf"); ok {
		n.kind = kindOneOf
		for _, x := range b.([]any) {
			n.branches = append(n.branches, compileNode(x))
		}
		return n
	}
	t, ok := r.Get("type")
	if !ok {
		return n
	}
	switch t.(string) {
	case "object":
		n.kind = kindObject
		if pv, ok := r.Get("properties"); ok {
			for k, v := range pv.(*Object).All() {
				n.props = append(n.props, prop{k, compileNode(v)})
			}
		}
		if len(n.props) > indexThreshold {
			n.propIndex = make(map[string]int, len(n.props))
			for i, p := range n.props {
				n.propIndex[p.name] = i
			}
		}
		if rv, ok := r.Get("required"); ok {
			for _, name := range rv.([]any) {
				n.required = append(n.required, name.(string))
			}
		}
		if ap, ok := r.Get("additionalProperties"); ok {
			n.closed = ap == false
		}
		return n
	case "array":
		n.kind = kindArray
		if it, ok := r.Get("items"); ok {
			n.items = compileNode(it)
		}
		return n
	case "string":
		n.kind = kindString
	case "number":
		n.kind = kindNumber
	case "integer":
		n.kind = kindInteger
	case "boolean":
		n.kind = kindBoolean
	case "null":
		n.kind = kindNull
	}
	if ev, ok := r.Get("enum"); ok {
		n.enum = ev.([]any)
		n.enumText = mustText(ev)
	}
	if cv, ok := r.Get("const"); ok {
		n.hasConst, n.constVal, n.constText = true, cv, mustText(cv)
	}
	return n
}

func mustText(v any) string {
	b, err := Marshal(v)
	if err != nil {
		panic("dsl: compiled schema holds non-lossless data: " + err.Error())
	}
	return string(b)
}

// Validate returns the violations of v against the schema, rooted at "value",
// in the order of §4.5; nil when v is valid.
func (s *Schema) Validate(v any) []string { return s.validate(v, "value") }

// ValidateArgs validates v with the implicit arguments root: property paths are
// bare keys (`"tags[1]"`), and the root itself is displayed as "arguments".
func (s *Schema) ValidateArgs(v any) []string { return s.validate(v, "") }

// Valid reports whether v is valid.
func (s *Schema) Valid(v any) bool {
	var vs validator
	return vs.check(s.root, v, false)
}

func (s *Schema) validate(v any, root string) []string {
	// Valid values, the common case, are checked without tracking paths; only
	// an invalid one is walked again to report every violation with its path.
	var vs validator
	if vs.check(s.root, v, false) {
		return nil
	}
	vs = validator{root: root, segs: make([]seg, 0, 8)}
	vs.check(s.root, v, true)
	return vs.out
}

// ValidateValue compiles schema and validates v against it (root "value").
func ValidateValue(schema, v any) ([]string, error) {
	s, err := Compile(schema)
	if err != nil {
		return nil, err
	}
	return s.Validate(v), nil
}

// ValidateArgs compiles an author parameter spec (§4.6) and validates args
// against it with the implicit arguments root. Defaults are never applied.
func ValidateArgs(paramSpec, args any) ([]string, error) {
	raw, err := CompileParameterSpec(paramSpec)
	if err != nil {
		return nil, err
	}
	s, err := Compile(raw)
	if err != nil {
		return nil, err
	}
	return s.ValidateArgs(args), nil
}

// seg is one step of a value path: a key, or an index when isIndex.
type seg struct {
	key     string
	index   int
	isIndex bool
}

// validator carries one validation's state: the path to the current value and
// the violations found. With emit false it tracks no path and stops at the
// first violation.
type validator struct {
	root string
	segs []seg
	out  []string
}

func (vs *validator) path() string {
	var b strings.Builder
	b.WriteString(vs.root)
	for i, s := range vs.segs {
		if s.isIndex {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if i > 0 || vs.root != "" {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	if len(vs.segs) == 0 && vs.root == "" {
		return "arguments"
	}
	return b.String()
}

// childPath renders the path of key under the current value.
func (vs *validator) childPath(key string) string {
	vs.segs = append(vs.segs, seg{key: key})
	p := vs.path()
	vs.segs = vs.segs[:len(vs.segs)-1]
	return p
}

func (vs *validator) fail(msg string) {
	vs.out = append(vs.out, `"`+vs.path()+`" `+msg)
}

// check validates v against n, reporting when emit is set; it returns whether
// v is valid.
func (vs *validator) check(n *node, v any, emit bool) bool {
	switch n.kind {
	case kindAny:
		if !IsLossless(v) {
			if emit {
				vs.fail("must be a lossless JSON value")
			}
			return false
		}
		return true
	case kindOneOf:
		matched := 0
		sub := validator{}
		for _, b := range n.branches {
			if sub.check(b, v, false) {
				matched++
			}
		}
		if matched != 1 {
			if emit {
				vs.fail("must match exactly one oneOf branch (matched " + strconv.Itoa(matched) + ")")
			}
			return false
		}
		return true
	case kindObject:
		return vs.object(n, v, emit)
	case kindArray:
		return vs.array(n, v, emit)
	}
	return vs.scalar(n, v, emit)
}

func (vs *validator) object(n *node, v any, emit bool) bool {
	r, ok := asRecord(v)
	if !ok {
		if emit {
			vs.fail("must be an object")
		}
		return false
	}
	ok = true
	for _, name := range n.required {
		if x, present := r.get(name); !present || isUndefined(x) {
			if !emit {
				return false
			}
			ok = false
			vs.out = append(vs.out, `missing required property "`+vs.childPath(name)+`"`)
		}
	}
	for i := range n.props {
		p := &n.props[i]
		x, present := r.get(p.name)
		if !present || isUndefined(x) {
			continue
		}
		if !emit {
			if !vs.check(p.node, x, false) {
				return false
			}
			continue
		}
		vs.segs = append(vs.segs, seg{key: p.name})
		if !vs.check(p.node, x, true) {
			ok = false
		}
		vs.segs = vs.segs[:len(vs.segs)-1]
	}
	// Declared members are lossless once valid; the rest are checked here.
	undeclared := func(key string, x any) bool {
		if n.declared(key) {
			return true
		}
		if n.closed {
			if emit {
				vs.out = append(vs.out, `"`+vs.childPath(key)+`" is not a declared property (additionalProperties: false)`)
			}
			ok = false
			return emit
		}
		return true
	}
	lossless := true
	if r.o != nil {
		for _, m := range r.o.members {
			if !undeclared(m.Key, m.Value) {
				return false
			}
			if lossless && (isUndefined(m.Value) || !n.declared(m.Key)) && !memberLossless(m.Key, m.Value) {
				lossless = false
			}
		}
	} else {
		for _, k := range sortedKeys(r.m) {
			x := r.m[k]
			if !undeclared(k, x) {
				return false
			}
			if lossless && (isUndefined(x) || !n.declared(k)) && !memberLossless(k, x) {
				lossless = false
			}
		}
	}
	if ok && !lossless {
		if emit {
			vs.fail("must be a lossless JSON object")
		}
		return false
	}
	return ok
}

// memberLossless checks one member of an otherwise valid object.
func memberLossless(key string, v any) bool {
	if !utf8.ValidString(key) {
		return false
	}
	return plainScalar(v) || CheckLossless(v) == nil
}

func (n *node) declared(key string) bool {
	if n.propIndex != nil {
		_, ok := n.propIndex[key]
		return ok
	}
	for i := range n.props {
		if n.props[i].name == key {
			return true
		}
	}
	return false
}

func isUndefined(v any) bool {
	_, ok := v.(Undefined)
	return ok
}

func (vs *validator) array(n *node, v any, emit bool) bool {
	list, ok := v.([]any)
	if !ok {
		if emit {
			vs.fail("must be an array")
		}
		return false
	}
	if n.items == nil {
		if CheckLossless(list) != nil {
			if emit {
				vs.fail("must be a dense lossless JSON array")
			}
			return false
		}
		return true
	}
	holes := false
	for i, x := range list {
		if isUndefined(x) {
			holes = true
			continue
		}
		if !emit {
			if !vs.check(n.items, x, false) {
				return false
			}
			continue
		}
		vs.segs = append(vs.segs, seg{index: i, isIndex: true})
		if !vs.check(n.items, x, true) {
			ok = false
		}
		vs.segs = vs.segs[:len(vs.segs)-1]
	}
	if ok && holes {
		if emit {
			vs.fail("must be a dense lossless JSON array")
		}
		return false
	}
	return ok
}

func (vs *validator) scalar(n *node, v any, emit bool) bool {
	var msg string
	switch n.kind {
	case kindString:
		s, ok := v.(string)
		switch {
		case !ok:
			msg = "must be a string"
		case !utf8.ValidString(s):
			msg = "must be a lossless JSON value"
		}
	case kindNumber:
		f, ok := number(v)
		switch {
		case !ok:
			msg = "must be a number"
		case floatReason(f) != "":
			msg = "must be a finite JSON number"
		}
		v = f
	case kindInteger:
		f, ok := number(v)
		if !ok || !isIntegral(f) {
			msg = "must be an integer"
		}
		v = f
	case kindBoolean:
		if _, ok := v.(bool); !ok {
			msg = "must be a boolean"
		}
	case kindNull:
		if v != nil {
			msg = "must be null"
		}
	}
	if msg == "" && n.enum != nil && !containsScalar(n.enum, v) {
		msg = "must be one of " + n.enumText
	}
	if msg == "" && n.hasConst && v != n.constVal {
		msg = "must be " + n.constText
	}
	if msg == "" {
		return true
	}
	if emit {
		vs.fail(msg)
	}
	return false
}

// number reads a Go number of any kind as a float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), math.Abs(float64(x)) <= maxSafeInteger
	case int64:
		return float64(x), x <= maxSafeInteger && x >= -maxSafeInteger
	case int32:
		return float64(x), true
	case float32:
		return float64(x), true
	case json.Number:
		f, reason := losslessNumber(string(x))
		return f, reason == ""
	}
	return 0, false
}
