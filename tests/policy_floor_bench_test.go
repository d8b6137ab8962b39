package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// gojaFloor bundles word_count and the given example policies, as they are
// in scripts/examples/plugins, against testdata/floor's stand-in for the
// "dsh" module, with testdata/floor/pipeline.js around them, and runs the
// bundle in one plain goja runtime (no dsh, no jsguard). It returns a
// function that makes one call through it: its final result, or an error if
// its promise did not fulfil.
func gojaFloor(tb testing.TB, policies []string) func(id, text string) (*goja.Object, error) {
	tb.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			tb.Fatal(err)
		}
		return a
	}
	var entry strings.Builder
	entry.WriteString("import \"./word_count.ts\";\n")
	for _, p := range policies {
		name := p + ".js"
		if _, err := os.Stat(filepath.Join(examplePlugins, p+".ts")); err == nil {
			name = p + ".ts"
		}
		fmt.Fprintf(&entry, "import %q;\n", "./"+name)
	}
	fmt.Fprintf(&entry, "export { call } from %q;\n", abs(filepath.Join("testdata", "floor", "pipeline.js")))
	out := api.Build(api.BuildOptions{
		Stdin:      &api.StdinOptions{Contents: entry.String(), ResolveDir: abs(examplePlugins), Loader: api.LoaderJS},
		Alias:      map[string]string{"dsh": abs(filepath.Join("testdata", "floor", "dsh.js"))},
		Bundle:     true,
		Format:     api.FormatIIFE,
		GlobalName: "floor",
		Target:     api.ESNext,
		LogLevel:   api.LogLevelSilent,
	})
	if len(out.Errors) > 0 || len(out.OutputFiles) != 1 {
		tb.Fatalf("bundling the floor: %v", out.Errors)
	}
	vm := goja.New()
	if _, err := vm.RunScript("floor.js", string(out.OutputFiles[0].Contents)); err != nil {
		tb.Fatal(err)
	}
	call, ok := goja.AssertFunction(vm.Get("floor").ToObject(vm).Get("call"))
	if !ok {
		tb.Fatal("the floor bundle exports no call")
	}
	return func(id, text string) (*goja.Object, error) {
		v, err := call(goja.Undefined(), vm.ToValue(id), vm.ToValue(text))
		if err != nil {
			return nil, err
		}
		// Every await in it is on a settled promise: goja has run them all
		// by the time the outermost call returns.
		p, _ := v.Export().(*goja.Promise)
		if p == nil || p.State() != goja.PromiseStateFulfilled {
			return nil, fmt.Errorf("the call did not fulfil: %v", v)
		}
		o, _ := p.Result().(*goja.Object)
		return o, nil
	}
}

func TestTheGojaFloorDoesTheExampleSetsWork(t *testing.T) {
	call := gojaFloor(t, examplePolicies)
	text := "the quick brown fox jumps over the lazy dog 0"
	for n := 1; n <= 3; n++ {
		r, err := call(fmt.Sprint("c", n), text)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Get("value").ToObject(nil).Get("words").ToInteger(); got != 10 {
			t.Fatalf("call %d: %d words, want 10", n, got)
		}
		if got := r.Get("content").ToObject(nil).Get("0").ToObject(nil).Get("text").String(); got != "10 words" {
			t.Fatalf("call %d: content %q", n, got)
		}
		// repeat_reminder speaks up at the third identical call.
		if ctxs := r.Get("additionalContexts"); (n == 3) != (ctxs != nil && !goja.IsUndefined(ctxs)) {
			t.Fatalf("call %d: additionalContexts %v", n, ctxs)
		}
	}
}

// BenchmarkExamplePolicySetGojaFloor is what goja alone spends on the work
// of BenchmarkExamplePolicySet/js_policies (set) and of
// BenchmarkExamplePolicyOrdinary/js (ordinary): the same policies' and tool's
// files, bundled and called with less than the specification asks for
// around them (testdata/floor/pipeline.js: the execution and result objects
// are not even frozen), in one plain runtime, one entry per call, with no
// guard, no conversion and none of the engine.
// Issue 29's floor: no use of goja's public API by dsh makes these calls
// cheaper than this.
func BenchmarkExamplePolicySetGojaFloor(b *testing.B) {
	for _, tc := range []struct {
		name     string
		policies []string
	}{{"set", examplePolicies}, {"ordinary", ordinaryPolicies}} {
		b.Run(tc.name, func(b *testing.B) {
			call := gojaFloor(b, tc.policies)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := call("c"+strconv.Itoa(i), "the quick brown fox jumps over the lazy dog "+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
