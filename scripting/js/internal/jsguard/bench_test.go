package jsguard_test

import (
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

// jsonDoc is a document of about n bytes: objects with strings, numbers,
// booleans, nulls and a nested array, as tool arguments look.
func jsonDoc(n int) string {
	const item = `{"id":12345,"name":"item name with some text","price":19.99,"tags":["a","bb","ccc"],"ok":true,"none":null,"nested":{"x":-1.5e3,"y":"\u00e9\n"}}`
	var b strings.Builder
	b.WriteByte('[')
	for b.Len() < n {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteByte(']')
	return b.String()
}

// BenchmarkJSONParse compares jsguard's JSON.parse with goja's own.
func BenchmarkJSONParse(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"small", 200}, {"1MB", 1 << 20}} {
		doc := jsonDoc(size.n)
		for _, impl := range []struct {
			name string
			vm   func() *goja.Runtime
		}{
			{"goja", goja.New},
			{"bounded", func() *goja.Runtime { return guarded(b, jsguard.Options{}) }},
		} {
			b.Run(impl.name+"/"+size.name, func(b *testing.B) {
				vm := impl.vm()
				parse, _ := goja.AssertFunction(vm.Get("JSON").(*goja.Object).Get("parse"))
				arg := vm.ToValue(doc)
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := parse(goja.Undefined(), arg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkInstall is the cost jsguard adds to making a runtime.
func BenchmarkInstall(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := jsguard.Install(goja.New(), jsguard.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
