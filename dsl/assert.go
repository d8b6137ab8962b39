package dsl

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// JsonSchemaError reports a schema outside the supported subset, or an author
// spec that does not compile, with every violation found.
type JsonSchemaError struct {
	Violations []string
}

func (e *JsonSchemaError) Error() string {
	return "unsupported JSON schema: " + strings.Join(e.Violations, "; ")
}

// Name returns the error's name in the pipeline's catalogue: JsonSchemaError.
func (e *JsonSchemaError) Name() string { return "JsonSchemaError" }

// Code returns the error's code: UNSUPPORTED_SCHEMA.
func (e *JsonSchemaError) Code() string { return "UNSUPPORTED_SCHEMA" }

func schemaError(violations ...string) *JsonSchemaError {
	return &JsonSchemaError{Violations: violations}
}

// The keywords of the subset, in the order their checks report them.
var (
	constraintKeys = []string{"properties", "required", "additionalProperties", "items", "enum", "const"}
	scalarTypes    = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "null": true}
)

const unsupportedKeywordSuffix = " is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"

func isAnnotation(k string) bool {
	return k == "description" || k == "title" || k == "default" || k == "examples"
}

func isConstraint(k string) bool {
	switch k {
	case "type", "oneOf", "properties", "required", "additionalProperties", "items", "enum", "const":
		return true
	}
	return false
}

// record is a plain JSON object as the schema walkers see it: an *Object, or a
// map[string]any read in sorted key order.
type record struct {
	o *Object
	m map[string]any
}

func asRecord(v any) (record, bool) {
	switch x := v.(type) {
	case *Object:
		if x != nil {
			return record{o: x}, true
		}
	case map[string]any:
		if x != nil {
			return record{m: x}, true
		}
	}
	return record{}, false
}

func (r record) get(k string) (any, bool) {
	if r.o != nil {
		return r.o.Get(k)
	}
	v, ok := r.m[k]
	return v, ok
}

func (r record) has(k string) bool { _, ok := r.get(k); return ok }

func (r record) keys() []string {
	if r.o != nil {
		return r.o.Keys()
	}
	return sortedKeys(r.m)
}

func (r record) id() unsafe.Pointer {
	if r.o != nil {
		return unsafe.Pointer(r.o)
	}
	return reflect.ValueOf(r.m).UnsafePointer()
}

// asList returns v as a dense plain array.
func asList(v any) ([]any, bool) {
	l, ok := v.([]any)
	if !ok || l == nil {
		return nil, false
	}
	for _, x := range l {
		if _, hole := x.(Undefined); hole {
			return nil, false
		}
	}
	return l, true
}

// AssertSupported reports whether schema lies inside the enforced subset of
// JSON Schema (§4.4). It returns nil, or a *JsonSchemaError carrying every
// violation in walk order.
func AssertSupported(schema any) error {
	if v := assertViolations(schema); len(v) > 0 {
		return schemaError(v...)
	}
	return nil
}

// AssertObjectSchema is [AssertSupported] plus the rule that structured output
// is object-rooted: the root must declare type "object".
func AssertObjectSchema(schema any) error {
	if err := AssertSupported(schema); err != nil {
		return err
	}
	if r, ok := asRecord(schema); ok {
		if t, ok := r.get("type"); ok && t == "object" {
			return nil
		}
	}
	return schemaError(`schema.type must be "object" (structured output is object-rooted)`)
}

// assertTask is one step of the iterative walk: visit a node, or run the
// checks that come after a node's children, or leave a node.
type assertTask struct {
	path  *lazyPath
	node  any
	after func()
	leave unsafe.Pointer
}

type asserter struct {
	violations []string
	tasks      []assertTask
	ancestors  map[unsafe.Pointer]int
}

func assertViolations(schema any) []string {
	a := &asserter{ancestors: map[unsafe.Pointer]int{}}
	a.tasks = append(a.tasks, assertTask{path: &lazyPath{step: "schema"}, node: schema})
	for len(a.tasks) > 0 {
		t := a.tasks[len(a.tasks)-1]
		a.tasks = a.tasks[:len(a.tasks)-1]
		switch {
		case t.leave != nil:
			if a.ancestors[t.leave]--; a.ancestors[t.leave] == 0 {
				delete(a.ancestors, t.leave)
			}
		case t.after != nil:
			t.after()
		default:
			a.visit(t.path, t.node)
		}
	}
	return a.violations
}

func (a *asserter) add(v string) { a.violations = append(a.violations, v) }

// push schedules tasks so that they run in the order given.
func (a *asserter) push(tasks ...assertTask) {
	for i := len(tasks) - 1; i >= 0; i-- {
		a.tasks = append(a.tasks, tasks[i])
	}
}

