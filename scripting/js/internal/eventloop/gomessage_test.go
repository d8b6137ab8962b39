package eventloop

import (
	"context"
	"errors"
	"regexp"
	"testing"
)

// goForm matches Go's own forms in text: a heap address, a struct or
// pointer dump, a goja type, a goroutine trace.
var goForm = regexp.MustCompile(`0x[0-9a-f]{6,}|\*goja\.|&\{|goroutine|map\[`)

func TestGojaErrorsCarryNoGoInternals(t *testing.T) {
	l := newLoop(t, Options{})
	const noPrimitive = "Cannot convert object to primitive value"
	for _, tc := range []struct{ name, src, msg string }{
		{"String of an object without a prototype", "String(Object.create(null))", noPrimitive},
		{"a template of an object without a prototype", "`${Object.create(null)}`", noPrimitive},
		{"adding an object without a prototype", "Object.create(null) + 1", noPrimitive},
		{"Number of an object without a prototype", "Number(Object.create(null))", noPrimitive},
		{"joining an object without a prototype", "[Object.create(null)].join()", noPrimitive},
		{"an object whose toString is not callable", "const o = Object.create(null); o.toString = 5; o.valueOf = 'x'; String(o)", noPrimitive},
		{"an object with properties", "String(Object.assign(Object.create(null), { secret: 'v', n: 1 }))", noPrimitive},
	} {
		t.Run(tc.name+" is a TypeError in JavaScript's words", func(t *testing.T) {
			_, err := runJS(l, context.Background(), tc.src)
			var je *JSError
			if !errors.As(err, &je) {
				t.Fatalf("got %T %v", err, err)
			}
			if je.Name != "TypeError" || je.Message != tc.msg {
				t.Errorf("got %q: %q, want TypeError: %q", je.Name, je.Message, tc.msg)
			}
			if goForm.MatchString(je.Stack) {
				t.Errorf("the stack holds a Go form: %q", je.Stack)
			}
		})
	}
	t.Run("a script's own message is never reworded", func(t *testing.T) {
		const own = "Could not convert &{Object 0xc000123456} (*goja.baseObject) to primitive"
		_, err := runJS(l, context.Background(), "throw new Error('"+own+"')")
		var je *JSError
		if !errors.As(err, &je) || je.Message != own {
			t.Errorf("got %v", err)
		}
	})
}
