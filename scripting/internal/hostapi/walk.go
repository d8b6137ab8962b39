package hostapi

import "reflect"

// WalkTree calls visit with every pointer to a struct reachable from root
// through exported fields, slices and interfaces, root included, in no
// particular order and without recursion (a parser's syntax tree, whose
// package has no walker of its own: goja's and gopher-lua's ast). Fields
// named in skip are not followed.
func WalkTree(root any, visit func(any), skip ...string) {
	stack := []reflect.Value{reflect.ValueOf(root)}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || v.Elem().Kind() != reflect.Struct {
				continue
			}
			visit(v.Interface())
			stack = append(stack, v.Elem())
		case reflect.Struct:
			t := v.Type()
		fields:
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				for _, s := range skip {
					if f.Name == s {
						continue fields
					}
				}
				stack = append(stack, v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				stack = append(stack, v.Index(i))
			}
		}
	}
}
