package dsl

import (
	"strconv"
	"unsafe"
)

// The node kinds of the author DSL (§4.1) and the keys each accepts.
var specKeys = map[string]map[string]bool{
	"string":  keySet("type", "enum", "const"),
	"number":  keySet("type", "enum", "const"),
	"integer": keySet("type", "enum", "const"),
	"boolean": keySet("type", "enum", "const"),
	"null":    keySet("type", "enum", "const"),
	"array":   keySet("type", "items"),
	"object":  keySet("type", "additionalProperties", "properties"),
	"json":    keySet("type"),
	"oneOf":   keySet("oneOf"),
}

var annotationKeys = []string{"description", "title", "default", "examples"}

func keySet(keys ...string) map[string]bool {
	m := map[string]bool{"description": true, "title": true, "default": true, "examples": true}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// CompileValueSpec compiles an author value spec (§4.1) to raw JSON Schema
// (§4.2). The result passes [AssertSupported]; a spec that does not compile
// gives a *JsonSchemaError with the first violation found, rooted at "schema".
func CompileValueSpec(spec any) (any, error) {
	c := newSpecCompiler()
	var out any
	c.push(specTask{path: &lazyPath{step: "schema"}, spec: spec, set: func(v any) { out = v }})
	if err := c.run(); err != nil {
		return nil, err
	}
	if err := AssertSupported(out); err != nil {
		return nil, err
	}
	return out, nil
}

// CompileParameterSpec compiles an author parameter map (§4.1) to the raw
// schema of a tool's arguments: an open object, {type, properties, required?}.
// Errors are rooted at "parameters".
func CompileParameterSpec(spec any) (*Object, error) {
	r, ok := asRecord(spec)
	if !ok {
		return nil, schemaError("parameters must be an object of value schemas")
	}
	c := newSpecCompiler()
	out := NewObject(Member{"type", "object"})
	c.ancestors[r.id()]++
	props, required, tasks := c.properties(&lazyPath{step: "parameters"}, r)
	out.appendNew("properties", props)
	if required != nil {
		out.appendNew("required", required)
	}
	c.push(tasks...)
	if err := c.run(); err != nil {
		return nil, err
	}
	if err := AssertSupported(out); err != nil {
		return nil, err
	}
	return out, nil
}

type specTask struct {
	path          *lazyPath
	spec          any
	set           func(any)
	allowRequired bool
	leave         unsafe.Pointer
}

type specCompiler struct {
	tasks     []specTask
	ancestors map[unsafe.Pointer]int
	err       error
}

func newSpecCompiler() *specCompiler {
	return &specCompiler{ancestors: map[unsafe.Pointer]int{}}
}

func (c *specCompiler) push(tasks ...specTask) {
	for i := len(tasks) - 1; i >= 0; i-- {
		c.tasks = append(c.tasks, tasks[i])
	}
}

func (c *specCompiler) run() error {
	for len(c.tasks) > 0 && c.err == nil {
		t := c.tasks[len(c.tasks)-1]
		c.tasks = c.tasks[:len(c.tasks)-1]
		if t.leave != nil {
			if c.ancestors[t.leave]--; c.ancestors[t.leave] == 0 {
				delete(c.ancestors, t.leave)
			}
			continue
		}
		c.node(t)
	}
	return c.err
}

func (c *specCompiler) fail(msg string) { c.err = schemaError(msg) }

// properties prepares a property map: it returns the properties object that
// the returned tasks fill, and the required names (nil when none).
func (c *specCompiler) properties(lp *lazyPath, r record) (*Object, []any, []specTask) {
	keys := r.keys()
	props := newObjectCap(len(keys))
	var required []any
	tasks := make([]specTask, 0, len(keys))
	for _, k := range keys {
		v, _ := r.get(k)
		if pr, ok := asRecord(v); ok {
			if req, ok := pr.get("required"); ok && req == true {
				required = append(required, k)
			}
		}
		tasks = append(tasks, specTask{path: lp.child("." + k), spec: v, allowRequired: true,
			set: func(compiled any) { props.appendNew(k, compiled) }})
	}
	return props, required, tasks
}

func (c *specCompiler) node(t specTask) {
	lp := t.path
	r, ok := asRecord(t.spec)
	if !ok {
		c.fail(lp.String() + " must be a value schema object")
		return
	}
	id := r.id()
	if c.ancestors[id] > 0 {
		c.fail(lp.String() + " is circular")
		return
	}
	typ, hasType := r.get("type")
	oneOf, hasOneOf := r.get("oneOf")
	if hasType && hasOneOf {
		c.fail(lp.String() + " cannot declare both type and oneOf")
		return
	}
	kind := "oneOf"
	if !hasOneOf {
		s, _ := typ.(string)
		if _, known := specKeys[s]; !known || s == "oneOf" {
			c.fail(lp.String() + ".type must be string/number/integer/boolean/null/array/object/json, or use oneOf")
			return
		}
		kind = s
	}
	allowed := specKeys[kind]
	keys := r.keys()
	for _, k := range keys {
		if !allowed[k] && !(k == "required" && t.allowRequired) {
			c.fail(lp.String() + "." + k + " is not supported by the value schema DSL")
			return
		}
	}
	if req, ok := r.get("required"); ok && req != true {
		c.fail(lp.String() + ".required must be true when present")
		return
	}

	out := newObjectCap(len(keys) + 1)
	copyAnnotations := func() {
		for _, k := range annotationKeys {
			if v, ok := r.get(k); ok {
				out.appendNew(k, detach(v))
			}
		}
	}
	var children []specTask
	switch kind {
	case "oneOf":
		branches, ok := asList(oneOf)
		if !ok {
			c.fail(lp.String() + ".oneOf must be an array of at least two value schemas")
			return
		}
		list := make([]any, len(branches))
		out.appendNew("oneOf", list)
		copyAnnotations()
		for i, b := range branches {
			children = append(children, specTask{path: lp.child(".oneOf[" + strconv.Itoa(i) + "]"), spec: b,
				set: func(v any) { list[i] = v }})
		}
	case "json":
		copyAnnotations()
	case "array":
		out.appendNew("type", "array")
		copyAnnotations()
		if items, ok := r.get("items"); ok {
			out.appendNew("items", nil)
			children = append(children, specTask{path: lp.child(".items"), spec: items,
				set: func(v any) { out.Set("items", v) }})
		}
	case "object":
		ap, ok := r.get("additionalProperties")
		if _, isBool := ap.(bool); !ok || !isBool {
			c.fail(lp.String() + ".additionalProperties must be explicitly true or false")
			return
		}
		out.appendNew("type", "object")
		copyAnnotations()
		out.appendNew("additionalProperties", ap)
		if pv, ok := r.get("properties"); ok {
			pr, ok := asRecord(pv)
			if !ok {
				c.fail(lp.String() + ".properties must be an object of value schemas")
				return
			}
			if pr.id() == id || c.ancestors[pr.id()] > 0 {
				c.fail(lp.String() + ".properties is circular")
				return
			}
			props, required, tasks := c.properties(lp.child(".properties"), pr)
			out.appendNew("properties", props)
			if required != nil {
				out.appendNew("required", required)
			}
			c.ancestors[pr.id()]++
			children = append(tasks, specTask{leave: pr.id()})
		}
	default: // scalars
		out.appendNew("type", kind)
		copyAnnotations()
		if ev, ok := r.get("enum"); ok {
			list, ok := asList(ev)
			if !ok {
				c.fail(lp.String() + ".enum must be a non-empty array of scalar values")
				return
			}
			out.appendNew("enum", detach(list))
		}
		if cv, ok := r.get("const"); ok {
			out.appendNew("const", detach(cv))
		}
	}
	t.set(out)
	if len(children) > 0 {
		c.ancestors[id]++
		c.push(append(children, specTask{leave: id})...)
	}
}

// detach returns a snapshot of v when v is lossless, else v itself so that the
// raw assertion reports it.
func detach(v any) any {
	if s, err := Snapshot(v); err == nil {
		return s
	}
	return v
}
