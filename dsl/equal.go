package dsl

// Equal reports whether a and b are the same JSON value. Objects are compared as
// sets of members (key order does not matter), *Object and map[string]any
// alike; numbers by value, whatever their Go kind. A value that is not lossless
// JSON equals nothing.
func Equal(a, b any) bool {
	na, err := normalize(a)
	if err != nil {
		return false
	}
	nb, err := normalize(b)
	if err != nil {
		return false
	}
	return equal(na, nb)
}

// normalize returns v in the Go form, snapshotting only when v holds other types.
func normalize(v any) (any, error) {
	switch v.(type) {
	case nil, bool, string, float64:
		return v, CheckLossless(v)
	}
	if err := CheckLossless(v); err != nil {
		return nil, err
	}
	if isGoForm(v) {
		return v, nil
	}
	return Snapshot(v)
}

// isGoForm reports whether v and everything in it is already nil, bool,
// float64, string, []any or *Object.
func isGoForm(v any) bool {
	stack := []any{v}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case nil, bool, float64, string:
		case []any:
			stack = append(stack, x...)
		case *Object:
			for _, m := range x.members {
				stack = append(stack, m.Value)
			}
		default:
			return false
		}
	}
	return true
}

// equal compares two values in Go form without recursion.
func equal(a, b any) bool {
	type pair struct{ a, b any }
	stack := []pair{{a, b}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := p.a.(type) {
		case nil:
			if p.b != nil {
				return false
			}
		case bool:
			if y, ok := p.b.(bool); !ok || x != y {
				return false
			}
		case float64:
			if y, ok := p.b.(float64); !ok || x != y {
				return false
			}
		case string:
			if y, ok := p.b.(string); !ok || x != y {
				return false
			}
		case []any:
			y, ok := p.b.([]any)
			if !ok || len(x) != len(y) {
				return false
			}
			for i := range x {
				stack = append(stack, pair{x[i], y[i]})
			}
		case *Object:
			y, ok := p.b.(*Object)
			if !ok || x.Len() != y.Len() {
				return false
			}
			for _, m := range x.members {
				yv, ok := y.Get(m.Key)
				if !ok {
					return false
				}
				stack = append(stack, pair{m.Value, yv})
			}
		default:
			return false
		}
	}
	return true
}
