package jsguard

import (
	"testing"

	"github.com/dop251/goja"
)

// heldElements reads goja's unexported array layout: this pins it, so that
// a goja upgrade that changes it fails here rather than making every
// large array walk refused.
func TestHeldElementsReadsGojasArrays(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int64
	}{
		{"a dense array holds its elements", `[1, 2, 3]`, 3},
		{"a dense array with a longer length holds its values only", `var a = [1, 2]; a.length = 2**32 - 1; a`, 2},
		{"a sparse array holds its items", `var a = []; a[2**31] = 1; a[7] = 2; a`, 2},
		{"an array-like holds nothing", `({length: 3, 0: 1, 1: 2, 2: 3})`, 0},
		{"a typed array holds nothing an Array method walks cheaply", `new Uint8Array(4)`, 0},
		{"a proxy of an array holds nothing", `new Proxy([1, 2], {})`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := goja.New()
			v, err := vm.RunString(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := heldElements(v.(*goja.Object)); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
