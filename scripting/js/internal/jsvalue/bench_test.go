package jsvalue

import (
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// benchDoc is a 1 KB object of the kind tool arguments and results are:
// nested objects, arrays, strings and numbers.
const benchDoc = `{"id":"call_0123456789","name":"search_files","arguments":{"query":"lossless JSON boundary",` +
	`"paths":["scripting/js","dsl","engine"],"limit":25,"caseSensitive":false,"exclude":{"dirs":["node_modules",".git"],` +
	`"globs":["*.min.js","*.map"]}},"results":[{"path":"dsl/json.go","line":382,"score":0.93,"snippet":"func Unmarshal(data []byte) (any, error)"},` +
	`{"path":"dsl/value.go","line":42,"score":0.88,"snippet":"func Snapshot(v any) (any, error)"},` +
	`{"path":"scripting/js/bridge.go","line":140,"score":0.71,"snippet":"return jsvalue.ToJS(vm, v)"}],` +
	`"meta":{"elapsedMs":12.5,"truncated":false,"engine":{"name":"goja","version":"0.0.0"},"tags":["fs","search","v2"],` +
	`"note":"héllo wörld — ünïcödé text survives the boundary","counts":[1,2,3,5,8,13,21,34,55,89]},` +
	`"history":[{"role":"user","text":"find where values cross the boundary"},{"role":"assistant","text":"searching the tree"},` +
	`{"role":"tool","text":"3 matches","ok":true}],"cursor":null,"page":{"index":0,"size":25,"total":3}}`

func BenchmarkToGo1KB(b *testing.B) {
	e := newEnv(b)
	e.vm.Set("doc", benchDoc)
	v := e.run(`JSON.parse(doc)`)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.r.ToGo(v, "value", Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToJS1KB(b *testing.B) {
	e := newEnv(b)
	x, err := dsl.Unmarshal([]byte(benchDoc))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.r.ToJS(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONParse1KB is a yardstick: the engine's own JSON.parse of the
// same document, which builds unfrozen objects and checks nothing.
func BenchmarkJSONParse1KB(b *testing.B) {
	e := newEnv(b)
	e.vm.Set("doc", benchDoc)
	prog := goja.MustCompile("bench", `JSON.parse(doc)`, true)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.vm.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToGoSmall converts the small values a tool call returns and
// renders: one-member objects and a one-element array of an object.
func BenchmarkToGoSmall(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"Object", `({greeting: "Hello, Ada!"})`},
		{"ArrayOfObject", `[{type: "text", text: "hi"}]`},
		{"Frozen", ``},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b)
			var v goja.Value
			if bc.src == "" {
				x, err := e.r.ToJS(dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"}))
				if err != nil {
					b.Fatal(err)
				}
				v = x
			} else {
				v = e.run(bc.src)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ToGo(e.vm, v, "value", Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkToJSSmall(b *testing.B) {
	e := newEnv(b)
	x := dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.r.ToJS(x); err != nil {
			b.Fatal(err)
		}
	}
}
