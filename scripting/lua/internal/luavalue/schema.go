package luavalue

import "github.com/dsh-go/dsh/dsl"

// What a schema admits, for deciding what an empty table is.
const (
	admitArray = 1 << iota
	admitObject
	admitBoth = admitArray | admitObject
)

// maxSchemaNodes bounds the schema nodes one question about a schema reads,
// so that a schema built with shared or cyclic references in Go cannot make
// it loop; past it, the answer is "anything".
const maxSchemaNodes = 10_000

// field returns the member key of a schema object.
func field(s any, key string) (any, bool) {
	switch o := s.(type) {
	case *dsl.Object:
		return o.Get(key)
	case map[string]any:
		v, ok := o[key]
		return v, ok
	}
	return nil, false
}

// isSchemaObject reports whether s is a schema object (not a boolean schema).
func isSchemaObject(s any) bool {
	switch s.(type) {
	case *dsl.Object, map[string]any:
		return true
	}
	return false
}

// admits returns which of arrays and objects s lets through: type "array" or
// "object", the members of a type list, the union over oneOf branches; both
// when s says nothing (no type, no oneOf, not a schema object).
func admits(s any) int {
	got := 0
	todo := []any{s}
	for reads := 0; len(todo) > 0; reads++ {
		if reads == maxSchemaNodes {
			return admitBoth
		}
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !isSchemaObject(s) {
			return admitBoth
		}
		if t, ok := field(s, "type"); ok {
			switch t := t.(type) {
			case string:
				got |= typeAdmits(t)
			case []any:
				for _, x := range t {
					if name, ok := x.(string); ok {
						got |= typeAdmits(name)
					}
				}
			default:
				return admitBoth
			}
			continue
		}
		branches, ok := field(s, "oneOf")
		if !ok {
			return admitBoth
		}
		list, ok := branches.([]any)
		if !ok {
			return admitBoth
		}
		todo = append(todo, list...)
	}
	return got
}

func typeAdmits(t string) int {
	switch t {
	case "array":
		return admitArray
	case "object":
		return admitObject
	}
	return 0
}

// narrow follows oneOf down to the one branch that admits kind, and returns
// the schema that applies to a table of that kind, or nil when none or
// several branches do.
func narrow(s any, kind int) any {
	for reads := 0; s != nil && reads < maxSchemaNodes; reads++ {
		if !isSchemaObject(s) {
			return nil
		}
		if _, ok := field(s, "type"); ok {
			return s
		}
		branches, ok := field(s, "oneOf")
		if !ok {
			return s
		}
		list, _ := branches.([]any)
		var fit any
		n := 0
		for _, b := range list {
			if admits(b)&kind != 0 {
				fit = b
				n++
			}
		}
		if n != 1 {
			return nil
		}
		s = fit
	}
	return nil
}

// schemaChild returns the schema of a child of a table that s (narrowed)
// describes: the member key's property schema or the additionalProperties
// schema for an object, the items schema for an array; nil if none applies.
func schemaChild(s any, object bool, key string) any {
	if !object {
		if items, ok := field(s, "items"); ok && isSchemaObject(items) {
			return items
		}
		return nil
	}
	if props, ok := field(s, "properties"); ok {
		if p, ok := field(props, key); ok {
			if isSchemaObject(p) {
				return p
			}
			return nil
		}
	}
	if ap, ok := field(s, "additionalProperties"); ok && isSchemaObject(ap) {
		return ap
	}
	return nil
}