func (a *asserter) visit(lp *lazyPath, node any) {
	r, ok := asRecord(node)
	if !ok {
		a.add(lp.String() + " must be a schema object")
		return
	}
	id := r.id()
	if a.ancestors[id] > 0 {
		a.add(lp.String() + " is circular")
		return
	}
	keys := r.keys()
	for _, k := range keys {
		switch {
		case isConstraint(k):
		case isAnnotation(k):
			v, _ := r.get(k)
			if !IsLossless(v) {
				a.add(lp.String() + "." + k + " annotation must be lossless JSON data")
			}
		default:
			a.add(lp.String() + "." + k + unsupportedKeywordSuffix)
		}
	}
	for _, k := range []string{"description", "title"} {
		if v, ok := r.get(k); ok {
			if _, isStr := v.(string); !isStr {
				a.add(lp.String() + "." + k + " must be a string")
			}
		}
	}
	typ, hasType := r.get("type")
	oneOf, hasOneOf := r.get("oneOf")
	switch {
	case hasType && hasOneOf:
		a.add(lp.String() + " cannot declare both type and oneOf")
		return
	case !hasType && !hasOneOf:
		for _, k := range constraintKeys {
			if r.has(k) {
				a.add(lp.String() + "." + k + " requires type or oneOf")
			}
		}
		return
	}
	// The node's children are walked with the node on the ancestor path.
	a.ancestors[id]++
	var tasks []assertTask
	if hasOneOf {
		branches, ok := asList(oneOf)
		if !ok || len(branches) < 2 {
			a.add(lp.String() + ".oneOf must be an array of at least two schemas")
		} else {
			for i, b := range branches {
				tasks = append(tasks, assertTask{path: lp.child(".oneOf[" + strconv.Itoa(i) + "]"), node: b})
			}
		}
		tasks = append(tasks, assertTask{after: func() {
			for _, k := range constraintKeys {
				if r.has(k) {
					a.add(lp.String() + "." + k + " is not supported beside oneOf")
				}
			}
		}})
		a.push(append(tasks, assertTask{leave: id})...)
		return
	}
	t, isStr := typ.(string)
	if !isStr || !(t == "object" || t == "array" || scalarTypes[t]) {
		if _, isList := typ.([]any); isList {
			a.add(lp.String() + ".type must be a single type string (type arrays are not supported)")
		} else {
			a.add(lp.String() + ".type must be one of object/array/string/number/integer/boolean/null")
		}
		a.push(assertTask{leave: id})
		return
	}
	for _, k := range constraintKeys {
		if !r.has(k) {
			continue
		}
		var fits bool
		switch k {
		case "properties", "required", "additionalProperties":
			fits = t == "object"
		case "items":
			fits = t == "array"
		default:
			fits = scalarTypes[t]
		}
		if !fits {
			a.add(lp.String() + "." + k + ` is not supported on type "` + t + `"`)
		}
	}
	switch {
	case t == "object":
		tasks = a.objectTasks(lp, r)
	case t == "array":
		if items, ok := r.get("items"); ok {
			tasks = append(tasks, assertTask{path: lp.child(".items"), node: items})
		}
	default:
		a.scalarChecks(lp, t, r)
	}
	a.push(append(tasks, assertTask{leave: id})...)
}

func (a *asserter) objectTasks(lp *lazyPath, r record) []assertTask {
	var tasks []assertTask
	var props record
	propsOK := false
	if pv, ok := r.get("properties"); ok {
		if props, propsOK = asRecord(pv); !propsOK {
			a.add(lp.String() + ".properties must be an object of schemas")
		} else {
			for _, k := range props.keys() {
				v, _ := props.get(k)
				tasks = append(tasks, assertTask{path: lp.child(".properties." + k), node: v})
			}
		}
	}
	return append(tasks, assertTask{after: func() {
		if rv, ok := r.get("required"); ok {
			names, ok := asList(rv)
			for _, n := range names {
				if _, isStr := n.(string); !isStr {
					ok = false
				}
			}
			if !ok {
				a.add(lp.String() + ".required must be an array of strings")
			} else {
				for _, n := range names {
					if !propsOK || !props.has(n.(string)) {
						a.add(lp.String() + `.required names "` + n.(string) + `" which is not in properties`)
					}
				}
			}
		}
		if ap, ok := r.get("additionalProperties"); ok {
			if _, isBool := ap.(bool); !isBool {
				a.add(lp.String() + ".additionalProperties must be a boolean")
			}
		}
	}})
}

func (a *asserter) scalarChecks(lp *lazyPath, t string, r record) {
	var entries []any
	enumOK := false
	if ev, ok := r.get("enum"); ok {
		entries, enumOK = asList(ev)
		enumOK = enumOK && len(entries) > 0
		for _, e := range entries {
			enumOK = enumOK && matchesScalar(t, e)
		}
		if !enumOK {
			a.add(lp.String() + ".enum must be a non-empty array of " + t + " values")
		}
	}
	if cv, ok := r.get("const"); ok {
		if !matchesScalar(t, cv) {
			a.add(lp.String() + ".const must be a " + t + " value")
		} else if enumOK && !containsScalar(entries, cv) {
			a.add(lp.String() + ".const must be one of " + lp.String() + ".enum when both are declared")
		}
	}
}

// matchesScalar is the subset's type test for enum and const entries.
func matchesScalar(t string, v any) bool {
	switch t {
	case "string":
		s, ok := v.(string)
		return ok && IsLossless(s)
	case "number":
		f, ok := v.(float64)
		return ok && floatReason(f) == ""
	case "integer":
		f, ok := v.(float64)
		return ok && isIntegral(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// isIntegral reports whether f is a finite integral JSON number (not -0).
func isIntegral(f float64) bool {
	return floatReason(f) == "" && math.Trunc(f) == f
}

func containsScalar(list []any, v any) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}

// lazyPath is a schema path rendered only when a message needs it, so a deep
// walk does not build ever-longer strings.
type lazyPath struct {
	parent *lazyPath
	step   string
}

func (p *lazyPath) child(step string) *lazyPath { return &lazyPath{parent: p, step: step} }

func (p *lazyPath) String() string {
	n := 0
	for q := p; q != nil; q = q.parent {
		n += len(q.step)
	}
	b := make([]byte, n)
	for q := p; q != nil; q = q.parent {
		n -= len(q.step)
		copy(b[n:], q.step)
	}
	return string(b)
}
