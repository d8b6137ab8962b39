package dsl

// Spec is an author value spec (§4.1) built in Go. Its methods return a new
// Spec, so one Spec can be shared and refined without aliasing.
//
//	dsl.Params(
//		dsl.Prop("path", dsl.String().Describe("File to read.").Required()),
//		dsl.Prop("limit", dsl.Integer()),
//	)
type Spec struct {
	o *Object
}

// Property is one named member of a parameter map or object spec.
type Property struct {
	Name string
	Spec Spec
}

// ParamSpec is an author parameter map: the implicit open root of a tool's arguments.
type ParamSpec struct {
	props []Property
}

func typed(t string) Spec { return Spec{NewObject(Member{"type", t})} }

// String is {type: "string"}.
func String() Spec { return typed("string") }

// Number is {type: "number"}.
func Number() Spec { return typed("number") }

// Integer is {type: "integer"}.
func Integer() Spec { return typed("integer") }

// Boolean is {type: "boolean"}.
func Boolean() Spec { return typed("boolean") }

// Null is {type: "null"}.
func Null() Spec { return typed("null") }

// JSON is {type: "json"}: any lossless JSON value.
func JSON() Spec { return typed("json") }

// Array is {type: "array"} with items of any JSON value.
func Array() Spec { return typed("array") }

// ArrayOf is {type: "array", items}.
func ArrayOf(items Spec) Spec { return typed("array").with("items", items.Value()) }

// ObjectOf is {type: "object", additionalProperties, properties}; properties is
// declared even when props is empty.
func ObjectOf(additionalProperties bool, props ...Property) Spec {
	return typed("object").with("additionalProperties", additionalProperties).with("properties", propMap(props))
}

// OpenObject is {type: "object", additionalProperties: true}: any object.
func OpenObject() Spec { return typed("object").with("additionalProperties", true) }

// OneOf is {oneOf: [branches…]}: exactly one branch must match.
func OneOf(branches ...Spec) Spec {
	list := make([]any, len(branches))
	for i, b := range branches {
		list[i] = b.Value()
	}
	return Spec{NewObject(Member{"oneOf", list})}
}

// Prop names a spec for a parameter map or object.
func Prop(name string, s Spec) Property { return Property{Name: name, Spec: s} }

// Params is a parameter map, in the order given.
func Params(props ...Property) ParamSpec {
	return ParamSpec{props: append([]Property(nil), props...)}
}

// Value returns the parameter map as a JSON-like value for [CompileParameterSpec].
func (p ParamSpec) Value() any { return propMap(p.props) }

// Compile compiles the parameter map to raw JSON Schema.
func (p ParamSpec) Compile() (*Object, error) { return CompileParameterSpec(p.Value()) }

func propMap(props []Property) *Object {
	o := newObjectCap(len(props))
	for _, p := range props {
		o.Set(p.Name, p.Spec.Value())
	}
	return o
}

func (s Spec) with(key string, v any) Spec {
	o := NewObject(s.o.members...)
	o.Set(key, v)
	return Spec{o}
}

// Describe sets the description annotation.
func (s Spec) Describe(text string) Spec { return s.with("description", text) }

// Title sets the title annotation.
func (s Spec) Title(text string) Spec { return s.with("title", text) }

// Default sets the default annotation (never applied to values).
func (s Spec) Default(v any) Spec { return s.with("default", v) }

// Examples sets the examples annotation.
func (s Spec) Examples(v ...any) Spec { return s.with("examples", append([]any{}, v...)) }

// Enum restricts a scalar to the values given.
func (s Spec) Enum(v ...any) Spec { return s.with("enum", append([]any{}, v...)) }

// Const restricts a scalar to one value.
func (s Spec) Const(v any) Spec { return s.with("const", v) }

// Required marks a property as required; only property positions accept it.
func (s Spec) Required() Spec { return s.with("required", true) }

// Value returns the spec as a JSON-like value for [CompileValueSpec].
func (s Spec) Value() any {
	if s.o == nil {
		return NewObject()
	}
	return deepCopySpec(s.o)
}

// Compile compiles the spec to raw JSON Schema.
func (s Spec) Compile() (any, error) { return CompileValueSpec(s.Value()) }

// deepCopySpec copies the containers of a spec so callers cannot reach the Spec's own.
func deepCopySpec(v any) any {
	switch x := v.(type) {
	case *Object:
		o := newObjectCap(len(x.members))
		for _, m := range x.members {
			o.appendNew(m.Key, deepCopySpec(m.Value))
		}
		return o
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopySpec(e)
		}
		return l
	}
	return v
}
